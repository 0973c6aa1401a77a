"""The run planner: a loaded config resolved, once, into what a run needs.
Over 400 lines: the one place a loaded config becomes a run: its engine, its
refusals and the checks of gates, baseline report, history and segments against it.

`plan_run` is the one place that turns a LoadedConfig into a run: the models and their
files, the engine (auto's choice made here, so it never picks an engine that refuses
the config) and every refusal of that engine, the intervals and the comparison asked
for, the saved baseline report, the gates' preconditions, and the users' segments.
`RunPlan.inputs` reads one model's inputs (predictions, ground truth, optional inputs),
aligns their ids and checks the optional inputs. `run` (analysis/runs.py), `validate`,
`inspect`, the partitioned engine and Spark all take their inputs from a plan; none of
them reads a model's files from the config, aligns ids or resolves segments itself.
Everything a plan refuses is refused before any row is read.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import LoadedConfig, is_remote
from receval_cli.config.model import ComparisonConfig, ConfidenceConfig, PredictionsConfig
from receval_cli.engines.choice import auto_partitions, polars_engine, range_rows
from receval_cli.errors import ConfigError, InputError, UsageError, did_you_mean
from receval_cli.evaluation.fingerprints import truth_identity
from receval_cli.evaluation.global_metrics import require_named
from receval_cli.evaluation.segment_split import Segment, SegmentKeys, segments_of
from receval_cli.inputs.id_alignment import align_ids
from receval_cli.inputs.optional import Sources, check_sources, read_sources
from receval_cli.inputs.readers import Input, read_ground_truth, read_predictions
from receval_cli.inputs.segments import segments_input, user_attributes
from receval_cli.metrics import lookup
from receval_cli.metrics.dialects import spec_of
from receval_cli.metrics.fairness_state import ITEM_GROUP_METRICS, require_item_groups
from receval_cli.report.comparability import (
    conventions_differ,
    conventions_error,
    describe_differences,
)

DEFAULT_SPARK_BUCKETS = 64


@dataclass(frozen=True)
class EngineChoice:
    """The engine a run uses: `name` is the config's engine (auto already resolved into
    its partitions), `partitions` the hash buckets of users (1: one pass; on Spark, the
    co-grouped buckets)."""

    name: str
    partitions: int
    # auto: prediction rows per range of users (engines/ranges.py) when the predictions
    # come grouped by user, else (0) none; `partitions` then says how many hash buckets
    # (1: one pass) evaluate predictions that do not come so grouped
    ranges: int = 0

    @property
    def spark(self) -> bool:
        return self.name == "spark"

    @property
    def partitioned(self) -> bool:
        """The run is assembled from buckets' Partials (Spark, or partitions > 1)."""
        return self.spark or self.partitions > 1

    @property
    def setting(self) -> str:
        """The setting that chose the engine, as messages name it."""
        if self.spark:
            return "engine: spark"
        if self.partitions > 1:
            return f"partitions: {self.partitions}"
        return f"engine: {self.name}"

    def polars(self, paths: list[Path]) -> Any:
        """polars' collect engine for the run's local files (Spark's executors and the
        one-pass engines share this choice)."""
        return polars_engine("auto" if self.spark else self.name, paths)


@dataclass(frozen=True)
class ModelInputs:
    """One model's inputs as a run reads them: scanned (lazily), ids aligned, the optional
    inputs checked; and polars' engine for them."""

    name: str
    file: PredictionsConfig
    predictions: Input
    truth: Input
    sources: Sources
    engine: Any
    # per input (its role): the user and item id types as read, before align_ids
    id_types: dict[str, dict[str, Any]]

    def parts(self) -> tuple[Input, Input, Sources, Any]:
        """(predictions, truth, sources, engine)."""
        return self.predictions, self.truth, self.sources, self.engine


@dataclass(frozen=True)
class LocalInputs:
    """engine: spark: a model's local inputs as the polars readers read them (`checked`:
    the predictions and the ground truth by role, None for a table or a URI), the local
    optional inputs and the local segments file."""

    file: PredictionsConfig
    checked: dict[str, Input | None]
    sources: Sources
    segments_file: Input | None


@dataclass
class RunPlan:
    """What a run of a config needs, resolved before any row is read (plan_run)."""

    loaded: LoadedConfig
    engine: EngineChoice
    models: dict[str, PredictionsConfig]
    # intervals for every model (None: none asked, and no comparison)
    confidence: ConfidenceConfig | None
    comparing: bool  # several models, or a --baseline-report
    comparison: ComparisonConfig
    saved: SavedBaseline | None  # the --baseline-report's model, read and checked
    warnings: list[str]
    # the report's item figures (Sources.figures): False where no HTML report is written
    figures: bool = True

    @property
    def baseline(self) -> str | None:
        """The model the others are compared with (None: a saved report, or no comparison)."""
        if not self.comparing or self.saved is not None:
            return None
        return self.comparison.baseline or next(iter(self.models))

    def with_engine(self, partitions: int) -> RunPlan:
        """This plan with its engine's hash partitions in place of ranges (1: one pass)."""
        return dataclasses.replace(self, engine=EngineChoice(self.engine.name, partitions))

    def inputs(self, name: str) -> ModelInputs:
        """Model `name`'s inputs: every local input of the config read (schemas checked,
        rows not read), the ids aligned, the optional inputs checked."""
        loaded = self.loaded
        config = loaded.config
        file = self.models[name]
        predictions = read_predictions(file, loaded.resolve_path(file.path))
        truth = read_ground_truth(
            config.ground_truth, loaded.resolve_path(config.ground_truth.path)
        )
        sources = read_sources(loaded)
        sources.figures = self.figures
        read = (predictions, truth, *sources.given())
        types = {source.role: _id_types(source) for source in read}
        align_ids(predictions, truth, *sources.given(), user_types=self._user_types)
        check_sources(sources, config.conventions.duplicates)
        engine = self.engine.polars([predictions.path])
        return ModelInputs(name, file, predictions, truth, sources, engine, types)

    def local_inputs(self, name: str) -> LocalInputs:
        """engine: spark: model `name`'s local inputs read by the polars readers (every
        check of theirs, before Spark starts; their rows are Spark's); a table or a URI
        is Spark's to read (None, or left out of the sources)."""
        loaded = self.loaded
        config = loaded.config
        file = self.models[name]
        found: dict[str, Input | None] = {"predictions": None, "ground truth": None}
        if not is_remote(file.path):
            found["predictions"] = read_predictions(file, loaded.resolve_path(file.path))
        if not is_remote(config.ground_truth.path):
            truth_path = loaded.resolve_path(config.ground_truth.path)
            found["ground truth"] = read_ground_truth(config.ground_truth, truth_path)
        segments = config.segments
        segments_file = None
        if config.segment_by and segments is not None and not is_remote(segments.path):
            path = loaded.resolve_path(segments.path)
            segments_file = segments_input(segments, path, config.segment_by)
        sources = read_sources(loaded, local_only=True)
        return LocalInputs(file, found, sources, segments_file)

    def segments(self) -> tuple[SegmentKeys, list[Segment]] | None:
        """Each user's segment values and the segments (None without segment_by), read
        once for every model, the gates on segments checked against them."""
        return self._segment_keys

    @cached_property
    def _user_types(self) -> list[Any]:
        """Every model's user id type as its predictions are read (schemas only), so that
        align_ids gives all models' users one type; none for a one-model run."""
        if len(self.models) < 2:
            return []
        loaded = self.loaded
        found = []
        for file in self.models.values():
            schema = read_predictions(file, loaded.resolve_path(file.path)).frame.collect_schema()
            found.append(schema["user"])
        return found

    @cached_property
    def _segment_keys(self) -> tuple[SegmentKeys, list[Segment]] | None:
        found = segment_keys(self.loaded)
        check_segment_gates(self.loaded, [] if found is None else found[1])
        return found

    def check_segments(self, segments: list[Segment]) -> None:
        """The gates on segments against the segments an engine found (Spark reads them)."""
        check_segment_gates(self.loaded, segments)


def _id_types(source: Input) -> dict[str, Any]:
    """The user and item id types as read, before align_ids gives them one type."""
    schema = source.frame.collect_schema()
    return {c: schema[c] for c in ("user", "item") if c in schema}


def plan_run(
    loaded: LoadedConfig,
    confidence: ConfidenceConfig | None = None,
    baseline_report: Path | None = None,
    allow_different_conventions: bool = False,
) -> RunPlan:
    """Resolve a loaded config into a RunPlan; everything it refuses (a gate without what
    it compares with, an engine that cannot run a metric or a convention, a baseline
    report under other conventions) is refused here, before any row is read."""
    config = loaded.config
    check_history_gates(loaded)
    require_named(loaded.specs, config.catalog is not None or config.interactions is not None)
    category = config.catalog is not None and config.catalog.columns.category is not None
    groups = {
        str(s): config.conventions.metric_params(s)["groups"]
        for s in loaded.specs
        if s.name in ITEM_GROUP_METRICS
    }
    require_item_groups(groups, category, config.interactions is not None)
    models = config.model_files()
    comparing = len(models) > 1 or baseline_report is not None
    settings = config.comparison or ComparisonConfig()
    confidence = confidence or config.confidence
    if comparing and confidence is None:
        # a comparison's intervals need resampling settings: the defaults, at its level
        confidence = ConfidenceConfig(level=settings.level)
    if not comparing:
        reject_relative_gates(loaded)
    elif baseline_report is None:
        reject_baseline_gates(loaded, settings.baseline or next(iter(models)))
    saved, warnings = None, []
    if baseline_report is not None:
        saved = read_baseline_report(baseline_report, settings.baseline)
        warnings = comparable(loaded, saved, allow_different_conventions)
    if comparing:
        check_baseline_gates(loaded, saved)
    engine = _engine(loaded, models)
    if engine.partitioned:
        check_engine(loaded, engine)
    expected_ties = loaded.config.conventions.tie_break == "expected"
    if settings.lists and (not comparing or saved is not None or expected_ties):
        _refuse_list_comparison(loaded, baseline_report)
    return RunPlan(
        loaded=loaded,
        engine=engine,
        models=models,
        confidence=confidence,
        comparing=comparing,
        comparison=settings,
        saved=saved,
        warnings=warnings,
    )


def _refuse_list_comparison(loaded: LoadedConfig, baseline_report: Path | None) -> None:
    """comparison.lists compares the models' lists with the baseline model's, on every
    engine: not in a run of one model (nothing to compare, as a gate against the baseline
    there), against a saved report (which holds no lists), nor under tie_break expected
    (the lists' order among tied items is not one order then)."""
    key = "comparison.lists"
    if len(loaded.config.model_files()) == 1 and baseline_report is None:
        fix = "List several models under predictions.models, or drop comparison.lists."
        why = "this run has one model, so there are no other lists to compare"
    elif loaded.config.conventions.tie_break == "expected":
        fix = "Compare the lists in a second config with another tie_break (item_desc, ...)."
        why = (
            "conventions.tie_break expected averages the metrics over every order of tied "
            "items, and rbo, jaccard@k and kendall_tau read one order"
        )
    else:
        fix = "Give the baseline's predictions as a model of the config instead."
        why = f"a saved report ({baseline_report}) holds metric values, not lists"
    raise ConfigError(
        f"{loaded.path}: {key}: the models' lists are compared with the baseline model's; "
        f"{why}. {fix}",
        path=loaded.path,
        key=key,
        found=list(loaded.config.comparison.lists) if loaded.config.comparison else [],
        fix=fix,
    )


def plan_reading(loaded: LoadedConfig) -> RunPlan:
    """A plan that only reads (`inspect`): the models and their inputs, in one pass of
    a polars engine (Spark's choice read as auto), none of a run's gates or refusals."""
    config = loaded.config
    name = "auto" if config.engine == "spark" else config.engine
    return RunPlan(
        loaded=loaded,
        engine=EngineChoice(name, 1),
        models=config.model_files(),
        confidence=None,
        comparing=False,
        comparison=config.comparison or ComparisonConfig(),
        saved=None,
        warnings=[],
    )


def _engine(loaded: LoadedConfig, models: dict[str, PredictionsConfig]) -> EngineChoice:
    """The engine: as configured, or for `engine: auto` on big inputs, partitions when
    the config runs there (auto never picks an engine that refuses the config)."""
    config = loaded.config
    if config.engine == "spark":
        buckets = config.partitions if config.partitions > 1 else DEFAULT_SPARK_BUCKETS
        return EngineChoice("spark", buckets)
    if config.engine != "auto" or config.partitions > 1:
        return EngineChoice(config.engine, config.partitions)
    paths = [loaded.resolve_path(f.path) for f in models.values()]
    truth = [loaded.resolve_path(config.ground_truth.path)]
    wanted = auto_partitions(paths, truth)
    rows = range_rows(paths, truth)
    if wanted == 1 and rows == 0:
        return EngineChoice("auto", 1)
    try:
        check_engine(loaded, EngineChoice("auto", max(wanted, 2)))
    except UsageError:
        return EngineChoice("auto", 1)
    return EngineChoice("auto", wanted, ranges=rows)


def check_engine(loaded: LoadedConfig, engine: EngineChoice) -> None:
    """Refuse what the engine cannot run, naming it and the convention (exit 2): every
    engine runs every metric, but Spark has no file order."""
    if engine.spark:
        refuse_file_order(loaded.config.conventions)


def refuse_file_order(conventions: Conventions) -> None:
    """engine: spark has no file order: the conventions that read it are refused."""
    for key, value in (
        ("tie_break", conventions.tie_break),
        ("duplicates", conventions.duplicates),
        ("truth_duplicates", conventions.truth_duplicates),
    ):
        if value in ("input_order", "first"):
            fix = (
                "Use tie_break item_desc/item_asc and duplicates error/max_score "
                "(truth_duplicates error/max), or another engine."
            )
            raise UsageError(
                f"engine: spark has no file order, so conventions.{key}: {value} is not "
                f"defined there. {fix}",
                key=f"conventions.{key}",
                found=value,
                fix=fix,
            )


def reject_relative_gates(loaded: LoadedConfig) -> None:
    """A gate against a baseline in a run of one model, with no --baseline-report."""
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


def reject_baseline_gates(loaded: LoadedConfig, baseline: str) -> None:
    """A gate against the baseline (max_drop, max_relative_drop, no_significant_drop)
    on the baseline model itself: it would compare the model with itself, so it applies
    to nothing (refused, not skipped)."""
    for metric, gate in loaded.gates.items():
        if gate.model != baseline or not gate.relative:
            continue
        others = [name for name in loaded.config.model_files() if name != baseline]
        key = f"gates.{metric}.model"
        fix = (
            f"Name a model compared with it ({', '.join(others)}), or give the baseline "
            "a min or max gate instead."
        )
        raise ConfigError(
            f"{loaded.path}: {key} '{baseline}' is the baseline, and this gate compares a "
            f"model with the baseline (max_drop, max_relative_drop or "
            f"no_significant_drop): it applies to no model. {fix}",
            key=key,
            path=loaded.path,
            found=baseline,
            fix=fix,
        )


def check_baseline_gates(loaded: LoadedConfig, saved: SavedBaseline | None) -> None:
    """What a gate against the baseline needs and the config shows missing: a value of
    the saved report's model for its metric, and for no_significant_drop, per-user values
    to test (a global, rating or click metric has one value over all users)."""
    for metric, gate in loaded.gates.items():
        if not gate.relative:
            continue
        if saved is not None and metric not in saved.metrics:
            fix = "Gate a metric the saved report holds, or save a report that holds it."
            raise InputError(
                f"gates.{metric}: the baseline report {saved.path} has no value for {metric} "
                f"(its metrics: {', '.join(saved.metrics) or 'none'}). {fix}",
                key=f"gates.{metric}",
                path=saved.path,
                found=list(saved.metrics)[:50],
                fix=fix,
            )
        if gate.no_significant_drop and lookup(spec_of(metric).name).scope != "user":
            raise no_significance_test(loaded, metric)


def no_significance_test(loaded: LoadedConfig, metric: str) -> ConfigError:
    """A no_significant_drop gate on a metric without per-user values to test."""
    fix = "Use max_drop or max_relative_drop for it."
    return ConfigError(
        f"{loaded.path}: gates.{metric}: no_significant_drop needs per-user values "
        f"to test, and {metric} is one value over all users (a global, rating or "
        f"click metric). {fix}",
        key=f"gates.{metric}",
        path=loaded.path,
        found="no_significant_drop",
        fix=fix,
    )


def comparable(
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


@dataclass(frozen=True)
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
    from receval_cli.report.saved_report import read_saved_report  # pydantic models

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


def segment_keys(loaded: LoadedConfig) -> tuple[SegmentKeys, list[Segment]] | None:
    """Each user's segment values and the segments, or None without segment_by."""
    attributes = user_attributes(loaded)
    if attributes is None:
        return None
    by = tuple(loaded.config.segment_by)
    segments = segments_of({a: attributes.get_column(a).unique().to_list() for a in by})
    return SegmentKeys(attributes, by), segments


def check_segment_gates(loaded: LoadedConfig, segments: list[Segment]) -> None:
    names = [s.name for s in segments]
    for metric, gate in loaded.gates.items():
        if gate.segment is None:
            continue
        if gate.segment not in names:
            listed = ", ".join(names) if names else "none (set segment_by)"
            raise ConfigError(
                f"{loaded.path}: gates.{metric}.segment '{gate.segment}' is not a segment of "
                f"this run; the segments are: {listed}.{did_you_mean(gate.segment, names)}",
                key=f"gates.{metric}.segment",
                path=loaded.path,
                found=gate.segment,
            )
        if gate.relative:
            raise ConfigError(
                f"{loaded.path}: gates.{metric}: a gate on a segment takes min or max; "
                "comparisons with the baseline are over all users.",
                key=f"gates.{metric}",
                path=loaded.path,
            )
