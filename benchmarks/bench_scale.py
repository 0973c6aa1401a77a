"""Rows against time and peak memory: 1M, 10M and 100M prediction rows, per engine, with
the polars floor and the peers measured in the same run where they finish.

    cd /work/main
    UV_PROJECT_ENVIRONMENT=/tmp/bench-venv uv run --group bench --extra spark \\
        python benchmarks/bench_scale.py
    ... --sizes 10000,100000        # users (x 100 items); default 10k, 100k, 1M
    ... --skip spark,ranx           # leave runs out
    ... --shape tied [--text-ids]   # the tied, large-catalog shape (shapes.py)
    ... --billion                   # 1B rows: 10M users x 100, tied shape (several GiB)
    ... --billion --sizes 10000     # the same runs at 1M rows, to check them

Data, tools and timing are bench.py's (each run a fresh process; wall clock from spawn
to exit; the process's own peak RSS). receval runs the 36 metrics of bench.py with each
engine (auto, the default; in_memory, streaming, spark on local[2]); `polars` and
`polars_streaming` are the bare scan-rank-join-sum floor on each engine, `polars_rank` the
faster floor (rank over user) and `duckdb` the same 36 metrics as one DuckDB SQL query;
pytrec_eval, ranx, RePlay (polars path, its own venv) and MS Recommenders (@10 metrics
only, its own venv; peer_children.py) run at the sizes where they finish (not at
100M: RePlay needs 18 GiB there; benchmarks/README.md). Writes benchmarks/scale.json and the plot
benchmarks/scale.svg (seconds against rows, log-log), and prints the table.

`--billion` runs the 1B case: the tied shape at 10M users x 100 items, generated on demand
by shapes.py in chunks into benchmarks/data/ (git-ignored; 5-6 GB of Parquet), with
receval (`engine: auto`), the polars floor (rank over user, streaming) and DuckDB's query
beside it. A run that fails (an exit status, out of memory, `--max-rss-mib`, the timeout)
is recorded as failed, and DuckDB's spill to its temp directory (benchmarks/data/duckdb_tmp)
as the most it held there. Shapes other than `distinct` write their results to
benchmarks/data/scale_<shape>.json and .svg, not over the committed scale.json.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import bench

HERE = Path(__file__).resolve().parent
ENGINES = ("auto", "in_memory", "streaming", "spark")
PEER_LIMIT = 100_000  # users: pytrec_eval and ranx are left out above (benchmarks/README.md)
# the 1B case: receval with engine auto, the streaming rank floor and DuckDB only
BILLION_SKIP = ("in_memory", "streaming", "spark", "polars", "polars_streaming", "pytrec_eval")
BILLION_SKIP += ("ranx", "replay", "recommenders")


def engine_config(config: Path, engine: str) -> Path:
    text = config.read_text(encoding="utf-8") + f"engine: {engine}\n"
    path = config.with_name(f"{config.stem}_{engine}.yaml")
    path.write_text(text, encoding="utf-8")
    return path


# peers in environments of their own (tests/peers/<library>/make.sh builds them)
VENV_PEERS = {"replay": "/tmp/golden-replay", "recommenders": "/tmp/golden-recommenders"}


def runs_for(users: int, skip: set[str]) -> list[tuple[str, str, str | None]]:
    """(label, tool, engine) of every run at this size."""
    runs = [(f"receval {e}", "receval", e) for e in ENGINES if e not in skip]
    runs += [("polars floor (in memory)", "polars", None)]
    runs += [("polars floor (streaming)", "polars_streaming", None)]
    runs += [("polars floor (rank over user, streaming)", "polars_rank", None)]
    runs += [("DuckDB (one SQL query)", "duckdb", None)]
    if users <= PEER_LIMIT:
        runs += [(t, t, None) for t in ("pytrec_eval", "ranx") if t not in skip]
        runs += [("RePlay (polars)", "replay", None)]
        runs += [("MS Recommenders (@10 only)", "recommenders", None)]
    return [r for r in runs if r[1] not in skip]


def run_venv_peer(
    tool: str, predictions: Path, truth: Path, work: Path, timeout: float
) -> dict[str, Any]:
    """A peer with its own venv: its Python runs peer_children.py."""
    python = Path(VENV_PEERS[tool]) / "bin" / "python"
    if not python.exists():
        return {"seconds": None, "rss_mib": 0.0, "error": f"no venv at {python.parent.parent}"}
    if tool == "recommenders":  # pandas there may have no pyarrow: CSV copies
        import polars as pl

        for path in (predictions, truth):
            if not path.with_suffix(".csv").exists():
                pl.read_parquet(path).write_csv(path.with_suffix(".csv"))
    result = work / f"result_{tool}.json"
    result.unlink(missing_ok=True)
    command = [str(python), str(HERE / "peer_children.py"), tool, str(predictions), str(truth)]
    log = work / f"log_{tool}.txt"
    outcome = bench.spawn([*command, str(result)], log, timeout, bench.child_env(work))
    if "error" not in outcome:
        outcome.update(json.loads(result.read_text(encoding="utf-8")))
    return outcome


def plot(results: dict[int, dict[str, dict[str, Any]]], path: Path) -> None:
    """seconds against rows, both on log scales, one line per run; plain SVG."""
    width, height, left, bottom, top, right = 800, 440, 70, 50, 20, 290
    points = {
        label: [(rows, r["seconds"]) for rows, runs in results.items() if (r := runs.get(label))]
        for runs in results.values()
        for label in runs
    }
    all_rows = [x for line in points.values() for x, y in line if y]
    all_secs = [y for line in points.values() for x, y in line if y]
    if not all_rows:
        return
    x0, x1 = math.log10(min(all_rows)) - 0.1, math.log10(max(all_rows)) + 0.1
    y0, y1 = math.log10(min(all_secs)) - 0.1, math.log10(max(all_secs)) + 0.1

    def sx(v: float) -> float:
        return left + (math.log10(v) - x0) / (x1 - x0) * (width - left - right)

    def sy(v: float) -> float:
        return height - bottom - (math.log10(v) - y0) / (y1 - y0) * (height - bottom - top)

    colours = [
        *("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"),
        *("#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8"),
    ]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" '
        'stroke="black"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
        f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">'
        "prediction rows</text>",
        f'<text x="16" y="{(top + height - bottom) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {(top + height - bottom) / 2})">seconds</text>',
    ]
    for rows in sorted({x for line in points.values() for x, _ in line}):
        parts.append(
            f'<text x="{sx(rows):.1f}" y="{height - bottom + 16}" text-anchor="middle">'
            f"{rows / 1e6:g}M</text>"
        )
    for exponent in range(math.floor(y0), math.ceil(y1) + 1):
        value = 10.0**exponent
        if y0 <= exponent <= y1:
            parts.append(
                f'<text x="{left - 6}" y="{sy(value) + 4:.1f}" text-anchor="end">{value:g}</text>'
            )
    for n, (label, line) in enumerate(sorted(points.items())):
        colour = colours[n % len(colours)]
        coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in sorted(line) if y)
        parts.append(
            f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>'
        )
        ly = top + 16 * n + 10
        parts.append(
            f'<line x1="{width - right + 10}" y1="{ly}" x2="{width - right + 30}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        parts.append(f'<text x="{width - right + 36}" y="{ly + 4}">{label}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="users per size")
    parser.add_argument("--skip", default="", help="comma-separated runs to leave out")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--shape", choices=bench.SHAPES, default="distinct")
    parser.add_argument("--text-ids", action="store_true", help="user and item ids as text")
    parser.add_argument(
        "--billion",
        action="store_true",
        help="the 1B case: --shape tied, --sizes 10000000, receval auto, the floor and DuckDB",
    )
    parser.add_argument("--max-rss-mib", type=float, help="kill a run above this (recorded)")
    args = parser.parse_args()
    skip = {s for s in args.skip.split(",") if s}
    if args.billion:
        args.shape = "tied"
        if args.sizes == parser.get_default("sizes"):
            args.sizes = "10000000"
        skip |= set(BILLION_SKIP)
    options = bench.parse_args(["--shape", args.shape] + ["--text-ids"] * args.text_ids)
    out = HERE if args.shape == "distinct" else options.data_dir
    name = "scale" if args.shape == "distinct" else f"scale_{args.shape}"
    results: dict[int, dict[str, dict[str, Any]]] = {}
    for users in (int(u) for u in args.sizes.split(",")):
        rows = users * 100
        try:
            predictions, truth = bench.shape_data(options, users, args.shape)
        except (OSError, subprocess.CalledProcessError) as error:  # a full disk, say
            print(f"{rows:>11,} rows  no data: {error}", flush=True)
            results[rows] = {"data": {"seconds": None, "rss_mib": None, "error": str(error)}}
            continue
        bench.warm_page_cache(predictions, truth)
        config = bench.write_receval_config(options.data_dir, predictions, truth)
        results[rows] = {}
        for label, tool, engine in runs_for(users, skip):
            chosen = engine_config(config, engine) if engine else config
            print(f"{rows:>11,} rows  {label} ...", flush=True)
            if tool in VENV_PEERS:
                outcome = run_venv_peer(tool, predictions, truth, options.data_dir, args.timeout)
            else:
                outcome = bench.run_tool(
                    tool,
                    predictions,
                    truth,
                    chosen,
                    options.data_dir,
                    args.timeout,
                    args.max_rss_mib,
                )
            results[rows][label] = {
                "seconds": outcome.get("seconds"),
                # Spark works in a JVM and Python workers: the session's sampled peak
                "rss_mib": outcome.get("tree_rss_mib" if engine == "spark" else "rss_mib"),
                "error": outcome.get("error"),
                "spilled_mib": outcome.get("spilled_mib"),
            }
            shown = "failed" if outcome.get("seconds") is None else f"{outcome['seconds']:.2f} s"
            if outcome.get("spilled_mib"):
                shown += f", spilled {outcome['spilled_mib']:,.0f} MiB"
            print(f"             {shown}, {outcome['rss_mib']:,.0f} MiB {outcome.get('error', '')}")
    (out / f"{name}.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    plot(results, out / f"{name}.svg")
    labels = list(dict.fromkeys(label for runs in results.values() for label in runs))
    print("\n| run | " + " | ".join(f"{rows / 1e6:g}M rows" for rows in results) + " |")
    print("|---|" + "---|" * len(results))
    for label in labels:
        cells = []
        for runs in results.values():
            r = runs.get(label)
            if r is None:
                cells.append("not run")
            elif r["seconds"] is None:
                cells.append(f"failed ({r['error']})")
            else:
                spilled = f", spilled {r['spilled_mib']:,.0f} MiB" if r.get("spilled_mib") else ""
                cells.append(f"{r['seconds']:.1f} s, {r['rss_mib']:,.0f} MiB{spilled}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
