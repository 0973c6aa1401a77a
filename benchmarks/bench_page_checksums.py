"""The cost of checking Parquet page checksums (inputs/parquet_pages.py) beside a run.

    uv run python benchmarks/bench_page_checksums.py [--users 100000] [--per-user 100]
    uv run python benchmarks/bench_page_checksums.py --walk FILE [FILE ...]

Writes bench.py's data (users x per-user predictions, default 10 million rows) again with
pyarrow and `write_page_checksum=True` (zstd, as polars writes), then times, with the
files in the page cache: the checksum check of the predictions file (best of 5), the same
walk of polars' own file (no checksums: only the headers are read), each with the compiled
walk of the pages (receval_cli/_pages.c) and the Python one (RECEVAL_CORE=polars), and
`receval run` on the checksummed files (best of 3, the check included). `--walk` times only
the two walks of the files given (the files are read, never written). Needs pyarrow (a dev
dependency).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
from bench import data_paths, generate, warm_page_cache, write_receval_config

from receval_cli.inputs.parquet_pages import compiled_walk, first_damaged_page, pages


def best(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def walks(path: Path, runs: int = 5) -> dict[str, object]:
    """first_damaged_page of the file (best of `runs`) with the compiled walk of the pages
    (None where it is not built) and with the Python one, and what they found (the same)."""
    before = os.environ.get("RECEVAL_CORE")
    timed: dict[str, float | None] = {"compiled_s": None}
    found = {}
    try:
        for name, core in (("compiled", ""), ("python", "polars")):
            os.environ["RECEVAL_CORE"] = core
            if name == "compiled" and compiled_walk() is None:
                continue
            timed[f"{name}_s"] = best(runs, lambda: first_damaged_page(path))
            found[name] = (pages(path), first_damaged_page(path))
    finally:
        if before is None:
            os.environ.pop("RECEVAL_CORE", None)
        else:
            os.environ["RECEVAL_CORE"] = before
    assert found.get("compiled", found["python"]) == found["python"]
    walked, damaged = found["python"]
    checked = sum(page.recorded is not None for page in walked)
    return {"pages": len(walked), "checked": checked, "damaged": damaged is not None, **timed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--per-user", type=int, default=100)
    parser.add_argument("--data-dir", type=Path, default=Path(__file__).parent / "data")
    parser.add_argument("--walk", type=Path, nargs="+", help="only time the walks of these")
    args = parser.parse_args()
    if args.walk:
        warm_page_cache(*args.walk)
        timed = {str(path): {"bytes": path.stat().st_size, **walks(path)} for path in args.walk}
        print(json.dumps(timed, indent=2))
        return
    args.data_dir.mkdir(parents=True, exist_ok=True)
    predictions, truth = data_paths(args.data_dir, args.users, args.per_user, seed=0)
    if not predictions.exists():
        generate(args.users, args.per_user, 0, predictions, truth)
    checked = {}
    for name, source in (("predictions", predictions), ("truth", truth)):
        target = args.data_dir / f"checksummed_{source.name}"
        if not target.exists():
            pq.write_table(
                pq.read_table(source), target, compression="zstd", write_page_checksum=True
            )
        checked[name] = target
    warm_page_cache(predictions, *checked.values())
    found = pages(checked["predictions"])
    assert found
    assert all(p.recorded is not None and p.recorded == p.computed for p in found)
    config = write_receval_config(args.data_dir, checked["predictions"], checked["truth"])

    out = args.data_dir / "checksums_report.json"
    command = [sys.executable, "-m", "receval_cli", "run", str(config), "--output", str(out)]

    result = {
        "rows": args.users * args.per_user,
        "bytes": checked["predictions"].stat().st_size,
        "pages": len(found),
        "check": walks(checked["predictions"]),
        "walk_without_checksums": walks(predictions),
        "run_s": best(3, lambda: subprocess.run(command, check=True, capture_output=True)),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
