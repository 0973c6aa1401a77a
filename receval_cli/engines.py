"""Which engine collects the lazy queries: polars in memory, polars streaming, polars GPU.

`auto` streams when the predictions on disk reach STREAMING_FROM bytes: polars' streaming
engine processes the files in batches. In benchmarks/bench_scale.py it was as fast as the
in-memory engine at 1M rows (7 MiB of Parquet), and faster with less memory from 10M rows
(73 MiB) up. Spark is its own path (spark_engine.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from receval_cli.errors import UsageError

STREAMING_FROM = 32 * 2**20  # bytes of predictions files


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
        return "streaming" if size >= STREAMING_FROM else "in-memory"
    raise UsageError(f"engine '{choice}' does not run through polars' collect.")


def _gpu_engine() -> Any:
    """polars' GPU engine, set to fail (not fall back to the CPU) on anything it cannot run."""
    try:
        import cudf_polars  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        raise UsageError(
            "engine: gpu needs polars' GPU engine (the cudf-polars package, for an NVIDIA GPU), "
            "which is not installed. cudf-polars 26.10 supports polars 1.x only, and receval "
            "needs polars 2; use engine: streaming or in_memory until cudf-polars supports "
            "polars 2."
        ) from None
    import polars as pl

    return pl.GPUEngine(raise_on_fail=True)
