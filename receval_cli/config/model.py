"""The config's pydantic models: every key, its type, its default and its description.

Reading the YAML (yaml_file.py), wording validation errors (validation_errors.py),
expanding the metric list (metric_lists.py) and loading a file (loading.py) live apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PositiveInt,
    Tag,
    model_validator,
)

from receval_cli.config.conventions import Conventions
from receval_cli.errors import did_you_mean

FileFormat = Literal["csv", "tsv", "parquet", "jsonl", "trec"]
Engine = Literal["auto", "in_memory", "streaming", "gpu", "spark"]
OutputFormat = Literal["table", "json", "markdown", "csv", "junit", "html", "github"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class PredictionColumns(_Strict):
    """Column names in the predictions file. Give one of score, rank or items."""

    user: str = "user"
    item: str = "item"
    score: str | None = None
    rank: str | None = None
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
    item: str = "item"
    relevance: str | None = Field(None, description="Grades; absent: every listed item has 1.")
    items: str | None = Field(None, description="A list column: one row per user.")
    relevances: str | None = Field(None, description="With items: a list of grades.")
    propensity: str | None = Field(
        None, description="Logged data: the logging policy's probability of the item (ctr)."
    )


class _FileConfig(_Strict):
    path: str
    format: FileFormat | None = Field(None, description="Default: from the file's extension.")
    separator: str | None = Field(None, description="CSV field separator (default , or tab).")
    list_separator: str = Field("|", description="Separator of a list stored as CSV text.")


class PredictionsConfig(_FileConfig):
    columns: PredictionColumns = PredictionColumns()


class ModelFile(_Strict):
    """One model's predictions file among several; unset keys come from `predictions`."""

    name: str | None = Field(None, description="In a list: the model's name (default: file stem).")
    path: str
    format: FileFormat | None = None
    separator: str | None = None
    list_separator: str | None = None
    columns: PredictionColumns | None = None


class PredictionSet(_Strict):
    """Several models, each a predictions file, evaluated against the same ground truth.

    `models` is a mapping name: path (or name: {path, columns, ...}), or a list of paths
    (or of {name, path, ...}) where a missing name is the file's stem.
    """

    models: dict[str, ModelFile] = Field(min_length=1)
    format: FileFormat | None = None
    separator: str | None = None
    list_separator: str = "|"
    columns: PredictionColumns = PredictionColumns()

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
                raise ValueError(
                    f"two models are named '{name}'; give each a distinct name (a mapping "
                    "name: path, or name: in each list entry)"
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


class CatalogColumns(_Strict):
    """Column names in the catalog file: the item id, and optional item features."""

    item: str = "item"
    category: str | None = Field(None, description="One category per item (0/1 distance).")
    tags: str | None = Field(None, description="A set of tags per item (Jaccard distance).")
    embedding: str | None = Field(
        None, description="A vector of numbers per item (cosine distance)."
    )
    title: str | None = Field(None, description="A display name (not used by metrics).")


class CatalogConfig(_FileConfig):
    """Every item that could be recommended, optionally with features."""

    columns: CatalogColumns = CatalogColumns()


class InteractionColumns(_Strict):
    """Column names in the interactions (training) log."""

    user: str = "user"
    item: str = "item"
    timestamp: str | None = Field(None, description="Kept for inspection; metrics ignore it.")


class InteractionsConfig(_FileConfig):
    """The training or historical log: item popularity and what each user already knew."""

    columns: InteractionColumns = InteractionColumns()


class SegmentColumns(_Strict):
    user: str = "user"


class SegmentsConfig(_FileConfig):
    """User attributes (one row per user) that `segment_by` splits the users by."""

    columns: SegmentColumns = SegmentColumns()


class Gate(_Strict):
    """A bar for one metric: absolute (min, max) and, with several models or a baseline
    report, relative to the baseline (max_drop, max_relative_drop, no_significant_drop)."""

    min: float | None = None
    max: float | None = None
    max_drop: float | None = Field(
        None, ge=0, description="The most the metric may get worse than the baseline."
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
        """It compares with a baseline."""
        bounds = (self.max_drop, self.max_relative_drop)
        return self.no_significant_drop or bounds != (None, None)


class OutputConfig(_Strict):
    format: OutputFormat = "table"
    path: str | None = None


class ConfidenceConfig(_Strict):
    """Confidence intervals of the per-user-averaged metrics (users resampled)."""

    level: float = Field(0.95, gt=0, lt=1)
    method: Literal["bootstrap", "normal"] = "bootstrap"
    resamples: PositiveInt = Field(
        1000, le=1_000_000, description="Bootstrap resamples (at most a million)."
    )
    seed: int = 0


class ComparisonConfig(_Strict):
    """Every model against the baseline model: paired per-user differences."""

    baseline: str | None = Field(None, description="A model's name (default: the first).")
    test: Literal["t", "wilcoxon", "permutation"] = "t"
    correction: Literal["holm", "bonferroni", "none"] = "holm"
    level: float = Field(0.95, gt=0, lt=1, description="1 - the significance level.")
    resamples: PositiveInt = Field(
        10_000, le=1_000_000, description="permutation: random sign flips (at most a million)."
    )
    seed: int = 0


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


class Config(_Strict):
    """The whole config file."""

    predictions: Predictions
    ground_truth: GroundTruthConfig
    catalog: CatalogConfig | None = None
    interactions: InteractionsConfig | None = None
    baseline: PredictionsConfig | None = Field(
        None, description="An obvious recommender's lists (default: the most popular items)."
    )
    metrics: list[str | dict[str, Any]] = Field(min_length=1)
    cutoffs: list[PositiveInt] | None = None
    conventions: Conventions = Conventions()
    gates: dict[str, Gate] = {}
    output: OutputConfig = OutputConfig()
    confidence: ConfidenceConfig | None = None
    comparison: ComparisonConfig | None = None
    engine: Engine = Field(
        "auto",
        description="auto: streaming from 32 MiB of predictions on disk, else polars' choice; "
        "in_memory; streaming (polars' out-of-core engine); gpu (polars' GPU engine); spark.",
    )
    partitions: PositiveInt = Field(
        1,
        le=4096,
        description="Evaluate the users in this many hash buckets, one after the other (a "
        "polars engine: about 1/N of the memory), or Spark's buckets (default 64).",
    )
    segments: SegmentsConfig | None = None
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
            raise ValueError(
                "segments gives user attributes, and segment_by names none of them; add "
                "segment_by: [an attribute column]"
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
        if self.comparison.baseline not in names:
            raise ValueError(
                f"comparison.baseline '{self.comparison.baseline}' is not a model; the models "
                f"are: {', '.join(names)}.{did_you_mean(self.comparison.baseline, names)}"
            )
        return self
