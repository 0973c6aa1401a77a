"""The YAML config: strict loading (no duplicate keys, no code), pydantic validation.

Paths inside a config file are relative to the folder of that file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PositiveInt,
    Tag,
    ValidationError,
    model_validator,
)

from receval_cli.config.conventions import Conventions
from receval_cli.errors import ConfigError, did_you_mean
from receval_cli.metrics import MetricSpec, SpecError, SpecSyntaxError, resolve
from receval_cli.wording import setting

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
_TAGGED: dict[str, type[BaseModel]] = {"<file>": PredictionsConfig, "<models>": PredictionSet}
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


@dataclass(frozen=True)
class LoadedConfig:
    """A validated config, its file, and its metric list expanded into specs."""

    config: Config
    path: Path
    specs: tuple[MetricSpec, ...]
    gates: dict[str, Gate]

    def resolve_path(self, path: str) -> Path:
        candidate = Path(path).expanduser()
        return candidate if candidate.is_absolute() else self.path.parent / candidate


def load_config(path: Path, preset: str | None = None) -> LoadedConfig:
    """Read, validate and expand a config file; every problem raises ConfigError.

    `preset` (from the command line) replaces the config's conventions.preset; the other
    conventions the config gives still override single settings of the preset.
    """
    raw = _read_yaml(path)
    if not isinstance(raw, dict):
        found = "an empty file" if raw is None else f"a {type(raw).__name__}"
        raise ConfigError(
            f"{path}: the config must be a mapping with at least predictions, ground_truth "
            f"and metrics; found {found}. Start from configs/quickstart.yaml."
        )
    if preset is not None:
        conventions = raw.get("conventions") or {}
        if not isinstance(conventions, dict):
            raise ConfigError(f"{path}: conventions must be a mapping, found {conventions!r}.")
        raw["conventions"] = {**conventions, "preset": preset}
    try:
        config = Config.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(format_validation_error(path, error)) from None
    specs = expand_metrics(path, config)
    return LoadedConfig(config, path, specs, _canonical_gates(path, config, specs))


_MERGE_TAG = "tag:yaml.org,2002:merge"
_MAX_YAML_VALUES = 100_000  # with aliases expanded; a real config holds a few hundred
_MAX_YAML_DEPTH = 100  # nested mappings and lists; a real config nests a few levels


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (it already refuses Python object tags) and
    documents nested so deeply that composing them would exhaust Python's stack."""

    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self.depth += 1
        try:
            if self.depth > _MAX_YAML_DEPTH:
                raise ConfigError(
                    f"{self.name}: the YAML nests more than {_MAX_YAML_DEPTH} levels deep; a "
                    "config nests a few. Check the file."
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    """A mapping whose explicit keys are distinct; merge keys (`<<: *defaults`) come first
    and the explicit keys override them, as YAML's merge rule says."""
    explicit = [pair for pair in node.value if pair[0].tag != _MERGE_TAG]
    loader.flatten_mapping(node)  # node.value: the merged pairs, then `explicit`
    merged = node.value[: len(node.value) - len(explicit)]
    mapping: dict[Any, Any] = {}
    for key_node, value_node in merged:
        mapping[_mapping_key(loader, key_node)] = loader.construct_object(value_node, deep=True)
    seen: set[Any] = set()
    for key_node, value_node in explicit:
        key = _mapping_key(loader, key_node)
        if key in seen:
            line = key_node.start_mark.line + 1
            raise ConfigError(
                f"{loader.name}: line {line}: the key '{key}' appears twice in the same "
                "mapping; YAML would silently keep only the last. Remove one of them."
            )
        seen.add(key)
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


def _mapping_key(loader: _StrictLoader, key_node: yaml.Node) -> Any:
    key = loader.construct_object(key_node, deep=True)
    if isinstance(key, list | dict):
        mark = key_node.start_mark
        raise ConfigError(
            f"{loader.name}: line {mark.line + 1}, column {mark.column + 1}: a key is a "
            f"{'list' if isinstance(key, list) else 'mapping'}; config keys are plain names."
        )
    return key


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


def _expanded_size(root: yaml.Node) -> int:
    """The number of values the document holds once every alias is expanded (an alias
    repeats its anchor's whole value: a few lines can expand to billions)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # the current path (an alias to one of them is a cycle)
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        children = _child_nodes(node)
        if finished:
            open_nodes.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes.get(id(child), 1) for child in children)
        elif id(node) not in sizes and id(node) not in open_nodes:
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in children)
    return sizes[id(root)]


def _child_nodes(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _yaml_hint(error: yaml.MarkedYAMLError) -> str:
    text = str(error)
    if "python/" in text:
        return " Tags that build Python objects are never loaded."
    if "constructor for the tag" in text:
        return " Remove the tag: a config holds plain values."
    if "undefined alias" in text:
        return " Define the anchor (&name) before its alias (*name)."
    if "recursive" in text:
        return " An alias cannot stand inside the value its anchor names."
    if "for merging" in text:
        return " A merge key takes an anchored mapping, e.g. <<: *defaults."
    return " Check the indentation (spaces, not tabs) and the quoting."


_MAX_CONFIG_BYTES = 10_000_000


def _read_yaml(path: Path) -> Any:
    if not path.exists():
        raise ConfigError(f"{path}: the config file does not exist. Check the path.")
    if path.is_dir():
        raise ConfigError(f"{path}: is a folder, not a config file. Name the YAML file.")
    try:
        with path.open("rb") as handle:  # a device or a FIFO never ends: read a bounded part
            data = handle.read(_MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the config ({error.strerror}).") from None
    if len(data) > _MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{path}: the config is larger than {_MAX_CONFIG_BYTES // 1_000_000} MB (or never "
            "ends, as a device does); a config is a few kB. Name the YAML file."
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise ConfigError(
            f"{path}: the config is not UTF-8 text (byte 0x{data[error.start]:02x} at line "
            f"{line}, column {column}). Save it as UTF-8."
        ) from None
    try:
        loader = _StrictLoader(text)
    except yaml.reader.ReaderError as error:  # a control character, e.g. a NUL byte
        line = text.count("\n", 0, error.position) + 1
        column = error.position - (text.rfind("\n", 0, error.position) + 1) + 1
        raise ConfigError(
            f"{path}: invalid YAML at line {line}, column {column}: the character "
            f"U+{error.character:04X} is not allowed in YAML text. Remove it."
        ) from None
    loader.name = str(path)
    try:
        node = loader.get_single_node()
        if node is not None and _expanded_size(node) > _MAX_YAML_VALUES:
            raise ConfigError(
                f"{path}: the YAML expands to more than {_MAX_YAML_VALUES:,} values once its "
                "aliases (*name) are repeated; a config is far smaller. Remove the aliases "
                "that repeat large values."
            )
        return None if node is None else loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "?"
        problem = error.problem or str(error)
        hint = _yaml_hint(error)
        raise ConfigError(f"{path}: invalid YAML at {where}: {problem}.{hint}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: invalid YAML: {error}") from None
    finally:
        loader.dispose()


def _loc(parts: tuple[int | str, ...]) -> str:
    """A config path as the audience names it (wording.setting; with list positions, as
    `a.b[0].c`)."""
    if parts and all(isinstance(part, str) for part in parts):
        return setting(*(str(part) for part in parts))
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def format_validation_error(
    path: Path | str,
    error: ValidationError,
    within: tuple[str, ...] = (),
    heading: str = "the config is not valid",
) -> str:
    """One line per problem. `within` is where the validated model sits in the config
    (e.g. ("conventions",) when a Conventions was validated alone)."""
    lines = []
    for item in error.errors():
        loc = within + tuple(p for p in item["loc"] if p not in ("str", "dict[str,any]"))
        where = _loc(tuple(p for p in loc if not str(p).startswith("<"))) or "(top level)"
        if item["type"] == "extra_forbidden":
            parent = _model_at(loc[:-1])
            valid = sorted(parent.model_fields) if parent else []
            key = str(loc[-1])
            lines.append(
                f"{where}: unknown key '{key}'.{did_you_mean(key, valid)} "
                f"Valid keys here: {', '.join(valid)}."
            )
        elif item["type"] == "missing":
            lines.append(f"{where}: required key is missing.")
        else:
            found = item.get("input")
            found_text = "" if isinstance(found, dict | list) else f" (found {found!r})"
            message = str(item["msg"]).removeprefix("Value error, ")
            end = "" if message.endswith((".", "?", "!")) and not found_text else "."
            lines.append(f"{where}: {message}{found_text}{end}")
    return f"{path}: {heading}:\n  " + "\n  ".join(lines)


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The pydantic model at a YAML path, looking through dict values (e.g. gates.X)."""
    annotation: Any = Config
    for part in loc:
        if part in _TAGGED:
            annotation = _TAGGED[str(part)]
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = annotation.model_fields.get(str(part))
            if field is None:
                return None
            annotation = field.annotation
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
        else:
            return None
    return (
        annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    )


_ENTRY_KEYS = ("name", "k", "cutoffs")


def expand_metrics(path: Path, config: Config) -> tuple[MetricSpec, ...]:
    """Turn the config's `metrics` list and `cutoffs` into resolved specs."""
    return metric_specs(config.metrics, config.cutoffs, str(path))


def metric_specs(
    entries: list[str | dict[str, Any]], cutoffs: list[int] | None, where: str
) -> tuple[MetricSpec, ...]:
    """Turn a `metrics` list (strings or mappings) and `cutoffs` into resolved specs."""
    specs: list[MetricSpec] = []
    for index, entry in enumerate(entries):
        where_entry = f"{where}: metrics[{index}]"
        try:
            for spec in _entry_specs(entry, cutoffs):
                resolved = resolve(spec)
                if resolved not in specs:
                    specs.append(resolved)
        except (SpecError, SpecSyntaxError) as error:
            raise ConfigError(f"{where_entry}: {error}") from None
    return tuple(specs)


def _entry_specs(entry: str | dict[str, Any], cutoffs: list[int] | None) -> list[MetricSpec]:
    if isinstance(entry, str):
        base = MetricSpec.parse(entry)
        explicit_all = "@" in entry
        return _with_cutoffs(base, None if explicit_all else cutoffs)
    if "name" not in entry:
        raise SpecSyntaxError("a metric mapping needs a name, e.g. {name: ndcg, cutoffs: [10]}")
    base = MetricSpec.parse(str(entry["name"]))
    params = dict(base.params)
    for key, value in entry.items():
        if key in _ENTRY_KEYS:
            continue
        if isinstance(value, dict | list) or value is None:
            hint = did_you_mean(str(key), _ENTRY_KEYS)
            raise SpecSyntaxError(
                f"'{key}' is not a key of a metric mapping (name, k, cutoffs) and, as a "
                f"parameter, it needs a single value, not {value!r}.{hint}"
            )
        params[str(key)] = value
    ks = _entry_cutoffs(entry, base)
    spec = MetricSpec(base.name, base.k, tuple(params.items()))
    if ks is not None:
        return [MetricSpec(spec.name, k, spec.params) for k in ks]
    explicit = "@" in str(entry["name"])
    return _with_cutoffs(spec, None if explicit else cutoffs)


def _entry_cutoffs(entry: dict[str, Any], base: MetricSpec) -> list[int] | None:
    if "k" in entry and "cutoffs" in entry:
        raise SpecSyntaxError("give either k or cutoffs, not both")
    raw = entry.get("cutoffs", entry.get("k"))
    if raw is None:
        return None
    if base.k is not None:
        raise SpecSyntaxError(f"'{entry['name']}' already has a cutoff; drop k/cutoffs")
    values = raw if isinstance(raw, list) else [raw]
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise SpecSyntaxError(f"cutoff {value!r} is not a positive integer")
    return values


def _with_cutoffs(spec: MetricSpec, cutoffs: list[int] | None) -> list[MetricSpec]:
    if spec.k is not None or not cutoffs:
        return [spec]
    from receval_cli.metrics import lookup

    try:
        takes_cutoff = lookup(spec.name).takes_cutoff
    except SpecError:
        return [spec]  # resolve() reports the unknown name
    if not takes_cutoff:
        return [spec]
    return [MetricSpec(spec.name, k, spec.params) for k in cutoffs]


def _canonical_gates(path: Path, config: Config, specs: tuple[MetricSpec, ...]) -> dict[str, Gate]:
    """Key every gate by its metric's canonical name (so `ap@10` gates `map@10`)."""
    names = [str(s) for s in specs]
    gates: dict[str, Gate] = {}
    for metric, gate in config.gates.items():
        try:
            canonical = str(resolve(MetricSpec.parse(metric)))
        except (SpecError, SpecSyntaxError):
            canonical = metric
        if canonical not in names:
            raise ConfigError(
                f"{path}: gates.{metric}: no such metric among this config's metrics."
                f"{did_you_mean(metric, names)} Gate one of: {', '.join(names)}; or add "
                f"'{metric}' to metrics."
            )
        models = list(config.model_files())
        if gate.model is not None and gate.model not in models:
            raise ConfigError(
                f"{path}: gates.{metric}.model '{gate.model}' is not a model of this config; "
                f"the models are: {', '.join(models)}.{did_you_mean(gate.model, models)}"
            )
        gates[canonical] = gate
    return gates
