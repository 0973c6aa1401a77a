"""The (user, item) pairs that rating metrics score: predicted rating against actual rating.

A full join of the predictions' scores and the ground truth's relevance; the conventions
say what happens to a prediction with no rating (`unrated`) and to a rating with no
prediction (`unpredicted`). The counts say how many pairs each rule touched.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from receval_cli.config.conventions import Conventions

_KEY = ["user", "item"]
_EXAMPLES = 3


def joined_pairs(
    predictions: pl.LazyFrame, truth: pl.LazyFrame, positioned: bool = False
) -> pl.LazyFrame:
    """Every predicted or rated (user, item): predicted and actual, null where missing;
    `positioned`: with the prediction's position in its user's list too."""
    position = ["position"] if positioned else []
    return predictions.select(*_KEY, pl.col("score").alias("predicted"), *position).join(
        truth.select(*_KEY, pl.col("rel").alias("actual")), on=_KEY, how="full", coalesce=True
    )


def scored_pairs(joined: pl.LazyFrame, conventions: Conventions) -> pl.LazyFrame:
    """The pairs the rating metrics use, with defaults filled in where the rules say so,
    `relevant` (a click, for AUC) marked, in a fixed order so sums add up the same way."""
    keep = pl.col("predicted").is_not_null() & pl.col("actual").is_not_null()
    filled = []
    if conventions.unrated == "default":
        keep = keep | pl.col("actual").is_null()
        filled.append(pl.col("actual").fill_null(conventions.default_rating))
    if conventions.unpredicted == "default":
        keep = keep | pl.col("predicted").is_null()
        filled.append(pl.col("predicted").fill_null(conventions.default_prediction))
    relevant = pl.col("actual") >= conventions.relevance_threshold
    return (
        joined.filter(keep).with_columns(filled).with_columns(relevant.alias("relevant")).sort(_KEY)
    )


def pair_counts(joined: pl.LazyFrame) -> pl.LazyFrame:
    return joined.select(
        both=(pl.col("predicted").is_not_null() & pl.col("actual").is_not_null()).sum(),
        unrated=pl.col("actual").is_null().sum(),
        unpredicted=pl.col("predicted").is_null().sum(),
    )


def describe_pairs(counts: dict[str, int], conventions: Conventions) -> dict[str, Any]:
    """What the report says about the pairs: how many were used, defaulted or dropped."""
    unrated, unpredicted = counts["unrated"], counts["unpredicted"]
    used = counts["both"]
    used += unrated if conventions.unrated == "default" else 0
    used += unpredicted if conventions.unpredicted == "default" else 0
    return {
        "used": used,
        "with_both": counts["both"],
        "unrated": {"count": unrated, "rule": conventions.unrated},
        "unpredicted": {"count": unpredicted, "rule": conventions.unpredicted},
    }
