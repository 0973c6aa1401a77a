"""The typed blocks of a Report: its `users`, each of its `inputs` and its `conventions`,
as the JSON report holds them (a notebook's editor completes their keys; mypy checks the
code that builds and reads them)."""

# no `from __future__ import annotations`: TypedDict reads NotRequired from the annotations
from typing import Any, NotRequired, TypedDict


class UserReasons(TypedDict):
    """Users counted as 0, or skipped, for either reason."""

    no_recommendations: int
    no_relevant: int


class TiesBlock(TypedDict):
    """Under tie_break expected: the positions within the deepest cutoff whose item shares
    its score (or rank) with another item of its list, the ties they make, the users with
    one; the metrics are averaged over every order of those items."""

    tied_positions: int
    tied_groups: int
    users_with_ties: int


class UsersBlock(TypedDict):
    """Who was evaluated: the ground truth's users against the predictions'."""

    in_ground_truth: int
    in_predictions: int
    in_both: int
    evaluated: int  # the users in the means
    counted_as_zero: UserReasons
    skipped: UserReasons
    only_in_predictions: int
    # a metric whose mean counts other users than `evaluated` (its own user rules)
    evaluated_per_metric: NotRequired[dict[str, int]]
    # tie_break expected: the tied positions within the cutoffs (metric_users.TIE_TALLY)
    ties: NotRequired[TiesBlock]


class InputBlock(TypedDict, total=False):
    """One input file as read: where, how, and its fingerprint; and, under `engine`, the
    engine of a partitioned or Spark run (its name and partitions or buckets)."""

    path: str
    format: str | None
    layout: str
    columns: dict[str, str | None]
    size_bytes: int
    modified: str
    rows: int | None
    users: int | None
    page_checksums: dict[str, Any]  # a Parquet file's pages checked against their CRC-32
    content_hash: str  # the ground truth's order-free content hash
    hash_method: str
    name: str  # the `engine` entry: partitions's polars engine, or spark
    partitions: int
    buckets: int
    spark: str  # Spark's version
    collected_bytes: int


class ToolMeasureBlock(TypedDict):
    """A metric written in another tool's name (conventions.by_metric)."""

    tool: str
    metric: str  # the receval metric it is
    preset: str
    differs: dict[str, Any]  # its settings and parameters that differ from the run's
    provider: NotRequired[str]  # ir_measures: the provider that computes it there


class ConventionsBlock(TypedDict, total=False):
    """The conventions in force (config/conventions.py: every setting), and each tool
    name's own under `by_metric`."""

    preset: str | None
    relevance_threshold: float
    tie_break: str
    users_without_recommendations: str
    users_without_relevant: str
    prediction_only_users: str
    precision_denominator: str
    ap_denominator: str
    ideal_dcg: str
    gain: str
    gain_below_threshold: str
    fractional_grades: str
    discount: str
    score_precision: str
    duplicates: str
    truth_duplicates: str
    max_depth: int | None
    unrated: str
    default_rating: float | None
    unpredicted: str
    default_prediction: float | None
    prediction_threshold: float | None
    by_metric: dict[str, ToolMeasureBlock]
