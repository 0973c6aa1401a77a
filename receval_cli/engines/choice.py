"""Which engine collects the lazy queries: polars in memory, polars streaming, polars GPU.

`auto` streams when the predictions on disk reach STREAMING_FROM bytes: polars' streaming
engine processes the files in batches. In benchmarks/bench_scale.py it was as fast as the
in-memory engine at 1M rows (7 MiB of Parquet), and faster with less memory from 10M rows
(73 MiB) up. From PARTITION_FROM bytes, `auto` also evaluates the users in partitions
(engines/partitions.py) when the run allows it (no click metric, no intervals, comparisons or
segments). Spark is its own path (engines/spark.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from receval_cli.errors import UsageError

STREAMING_FROM = 32 * 2**20  # bytes of predictions files
PARTITION_FROM = 512 * 2**20  # auto: from here, users in partitions ...
PARTITION_SIZE = 256 * 2**20  # ... of about this many bytes of predictions each


def auto_partitions(predictions: Iterable[Path]) -> int:
    """How many partitions `auto` uses: 1 below PARTITION_FROM bytes of predictions, else
    one per PARTITION_SIZE bytes (100M rows, 733 MiB: 3; at 4 the run took the time of a
    single pass with a third of its memory)."""
    size = sum(p.stat().st_size for p in predictions if p.is_file())
    return 1 if size < PARTITION_FROM else -(-size // PARTITION_SIZE)


def polars_engine(choice: str, predictions: Iterable[Path] = ()) -> Any:
    """The `engine` argument of polars' collect for a config's `engine` choice."""
    if choice == "streaming":
        return "streaming"
    if choice == "in_memory":
        return "in-memory"
    if choice == "gpu":
        return _gpu_engine()
    if choice == "auto":
        size = sum(p.stat().st_size for p in predictions if p.is_file())
        return "streaming" if size >= STREAMING_FROM else "auto"  # polars' own choice
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
