"""The --per-user table: every model's per-user values, null where a user is not in a
metric's mean (the run's buckets' rows, sorted by user; see evaluation/assembly.py)."""

from __future__ import annotations

import polars as pl

from receval_cli.errors import InternalError
from receval_cli.results.report import RunReport


def per_user_values(result: RunReport) -> pl.LazyFrame:
    """Every model's per-user table (user, status, one column per per-user metric, null
    where the user is not in that metric's mean), with the model's name first."""
    frames = []
    for name, report in result.models.items():
        if report.per_user_rows is None:
            raise InternalError(f"internal error: model {name} kept no per-user rows.")
        frames.append(report.per_user_rows.select(pl.lit(name).alias("model"), pl.all()))
    return pl.concat(frames, how="diagonal")
