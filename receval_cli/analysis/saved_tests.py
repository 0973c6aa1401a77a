"""`receval compare`'s paired tests: where the saved reports hold their per-user values
(`receval run --with-per-user`), every column is tested against the baseline column user
by user, by the same tests and correction as a run's comparison of models
(analysis/intervals.py, compare_with_baseline): each saved column becomes a Report with
its per-user values, so nothing here computes a statistic of its own.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import polars as pl

from receval_cli.analysis.intervals import compare_with_baseline
from receval_cli.config.model import ComparisonConfig, ConfidenceConfig
from receval_cli.report.report_comparison import ReportComparison
from receval_cli.results.blocks import ConventionsBlock, UsersBlock
from receval_cli.results.report import Report


def with_paired_tests(comparison: ReportComparison, settings: ComparisonConfig) -> ReportComparison:
    """The comparison with the paired tests of every column that holds per-user values
    against the baseline column (which must hold them too); unchanged where it does not."""
    if comparison.baseline not in comparison.per_user:
        return comparison
    tested = [name for name in comparison.columns if name in comparison.per_user]
    if len(tested) < 2:
        return comparison
    reports = {name: _report(comparison, name) for name in tested}
    results, _ = compare_with_baseline(
        reports, comparison.baseline, None, settings, ConfidenceConfig(level=settings.level)
    )
    untested = [name for name in comparison.columns if name not in comparison.per_user]
    return dataclasses.replace(
        comparison,
        tests=results,
        test=settings.model_dump(exclude={"baseline"}),
        untested=untested,
    )


def _report(comparison: ReportComparison, name: str) -> Report:
    """A saved column as a Report: its metric values, and its per-user values (a user in a
    metric's mean where its value is not null)."""
    values = comparison.per_user[name]
    metrics = {m: cell.value for m, row in comparison.metrics.items() if (cell := row[name])}
    names = [m for m in values.columns if m != "user" and m in metrics]
    counted = values.select("user", *(pl.col(m).is_not_null() for m in names))
    users = cast(UsersBlock, {"evaluated": values.height})
    return Report(
        metrics=metrics,
        conventions=cast(ConventionsBlock, {}),
        inputs={},
        users=users,
        per_user=values.select("user", *names),
        counted=counted,
    )
