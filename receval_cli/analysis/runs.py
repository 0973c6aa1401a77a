"""Run a config: one model or several, intervals, comparisons with a baseline, gates.

Every run gives a RunReport: each model's Report under its name (a one-file config: the
model named "model"), whose JSON nests `models.NAME.metrics` whatever the number of
models. With `predictions.models` every model is evaluated against the same ground truth
(each in its own pass, reading the ground truth and the optional inputs again: they are
lazy scans).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from receval_cli import console
from receval_cli.analysis.gates import GateResult, check_gates, check_history, check_relative
from receval_cli.analysis.run_info import RunLabel, run_info, start_time
from receval_cli.analysis.segments import check_segment_gates, segment_keys
from receval_cli.config.loading import LoadedConfig
from receval_cli.config.model import ComparisonConfig, ConfidenceConfig, PredictionsConfig
from receval_cli.engines.choice import auto_partitions, polars_engine
from receval_cli.engines.partitions import check_partitionable, evaluate_partitioned
from receval_cli.errors import ConfigError, InputError, UsageError
from receval_cli.evaluation import unknown_items
from receval_cli.evaluation.assembly import evaluate_inputs
from receval_cli.evaluation.fingerprints import truth_identity
from receval_cli.evaluation.plan import resolved_config
from receval_cli.evaluation.segment_split import Segment, SegmentKeys
from receval_cli.inputs.optional import read_sources
from receval_cli.inputs.readers import Input, read_ground_truth, read_predictions
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.report.comparability import (
    conventions_differ,
    conventions_error,
    describe_differences,
    truths_warning,
)
from receval_cli.report.data import Report, RunReport
from receval_cli.report.saved import read_saved_report

if TYPE_CHECKING:
    from receval_cli.analysis.intervals import Comparison


def evaluate_config(
    loaded: LoadedConfig,
    confidence: ConfidenceConfig | None = None,
    baseline_report: Path | None = None,
    per_user: bool = False,
    allow_different_conventions: bool = False,
    label: RunLabel | None = None,
) -> RunReport:
    """Evaluate every model of the config; intervals, comparisons and gates as configured.
    `per_user`: partitioned engines keep the per-user rows too (a single pass always does).
    A `baseline_report` computed under other conventions is refused before anything is
    evaluated, unless `allow_different_conventions`. `label`: the run's --label and --tag
    pairs, in its RunInfo."""
    started = _Start(time.perf_counter(), start_time(), label or RunLabel())
    config = loaded.config
    check_history_gates(loaded)
    if config.engine == "auto" and config.partitions == 1:
        loaded = _auto_partitions(loaded, confidence, baseline_report)
        config = loaded.config
    if config.engine == "spark" or config.partitions > 1:
        refuse_partitioned_extras(loaded, confidence, baseline_report)
        reject_relative_gates(loaded)
        ((name, file),) = config.model_files().items()
        if config.engine == "spark":
            from receval_cli.engines.spark import DEFAULT_BUCKETS, evaluate_spark

            buckets = config.partitions if config.partitions > 1 else DEFAULT_BUCKETS
            report = evaluate_spark(loaded, buckets=buckets, per_user=per_user)
        else:
            engine = polars_engine(config.engine, [loaded.resolve_path(file.path)])
            report = evaluate_partitioned(loaded, config.partitions, engine, per_user)
        return _run_report(loaded, {name: report}, started)
    settings = config.comparison or ComparisonConfig()
    saved, run_warnings = None, []
    if baseline_report is not None:
        saved = read_baseline_report(baseline_report, settings.baseline)
        run_warnings = _comparable(loaded, saved, allow_different_conventions)
    confidence = confidence or config.confidence
    comparing = config.several_models or baseline_report is not None
    if comparing and confidence is None:
        confidence = ConfidenceConfig()  # a comparison's interval needs resampling settings
    keys = segment_keys(loaded)
    check_segment_gates(loaded, [] if keys is None else keys[1])
    reports: dict[str, Report] = {}
    for name, file in config.model_files().items():
        # with a comparison, compare() computes every model's intervals in one resampling
        stage = f"model {name}: " if config.several_models else ""
        with console.stage(f"{stage}read, rank, join, metrics"):
            reports[name] = _evaluate_model(
                loaded, file, None if comparing else confidence, confidence, keys
            )
    if not comparing:
        reject_relative_gates(loaded)
        return _run_report(loaded, reports, started)
    assert confidence is not None
    baseline = None
    warnings: list[str] = []
    if saved is not None:
        warnings = list(run_warnings)
        truths = {"this run": truth_identity(next(iter(reports.values())).inputs)}
        found = truths_warning({**truths, "baseline report": saved.truth})
        warnings += [] if found is None else [found]
    else:
        baseline = settings.baseline or next(iter(reports))
    from receval_cli.analysis.intervals import compare  # numpy: only when comparing

    with console.stage("intervals and comparisons"):
        values = None if saved is None else saved.metrics
        comparisons, intervals = compare(reports, baseline, values, settings, confidence)
    reports = {
        name: dataclasses.replace(report, confidence=intervals[name])
        for name, report in reports.items()
    }
    return _run_report(
        loaded,
        reports,
        started,
        Compared(baseline, comparisons, settings, baseline_report),
        warnings,
    )


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
    config = resolved_config(loaded)
    conventions = loaded.config.conventions.model_dump()
    report = RunReport(
        models=reports,
        gates=gates,
        config=config,
        conventions=conventions,
        best=_best(reports),
        baseline=None if compared is None else compared.baseline,
        comparisons=[] if compared is None else compared.comparisons,
        comparison=None if compared is None else compared.settings.model_dump(exclude={"baseline"}),
        baseline_report=(
            None
            if compared is None or compared.baseline_report is None
            else str(compared.baseline_report)
        ),
        elapsed_seconds=time.perf_counter() - started.clock,
        run_warnings=list(warnings or []),
        run=run_info(started.at, config, conventions, started.label),
    )
    if store is None or past is None:
        return report
    from receval_cli.history.store import history_rows
    from receval_cli.history.trends import recent_changes

    recent = recent_changes(past, history_rows(report), str(store))
    return dataclasses.replace(report, history=recent)


def _comparable(
    loaded: LoadedConfig, saved: SavedBaseline, allow_different_conventions: bool
) -> list[str]:
    """Refuse a baseline report computed under other conventions (exit 2), or with
    --allow-different-conventions the warning that says which differ."""
    differ = conventions_differ(
        {"this run": loaded.config.conventions.model_dump(), "baseline report": saved.conventions}
    )
    if not differ:
        return []
    if not allow_different_conventions:
        raise conventions_error(differ, f"this run and baseline report {saved.path}", saved.path)
    return [
        f"this run and the baseline report differ in conventions "
        f"({describe_differences(differ)}); deltas across different conventions are not "
        "comparable."
    ]


def refuse_partitioned_extras(
    loaded: LoadedConfig, confidence: ConfidenceConfig | None, baseline_report: Path | None
) -> None:
    """Partitioned runs (engine: spark, partitions > 1) refuse intervals and comparisons."""
    config = loaded.config
    asked = {
        "confidence": bool(confidence or config.confidence),
        "baseline_report": bool(baseline_report),
    }
    if any(asked.values()):
        raise UsageError(
            "partitioned runs (engine: spark, partitions > 1) compute the metrics from "
            "partial sums; intervals and comparisons need every per-user value and run "
            "without partitions.",
            key="partitions",
            found=[name for name, given in asked.items() if given],
        )


def _auto_partitions(
    loaded: LoadedConfig, confidence: ConfidenceConfig | None, baseline_report: Path | None
) -> LoadedConfig:
    """engine: auto on big predictions: partitions, when the run allows them."""
    config = loaded.config
    paths = [loaded.resolve_path(f.path) for f in config.model_files().values()]
    wanted = auto_partitions(paths, [loaded.resolve_path(config.ground_truth.path)])
    if wanted == 1 or confidence or config.confidence or baseline_report:
        return loaded
    try:
        check_partitionable(loaded, "auto", side_inputs=True)
    except UsageError:
        return loaded
    return dataclasses.replace(loaded, config=config.model_copy(update={"partitions": wanted}))


def _evaluate_model(
    loaded: LoadedConfig,
    file: PredictionsConfig,
    confidence: ConfidenceConfig | None,
    segment_confidence: ConfidenceConfig | None,
    keys: tuple[SegmentKeys, list[Segment]] | None,
) -> Report:
    """One model's Report, with its segments (`keys`) and with intervals when asked
    (`confidence` for all users, `segment_confidence` for the segments)."""
    config = loaded.config
    predictions, truth, engine = _model_inputs(loaded, file)
    report = evaluate_inputs(
        predictions,
        truth,
        loaded.specs,
        config.conventions,
        sources=read_sources(loaded),
        engine=engine,
        check_unknown=config.unknown_items.check,
        segments=keys,
    )
    if confidence is None and segment_confidence is None:
        return report
    from receval_cli.analysis.intervals import with_intervals  # numpy: only with intervals

    if segment_confidence is not None:
        parts = {n: with_intervals(r, segment_confidence) for n, r in report.segments.items()}
        report = dataclasses.replace(report, segments=parts)
    return report if confidence is None else with_intervals(report, confidence)


def _model_inputs(loaded: LoadedConfig, file: PredictionsConfig) -> tuple[Input, Input, Any]:
    """A model's predictions and the ground truth, scanned, and the polars engine for them."""
    config = loaded.config
    predictions = read_predictions(file, loaded.resolve_path(file.path))
    truth = read_ground_truth(config.ground_truth, loaded.resolve_path(config.ground_truth.path))
    return predictions, truth, polars_engine(config.engine, [predictions.path])


def reject_relative_gates(loaded: LoadedConfig) -> None:
    relative = [metric for metric, gate in loaded.gates.items() if gate.relative]
    if relative:
        fix = "List several models under predictions.models, or pass --baseline-report PATH."
        raise ConfigError(
            f"{loaded.path}: gates.{relative[0]} compares with a baseline (max_drop, "
            f"max_relative_drop or no_significant_drop), and this run has one model. {fix}",
            key=f"gates.{relative[0]}",
            path=loaded.path,
            found=relative,
            fix=fix,
        )


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
            results += check_gates(loaded.gates, report.metrics, segments=report.segments)
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
                fix = "Use max_drop or max_relative_drop for it."
                raise ConfigError(
                    f"{loaded.path}: gates.{metric}: no_significant_drop needs per-user values "
                    f"to test, and {metric} is one value over all users (a global, rating or "
                    f"click metric). {fix}",
                    key=f"gates.{metric}",
                    path=loaded.path,
                    found="no_significant_drop",
                    fix=fix,
                )
            higher = lookup(MetricSpec.parse(metric).name).higher_is_better
            results += check_relative(metric, gate, model, comparison.to_dict(), higher)
    return warned, results


def history_path(loaded: LoadedConfig) -> Path | None:
    """The history store of the run (`history` in the config, or --history)."""
    given = loaded.config.history
    return None if given is None else loaded.resolve_path(given)


def check_history_gates(loaded: LoadedConfig) -> None:
    """A gate against the history needs a history store: refused up front without one."""
    wanting = [metric for metric, gate in loaded.gates.items() if gate.history is not None]
    if wanting and history_path(loaded) is None:
        fix = "Add `history: PATH` to the config, or pass --history PATH."
        raise ConfigError(
            f"{loaded.path}: gates.{wanting[0]} compares with the history (max_drop: "
            f"{{vs: history}}), and the run has no history store. {fix}",
            key=f"gates.{wanting[0]}.max_drop",
            path=loaded.path,
            found=wanting,
            fix=fix,
        )


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
        higher = lookup(MetricSpec.parse(metric).name).higher_is_better
        for name, report in reports.items():
            if gate.model not in (None, name) or (name == baseline and gate.model is None):
                continue
            part = report if gate.segment is None else report.segments.get(gate.segment)
            value = None if part is None else part.metrics[metric]
            values = past_values(past, name, metric, gate.segment, gate.history.runs)
            label = metric if gate.segment is None else f"{metric} [{gate.segment}]"
            model = name if compared is not None else None
            results.append(check_history(label, gate.history, model, value, values, higher))
    return results


def _best(reports: dict[str, Report]) -> dict[str, list[str]]:
    """For each metric, the model(s) with the best value (ties: all of them)."""
    best: dict[str, list[str]] = {}
    first = next(iter(reports.values()))
    for metric in first.metrics:
        higher = lookup(MetricSpec.parse(metric).name).higher_is_better
        values = {n: r.metrics[metric] for n, r in reports.items()}
        valued = [v for v in values.values() if v is not None]  # no value: never best
        if not valued:
            best[metric] = []
            continue
        target = max(valued) if higher else min(valued)
        best[metric] = [name for name, v in values.items() if v == target]
    return best


@dataclasses.dataclass(frozen=True)
class SavedBaseline:
    """What a run compares with in a saved report: one model's metric values, the
    report's conventions (None: not recorded) and its ground truth's fingerprint."""

    path: Path
    metrics: dict[str, float | None]
    conventions: dict[str, Any] | None
    truth: dict[str, Any] | None


def read_baseline_report(path: Path, model: str | None) -> SavedBaseline:
    """The saved JSON report's model to compare with (its one model; of a several-model
    report: `model`, else the report's own baseline, else its first model)."""
    saved = read_saved_report(path, "baseline report")
    blocks = saved.blocks()
    chosen = (
        next(iter(blocks)) if len(blocks) == 1 else model or saved.baseline or next(iter(blocks))
    )
    if chosen not in blocks:
        fix = "Set comparison.baseline to one of them."
        raise InputError(
            f"baseline report {path} has no model '{chosen}' (its models: "
            f"{', '.join(blocks)}). {fix}",
            key="comparison.baseline",
            path=path,
            found=chosen,
            fix=fix,
        )
    block = blocks[chosen]
    return SavedBaseline(path, dict(block.metrics), saved.conventions, truth_identity(block.inputs))
