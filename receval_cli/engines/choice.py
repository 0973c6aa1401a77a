"""Which engine collects the lazy queries: polars in memory, polars streaming, polars GPU.

`auto` streams when the predictions on disk reach STREAMING_FROM bytes: polars' streaming
engine processes the files in batches. In benchmarks/bench_scale.py it was as fast as the
in-memory engine at 1M rows (7 MiB of Parquet), and faster with less memory from 10M rows
(73 MiB) up. From PARTITION_FROM bytes, `auto` also evaluates the users in partitions
(engines/partitions.py) when the run allows it (no intervals, comparisons or segments),
and with more partitions where the memory available to the process (its cgroup's limit,
`ulimit -v`, the free memory) would not hold one, or where one pass would peak above
PEAK_GOAL, whatever is free (engines/memory.py). Spark is its own path (engines/spark.py).
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from receval_cli.engines.memory import (
    FIXED,
    MIN_SPLIT,
    PER_ROW,
    SHARE,
    available_bytes,
    rows_on_disk,
)
from receval_cli.errors import UsageError

STREAMING_FROM = 32 * 2**20  # bytes of predictions files
PARTITION_FROM = 512 * 2**20  # auto: from here, users in partitions ...
PARTITION_SIZE = 256 * 2**20  # ... of about this many bytes of predictions each


MAX_AUTO_PARTITIONS = 256
PEAK_GOAL = 5 * 2**29  # 2.5 GiB: the most memory `auto` plans a run for


def auto_partitions(predictions: Iterable[Path], others: Iterable[Path] = ()) -> int:
    """How many partitions `auto` uses: one per PARTITION_SIZE bytes of predictions from
    PARTITION_FROM bytes (100M rows, 733 MiB: 3; at 4 the run took the time of a single
    pass with a third of its memory), and more where the memory available would not hold
    a partition of that size (engines/memory.py; `others`: the ground truth's files)."""
    paths = list(predictions)
    size = sum(p.stat().st_size for p in paths if p.is_file())
    by_size = 1 if size < PARTITION_FROM else -(-size // PARTITION_SIZE)
    if not paths:
        return by_size
    rows = max(rows_on_disk([p]) for p in paths) + rows_on_disk(others)  # models one by one
    return max(by_size, _partitions_that_fit(rows))


RANGES_FROM = 20_000_000  # prediction rows: auto reads them in ranges of users from here
RANGE_ROWS = (2_000_000, 8_000_000)  # the fewest and most prediction rows a range holds
PER_RANGE_ROW = 160  # bytes at the peak per prediction row of a range (the next one read meanwhile)


def range_rows(predictions: Iterable[Path], others: Iterable[Path] = ()) -> int:
    """The prediction rows of a range of users (engines/ranges.py) for `auto`, 0 for one
    pass: ranges from RANGES_FROM rows, or where one pass would not fit in the memory
    planned (see _partitions_that_fit); each range as large as that memory holds."""
    given = os.environ.get("RECEVAL_RANGE_ROWS", "").strip()
    if given.isdigit() and int(given) > 0:  # ranges of this many rows, whatever the size
        return int(given)
    paths = [p for p in predictions if p.exists()]
    if not paths:
        return 0
    rows = max(rows_on_disk([p]) for p in paths)
    if rows < RANGES_FROM and _partitions_that_fit(rows + rows_on_disk(others)) == 1:
        return 0
    if resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY:
        # under `ulimit -v`, address space runs out first: polars' streaming reader and
        # the reading threads reserve far more of it than a range needs (hash partitions)
        return 0
    fitting = max(_planned_bytes() - FIXED, 0) // PER_RANGE_ROW
    if fitting < RANGE_ROWS[0]:  # too little memory for the least range: hash partitions
        return 0
    return int(min(fitting, RANGE_ROWS[1]))


def _planned_bytes() -> int:
    """The most memory a run plans to use: the share of the available memory, never more
    than PEAK_GOAL (unknown memory: PEAK_GOAL)."""
    available = available_bytes()
    return PEAK_GOAL if available is None else min(int(SHARE * available), PEAK_GOAL)


def _partitions_that_fit(rows: int) -> int:
    """The fewest partitions of `rows` rows whose estimated peak fits in what a run plans
    to use: the share of the available memory, and never more than PEAK_GOAL, however much
    is free (the default run at 100M rows peaked at 5.5 GiB on a 23 GiB machine in one pass,
    more than DuckDB's query; in 3 to 4 partitions it stays near 2 GiB at about the same
    speed). Unknown memory: PEAK_GOAL alone."""
    if PER_ROW * rows <= MIN_SPLIT:
        return 1  # too few rows for passes to save anything
    budget = max(_planned_bytes() - FIXED, MIN_SPLIT)
    return min(-(-PER_ROW * rows // budget), MAX_AUTO_PARTITIONS)


def polars_engine(choice: str, predictions: Iterable[Path] = ()) -> Any:
    """The `engine` argument of polars' collect for a config's `engine` choice."""
    if choice == "streaming":
        return "streaming"
    if choice == "in_memory":
        return "in-memory"
    if choice == "gpu":
        return _gpu_engine()
    if choice == "auto":
        paths = list(predictions)
        size = sum(p.stat().st_size for p in paths if p.is_file())
        if size >= STREAMING_FROM or _partitions_that_fit(rows_on_disk(paths)) > 1:
            return "streaming"  # batches: less memory than the in-memory engine
        return "auto"  # polars' own choice
    raise UsageError(
        f"engine '{choice}' does not run through polars' collect.", key="engine", found=choice
    )


def _gpu_engine() -> Any:
    """polars' GPU engine, set to fail (not fall back to the CPU) on anything it cannot run."""
    try:
        import cudf_polars  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        raise UsageError(
            "engine: gpu needs polars' GPU engine (the cudf-polars package, for an NVIDIA GPU), "
            "which is not installed. cudf-polars 26.10 supports polars 1.x only, and receval "
            "needs polars 2; use engine: streaming or in_memory until cudf-polars supports "
            "polars 2.",
            key="engine",
            found="gpu",
        ) from None
    import polars as pl

    return pl.GPUEngine(raise_on_fail=True)
