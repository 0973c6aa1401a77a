"""Run a config: one model or several, intervals, comparisons with a baseline, gates.

Every run gives a RunReport: each model's Report under its name (a one-file config: the
model named "model"), whose JSON nests `models.NAME.metrics` whatever the number of
models. With `predictions.models` every model is evaluated against the same ground truth
(each in its own pass, reading the ground truth and the optional inputs again: they are
lazy scans), on any engine. What a run needs is resolved by the planner
(engines/run_plan.py) before any row is read, and each model is evaluated on its engine
by engines/model_runs.py; this module adds what the whole run needs on top of the models'
Reports: intervals, comparisons with the baseline, every gate, the history's changes.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from receval_cli import console
from receval_cli.analysis.gate_judging import (
    check_gates,
    check_history,
    check_relative,
    warnings_agree,
)
from receval_cli.config.convention_groups import conventions_block
from receval_cli.config.loading import LoadedConfig
from receval_cli.config.model import ComparisonConfig, ConfidenceConfig
from receval_cli.engines.model_runs import evaluate_model
from receval_cli.engines.run_plan import RunPlan, history_path, no_significance_test, plan_run
from receval_cli.errors import InputError
from receval_cli.evaluation import unknown_items
from receval_cli.evaluation.fingerprints import truth_identity
from receval_cli.evaluation.plan import resolved_config
from receval_cli.metrics import lookup
from receval_cli.metrics.dialects import spec_of
from receval_cli.report.comparability import truths_warning
from receval_cli.report.finite import finite_report
from receval_cli.results.gates import GateResult
from receval_cli.results.report import Report, RunReport
from receval_cli.results.run_info import RunLabel, run_info, start_time

if TYPE_CHECKING:
    from receval_cli.results.comparison import Comparison, ListComparison


def evaluate_config(
    loaded: LoadedConfig,
    confidence: ConfidenceConfig | None = None,
    baseline_report: Path | None = None,
    per_user: bool = False,
    allow_different_conventions: bool = False,
    label: RunLabel | None = None,
    figures: bool = True,
) -> RunReport:
    """Evaluate every model of the config on its engine (engines/run_plan.py resolves
    the config, the engine and what it refuses, before any row is read); intervals,
    comparisons and gates as configured. `per_user`: partitioned engines keep the
    per-user rows too (a single pass always does; so do they when intervals or a
    comparison need them). A `baseline_report` computed under other conventions is
    refused unless `allow_different_conventions`. `label`: the run's --label and --tag
    pairs, in its RunInfo. `figures` False: the report's item figures (the HTML
    report's exposure and popularity bias) are left out, as no HTML report is written."""
    started = _Start(time.perf_counter(), start_time(), label or RunLabel())
    plan = plan_run(loaded, confidence, baseline_report, allow_different_conventions)
    plan = dataclasses.replace(plan, figures=figures)
    keys = None if plan.engine.spark else plan.segments()
    reports: dict[str, Report] = {}
    for name in plan.models:
        stage = f"model {name}: " if len(plan.models) > 1 else ""
        with console.stage(f"{stage}read, rank, join, metrics"):
            fairness = plan.loaded.config.fairness
            keep = per_user or plan.confidence is not None or fairness is not None
            report = evaluate_model(plan, name, keep, keys)
        if fairness is not None:  # its segments' gaps read the per-user values
            from receval_cli.analysis.fairness_report import with_fairness

            report = with_fairness(report, fairness, plan.loaded.path)
        # with a comparison, compare_with_baseline() computes every model's intervals in one
        # resampling
        reports[name] = _with_intervals(report, plan)
    reports = _one_user_type(reports)
    if not plan.comparing:
        return _run_report(loaded, reports, started)
    assert plan.confidence is not None
    warnings = list(plan.warnings)
    if plan.saved is not None:
        truths = {"this run": truth_identity(next(iter(reports.values())).inputs)}
        found = truths_warning({**truths, "baseline report": plan.saved.truth})
        warnings += [] if found is None else [found]
    from receval_cli.analysis.intervals import compare_with_baseline  # numpy: only when comparing

    with console.stage("intervals and comparisons"):
        values = None if plan.saved is None else plan.saved.metrics
        comparisons, intervals = compare_with_baseline(
            reports, plan.baseline, values, plan.comparison, plan.confidence
        )
    reports = {
        name: dataclasses.replace(report, confidence=intervals[name])
        for name, report in reports.items()
    }
    lists = []
    if plan.comparison.lists:
        from receval_cli.analysis.list_comparison import compare_lists

        with console.stage("list comparisons"):
            lists = compare_lists(plan)
    compared = Compared(plan.baseline, comparisons, plan.comparison, baseline_report, lists)
    return _run_report(loaded, reports, started, compared, warnings)


def _one_user_type(reports: dict[str, Report]) -> dict[str, Report]:
    """The models' per-user values with one user id type, as align_ids gives one type to
    every input's ids (inputs/id_alignment.py: integers everywhere, else text), so that
    comparisons and the --per-user table join them user by user. The polars engines read
    every model's users in one type already (RunPlan.inputs); Spark aligns each model with
    its own ground truth, so a model whose file holds the users as text meets one whose
    file holds them as integers here."""
    types = set()
    for report in reports.values():
        if report.per_user is not None:
            types.add(report.per_user.schema["user"])
        if report.per_user_rows is not None:
            types.add(report.per_user_rows.collect_schema()["user"])
    if len(types) < 2:
        return reports
    return {name: _users_as_text(report) for name, report in reports.items()}


def _users_as_text(report: Report) -> Report:
    text = pl.col("user").cast(pl.String)
    return dataclasses.replace(
        report,
        per_user=None if report.per_user is None else report.per_user.with_columns(text),
        counted=None if report.counted is None else report.counted.with_columns(text),
        per_user_rows=(
            None if report.per_user_rows is None else report.per_user_rows.with_columns(text)
        ),
        segments={name: _users_as_text(part) for name, part in report.segments.items()},
    )


def _with_intervals(report: Report, plan: RunPlan) -> Report:
    """The report with its intervals when asked (its segments' too); with a comparison,
    only the segments' (compare_with_baseline() computes the models' in one resampling)."""
    if plan.confidence is None:
        return report
    from receval_cli.analysis.intervals import with_intervals  # numpy: only with intervals

    parts = {n: with_intervals(r, plan.confidence) for n, r in report.segments.items()}
    report = dataclasses.replace(report, segments=parts)
    return report if plan.comparing else with_intervals(report, plan.confidence)


@dataclasses.dataclass(frozen=True)
class _Start:
    clock: float  # time.perf_counter() at the start
    at: Any  # datetime, UTC
    label: RunLabel


@dataclasses.dataclass(frozen=True)
class Compared:
    """The models' comparison with the baseline (a model, or a saved report)."""

    baseline: str | None
    comparisons: list[Comparison]
    settings: ComparisonConfig
    baseline_report: Path | None
    lists: list[ListComparison] = dataclasses.field(default_factory=list)  # comparison.lists


def _run_report(
    loaded: LoadedConfig,
    reports: dict[str, Report],
    started: _Start,
    compared: Compared | None = None,
    warnings: list[str] | None = None,
) -> RunReport:
    """The run's report, whatever the engine and the number of models: every gate (in
    one place: _gates), the best model(s) per metric, the resolved config, the RunInfo."""
    reports, gates = _gates(loaded, reports, compared)
    store = history_path(loaded)
    past = None
    if store is not None:
        from receval_cli.history.store import read_store

        past = read_store(store)
        gates += _history_gates(loaded, reports, compared, past)
    reports = warnings_agree(reports, gates)  # a null's warning says its gate's verdict
    config = resolved_config(loaded)
    conventions = conventions_block(loaded.config.conventions, loaded.specs)
    report = RunReport(
        models=reports,
        gates=gates,
        config=config,
        conventions=conventions,
        best=_best(reports),
        baseline=None if compared is None else compared.baseline,
        comparisons=[] if compared is None else compared.comparisons,
        list_comparisons=[] if compared is None else compared.lists,
        comparison=None if compared is None else compared.settings.model_dump(exclude={"baseline"}),
        baseline_report=(
            None
            if compared is None or compared.baseline_report is None
            else str(compared.baseline_report)
        ),
        elapsed_seconds=time.perf_counter() - started.clock,
        run_warnings=[*loaded.notes, *(warnings or [])],
        run=run_info(started.at, config, conventions, started.label),
    )
    report = finite_report(report)  # every float finite or null, whatever the format
    if store is None or past is None:
        return report
    from receval_cli.history.store import history_rows
    from receval_cli.history.trends import recent_changes

    recent = recent_changes(past, history_rows(report), str(store))
    return finite_report(dataclasses.replace(report, history=recent))


def _gates(
    loaded: LoadedConfig, reports: dict[str, Report], compared: Compared | None
) -> tuple[dict[str, Report], list[GateResult]]:
    """The models' reports with their unknown-items warnings, and every gate: for one
    model compared with nothing, its bounds; with a comparison, every gate for every model
    but the baseline (the reference, not under test), or for the one model a gate names.
    Warnings and gates name their model only when there is a comparison."""
    found = {} if compared is None else {(c.model, c.metric): c for c in compared.comparisons}
    baseline = None if compared is None else compared.baseline
    results: list[GateResult] = []
    warned = {}
    for name, report in reports.items():
        model = None if compared is None else name
        if model is not None and report.warnings:  # the evaluation's own, e.g. a null auc
            named_warnings = [f"model {model}: {w}" for w in report.warnings]
            report = dataclasses.replace(report, warnings=named_warnings)
        report, unknown_gate = unknown_items.checked(report, loaded.config.unknown_items, model)
        warned[name] = report
        results += unknown_gate
        if model is None:
            results += check_gates(
                loaded.gates, report.metrics, segments=report.segments, name=name
            )
            continue
        named = {m: g for m, g in loaded.gates.items() if g.model == model}
        if model == baseline:
            results += check_gates(named, report.metrics, model, report.segments)
            continue
        results += check_gates(loaded.gates, report.metrics, model, report.segments)
        for metric, gate in loaded.gates.items():
            if not gate.relative or gate.model not in (None, model):
                continue
            comparison = found.get((model, metric))
            if comparison is None:
                raise InputError(
                    f"gates.{metric}: the baseline has no value for {metric}.",
                    key=f"gates.{metric}",
                )
            if gate.no_significant_drop and comparison.p_adjusted is None:
                raise no_significance_test(loaded, metric)
            higher = lookup(spec_of(metric).name).higher_is_better
            results += check_relative(metric, gate, model, comparison.to_dict(), higher)
    return warned, results


def _history_gates(
    loaded: LoadedConfig, reports: dict[str, Report], compared: Compared | None, past: Any
) -> list[GateResult]:
    """The gates against the recent past: for every model the gate applies to (not the
    baseline model of a comparison), today's value against the store's `past` runs (a
    polars DataFrame: store.read_store)."""
    wanted = {m: g for m, g in loaded.gates.items() if g.history is not None}
    if not wanted:
        return []
    from receval_cli.history.store import past_values

    baseline = None if compared is None else compared.baseline
    results = []
    for metric, gate in wanted.items():
        assert gate.history is not None
        higher = lookup(spec_of(metric).name).higher_is_better
        for name, report in reports.items():
            if gate.model not in (None, name) or (name == baseline and gate.model is None):
                continue
            part = report if gate.segment is None else report.segments.get(gate.segment)
            value = None if part is None else part.metrics[metric]
            values = past_values(past, name, metric, gate.segment, gate.history.runs)
            label = metric if gate.segment is None else f"{metric} [{gate.segment}]"
            model = name if compared is not None else None
            found = check_history(label, gate.history, model, value, values, higher, gate.on_null)
            results.append(found)
    return results


def _best(reports: dict[str, Report]) -> dict[str, list[str]]:
    """For each metric, the model(s) with the best value (ties: all of them)."""
    best: dict[str, list[str]] = {}
    first = next(iter(reports.values()))
    for metric in first.metrics:
        higher = lookup(spec_of(metric).name).higher_is_better
        values = {n: r.metrics[metric] for n, r in reports.items()}
        valued = [v for v in values.values() if v is not None]  # no value: never best
        if not valued:
            best[metric] = []
            continue
        target = max(valued) if higher else min(valued)
        best[metric] = [name for name, v in values.items() if v == target]
    return best
