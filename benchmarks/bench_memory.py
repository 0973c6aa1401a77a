"""Peak memory of `receval run` on the tied shape (shapes.py) against the catalog's size and
against `partitions`, at fixed rows, beside DuckDB's peak on the same files.

    cd /work/main
    UV_PROJECT_ENVIRONMENT=/tmp/bench-venv uv run --group bench python benchmarks/bench_memory.py
    ... --part catalog --catalog-rows 10000000 --catalogs 1000000,10000000,100000000
    ... --part partitions --rows 100000000 --partitions 1,2,4,8 [--engine streaming]

`catalog`: the same number of prediction rows (10M by default) drawn from catalogs of 1M,
10M and 100M items; the peak should stay flat. `partitions`: one set of files (100M rows by
default) run with `partitions: 1, 2, 4, 8`; the peak should fall, and the target is a peak
at 4 partitions of at most 40% of the one-pass peak (exit 1 on a miss). Each run is a fresh
process timed and measured as bench.py does (wall clock, the process's own peak RSS); the
data goes to benchmarks/data/ (git-ignored) and is reused; the results to
benchmarks/data/memory_<part>_<rows>.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import bench
import shapes

HERE = Path(__file__).resolve().parent
TARGET_AT_4 = 0.40  # peak RSS at 4 partitions / the one-pass peak, at most


def tied_files(args: argparse.Namespace, rows: int, catalog: int | None) -> tuple[Path, Path]:
    """The tied shape at `rows` prediction rows (rows / 100 users), written by shapes.py in
    a child process (so that no run counts the generator's pages) and reused."""
    users = rows // shapes.PER_USER
    found = shapes.paths(args.data_dir, users, False, args.seed, catalog)
    if not (found["predictions"].exists() and found["truth"].exists()):
        print(f"generating {rows:,} rows, catalog {catalog or 10 * users:,} ...", flush=True)
        command = [sys.executable, str(HERE / "shapes.py"), str(users), str(args.data_dir)]
        command += ["--seed", str(args.seed)] + (["--catalog", str(catalog)] if catalog else [])
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    bench.warm_page_cache(found["predictions"], found["truth"])
    return found["predictions"], found["truth"]


def measure(args: argparse.Namespace, tool: str, files: tuple[Path, Path], config: Path) -> Any:
    outcome = bench.run_tool(tool, *files, config, args.data_dir, args.timeout)
    shown = outcome.get("error") or f"{outcome['seconds']:.2f} s"
    print(f"    {tool:<8} {shown}, {outcome['rss_mib']:,.0f} MiB", flush=True)
    return {k: outcome.get(k) for k in ("seconds", "rss_mib", "error", "spilled_mib")}


def config_for(args: argparse.Namespace, files: tuple[Path, Path], partitions: int) -> Path:
    config = bench.write_receval_config(args.data_dir, *files)
    extra = f"partitions: {partitions}\n" + (f"engine: {args.engine}\n" if args.engine else "")
    path = config.with_name(f"{config.stem}_p{partitions}.yaml")
    path.write_text(config.read_text(encoding="utf-8") + extra, encoding="utf-8")
    return path


def cell(run: dict[str, Any]) -> str:
    if run["seconds"] is None or run.get("error"):
        return f"failed ({run.get('error')}) | {run['rss_mib']:,.0f} MiB"
    return f"{run['seconds']:.1f} s | {run['rss_mib']:,.0f} MiB"


def against_catalog(args: argparse.Namespace) -> list[dict[str, Any]]:
    print(f"\ncatalog size at {args.catalog_rows:,} rows", flush=True)
    runs = []
    for catalog in args.catalogs:
        files = tied_files(args, args.catalog_rows, catalog)
        print(f"  catalog {catalog:,} items", flush=True)
        config = config_for(args, files, 1)
        runs.append(
            {
                "catalog": catalog,
                "receval": measure(args, "receval", files, config),
                "duckdb": measure(args, "duckdb", files, config),
            }
        )
    print("\n| catalog items | receval | peak | DuckDB | peak |\n|---|---|---|---|---|")
    for run in runs:
        print(f"| {run['catalog']:,} | {cell(run['receval'])} | {cell(run['duckdb'])} |")
    peaks = [run["receval"]["rss_mib"] for run in runs]
    print(f"receval's peak at {args.catalogs[-1]:,} items / at {args.catalogs[0]:,}: ", end="")
    print(f"{bench.fmt(bench.ratio(peaks[-1], peaks[0]), '.2f')}x (flat: 1.00x)")
    return runs


def against_partitions(args: argparse.Namespace) -> tuple[dict[str, Any], bool]:
    print(f"\npartitions at {args.rows:,} rows", flush=True)
    files = tied_files(args, args.rows, None)
    runs = {}
    for n in args.partitions:
        print(f"  partitions: {n}", flush=True)
        runs[n] = measure(args, "receval", files, config_for(args, files, n))
    print("  DuckDB's query", flush=True)
    duck = measure(args, "duckdb", files, config_for(args, files, 1))
    one = runs.get(1, {}).get("rss_mib") if runs.get(1, {}).get("seconds") else None
    print("\n| partitions | receval | peak | peak / one pass |\n|---|---|---|---|")
    for n, run in runs.items():
        share = bench.ratio(run["rss_mib"], one) if run["seconds"] else None
        print(f"| {n} | {cell(run)} | {bench.fmt(share, '.0%')} |")
    print(f"| DuckDB | {cell(duck)} | spilled {duck.get('spilled_mib') or 0:,.0f} MiB |")
    passed = True
    if 1 in runs and 4 in runs:
        four = runs[4]["rss_mib"] if runs[4]["seconds"] else None
        share = bench.ratio(four, one)
        passed = share is not None and share <= TARGET_AT_4
        print(
            f"  {'PASS' if passed else 'FAIL'}  peak at 4 partitions at most "
            f"{TARGET_AT_4:.0%} of the one-pass peak: {bench.fmt(share, '.0%')}"
        )
    return {"receval": runs, "duckdb": duck}, passed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("catalog", "partitions", "both"), default="both")
    parser.add_argument("--rows", type=int, default=100_000_000, help="rows for partitions")
    parser.add_argument("--catalog-rows", type=int, default=10_000_000, help="rows for catalog")
    parser.add_argument("--catalogs", default="1000000,10000000,100000000", help="items")
    parser.add_argument("--partitions", default="1,2,4,8")
    parser.add_argument("--engine", help="receval's engine for the partitions (default auto)")
    parser.add_argument("--seed", type=int, default=0)  # bench.py's: its files reused
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    parser.add_argument("--data-dir", type=Path, default=bench.DEFAULT_DATA)
    args = parser.parse_args(argv)
    args.catalogs = [int(c) for c in args.catalogs.split(",")]
    args.partitions = [int(n) for n in args.partitions.split(",")]
    args.data_dir.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"machine": bench.machine(), "command": sys.argv}
    passed = True
    if args.part in ("catalog", "both"):
        summary["catalog"] = against_catalog(args)
    if args.part in ("partitions", "both"):
        summary["partitions"], passed = against_partitions(args)
    out = args.data_dir / f"memory_{args.part}_{args.rows}_{args.catalog_rows}.json"
    out.write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    print(f"\nfull results: {out}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
