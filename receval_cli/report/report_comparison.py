"""`receval compare`'s comparison: saved JSON reports side by side, with deltas against a
baseline (`compare_reports` -> ReportComparison; its renderings are
report/report_comparison_render.py).

Nothing is evaluated again: each report's metric values (and confidence intervals) are
read from the JSON that `receval run --format json` wrote (report/saved_report.py). A
report of one model gives one column named by its file stem; of several models, one
column per model, `STEM:MODEL`. Both JSON shapes are read: `models.NAME.metrics` (every
report since 0.2) and the flat `metrics` of a one-model report written before.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from receval_cli.errors import UsageError, did_you_mean
from receval_cli.evaluation.fingerprints import truth_identity
from receval_cli.metrics import lookup
from receval_cli.metrics.dialects import spec_of
from receval_cli.report.comparability import (
    conventions_differ,
    conventions_error,
    describe_differences,
    truths_warning,
)
from receval_cli.report.saved_report import SavedPerUser, read_saved_report
from receval_cli.results.comparison import Comparison
from receval_cli.results.report import pandas_of


@dataclass(frozen=True)
class Column:
    """One model's numbers from one saved report."""

    name: str
    path: Path
    metrics: dict[str, float | None]
    intervals: dict[str, tuple[float, float]]
    conventions: dict[str, Any] | None
    truth: dict[str, Any] | None = None  # fingerprints.truth_identity of its report
    # (user, each per-user metric: null where not in its mean), where the report holds them
    per_user: pl.DataFrame | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Cell:
    """One column's value of one metric and its difference from the baseline's."""

    value: float | None  # None: no value (null in the report)
    low: float | None = None
    high: float | None = None
    delta: float | None = None
    relative_delta: float | None = None

    @property
    def interval(self) -> list[float] | None:
        if self.low is None or self.high is None:
            return None
        return [self.low, self.high]

    def to_dict(self) -> dict[str, float | None]:
        return {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "delta": self.delta,
            "relative_delta": self.relative_delta,
        }


@dataclass
class ReportComparison:
    """Every metric's cells by column (None where the column lacks the metric)."""

    baseline: str
    columns: list[str]
    metrics: dict[str, dict[str, Cell | None]]
    best: dict[str, list[str]] = field(default_factory=dict)
    conventions_differ: dict[str, dict[str, Any]] = field(default_factory=dict)
    truths_differ: str | None = None  # the warning when the ground truths differ
    # each column's per-user values, where its report holds them (--with-per-user)
    per_user: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False)
    # the paired tests of each column against the baseline, user by user (analysis/
    # saved_tests.py), and their settings (test, correction, level); none: no tests
    tests: list[Comparison] = field(default_factory=list)
    test: dict[str, Any] | None = None
    untested: list[str] = field(default_factory=list)  # columns without per-user values

    @property
    def has_intervals(self) -> bool:
        cells = [c for row in self.metrics.values() for c in row.values() if c is not None]
        return any(c.interval is not None for c in cells)

    def __repr__(self) -> str:
        count = len(self.metrics)
        columns = ", ".join(self.columns)
        return (
            f"ReportComparison({count} metric{'' if count == 1 else 's'}; columns {columns}; "
            f"baseline {self.baseline})"
        )

    def to_polars(self) -> pl.DataFrame:
        """One row per metric and column: `metric`, `column`, `value`, `low`, `high`,
        `delta` and `relative_delta` (against the baseline column); no row where a
        column lacks the metric."""
        rows = [
            {"metric": metric, "column": name, **cell.to_dict()}
            for metric, row in self.metrics.items()
            for name, cell in row.items()
            if cell is not None
        ]
        schema = {"metric": pl.String, "column": pl.String} | dict.fromkeys(
            ("value", "low", "high", "delta", "relative_delta"), pl.Float64
        )
        return pl.DataFrame(rows, schema=schema)

    def to_pandas(self) -> Any:
        """to_polars() as a pandas DataFrame (needs pandas installed)."""
        return pandas_of(self.to_polars(), "ReportComparison")

    def _repr_html_(self) -> str:
        """to_polars()'s table, as a notebook shows a polars DataFrame."""
        return str(self.to_polars()._repr_html_())

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "columns": self.columns,
            "metrics": {
                metric: {
                    name: None if cell is None else cell.to_dict() for name, cell in row.items()
                }
                for metric, row in self.metrics.items()
            },
            "best": self.best,
            "conventions_differ": self.conventions_differ,
            **(
                {"tests": {**self.test, "results": [c.to_dict() for c in self.tests]}}
                if self.test is not None
                else {}
            ),
            "warnings": comparison_warnings(self),
        }


# ---------------------------------------------------------------------------- loading


def compare_reports(
    paths: list[Path],
    baseline: str | None,
    metrics: list[str],
    allow_different_conventions: bool = False,
) -> ReportComparison:
    """Read the reports and compare every column with the baseline column; reports of
    different conventions are refused unless `allow_different_conventions`."""
    if len(paths) < 2:
        given = f" ({paths[0]})" if paths else ""
        fix = "Pass two or more JSON reports: receval compare A.json B.json"
        raise UsageError(
            f"compare needs at least two saved reports, got {len(paths)}{given}. {fix}",
            key=None if paths else "compare",  # no report: the command's arguments
            path=paths[0] if paths else None,
            found=[str(path) for path in paths],
            fix=fix,
        )
    columns = unique_names([column for path in paths for column in load_columns(path)])
    chosen = _baseline(columns, baseline)
    shown = _metrics(columns, metrics)
    differ = conventions_differ({c.name: c.conventions for c in columns})
    if differ and not allow_different_conventions:
        raise conventions_error(differ, "the reports", paths[0])
    rows = {metric: _row(metric, columns, chosen) for metric in shown}
    return ReportComparison(
        baseline=chosen.name,
        columns=[c.name for c in columns],
        metrics=rows,
        best={metric: best_columns(metric, row) for metric, row in rows.items()},
        conventions_differ=differ,
        truths_differ=truths_warning({c.name: c.truth for c in columns}),
        per_user={c.name: c.per_user for c in columns if c.per_user is not None},
    )


def load_columns(path: Path) -> list[Column]:
    """The columns of one saved report: one, or one per model."""
    saved = read_saved_report(path)
    several = len(saved.blocks()) > 1
    return [
        Column(
            f"{path.stem}:{name}" if several else path.stem,
            path,
            dict(block.metrics),
            dict(block.confidence.intervals) if block.confidence is not None else {},
            saved.conventions,
            truth_identity(block.inputs),
            None if block.per_user is None else _per_user_frame(block.per_user),
        )
        for name, block in saved.blocks().items()
    ]


def _per_user_frame(block: SavedPerUser) -> pl.DataFrame:
    """A saved report's per-user values as a table: user, then each metric (Float64)."""
    users: list[Any] = block.users
    if not all(isinstance(u, int) for u in users):
        users = [str(u) for u in users]  # ids of one type, whatever the JSON held
    columns = {
        name: pl.Series(name, values, dtype=pl.Float64) for name, values in block.values.items()
    }
    return pl.DataFrame({"user": users, **columns})


def unique_names(columns: list[Column]) -> list[Column]:
    """Rename repeated column names: the second `a` becomes `a#2`, the third `a#3`."""
    taken: set[str] = set()
    renamed: list[Column] = []
    for column in columns:
        name, count = column.name, 1
        while name in taken:
            count += 1
            name = f"{column.name}#{count}"
        taken.add(name)
        renamed.append(dataclasses.replace(column, name=name))
    return renamed


def _baseline(columns: list[Column], name: str | None) -> Column:
    if name is None:
        return columns[0]
    for column in columns:
        if column.name == name:
            return column
    names = [c.name for c in columns]
    raise UsageError(
        f"--baseline {name} names no column; the columns are {', '.join(names)}."
        f"{did_you_mean(name, names)}",
        key="--baseline",
        found=name,
    )


def _metrics(columns: list[Column], wanted: list[str]) -> list[str]:
    """Every metric of any report in first-seen order, or only the wanted ones."""
    present = list(dict.fromkeys(m for column in columns for m in column.metrics))
    for metric in wanted:
        if metric not in present:
            raise UsageError(
                f"--metric {metric}: no report has it; the reports' metrics are "
                f"{', '.join(present)}.{did_you_mean(metric, present)}",
                key="--metric",
                found=metric,
            )
    return [m for m in present if m in wanted] if wanted else present


# -------------------------------------------------------------------------- comparing


def _row(metric: str, columns: list[Column], baseline: Column) -> dict[str, Cell | None]:
    reference = baseline.metrics.get(metric)
    row: dict[str, Cell | None] = {}
    for column in columns:
        value = column.metrics.get(metric)
        if value is None:
            row[column.name] = None
            continue
        low, high = column.intervals.get(metric, (None, None))
        delta = relative = None
        if column is not baseline and reference is not None:
            delta = value - reference
            relative = delta / abs(reference) if reference != 0 else None
        row[column.name] = Cell(value, low, high, delta, relative)
    return row


def higher_is_better(metric: str) -> bool:
    """The metric's direction from the registry; a name it does not know: higher."""
    try:
        return lookup(spec_of(metric).name).higher_is_better
    except ValueError:  # not a spec, or not a known metric
        return True


def best_columns(metric: str, row: dict[str, Cell | None]) -> list[str]:
    """The column(s) with the best value; none when fewer than two columns have one."""
    values = {
        name: cell.value
        for name, cell in row.items()
        if cell is not None and cell.value is not None
    }
    if len(values) < 2:
        return []
    target = max(values.values()) if higher_is_better(metric) else min(values.values())
    return [name for name, value in values.items() if value == target]


def comparison_warnings(comparison: ReportComparison) -> list[str]:
    """The comparison's warnings: conventions that differ (allowed with
    --allow-different-conventions) and ground truths that differ."""
    found = []
    if comparison.conventions_differ:
        listed = describe_differences(comparison.conventions_differ)
        found.append(
            f"the reports' conventions differ ({listed}); deltas across different "
            "conventions are not comparable."
        )
    if comparison.truths_differ is not None:
        found.append(comparison.truths_differ)
    waiting = [n for n in comparison.columns if n in comparison.per_user]
    if comparison.test is not None and comparison.untested:
        found.append(
            f"{', '.join(comparison.untested)}: no per-user values in the report, so not "
            "tested against the baseline; write them with `receval run --with-per-user`."
        )
    elif comparison.test is None and waiting and comparison.baseline not in comparison.per_user:
        found.append(
            f"no paired tests: the baseline {comparison.baseline}'s report holds no per-user "
            f"values (the reports of {', '.join(waiting)} hold them); write it with `receval "
            "run --with-per-user`, or choose one of those as --baseline."
        )
    return found
