"""`comparison.lists` over a set of users: a model's lists and the baseline model's, each
ranked as the evaluation ranks it (prepare.model_lists), paired user by user, and each list
measure's exact sum over the users with a value, and how many those are (ListSum).

Every engine computes these on a bucket of users (one pass: all users; `partitions: N`:
each hash bucket; Spark: each co-grouped bucket, on an executor) and adds the buckets'
ListSums up: each user's value depends on that user's two lists only, and the sums are
exact (metrics/exact_sum.py), so the mean is the same bits whatever the buckets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.evaluation.prepare import model_lists
from receval_cli.inputs.readers import Input
from receval_cli.metrics.exact_sum import ExactSum, exact_sums
from receval_cli.metrics.list_similarity import ListMeasure, per_user


@dataclass(frozen=True)
class ListSum:
    """One list measure over some users: the exact sum of their values (the users with a
    list in both files and a value) and how many those are."""

    total: ExactSum = field(default_factory=ExactSum)
    users: int = 0

    def __add__(self, other: ListSum) -> ListSum:
        return ListSum(self.total + other.total, self.users + other.users)

    def mean(self) -> float | None:
        """The values' sum rounded once to float64, then divided by the users (None: no
        user with a value)."""
        return self.total.total() / self.users if self.users else None

    def to_json(self) -> list[Any]:
        return [self.total.to_json(), self.users]

    @classmethod
    def from_json(cls, data: list[Any]) -> ListSum:
        return cls(ExactSum.from_json(data[0]), int(data[1]))


def list_depth(measures: list[ListMeasure], conventions: Conventions) -> int | None:
    """How deep the lists are read: the largest cutoff (None: a measure without one reads
    the whole lists), within max_depth."""
    cutoffs = [m.k for m in measures]
    depth = None if None in cutoffs else max(k for k in cutoffs if k is not None)
    if conventions.max_depth is not None:
        depth = conventions.max_depth if depth is None else min(depth, conventions.max_depth)
    return depth


def list_sums(
    model: Input,
    baseline: Input,
    measures: list[ListMeasure],
    conventions: Conventions,
    depth: int | None,
) -> list[ListSum]:
    """Each measure's ListSum over the users of these predictions (`model`'s and the
    baseline's, ids aligned with the ground truth) with a list in both."""
    mine = model_lists(model, conventions, depth)
    theirs = model_lists(baseline, conventions, depth)
    a, b = common_types(mine.collect(), theirs.collect())
    pairs = a.rename({"items": "a"}).join(b.rename({"items": "b"}), on="user", how="inner")
    values = [
        per_user(pairs.lazy(), measure).collect().get_column("value").drop_nulls()
        for measure in measures
    ]
    totals = exact_sums(list(values))
    return [ListSum(total, column.len()) for total, column in zip(totals, values, strict=True)]


def common_types(a: pl.DataFrame, b: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Two models' (user, items) lists with their user ids of one type and their items
    of one type: as they are where both models' ids have one type (each model's ids are
    aligned with the ground truth's), else compared as text (each list ranked first in
    its own model's types)."""
    for column, text in (("user", pl.String()), ("items", pl.List(pl.String()))):
        if a.schema[column] != b.schema[column]:
            a, b = (frame.with_columns(pl.col(column).cast(text)) for frame in (a, b))
    return a, b


def user_key(model: pl.DataFrame | pl.LazyFrame, baseline: pl.DataFrame | pl.LazyFrame) -> pl.Expr:
    """The user id as both models' buckets hash it: as it is where both hold it in one
    type, else as text (common_types)."""
    same = model.collect_schema()["user"] == baseline.collect_schema()["user"]
    return pl.col("user") if same else pl.col("user").cast(pl.String)
