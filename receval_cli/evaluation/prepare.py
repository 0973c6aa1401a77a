"""Prepare once, evaluate many: rank the predictions, index the ground truth, join them.

The results are the `lists`, `truth` and `hits` tables described in metrics/stats.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.inputs.list_order import sorted_by_rank, tie_order
from receval_cli.inputs.readers import Input

_KEY = ["user", "item"]


def keep_first(frame: pl.LazyFrame, key: Sequence[str] = _KEY) -> pl.LazyFrame:
    """The first row (in file order) of each `key` (user, item)."""
    return frame.filter(pl.col("row") == pl.col("row").min().over(key))


def with_score_precision(frame: pl.LazyFrame, by: str, precision: str) -> pl.LazyFrame:
    """Round scores to single precision when the `score_precision` convention says so."""
    if by != "score" or precision == "float64":
        return frame
    return frame.with_columns(pl.col("score").cast(pl.Float32).cast(pl.Float64))


def dedupe_predictions(frame: pl.LazyFrame, by: str, policy: str) -> pl.LazyFrame:
    """Apply the `duplicates` convention (`error` is checked in checks.py, not here).

    `by` is the column that orders the list: "score" (descending) or "rank" (ascending).
    """
    if policy == "first":
        return keep_first(frame)
    if policy == "max_score":
        value = pl.col(by)
        best = value.max() if by == "score" else value.min()
        return frame.group_by(_KEY).agg(best, pl.col("row").filter(value == best).min())
    return frame


def list_positions(by: str, tie_break: str) -> pl.Expr:
    """Each row's position in its user's list (1 = first), in the order rank_lists uses:
    `by` (score descending, or rank ascending), then the tie-break (tie_order)."""
    second, second_descending = tie_order(tie_break)
    order = pl.arg_sort_by([pl.col(by), second], descending=[by == "score", second_descending])
    return (order.arg_sort() + 1).over("user")


def first_of_lists(
    frame: pl.LazyFrame, conventions: Conventions, positions: bool
) -> tuple[pl.LazyFrame, bool]:
    """The scored predictions the click and pair metrics see: each user's first max_depth
    by score and tie_break (every row without max_depth); with `positions` (a metric@k
    to cut later) or max_depth, each row keeps its `position` in its list (list_positions).
    Returns the frame and whether it has that column; nothing is ranked when neither
    asks for it."""
    if conventions.max_depth is None and not positions:
        return frame, False
    positioned = frame.with_columns(
        list_positions("score", conventions.tie_break).alias("position")
    )
    if conventions.max_depth is not None:
        positioned = positioned.filter(pl.col("position") <= conventions.max_depth)
    return positioned, True


def rank_lists(
    frame: pl.LazyFrame,
    by: str,
    tie_break: str,
    max_depth: int | None,
    extra: list[pl.Expr],
    ties: bool = False,
) -> pl.LazyFrame:
    """One row per user: its items in rank order (the top max_depth), and its row count.

    Items are ordered by score descending (or rank ascending), then by `tie_break`; the
    order is total, so the ranking depends neither on the engine nor on the row order of
    the file (except for input_order, which uses it on purpose). `extra` aggregations
    (checks) ride along in the same group_by. `ties` (tie_break expected): see tied_lists.
    """
    if ties:
        return tied_lists(frame, by, tie_break, max_depth, extra)
    ordered = sorted_by_rank(pl.col("item"), by, tie_break)
    if max_depth is not None:
        ordered = ordered.head(max_depth)
    return frame.group_by("user").agg(ordered.alias("items"), pl.len().alias("list_rows"), *extra)


def tied_lists(
    frame: pl.LazyFrame, by: str, tie_break: str, max_depth: int | None, extra: list[pl.Expr]
) -> pl.LazyFrame:
    """rank_lists for tie_break expected: each list also keeps, item by item, its tie: the
    first position its tied items (equal scores, or ranks) hold (`tie_first`) and how many
    they are (`tie_size`); it goes on past max_depth to the end of the tie at that position
    (any of those items may be there). And the user's `tied_positions` within max_depth
    (holding an item another item of the list shares its score with) and the ties that
    start there (`tied_groups`). Row-wise windows, then one group_by."""
    position = pl.col("position")
    tie = ["user", by]
    placed = frame.with_columns(list_positions(by, tie_break).alias("position")).with_columns(
        position.min().over(tie).alias("tie_first"),
        pl.len().over(tie).cast(pl.UInt32).alias("tie_size"),
    )
    first, size = pl.col("tie_first"), pl.col("tie_size")
    kept = pl.lit(True) if max_depth is None else first <= max_depth
    within = pl.lit(True) if max_depth is None else position <= max_depth
    tied = (size > 1) & within
    order = position.filter(kept)
    return placed.group_by("user").agg(
        pl.col("item").filter(kept).sort_by(order).alias("items"),
        first.filter(kept).sort_by(order).cast(pl.UInt32).alias("tie_first"),
        size.filter(kept).sort_by(order).alias("tie_size"),
        tied.sum().cast(pl.UInt32).alias("tied_positions"),
        (tied & (position == first)).sum().cast(pl.UInt32).alias("tied_groups"),
        pl.len().alias("list_rows"),
        *extra,
    )


def ranked_items(lists: pl.LazyFrame, ties: bool = False) -> pl.LazyFrame:
    """(user, item, rank) from the per-user ranked lists; with `ties` (tied_lists), each
    row's tie too: `tie_first`, the first rank its tied items hold, and `tie_size`, how
    many they are (1 for an item no other shares its score with)."""
    positions = pl.int_ranges(1, pl.col("items").list.len() + 1, dtype=pl.UInt32)
    columns = ["item", "rank", *(["tie_first", "tie_size"] if ties else [])]
    return (
        lists.select("user", pl.col("items").alias("item"), positions.alias("rank"), *columns[2:])
        .explode(columns)
        .drop_nulls("item")  # an empty list explodes to one null row
    )


def index_truth(frame: pl.LazyFrame, conventions: Conventions) -> pl.LazyFrame:
    """Dedupe the ground truth, read its grades as `fractional_grades` says, and mark the
    relevant items."""
    if conventions.truth_duplicates == "first":
        frame = keep_first(frame)
    elif conventions.truth_duplicates == "max":
        frame = frame.group_by(_KEY).agg(pl.col("rel").max())
    return graded_rows(frame, conventions)


def graded_rows(
    frame: pl.LazyFrame, conventions: Conventions, keep: tuple[str, ...] = ()
) -> pl.LazyFrame:
    """(user, item, *keep, rel, relevant): the grades read as `fractional_grades` says,
    and the relevant items marked (rel >= relevance_threshold)."""
    grade = pl.col("rel")
    if conventions.fractional_grades == "truncate":  # toward zero, as C's atol reads "2.5"
        grade = grade.cast(pl.Float64)
        grade = pl.when(grade >= 0).then(grade.floor()).otherwise(grade.ceil())
    relevant = grade >= conventions.relevance_threshold
    return frame.select("user", "item", *keep, grade.alias("rel"), relevant.alias("relevant"))


def join_hits(ranked: pl.LazyFrame, truth: pl.LazyFrame) -> pl.LazyFrame:
    """The recommended items that are in the ground truth: the only rows that can score."""
    return ranked.join(truth, on=_KEY, how="inner")


def model_lists(predictions: Input, conventions: Conventions, depth: int | None) -> pl.LazyFrame:
    """(user, items): each user's list in rank order, as the evaluation ranks it (score
    precision, duplicates, tie_break), the top `depth` (None: all)."""
    by = predictions.value_column
    scored = with_score_precision(predictions.frame, by, conventions.score_precision)
    deduped = dedupe_predictions(scored, by, conventions.duplicates)
    return rank_lists(deduped, by, conventions.tie_break, depth, []).select("user", "items")
