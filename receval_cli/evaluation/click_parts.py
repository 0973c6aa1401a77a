"""The click metrics in parts that add up: a bucket of users -> ClickParts -> the estimates.

Each ctr estimator (metrics/ctr.py) is a mean or a ratio of sums over the recommendations,
its variance and effective sample size functions of sums of squares. A bucket of users
(all their recommendations and log rows: evaluation/clicks.py joins them) gives those sums
(`click_parts`): per metric, the number of round terms, the exact sum of the terms and of
their squares, the matched recommendations' number, the exact sum of their weights and of
the weights' squares (metrics/exact_sum.py, metrics/exact_squares.py); and the counts of the
report's `logged` block, the weights' distribution and the log's failed checks (their
first rows). Buckets' parts add up exactly (`+`, in any order), and `finish_clicks` checks
the log and computes every value once from the sums, rounded once: a single pass,
partitions: N and Spark report the same bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.evaluation.clicks import (
    EXAMPLES,
    bad_rows_error,
    checked_log,
    dedupe_log,
    failing_rows,
    joined_recommendations,
    log_problems,
    require_scores,
)
from receval_cli.evaluation.wire import from_ipc_text, ipc_text
from receval_cli.inputs.readers import Input
from receval_cli.metrics import MetricSpec
from receval_cli.metrics.ctr import row_term, row_weight
from receval_cli.metrics.exact_squares import ExactSquares, exact_squares
from receval_cli.metrics.exact_sum import ExactSum, exact_sums

_WEIGHTS = {"weight": pl.Float64, "recommendations": pl.Int64}


@dataclass
class MetricParts:
    """One click metric's sums over a bucket: its round terms (count, sum, sum of squares)
    and its matched recommendations' weights (count, sum, sum of squares)."""

    terms: int = 0
    total: ExactSum = field(default_factory=ExactSum)
    squares: ExactSquares = field(default_factory=ExactSquares)
    weighted: int = 0
    weights: ExactSum = field(default_factory=ExactSum)
    weight_squares: ExactSquares = field(default_factory=ExactSquares)

    def __add__(self, other: MetricParts) -> MetricParts:
        return MetricParts(
            self.terms + other.terms,
            self.total + other.total,
            self.squares + other.squares,
            self.weighted + other.weighted,
            self.weights + other.weights,
            self.weight_squares + other.weight_squares,
        )

    def to_json(self) -> list[object]:
        return [
            self.terms,
            self.total.to_json(),
            self.squares.to_json(),
            self.weighted,
            self.weights.to_json(),
            self.weight_squares.to_json(),
        ]

    @classmethod
    def from_json(cls, data: list[Any]) -> MetricParts:
        return cls(
            int(data[0]),
            ExactSum.from_json(data[1]),
            ExactSquares.from_json(data[2]),
            int(data[3]),
            ExactSum.from_json(data[4]),
            ExactSquares.from_json(data[5]),
        )


@dataclass
class ClickParts:
    """What a bucket of users gives of the click metrics. `problems`: per check of the log,
    how many rows fail it, and `examples` the first of them (row, user, item, value; `row`
    the file's row when `file_rows`, else the bucket's); `weights`: the matched
    recommendations counted by their inverse propensity (3 significant digits), one table
    per bucket; `log_items`: the run's distinct logged items (the propensity without a
    propensity column)."""

    has_propensity: bool
    log_items: int
    file_rows: bool
    logged_rows: int = 0
    recommendations: int = 0
    matched: int = 0
    metrics: dict[str, MetricParts] = field(default_factory=dict)
    problems: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    weights: list[pl.DataFrame] = field(default_factory=list)

    def __add__(self, other: ClickParts) -> ClickParts:
        metrics = dict(self.metrics)
        for name, part in other.metrics.items():
            metrics[name] = metrics[name] + part if name in metrics else part
        problems = dict(self.problems)
        for key, count in other.problems.items():
            problems[key] = problems.get(key, 0) + count
        examples = {}
        for key in dict.fromkeys([*self.examples, *other.examples]):
            rows = [*self.examples.get(key, []), *other.examples.get(key, [])]
            examples[key] = sorted(rows, key=_example_order)[:EXAMPLES]
        return ClickParts(
            self.has_propensity,
            self.log_items,
            self.file_rows and other.file_rows,
            self.logged_rows + other.logged_rows,
            self.recommendations + other.recommendations,
            self.matched + other.matched,
            metrics,
            problems,
            examples,
            [_summed_weights([*self.weights, *other.weights])],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "has_propensity": self.has_propensity,
            "log_items": self.log_items,
            "file_rows": self.file_rows,
            "counts": [self.logged_rows, self.recommendations, self.matched],
            "metrics": {name: part.to_json() for name, part in self.metrics.items()},
            "problems": self.problems,
            "examples": self.examples,
            "weights": [ipc_text(table) for table in self.weights],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClickParts:
        rows, recommendations, matched = (int(v) for v in data["counts"])
        return cls(
            bool(data["has_propensity"]),
            int(data["log_items"]),
            bool(data["file_rows"]),
            rows,
            recommendations,
            matched,
            {name: MetricParts.from_json(part) for name, part in data["metrics"].items()},
            {key: int(count) for key, count in data["problems"].items()},
            data["examples"],
            [from_ipc_text(table) for table in data["weights"]],
        )


def _example_order(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["row"], repr(row["user"]), repr(row["item"]))


def _summed_weights(tables: list[pl.DataFrame]) -> pl.DataFrame:
    found = pl.concat([pl.DataFrame(schema=_WEIGHTS), *tables])
    summed = found.group_by("weight").agg(pl.col("recommendations").sum().cast(pl.Int64))
    return summed.sort("weight")


def log_items(truth: Input) -> int:
    """The log's distinct items (the default propensity is 1 over their number)."""
    return int(truth.frame.select(pl.col("item").n_unique()).collect().item())


def click_parts(
    predictions: Input,
    truth: Input,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    items: int | None = None,
) -> ClickParts | None:
    """A bucket's parts of the click metrics `specs` (its users' recommendations and log
    rows); `items`: the run's distinct logged items (None: this log's, a one-bucket run).
    None when the predictions have no scores (finish_clicks says so)."""
    if predictions.value_column != "score":
        return None
    has_propensity = "propensity" in truth.frame.collect_schema().names()
    log = dedupe_log(truth.frame, conventions.truth_duplicates, has_propensity)
    problems, sizes = pl.collect_all(
        [log_problems(log, has_propensity), log.select(pl.len().alias("rows"))]
    )
    if items is None:
        items = log_items(truth)
    parts = ClickParts(has_propensity, items, truth.format != "spark")
    parts.logged_rows = int(sizes.item())
    parts.problems = {key: int(count) for key, count in problems.row(0, named=True).items()}
    for key, count in parts.problems.items():
        if count:
            parts.examples[key] = failing_rows(log, key, has_propensity)
    if any(parts.problems.values()):
        return parts  # finish_clicks refuses the log
    joined = joined_recommendations(predictions, log, specs, conventions, has_propensity, items)
    names = [str(spec) for spec in specs]
    columns = []
    for spec in specs:
        params = conventions.metric_params(spec)
        columns += [row_term(spec.k, params), row_weight(spec.k, params)]
    matched = pl.col("click").is_not_null()
    inverse = (1.0 / pl.col("propensity")).round_sig_figs(3).alias("weight")
    rows, counts, weights = pl.collect_all(
        [
            joined.select(c.alias(str(i)) for i, c in enumerate(columns)),
            joined.select(pl.len().alias("recommendations"), matched.sum().alias("matched")),
            joined.filter(matched).group_by(inverse).agg(recommendations=pl.len()),
        ]
    )
    parts.recommendations, parts.matched = (int(v) for v in counts.row(0))
    parts.weights = [_summed_weights([weights.cast(_WEIGHTS)])]  # type: ignore[arg-type]
    sums = exact_sums(list(rows.get_columns()))
    for i, name in enumerate(names):
        terms, weight = rows.get_column(str(2 * i)), rows.get_column(str(2 * i + 1))
        parts.metrics[name] = MetricParts(
            terms.count(),
            sums[2 * i],
            exact_squares(terms),
            weight.count(),
            sums[2 * i + 1],
            exact_squares(weight),
        )
    return parts


def finish_clicks(
    parts: ClickParts | None,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    predictions: Input,
    truth: Input,
) -> tuple[dict[str, float | None], dict[str, Any], pl.DataFrame]:
    """The click metrics from the merged parts (None: no bucket had a user): the estimates
    (None: matching with no match), the report's `logged` block, and the weights'
    distribution. Refuses predictions without scores and a log that fails its checks,
    with the messages of evaluation/clicks.py."""
    require_scores(predictions)
    if parts is None:  # no user in this segment: nothing logged
        parts = ClickParts(False, 0, True)
    _raise_problems(parts, truth, conventions)
    values: dict[str, float | None] = {}
    sizes: dict[str, float | None] = {}
    spreads: dict[str, float | None] = {}
    for spec in specs:
        name = str(spec)
        part = parts.metrics.get(name, MetricParts())
        estimator = str(conventions.metric_params(spec)["estimator"])
        values[name] = estimate(estimator, part)
        sizes[name] = effective_sample_size(part)
        spreads[name] = variance(estimator, part)
    n_items = parts.log_items
    described = {
        "recommendations": parts.recommendations,
        "matched": parts.matched,
        "logged_rows": parts.logged_rows,
        "propensity": truth.source_column("propensity")
        if parts.has_propensity
        else f"1 / {n_items} logged items",
        "effective_sample_size": sizes,
        # each estimate's variance: its round terms' over their number (metrics/ctr.py)
        "variance": spreads,
    }
    return values, described, _summed_weights(parts.weights)


def _raise_problems(parts: ClickParts, truth: Input, conventions: Conventions) -> None:
    """The log's first failed check, as a single pass states it: its rows by the file's
    row numbers (on Spark, read again from a local log; else named by user and item)."""
    failed = [key for key, count in parts.problems.items() if count]
    if not failed:
        return
    local = truth.format != "spark" and truth.frame.collect_schema().names()
    if not parts.file_rows and local:
        checked_log(None, truth, conventions)  # raises the single pass's error
    key = failed[0]
    raise bad_rows_error(
        truth, key, parts.problems[key], parts.examples.get(key, []), parts.file_rows
    )


def _float(value: Fraction) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def estimate(estimator: str, part: MetricParts) -> float | None:
    """The estimate: the mean of the round terms (None without one), and for snips the
    sum of the ips terms over the weights' sum (None when nothing matched)."""
    if estimator == "snips":
        weights, total = part.weights.fraction(), part.total.fraction()
        if weights is not None and total is not None:
            return None if weights == 0 else _float(total / weights)
        over = part.weights.total()  # a weight or a term is not finite: as IEEE divides
        return None if over == 0 else part.total.total() / over
    return None if part.terms == 0 else part.total.mean(part.terms)


def variance(estimator: str, part: MetricParts) -> float | None:
    """The estimate's variance: the round terms' variance (ddof 1) over their number (snips'
    terms: the ips terms over the mean weight); None below two terms."""
    n = part.terms
    if n < 2:
        return None
    total, squares = part.total.fraction(), part.squares.fraction()
    if total is None or squares is None:
        return math.nan
    if estimator == "snips":
        weights = part.weights.fraction()
        if weights is None or weights == 0:
            return math.nan
        scale = Fraction(n) / weights
        total, squares = total * scale, squares * scale * scale
    return _float((squares - total * total / n) / (n - 1) / n)


def effective_sample_size(part: MetricParts) -> float | None:
    """Kish's effective sample size (sum w)^2 / sum w^2 of the matched recommendations'
    weights, exactly, rounded once; None without one."""
    if part.weighted == 0:
        return None
    weights, squares = part.weights.fraction(), part.weight_squares.fraction()
    if weights is None or squares is None or squares == 0:
        return math.nan
    return _float(weights * weights / squares)
