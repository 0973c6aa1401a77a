"""One model of a run plan (engines/run_plan.py) evaluated on the plan's engine: one pass,
ranges of users, hash partitions or Spark, each pass of conventions (tools' names beside
receval's) assembled into one Report. The run's planning and its execution on the engines
live here, in engines/; analysis/runs.py adds what the whole run needs on top of the
models' Reports (intervals, comparisons, gates).
"""

from __future__ import annotations

import dataclasses

import polars as pl

from receval_cli import console
from receval_cli.engines.partitions import evaluate_partitioned
from receval_cli.engines.run_plan import RunPlan
from receval_cli.evaluation.assembly import evaluate_aligned
from receval_cli.evaluation.metric_groups import merged_report
from receval_cli.evaluation.segment_split import Segment, SegmentKeys
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.results.report import Report


def evaluate_model(
    plan: RunPlan,
    name: str,
    keep_rows: bool,
    keys: tuple[SegmentKeys, list[Segment]] | None,
) -> Report:
    """Model `name`'s Report on the plan's engine: one pass, partitions or Spark; with
    `keep_rows`, a partitioned engine keeps the per-user rows, and the Report its
    per-user values, as a single pass has them (intervals, comparisons and the HTML
    report's distributions read them). Metrics that need other conventions than the
    config's (tools' names) are evaluated in passes of their own and assembled into one
    Report (evaluation/metric_groups.py)."""
    passes = plan.loaded.passes()
    parts = [
        _evaluate_pass(dataclasses.replace(plan, loaded=loaded), name, keep_rows, keys)
        for loaded in passes
    ]
    return merged_report(parts, plan.loaded.specs)


def _evaluate_pass(
    plan: RunPlan,
    name: str,
    keep_rows: bool,
    keys: tuple[SegmentKeys, list[Segment]] | None,
) -> Report:
    engine = plan.engine
    if engine.spark:
        from receval_cli.engines.spark import evaluate_planned

        report = evaluate_planned(plan, name, per_user=keep_rows)
    elif engine.ranges:
        ranged = _in_ranges(plan, name, keep_rows, keys)
        if ranged is None:
            return _evaluate_pass(plan.with_engine(engine.partitions), name, keep_rows, keys)
        report = ranged
    elif engine.partitioned:
        found = plan.inputs(name)
        report = evaluate_partitioned(plan.loaded, found, engine.partitions, keys, keep_rows)
    else:
        found = plan.inputs(name)
        config = plan.loaded.config
        return evaluate_aligned(
            found.predictions,
            found.truth,
            plan.loaded.specs,
            config.conventions,
            sources=found.sources,
            engine=found.engine,
            check_unknown=config.unknown_items.check,
            segments=keys,
        )
    return values_from_rows(report, plan.loaded.specs) if keep_rows else report


def _in_ranges(
    plan: RunPlan, name: str, keep_rows: bool, keys: tuple[SegmentKeys, list[Segment]] | None
) -> Report | None:
    """Model `name` in ranges of users (engines/ranges.py), or None where its predictions
    do not come grouped by user (the plan's hash partitions or one pass then run it)."""
    from receval_cli.engines.ranges import Unordered, evaluate_in_ranges

    try:
        return evaluate_in_ranges(
            plan.loaded, plan.inputs(name), keys, keep_rows, plan.engine.ranges
        )
    except Unordered:
        console.log("the predictions are not grouped by user in ascending order: not in ranges")
        return None


def values_from_rows(report: Report, specs: tuple[MetricSpec, ...]) -> Report:
    """A partitioned run's Report with its per-user values (`per_user`, `counted`) read
    back from its per-user rows, as a single pass holds them: the rows are sorted by user,
    and a value is null exactly where the user is not in the metric's mean. Each
    segment's Report gets its users' rows (the segment's attribute columns select them)."""
    if report.per_user is not None or report.per_user_rows is None:
        return report
    rows = report.per_user_rows.collect()
    names = [str(s) for s in specs if lookup(s.name).scope == "user"]

    def valued(part: Report, chosen: pl.DataFrame) -> Report:
        counted = chosen.select("user", *(pl.col(n).is_not_null() for n in names))
        return dataclasses.replace(part, per_user=chosen, counted=counted)

    segments = {}
    for segment_name, part in report.segments.items():
        segments[segment_name] = valued(part, rows.filter(_segment_rows(segment_name, rows)))
    return dataclasses.replace(valued(report, rows), segments=segments)


def _segment_rows(name: str, rows: pl.DataFrame) -> pl.Expr:
    """The filter on the per-user rows (their segment attribute columns, as text) that
    keeps segment `name`'s users: attribute=value, or attribute=(none) for the users
    without a value."""
    from receval_cli.evaluation.segment_split import segment_value

    attribute, value = segment_value(name)
    assert attribute in rows.columns, f"segment attribute {attribute} not in the per-user rows"
    return pl.col(attribute).is_null() if value is None else pl.col(attribute) == value
