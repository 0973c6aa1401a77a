"""The Report (one model's results) and the RunReport (a run's): results as data, and
their JSON form.

Values are never rounded in the Report; only the table rounds, when printing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from receval_cli.results.blocks import ConventionsBlock, InputBlock, UsersBlock
from receval_cli.results.gates import GateResult
from receval_cli.version import __version__

if TYPE_CHECKING:
    from receval_cli.results.comparison import Comparison, ListComparison
    from receval_cli.results.run_info import RunInfo


@dataclass(frozen=True)
class Report:
    """One model's results: its metrics, users, inputs and per-user values. A run's report
    (RunReport) holds one or several of them, with what is run-wide (gates, warnings,
    conventions, the resolved config); `receval_cli.evaluate` returns one directly."""

    # null (None) where a metric has no value: auc or gauc with one class of pairs only
    metrics: dict[str, float | None]
    conventions: ConventionsBlock
    inputs: dict[str, InputBlock]
    users: UsersBlock
    # user, status, each per-user metric: null where the user is not in that metric's mean
    # (the --per-user table of a one-bucket run; None for partitioned engines)
    per_user: pl.DataFrame | None = field(default=None, repr=False)
    # per user and per-user metric: True when the user is in that metric's mean
    counted: pl.DataFrame | None = field(default=None, repr=False)
    # the --per-user table (user, status, per-user metrics, null where the user is not in
    # the metric's mean), sorted by user: in memory for one bucket, else the buckets' files
    per_user_rows: pl.LazyFrame | None = field(default=None, repr=False)
    per_user_files: Any = field(default=None, repr=False)  # keeps per_user_rows' files
    # confidence intervals: {"level", "method", ..., "intervals": {metric: [low, high]}}
    confidence: dict[str, Any] | None = None
    # segment_by: each segment's own Report, and the segments that could not be evaluated
    segments: dict[str, Report] = field(default_factory=dict)
    segments_skipped: dict[str, str] = field(default_factory=dict)
    pairs: dict[str, Any] | None = None  # rating metrics: the (user, item) pairs scored
    # rating metrics: the scored pairs counted by (predicted, actual), each to 3
    # significant digits (evaluation/rating_pairs.py): the HTML report's calibration figures
    calibration: pl.DataFrame | None = field(default=None, repr=False)
    logged: dict[str, Any] | None = None  # ctr: recommendations matched in the log
    # ctr: the matched recommendations counted by inverse propensity (3 significant digits)
    weights: pl.DataFrame | None = field(default=None, repr=False)
    items: dict[str, Any] | None = None  # beyond accuracy: the catalog and the lists' items
    # beyond accuracy: (item, lists, in_universe): how many capped lists hold each item,
    # the universe's items never recommended included (lists 0); in_universe null without one
    exposure: pl.DataFrame | None = field(default=None, repr=False)
    # beyond accuracy with an interactions log: (group, items, log_rows, recommendations),
    # the log's items in ten popularity groups (evaluation/item_facts.py, popularity_bias)
    popularity_bias: pl.DataFrame | None = field(default=None, repr=False)
    # item fairness: the merged states of rsp, reo and exposure_disparity by state name
    # (metrics/fairness.py), which the fairness block's item-group table is read from
    fairness_states: dict[str, pl.DataFrame] | None = field(default=None, repr=False)
    # the config's `fairness:` block: per item group and per segment (analysis/fairness_report.py)
    fairness: dict[str, Any] | None = None
    # the recommended items the catalog (or log, or ground truth) lacks: evaluation/unknown_items.py
    unknown_items: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        """A line: the metrics (the first few) and the users evaluated; to_dict() and
        to_polars() hold the rest."""
        shown = [f"{name}={_short(value)}" for name, value in list(self.metrics.items())[:4]]
        if len(self.metrics) > len(shown):
            shown.append(f"... {len(self.metrics) - len(shown)} more")
        users = self.users.get("evaluated")
        return f"Report({', '.join(shown)}; {users} user{'' if users == 1 else 's'} evaluated)"

    def to_polars(self) -> pl.DataFrame:
        """One row per metric: `metric`, `value` (null where it has none), and `low` and
        `high` where the report holds confidence intervals."""
        table = pl.DataFrame(
            {"metric": list(self.metrics), "value": list(self.metrics.values())},
            schema={"metric": pl.String, "value": pl.Float64},
        )
        intervals = (self.confidence or {}).get("intervals")
        if intervals:
            bounds = [intervals.get(name) or [None, None] for name in self.metrics]
            table = table.with_columns(
                pl.Series("low", [b[0] for b in bounds], pl.Float64),
                pl.Series("high", [b[1] for b in bounds], pl.Float64),
            )
        return table

    def to_pandas(self) -> Any:
        """to_polars() as a pandas DataFrame (needs pandas installed)."""
        return pandas_of(self.to_polars(), "Report")

    def _repr_html_(self) -> str | None:
        """The HTML report's metrics table and users line, which a notebook shows (None,
        and the notebook shows repr(), where the HTML report is not loaded: HTML_VIEW)."""
        return HTML_VIEW[0](self) if HTML_VIEW else None

    def to_dict(self, per_user: bool = False) -> dict[str, Any]:
        """The model's block of the JSON report (`models.NAME`); with `per_user`, its
        per-user values too (per_user_block)."""
        blocks = {"pairs": self.pairs, "logged": self.logged, "items": self.items}
        blocks["unknown_items"] = self.unknown_items
        blocks["fairness"] = self.fairness
        if per_user:
            blocks["per_user"] = self.per_user_block()
        return {
            "metrics": self.metrics,
            **({"confidence": self.confidence} if self.confidence is not None else {}),
            "users": self.users,
            **{key: block for key, block in blocks.items() if block is not None},
            **(
                {"segments": self.segments_dict()} if self.segments or self.segments_skipped else {}
            ),
            "inputs": self.inputs,
        }

    def per_user_block(self) -> dict[str, Any] | None:
        """Every per-user metric's value per user, null where the user is not in its mean:
        `{"users": [...], "values": {metric: [...]}}` (`receval run --with-per-user`), which
        `receval compare` tests user by user; None without per-user values."""
        if self.per_user is None:
            return None
        names = [name for name in self.metrics if name in self.per_user.columns]
        return {
            "users": self.per_user.get_column("user").to_list(),
            "values": {name: self.per_user.get_column(name).to_list() for name in names},
        }

    def segments_dict(self) -> dict[str, Any]:
        """Per segment: its users evaluated, metrics and intervals (or why it was not)."""
        found: dict[str, Any] = {}
        for name, part in self.segments.items():
            found[name] = {"users": part.users["evaluated"], "metrics": part.metrics}
            if part.confidence is not None:
                found[name]["intervals"] = part.confidence["intervals"]
        for name, reason in self.segments_skipped.items():
            found[name] = {"users": 0, "not_evaluated": reason}
        return found


# how a notebook shows a Report: report/html.py puts its renderer here when it loads (the
# results cannot import the report layer above them), and the API loads it
HTML_VIEW: list[Callable[[Report], str]] = []
RUN_HTML_VIEW: list[Callable[[RunReport], str]] = []


def pandas_of(table: pl.DataFrame, owner: str) -> Any:
    """`table` as a pandas DataFrame for `owner`.to_pandas(), or an ImportError that says
    what to install (polars converts with pyarrow, which pandas does not bring)."""
    import importlib.util

    try:
        missing = any(importlib.util.find_spec(name) is None for name in ("pandas", "pyarrow"))
    except (ImportError, ValueError):  # an import hook that refuses one, or a stand-in module
        missing = True
    if missing:
        fix = "install them (pip install pandas pyarrow), or use to_polars()"
        raise ImportError(f"{owner}.to_pandas() needs pandas and pyarrow; {fix}.")
    return table.to_pandas()


def _short(value: float | None) -> str:
    return "None" if value is None else f"{value:.4g}"


@dataclass(frozen=True)
class RunReport:
    """A run's report, whatever the number of models: each model's Report (one config
    file: the model named "model"), the best model(s) per metric, the comparisons with the
    baseline when there are any, the gates, and what is run-wide. Its JSON has one shape:
    `models.NAME.metrics` and so on for every model (docs/reports.md)."""

    models: dict[str, Report]
    gates: list[GateResult]
    config: dict[str, Any]
    conventions: ConventionsBlock
    best: dict[str, list[str]] = field(default_factory=dict)
    baseline: str | None = None
    comparisons: list[Comparison] = field(default_factory=list)
    comparison: dict[str, Any] | None = None  # the comparison settings (test, correction, ...)
    # comparison.lists: how alike each model's lists are to the baseline's
    list_comparisons: list[ListComparison] = field(default_factory=list)
    baseline_report: str | None = None  # the saved report compared with, if any
    elapsed_seconds: float = 0.0
    version: str = __version__
    # the run's own warnings (a baseline report of other conventions or ground truth)
    run_warnings: list[str] = field(default_factory=list)
    run: RunInfo | None = None  # when it started, its id, config hash, label and tags
    # with a history store: each model's metrics against the store's recent runs
    # (history/trends.py, recent_changes)
    history: dict[str, Any] | None = None
    # the JSON report holds each model's per-user values (`receval run --with-per-user`)
    per_user_in_json: bool = False

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)

    @property
    def alone(self) -> Report | None:
        """The one model's Report when the run evaluates one model and compares it with
        nothing (shown as a single metric/value table), else None."""
        if len(self.models) == 1 and self.comparison is None:
            return next(iter(self.models.values()))
        return None

    @property
    def tested(self) -> int:
        """The comparisons a test was run on (per-user metrics); the multiple-comparison
        correction is over these. A global, rating or click metric is one value over all
        users: its difference is shown, untested."""
        return sum(c.p_value is not None for c in self.comparisons)

    @property
    def design(self) -> str:
        """How the test pairs its samples: `paired` (each user's values of two models) or
        `one-sample` (each user's value against a saved report's fixed mean)."""
        return "one-sample" if self.baseline_report is not None else "paired"

    def test_method(self) -> str:
        """The comparisons' test as the renderers state it, e.g. "paired t test, holm
        correction over 4 comparisons" (with the untested ones counted apart)."""
        assert self.comparison is not None
        c = self.comparison
        text = f"{self.design} {c['test']} test, {c['correction']} correction over "
        text += f"{self.tested} comparisons"
        untested = len(self.comparisons) - self.tested
        if untested:
            text += f" ({untested} more untested: one value over all users, no per-user test)"
        return text

    @property
    def warnings(self) -> list[str]:
        """The run's warnings, then every model's (with several models, each names its
        model)."""
        return [
            *self.run_warnings,
            *(w for report in self.models.values() for w in report.warnings),
        ]

    def __repr__(self) -> str:
        """A line: the models, the gates' verdict, the comparisons; to_polars() and
        to_dict() hold the rest."""
        parts = [f"models {', '.join(self.models)}"]
        if self.gates:
            failed = sum(not g.passed for g in self.gates)
            parts.append(f"gates {'passed' if not failed else f'{failed} failed'}")
        if self.comparison is not None:
            parts.append(f"{len(self.comparisons)} comparisons")
        return f"RunReport({'; '.join(parts)})"

    def to_polars(self) -> pl.DataFrame:
        """One row per model and metric: `model`, then each model's Report.to_polars()
        columns (`metric`, `value`, and `low`, `high` with intervals)."""
        tables = [
            report.to_polars().select(pl.lit(name).alias("model"), pl.all())
            for name, report in self.models.items()
        ]
        return pl.concat(tables, how="diagonal_relaxed")

    def to_pandas(self) -> Any:
        """to_polars() as a pandas DataFrame (needs pandas installed)."""
        return pandas_of(self.to_polars(), "RunReport")

    def _repr_html_(self) -> str | None:
        """The HTML report's metrics, gates and comparisons tables (see HTML_VIEW)."""
        return RUN_HTML_VIEW[0](self) if RUN_HTML_VIEW else None

    def to_dict(self) -> dict[str, Any]:
        comparisons = None
        if self.comparison is not None:
            comparisons = {
                **self.comparison,
                "design": self.design,
                "tested": self.tested,
                "baseline": self.baseline,
                "baseline_report": self.baseline_report,
                "results": [c.to_dict() for c in self.comparisons],
                **(
                    {"lists": [c.to_dict() for c in self.list_comparisons]}
                    if self.list_comparisons
                    else {}
                ),
            }
        return {
            "receval_version": self.version,
            **({"run": self.run.to_dict()} if self.run is not None else {}),
            "models": {
                name: report.to_dict(self.per_user_in_json) for name, report in self.models.items()
            },
            "best": self.best,
            **({"comparisons": comparisons} if comparisons is not None else {}),
            **({"history": self.history} if self.history is not None else {}),
            "gates": {"passed": self.passed, "results": [g.to_dict() for g in self.gates]},
            "warnings": self.warnings,
            "conventions": self.conventions,
            "config": self.config,
            "elapsed_seconds": self.elapsed_seconds,
        }
