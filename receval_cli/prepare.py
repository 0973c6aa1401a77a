"""Prepare once, evaluate many: rank the predictions, index the ground truth, join them.

The results are the `lists`, `truth` and `hits` tables described in metrics/stats.py.
"""

from __future__ import annotations

import polars as pl

from receval_cli.conventions import Conventions

_KEY = ["user", "item"]


def _keep_first(frame: pl.LazyFrame) -> pl.LazyFrame:
    return frame.filter(pl.col("row") == pl.col("row").min().over(_KEY))


def dedupe_predictions(frame: pl.LazyFrame, by: str, policy: str) -> pl.LazyFrame:
    """Apply the `duplicates` convention (`error` is checked in checks.py, not here).

    `by` is the column that orders the list: "score" (descending) or "rank" (ascending).
    """
    if policy == "first":
        return _keep_first(frame)
    if policy == "max_score":
        value = pl.col(by)
        best = value.max() if by == "score" else value.min()
        return frame.group_by(_KEY).agg(best, pl.col("row").filter(value == best).min())
    return frame


def rank_predictions(
    frame: pl.LazyFrame, by: str, tie_break: str, max_depth: int | None
) -> pl.LazyFrame:
    """Number each user's items 1, 2, ... by score descending (or rank ascending).

    Equal scores are ordered by `tie_break`; the order is total, so the ranking does not
    depend on the engine or on the row order of the file (except for input_order).
    """
    key = pl.col("score") if by == "score" else -pl.col("rank")
    # One direction for every sort key: descending score (or ascending rank) first.
    if tie_break == "item_desc":
        order, descending = [key, pl.col("item")], True
    elif tie_break == "item_asc":
        order, descending = [-key, pl.col("item")], False
    else:
        order, descending = [-key, pl.col("row")], False
    position = pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over(
        "user", order_by=order, descending=descending
    )
    ranked = frame.select("user", "item", position.alias("rank"))
    if max_depth is not None:
        ranked = ranked.filter(pl.col("rank") <= max_depth)
    return ranked


def index_truth(frame: pl.LazyFrame, conventions: Conventions) -> pl.LazyFrame:
    """Dedupe the ground truth, mark relevant items, rank each user's ideal list."""
    if conventions.truth_duplicates == "first":
        frame = _keep_first(frame)
    elif conventions.truth_duplicates == "max":
        frame = frame.group_by(_KEY).agg(pl.col("rel").max())
    ideal = pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over(
        "user", order_by=[pl.col("rel"), pl.col("item")], descending=True
    )
    return frame.select(
        "user",
        "item",
        "rel",
        (pl.col("rel") >= conventions.relevance_threshold).alias("relevant"),
        ideal.alias("ideal_rank"),
    )


def join_hits(ranked: pl.LazyFrame, truth: pl.LazyFrame) -> pl.LazyFrame:
    """The recommended items that are in the ground truth: the only rows that can score."""
    return ranked.join(truth.select(*_KEY, "rel", "relevant"), on=_KEY, how="inner")
