"""The intent-aware measures' per-user table (metrics/intent_aware.py), and the ground truth
with an intent column (ground_truth.columns.intent) split for the other metrics.

With an intent column the ground truth's rows are (user, intent, item, rel): its key is
(user, intent, item). `split_intents` dedupes them by that key (truth_duplicates: first,
max; error: counted by `intent_checks` and refused) and gives every other metric one row
per (user, item), graded with the item's highest grade over its intents (a null or NaN
grade of any intent stays, for the input checks). Every engine evaluates a bucket of users
through evaluation/assembly.bucket_partial, which splits the bucket's truth so: in memory,
streaming, partitions and Spark compute the same table from the same rows.

`intent_table` computes every intent-aware value asked for, one user at a time: each
user's relevant (item, intent) pairs (grade >= relevance_threshold, after
fractional_grades) beside its ranked list, in a Python loop per user inside the lazy plan
(`map_batches`, elementwise: a user's values depend on its own row only, so batches and
engines do not change a bit). The greedy ideal list costs (relevant items)^2 per user.
Without an intent column every relevant item is of one intent. Users with no relevant
item have no row (their values are 0: Stats.intent).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.evaluation.prepare import graded_rows, keep_first
from receval_cli.inputs.readers import Input
from receval_cli.metrics.intent_aware import intent_values
from receval_cli.metrics.stats import IntentRequest

INTENT = "intent"
_TRIPLE = ["user", INTENT, "item"]
# the truth check of repeated (user, intent, item) rows (truth_duplicates: error)
REPEATED = "repeated:intent"


def has_intents(truth: Input) -> bool:
    """Whether the ground truth was read with an intent column."""
    return INTENT in truth.columns


def split_intents(truth: Input, conventions: Conventions) -> tuple[Input, pl.LazyFrame | None]:
    """The ground truth as every other metric reads it (one row per (user, item)) and its
    intent rows (user, intent, item, rel, row) deduped by truth_duplicates; without an
    intent column, the truth as it is and None."""
    if not has_intents(truth):
        return truth, None
    rows = truth.frame
    if conventions.truth_duplicates == "first":
        rows = keep_first(rows, _TRIPLE)
    elif conventions.truth_duplicates == "max":
        rows = rows.group_by(_TRIPLE).agg(pl.col("rel").max(), pl.col("row").min())
    rel = pl.col("rel")
    grade = (
        pl.when(rel.null_count() > 0)
        .then(pl.lit(None, dtype=pl.Float64))
        .when(rel.is_nan().any())
        .then(pl.lit(float("nan")))
        .when(rel.is_infinite().any())
        .then(rel.filter(rel.is_infinite()).first())
        .otherwise(rel.max())
    )
    items = rows.group_by("user", "item").agg(grade.alias("rel"), pl.col("row").min())
    return dataclasses.replace(truth, frame=items), rows


def intent_checks(rows: pl.LazyFrame, conventions: Conventions) -> pl.LazyFrame:
    """One row of truth checks of the intent rows: null intents, and under
    truth_duplicates error the rows that repeat a (user, intent, item)."""
    checks = [pl.col(INTENT).null_count().cast(pl.Int64).alias(f"null:{INTENT}")]
    if conventions.truth_duplicates == "error":
        repeated = pl.len() - pl.struct(_TRIPLE).n_unique()
        checks.append(repeated.cast(pl.Int64).alias(REPEATED))
    return rows.select(checks)


def intent_table(
    lists: pl.LazyFrame,
    truth: pl.LazyFrame,
    intents: pl.LazyFrame | None,
    requests: Collection[IntentRequest],
    conventions: Conventions,
) -> pl.LazyFrame:
    """(user, one column per request): `lists` the ranked lists (user, items), `truth`
    the ground truth's (user, item, rel) rows, `intents` its intent rows (None: one
    intent)."""
    ordered = sorted(requests, key=lambda r: r.column)
    if intents is None:
        judged = graded_rows(truth, conventions).with_columns(pl.lit("").alias(INTENT))
    else:
        judged = graded_rows(intents, conventions, (INTENT,))
    pairs = (
        judged.filter(pl.col("relevant"))
        .select(_TRIPLE)
        .unique()
        .group_by("user")
        .agg(pl.col("item").alias("judged_items"), pl.col(INTENT).alias("judged_intents"))
    )
    with_lists = pairs.join(lists.select("user", "items"), on="user", how="left")
    dtype = pl.Struct({r.column: pl.Float64 for r in ordered})

    def compute(users: pl.Series) -> pl.Series:
        values = []
        for user in users:
            judged_pairs = list(zip(user["judged_items"], user["judged_intents"], strict=True))
            found = intent_values(user["items"] or [], judged_pairs, ordered)
            values.append({r.column: found[r] for r in ordered})
        return pl.Series(values, dtype=dtype)

    inputs = pl.struct("items", "judged_items", "judged_intents")
    computed = inputs.map_batches(compute, return_dtype=dtype, is_elementwise=True)
    return with_lists.select("user", computed.alias("intent_values")).unnest("intent_values")
