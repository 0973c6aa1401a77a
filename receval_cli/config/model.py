"""The config's pydantic models: every key, its type, its default and its description.
Over 400 lines: one job, the config's pydantic models, a class per block with every
key's description: the schema, read as one.

Reading the YAML (yaml_file.py), wording validation errors (validation_errors.py),
expanding the metric list (metric_lists.py) and loading a file (loading.py) live apart.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PositiveFloat,
    PositiveInt,
    Tag,
    field_validator,
    model_validator,
)

from receval_cli.config.conventions import Conventions, SettingError
from receval_cli.errors import did_you_mean
from receval_cli.formats import RUN_FORMATS
from receval_cli.metrics.list_similarity import list_measure

FileFormat = Literal["csv", "tsv", "parquet", "jsonl", "trec"]
Engine = Literal["auto", "in_memory", "streaming", "gpu", "spark"]
if TYPE_CHECKING:  # mypy reads no Literal made at run time
    OutputFormat = str
else:  # the run report's formats (receval_cli/formats.py), in their order
    OutputFormat = Literal[tuple(RUN_FORMATS)]


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        allow_inf_nan=False,
    )  # a field's docstring is its description: document_fields() (on demand)


class PredictionColumns(_Strict):
    """Column names in the predictions file. Give one of score, rank or items."""

    user: str = "user"
    """The user (query) id column."""
    item: str = "item"
    """The item id column (score and rank layouts)."""
    score: str | None = None
    """Score layout: items ranked by this column, descending."""
    rank: str | None = None
    """Rank layout: items ranked by this column, ascending."""
    items: str | None = Field(None, description="A list column: one row per user, items in order.")

    @model_validator(mode="after")
    def _one_layout(self) -> PredictionColumns:
        given = [n for n in ("score", "rank", "items") if getattr(self, n) is not None]
        if len(given) > 1:
            raise ValueError(
                f"give only one of score, rank or items (found {', '.join(given)}): a list "
                "is ranked either by score, by a rank column, or by its order"
            )
        return self


class TruthColumns(_Strict):
    """Column names in the ground-truth file."""

    user: str = "user"
    """The user id column."""
    item: str = "item"
    """The item id column."""
    relevance: str | None = Field(None, description="Grades; absent: every listed item has 1.")
    items: str | None = Field(None, description="A list column: one row per user.")
    relevances: str | None = Field(None, description="With items: a list of grades.")
    propensity: str | None = Field(
        None, description="Logged data: the logging policy's probability of the item (ctr)."
    )
    intent: str | None = Field(
        None,
        description="The intent (subtopic) each row grades the item for: the intent-aware "
        "metrics' key (user, intent, item); TREC diversity qrels: iteration.",
    )


class _FileConfig(_Strict):
    path: str
    """The file, relative to the config file's folder."""
    format: FileFormat | None = Field(None, description="Default: from the file's extension.")
    separator: str | None = Field(None, description="CSV field separator (default , or tab).")
    list_separator: str = Field("|", description="Separator of a list stored as CSV text.")


class PredictionsConfig(_FileConfig):
    columns: PredictionColumns = PredictionColumns()
    """The file's column names for receval's roles."""


class ModelFile(_Strict):
    """One model's predictions file among several; unset keys come from `predictions`."""

    name: str | None = Field(None, description="In a list: the model's name (default: file stem).")
    path: str
    """The file, relative to the config file's folder."""
    format: FileFormat | None = None
    """Default: `predictions.format`, else the extension."""
    separator: str | None = None
    """Default: `predictions.separator`."""
    list_separator: str | None = None
    """Default: `predictions.list_separator`."""
    columns: PredictionColumns | None = None
    """Default: `predictions.columns`."""


class PredictionSet(_Strict):
    """Several models, each a predictions file, evaluated against the same ground truth.

    `models` is a mapping name: path (or name: {path, columns, ...}), or a list of paths
    (or of {name, path, ...}) where a missing name is the file's stem.
    """

    models: dict[str, ModelFile] = Field(min_length=1)
    (
        "Each model's predictions file: name: path (or name: {path, columns, ...}), or a list of "
        "paths (or of {name, path, ...}); a missing name is the file's stem."
    )
    format: FileFormat | None = None
    """The models' default format."""
    separator: str | None = None
    """The models' default CSV field separator."""
    list_separator: str = "|"
    """The models' default separator of a list stored as CSV text."""
    columns: PredictionColumns = PredictionColumns()
    """The models' default column names."""

    @model_validator(mode="before")
    @classmethod
    def _named(cls, data: Any) -> Any:
        """Turn the list form and bare paths into name: {path, ...}."""
        if not isinstance(data, dict):
            return data
        models = data.get("models")
        entries: list[tuple[str | None, Any]]
        if isinstance(models, dict):
            entries = list(models.items())
        elif isinstance(models, list):
            entries = [(None, entry) for entry in models]
        else:
            return data
        named: dict[str, Any] = {}
        for given, entry in entries:
            model = {"path": entry} if isinstance(entry, str) else entry
            name = given
            if name is None and isinstance(model, dict):
                name = model.get("name") or Path(str(model.get("path", ""))).name.split(".")[0]
            if name in named:
                raise SettingError(
                    f"two models are named '{name}'; give each a distinct name (a mapping "
                    "name: path, or name: in each list entry)",
                    found=name,
                )
            named[str(name)] = model
        return {**data, "models": named}

    def files(self) -> dict[str, PredictionsConfig]:
        """Each model's name and its complete predictions config."""
        return {
            name: PredictionsConfig(
                path=model.path,
                format=model.format or self.format,
                separator=model.separator or self.separator,
                list_separator=model.list_separator or self.list_separator,
                columns=model.columns or self.columns,
            )
            for name, model in self.models.items()
        }


def _predictions_kind(value: Any) -> str:
    return "<models>" if isinstance(value, dict) and "models" in value else "<file>"


# predictions: one file, or several models (a tag in an error's location, dropped in messages)
TAGGED: dict[str, type[BaseModel]] = {"<file>": PredictionsConfig, "<models>": PredictionSet}
Predictions = Annotated[
    Annotated[PredictionsConfig, Tag("<file>")] | Annotated[PredictionSet, Tag("<models>")],
    Discriminator(_predictions_kind),
]


class GroundTruthConfig(_FileConfig):
    columns: TruthColumns = TruthColumns()
    """The file's column names for receval's roles."""


class CatalogColumns(_Strict):
    """Column names in the catalog file: the item id, and optional item features."""

    item: str = "item"
    """The item id column."""
    category: str | None = Field(None, description="One category per item (0/1 distance).")
    tags: str | None = Field(None, description="A set of tags per item (Jaccard distance).")
    embedding: str | None = Field(
        None, description="A vector of numbers per item (cosine distance)."
    )
    title: str | None = Field(None, description="A display name (not used by metrics).")
    propensity: str | None = Field(
        None,
        description="The item's propensity p in (0, 1], the chance a relevant item is "
        "observed (psp, psdcg, psndcg with propensity=catalog).",
    )


class CatalogConfig(_FileConfig):
    """Every item that could be recommended, optionally with features."""

    columns: CatalogColumns = CatalogColumns()
    """The file's column names for receval's roles."""


class InteractionColumns(_Strict):
    """Column names in the interactions (training) log."""

    user: str = "user"
    """The user id column."""
    item: str = "item"
    """The item id column."""
    timestamp: str | None = Field(None, description="Kept for inspection; metrics ignore it.")


class InteractionsConfig(_FileConfig):
    """The training or historical log: item popularity and what each user already knew."""

    columns: InteractionColumns = InteractionColumns()
    """The file's column names for receval's roles."""


class SegmentColumns(_Strict):
    user: str = "user"
    """The user id column."""


class SegmentsConfig(_FileConfig):
    """User attributes (one row per user) that `segment_by` splits the users by."""

    columns: SegmentColumns = SegmentColumns()
    """The file's column names for receval's roles."""


class HistoryDrop(_Strict):
    """A drop bounded against the recent past: `{vs: history, runs: 7, stat: median,
    relative: 0.05}` fails when the metric falls more than 5% below the median of the
    same model's (and segment's) last 7 runs in the history store (`history` or
    --history). With fewer than `min_runs` past runs it passes and says so (waived); a
    metric with no value today fails all the same (the gate's `on_null`)."""

    vs: Literal["history"]
    """What the drop is measured against: the history store."""
    runs: PositiveInt = Field(7, le=10_000, description="How many past runs, latest first.")
    stat: Literal["median", "mean", "last"] = "median"
    """What of those runs' values is the reference."""
    relative: float | None = Field(
        None, ge=0, description="The most it may fall, as a share of the reference (0.05 = 5%)."
    )
    absolute: float | None = Field(
        None, ge=0, description="The most it may fall, in the metric's units."
    )
    min_runs: PositiveInt | None = Field(
        None,
        description="Past runs needed to judge (default: runs); fewer: waived (a null "
        "value today still fails).",
    )

    @model_validator(mode="after")
    def _one_limit(self) -> HistoryDrop:
        if (self.relative is None) == (self.absolute is None):
            raise ValueError(
                "give one of relative (a share of the reference, e.g. 0.05) or absolute "
                "(in the metric's units)"
            )
        if self.min_runs is not None and self.min_runs > self.runs:
            raise ValueError(f"min_runs {self.min_runs} is above runs {self.runs}")
        return self

    @property
    def needed(self) -> int:
        return self.runs if self.min_runs is None else self.min_runs


class Gate(_Strict):
    """A bar for one metric: absolute (min, max); with several models or a baseline
    report, relative to the baseline (max_drop, max_relative_drop, no_significant_drop);
    with a history store, against the recent past (max_drop: {vs: history, ...})."""

    min: float | None = None
    """Fail below this value."""
    max: float | None = None
    """Fail above this value."""
    max_drop: Annotated[float, Field(ge=0)] | HistoryDrop | None = Field(
        None,
        description="The most the metric may get worse than the baseline; or, as "
        "{vs: history, runs, stat, relative or absolute}, than the recent past.",
    )
    max_relative_drop: float | None = Field(
        None, ge=0, description="The same, as a share of the baseline's value (0.02 = 2%)."
    )
    no_significant_drop: bool = Field(
        False, description="Fail when the model is significantly worse than the baseline."
    )
    model: str | None = Field(None, description="Gate only this model (default: every one).")
    segment: str | None = Field(
        None, description="Gate the metric within one segment, e.g. country=DE."
    )
    on_null: Literal["fail", "waive"] = Field(
        "fail",
        description="When the metric has no value (null): fail (exit 1), whatever a "
        "history holds; or waive (exit 0, shown as waived).",
    )

    @model_validator(mode="after")
    def _a_bound(self) -> Gate:
        bounds = (self.min, self.max, self.max_drop, self.max_relative_drop)
        if bounds == (None, None, None, None) and not self.no_significant_drop:
            raise ValueError(
                "a gate needs min, max, max_drop, max_relative_drop or "
                "no_significant_drop, e.g. {min: 0.3}"
            )
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(
                f"min {self.min:g} is above max {self.max:g}, so no value could pass; swap "
                "them or drop one"
            )
        return self

    @property
    def relative(self) -> bool:
        """It compares with a baseline (a model of the run, or a saved report)."""
        bounds = (self.baseline_drop, self.max_relative_drop)
        return self.no_significant_drop or bounds != (None, None)

    @property
    def baseline_drop(self) -> float | None:
        """max_drop against the baseline (None when it is against the history)."""
        return None if isinstance(self.max_drop, HistoryDrop) else self.max_drop

    @property
    def history(self) -> HistoryDrop | None:
        """max_drop against the history store, if that is what it is."""
        return self.max_drop if isinstance(self.max_drop, HistoryDrop) else None


class OutputConfig(_Strict):
    format: OutputFormat = Field("table", description=f"{', '.join(RUN_FORMATS)}.")
    path: str | None = None
    """Write the report to this file (relative to the config file's folder)."""


class ConfidenceConfig(_Strict):
    """Confidence intervals of the per-user-averaged metrics (users resampled)."""

    level: float = Field(0.95, gt=0, lt=1)
    """The models' intervals' level (a comparison's differences: comparison.level's)."""
    method: Literal["bootstrap", "normal"] = "bootstrap"
    """bootstrap (users resampled) or normal."""
    resamples: PositiveInt = Field(
        1000, le=1_000_000, description="Bootstrap resamples (at most a million)."
    )
    """bootstrap: the number of resamples."""
    seed: int = 0
    """The random seed (results are reproducible)."""


class FairnessConfig(_Strict):
    """The fairness report: item groups and user segments compared (docs/reports.md)."""

    k: PositiveInt = 10
    """The cutoff of every fairness measure."""
    groups: Literal["popularity", "category"] = "popularity"
    (
        "The item groups: popularity (the interactions log's short head and long tail) or "
        "category (the catalog's category column)."
    )
    pop_ratio: float = Field(0.8, gt=0, le=1)
    """groups: popularity: the short head's share of the log's distinct (user, item) pairs."""
    metrics: list[str] = Field(["recall", "ndcg"], min_length=1)
    (
        "The per-user metrics compared between the segment_by segments, at k (hit_rate, "
        "whose complement is RecList's miss rate, is always compared)."
    )
    level: float = Field(0.95, gt=0, lt=1)
    """The confidence level of the segments' gaps (Welch intervals)."""


def receval_spark_key(key: str, value: str) -> str | None:
    """What to write instead, when a Spark setting (`spark.conf`, --spark-conf) names
    receval's own key of the `spark:` block (spark.stall_timeout): Spark would take it and
    ignore it, and the run would go on without the setting; None for any other key."""
    if key.strip() != "spark.stall_timeout":
        return None
    value = value.strip() or "SECONDS"
    return (
        f"spark.stall_timeout is receval's setting, not Spark's (Spark would ignore it): "
        f"write spark: {{stall_timeout: {value}}} in the config, or --set "
        f"spark.stall_timeout={value}."
    )


class SparkConfig(_Strict):
    """engine: spark: the session receval starts (an existing session, as in a notebook or
    under spark-submit, keeps its own settings)."""

    master: str | None = Field(
        None,
        description="The Spark master (local[4], spark://host:7077, yarn, ...); none: "
        "Spark's default (spark-submit's --master, else local[*]).",
    )
    conf: dict[str, str] = Field(
        {},
        description="Spark settings (e.g. spark.driver.memory: 8g, which only takes effect "
        "when receval starts the JVM; under spark-submit give --driver-memory).",
    )
    stall_timeout: PositiveFloat | None = Field(
        300,
        description="Seconds a run may wait with no task of it running or finishing (lost "
        "workers, no executors) before it stops with one line and exit 2; null: wait.",
    )

    @field_validator("conf")
    @classmethod
    def _spark_settings_only(cls, conf: dict[str, str]) -> dict[str, str]:
        for key, value in conf.items():
            instead = receval_spark_key(key, value)
            if instead is not None:
                raise ValueError(instead)
        return conf


class ComparisonConfig(_Strict):
    """Every model against the baseline model: paired per-user differences."""

    baseline: str | None = Field(None, description="A model's name (default: the first).")
    test: Literal["t", "wilcoxon", "permutation"] = "t"
    """The paired test: t, wilcoxon or permutation."""
    correction: Literal["holm", "bonferroni", "none"] = "holm"
    """Multiple-comparison correction across metrics and models."""
    level: float = Field(
        0.95,
        gt=0,
        lt=1,
        description="1 - the significance level, and the level of the differences' intervals.",
    )
    resamples: PositiveInt = Field(
        10_000, le=1_000_000, description="permutation: random sign flips (at most a million)."
    )
    seed: int = 0
    """The random seed of the permutation test."""
    power: float = Field(
        0.8,
        gt=0,
        lt=1,
        description="The power at which each comparison states its minimum detectable "
        "difference (the paired t-test's, at the level of one test).",
    )
    target_difference: PositiveFloat | None = Field(
        None,
        description="A difference to detect: each comparison of a mean also states how many "
        "users would detect it with that power (the differences' spread as measured).",
    )
    lists: list[str] = Field(
        default_factory=list,
        description="How alike each model's lists are to the baseline model's, averaged "
        "over the users with a list in both: jaccard@k, rbo@k(p=0.9), kendall_tau@k "
        "(metrics/list_similarity.py).",
    )

    @field_validator("lists")
    @classmethod
    def _list_measures(cls, lists: list[str]) -> list[str]:
        for text in lists:
            list_measure(text)  # a ValueError that quotes the entry and says what to write
        return lists


class UnknownItemsConfig(_Strict):
    """When the recommended items the reference (catalog, else interactions log, else
    ground truth) does not know are reported as a problem: a common join-key bug."""

    warn: float = Field(
        0.9,
        ge=0,
        le=1,
        description="Warn when more than this share of the distinct recommended items is "
        "unknown to the reference.",
    )
    max: float | None = Field(
        None,
        ge=0,
        le=1,
        description="A gate: fail (exit 1) when more than this share is unknown.",
    )
    check: bool = Field(
        True,
        description="Count them (one more pass over the recommended items, about 7% of a "
        "10M-row run); false leaves the block, its warning and its gate out.",
    )

    @model_validator(mode="after")
    def _gate_needs_the_check(self) -> UnknownItemsConfig:
        if self.max is not None and not self.check:
            raise ValueError("max is a gate on the count that check: false turns off; drop one")
        return self


class MlflowConfig(_Strict):
    """Log every run to MLflow (the mlflow extra; docs/tracking.md)."""

    uri: str = Field(min_length=1)
    (
        "The tracking URI: sqlite:///PATH.db (a file, relative to the config file's folder), "
        "http(s)://HOST[:PORT] (a server), or a folder (MLflow's file store); --mlflow-uri "
        "overrides it."
    )
    experiment: str = Field("receval", min_length=1)
    """The MLflow experiment (made when missing); --mlflow-experiment overrides it."""


class TrackingConfig(_Strict):
    """Experiment trackers each run is logged to, after its outputs are written."""

    mlflow: MlflowConfig | None = None
    (
        "MLflow: one run per receval run, a nested run per model (metrics, intervals, "
        "segments), the conventions, config hash and inputs as params, the report as artifacts."
    )


class Config(_Strict):
    """The whole config file."""

    predictions: Predictions
    (
        "The model's recommendations: one file (path, columns), or several models (models: name: "
        "path)."
    )
    ground_truth: GroundTruthConfig
    """What each user actually found relevant: a file (path, columns)."""
    catalog: CatalogConfig | None = None
    """Every item that could be recommended, optionally with features (coverage, diversity)."""
    interactions: InteractionsConfig | None = None
    (
        "The training log: item popularity (novelty, popularity bias) and what each user already "
        "knew."
    )
    baseline: PredictionsConfig | None = Field(
        None, description="An obvious recommender's lists (default: the most popular items)."
    )
    metrics: list[str | dict[str, Any]] = Field(min_length=1)
    (
        "The metrics: 'name[@k][(param=value,...)]' strings, or mappings {name, cutoffs or k, "
        "param: value}. `receval metrics` lists them."
    )
    cutoffs: list[PositiveInt] | None = None
    """The cutoffs k of every metric written without one."""
    pr_curve: bool = Field(
        False,
        description="Add iprec_at_recall at the 11 recall levels 0, 0.1, ..., 1 (whole lists) "
        "to the metrics: the report holds the interpolated precision-recall curve, and the "
        "HTML report draws it per model.",
    )
    conventions: Conventions = Conventions()
    ("The edge-case rules (ties, users without data, denominators, gains); every key is optional.")
    gates: dict[str, Gate] = {}
    ("Quality bars by metric (canonical name, e.g. ndcg@10): `receval run` exits 1 when one fails.")
    output: OutputConfig = OutputConfig()
    """The report's format and file."""
    confidence: ConfidenceConfig | None = None
    """Confidence intervals of the per-user metrics (users resampled)."""
    fairness: FairnessConfig | None = None
    (
        "Add rsp, reo and exposure_disparity at k over the item groups, and report per item "
        "group and per segment_by segment (the `fairness` block)."
    )
    comparison: ComparisonConfig | None = None
    """Every model against the baseline model, with paired tests."""
    engine: Engine = Field(
        "auto",
        description="auto: streaming from 32 MiB of predictions on disk, else polars' choice; "
        "partitions where the memory available would not hold the run; "
        "in_memory; streaming (polars' out-of-core engine); gpu (polars' GPU engine); spark.",
    )
    spark: SparkConfig = Field(
        SparkConfig(),
        description="engine: spark: the master and Spark settings of the session receval "
        "starts (--spark-master and --spark-conf override them).",
    )
    partitions: PositiveInt = Field(
        1,
        le=4096,
        description="Evaluate the users in this many hash buckets, one after the other (a "
        "polars engine: about 1/N of the memory), or Spark's buckets (default 64).",
    )
    segments: SegmentsConfig | None = None
    """A file of user attributes to split the users by (segment_by)."""
    segment_by: list[str] = Field(
        [],
        description="User attributes (of `segments`, else of the ground truth) to report "
        "every metric by, one attribute at a time.",
    )
    unknown_items: UnknownItemsConfig = Field(
        UnknownItemsConfig(),
        description="The share of recommended items unknown to the catalog (or log, or "
        "ground truth) that warns, and that fails the run.",
    )
    history: str | None = Field(
        None,
        description="A history store (a folder, relative to the config file's): every run "
        "appends its values there as one Parquet file (`receval history` shows the trends); "
        "--history overrides it.",
    )
    tracking: TrackingConfig | None = None
    """Log each run to an experiment tracker (tracking: {mlflow: {uri, experiment}})."""

    def model_files(self) -> dict[str, PredictionsConfig]:
        """Each model's predictions config; a single file is the model named "model"."""
        if isinstance(self.predictions, PredictionSet):
            return self.predictions.files()
        return {"model": self.predictions}

    @property
    def several_models(self) -> bool:
        return isinstance(self.predictions, PredictionSet)

    @model_validator(mode="after")
    def _segments_need_attributes(self) -> Config:
        if self.segments is not None and not self.segment_by:
            key = "segment_by"
            raise SettingError(
                f"segments gives user attributes, and {key} names none of them; add "
                f"{key}: [an attribute column]",
                key=key,
                found=[],
            )
        return self

    @model_validator(mode="after")
    def _known_baseline(self) -> Config:
        """With several models the baseline is one of them; with one model it names a model
        of the --baseline-report file, checked when that is read."""
        if self.comparison is None or self.comparison.baseline is None:
            return self
        if not self.several_models:
            return self
        names = list(self.model_files())
        baseline = self.comparison.baseline
        if baseline not in names:
            key = "comparison.baseline"
            raise SettingError(
                f"{key} '{baseline}' is not a model; the models are: {', '.join(names)}."
                f"{did_you_mean(baseline, names)}",
                key=key,
                found=baseline,
            )
        return self


@functools.cache
def document_fields() -> None:
    """Give each field of these models that has no description the docstring written under
    it here, and rebuild the models so that their JSON Schema shows it (`receval schema`,
    docs/configuration.md's key reference). Done on demand, not at import: pydantic's
    use_attribute_docstrings reads this module's source once per model, which cost about
    40 ms of every command's start."""
    import ast
    import inspect

    module = sys.modules[__name__]
    tree = ast.parse(inspect.getsource(module))
    docs: dict[str, dict[str, str]] = {}  # class name -> field -> its docstring
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            docs[node.name] = {
                statement.target.id: inspect.cleandoc(following.value.value)
                for statement, following in zip(node.body, node.body[1:], strict=False)
                if isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            }
    models = [  # in the order they are defined: a model is rebuilt after those it holds
        value
        for name, value in vars(module).items()
        if isinstance(value, type) and issubclass(value, _Strict) and name in docs
    ]
    for model in models:
        for name, field in model.model_fields.items():
            # the docstring of the class that declares the field last (as pydantic would)
            owner = next(c for c in model.__mro__ if name in vars(c).get("__annotations__", {}))
            if field.description is None and name in docs.get(owner.__name__, {}):
                field.description = docs[owner.__name__][name]
        model.model_rebuild(force=True)
