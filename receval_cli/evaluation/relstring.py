"""trec_eval's relstring: per user, the grades of the top n items as one character each.

Not a metric (it is text, and has no mean): `receval_cli.relstrings` returns it per user
(the Python API), as trec_eval -q prints `relstring <query> '<string>'` (m_relstring.c):

    0-9   the item's grade (a fractional grade truncated: 2.5 shows 2)
    >     a grade above 9
    -     an item not in the ground truth (not judged)
    .     an item judged with a negative grade (trec_eval: in the pool, unjudged)
"""

from __future__ import annotations

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.evaluation.intent_lists import split_intents
from receval_cli.evaluation.prepare import (
    dedupe_predictions,
    index_truth,
    rank_lists,
    ranked_items,
    with_score_precision,
)
from receval_cli.inputs.readers import Input

DEFAULT_LENGTH = 10  # trec_eval's relstring.10


def relstring_char(rel: pl.Expr) -> pl.Expr:
    """One item's character (rel: its grade, null when it is not in the ground truth)."""
    digit = rel.cast(pl.Float64).floor().cast(pl.Int64).cast(pl.String)
    return (
        pl.when(rel.is_null())
        .then(pl.lit("-"))
        .when(rel < 0)
        .then(pl.lit("."))
        .when(rel >= 10)
        .then(pl.lit(">"))
        .otherwise(digit)
    )


def relstring_table(
    predictions: Input, truth: Input, conventions: Conventions, length: int = DEFAULT_LENGTH
) -> pl.DataFrame:
    """(user, relstring) for every user of the ground truth, sorted by user: the top
    `length` items of the list ranked as the metrics rank it (score precision, duplicates,
    tie_break and max_depth conventions), '' for a user with no recommendation."""
    if length < 1:
        raise ValueError(f"relstring length must be a positive integer, got {length}")
    by = predictions.value_column
    scored = with_score_precision(predictions.frame, by, conventions.score_precision)
    deduped = dedupe_predictions(scored, by, conventions.duplicates)
    limit = length if conventions.max_depth is None else min(length, conventions.max_depth)
    lists = rank_lists(deduped, by, conventions.tie_break, limit, [])
    items = split_intents(truth, conventions)[0]  # each item once, its highest grade
    indexed = index_truth(items.frame, conventions)
    rows = ranked_items(lists).join(indexed, on=["user", "item"], how="left")
    texts = rows.group_by("user").agg(
        relstring_char(pl.col("rel")).sort_by(pl.col("rank")).str.join("").alias("relstring")
    )
    users = indexed.select("user").unique()
    joined = users.join(texts, on="user", how="left")
    return joined.with_columns(pl.col("relstring").fill_null("")).sort("user").collect()
