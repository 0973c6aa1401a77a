"""Edge-case conventions: every choice that makes "the same" metric differ between tools.

Each is a named setting with a documented default; the resolved set is echoed in every
report, so a number never travels without the rules that produced it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PositiveInt,
    PrivateAttr,
    model_validator,
)

from receval_cli.config.presets import PRESETS
from receval_cli.errors import did_you_mean
from receval_cli.metrics.registry import resolved_params
from receval_cli.metrics.spec import MetricSpec, ParamValue

TieBreak = Literal[
    "item_desc", "item_asc", "item_text_desc", "item_text_asc", "input_order", "expected"
]
MissingPolicy = Literal["zero", "skip"]
PredictionOnly = Literal["skip", "evaluate"]
PrecisionDenominator = Literal["k", "list_length"]
ApDenominator = Literal["relevant", "min_k_relevant", "hits", "k"]
IdealDcg = Literal["at_k", "all_relevant", "k_positions"]
Gain = Literal["linear", "exponential", "binary"]
GainBelowThreshold = Literal["grade", "zero"]
FractionalGrades = Literal["keep", "truncate"]
Discount = Literal["log2", "jarvelin"]
PredictionDuplicates = Literal["error", "first", "max_score"]
TruthDuplicates = Literal["error", "first", "max"]
ScorePrecision = Literal["float64", "float32"]
Unrated = Literal["ignore", "default"]
Unpredicted = Literal["error", "ignore", "default"]


class SettingError(ValueError):
    """A validator's ValueError that says what it is about: the ConfigError worded from it
    (validation_errors.py) takes `key` (where the location names none, at the top level),
    `found` (else the validated input) and `fix` (a sentence that ends the message)."""

    def __init__(
        self,
        message: str,
        *,
        key: str | None = None,
        found: object = None,
        fix: str | None = None,
    ) -> None:
        super().__init__(message)
        self.key = key
        self.found = found
        self.fix = fix


class Conventions(BaseModel):
    """The `conventions` section of the config."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    preset: str | None = Field(
        None,
        description=(
            "A named set of conventions that reproduces a well-known tool (trec_eval, ranx, "
            "replay, ...); keys given beside it override single settings."
        ),
    )
    relevance_threshold: float = Field(
        1.0,
        description=(
            "An item is relevant when its relevance >= this value. Binary metrics use it; "
            "graded metrics (the DCG family) still use the grades as gains."
        ),
    )
    tie_break: TieBreak = Field(
        "item_desc",
        description=(
            "Order of items with equal score (or equal rank) after score descending: "
            "item_desc or item_asc (the item id in its own order: integers as numbers), "
            "item_text_desc (the id as text whatever its type, so 9 before 10 before 100: "
            "trec_eval's rule) or item_text_asc, or input_order (file order); or expected: "
            "each metric's expected value over every order of the tied items (McSherry "
            "and Najork, ECIR 2008), for the metrics that have one in closed form (the "
            "others are refused by name)."
        ),
    )
    users_without_recommendations: MissingPolicy = Field(
        "zero",
        description=(
            "Users in the ground truth with no recommendation: zero (kept with an empty "
            "list, so every metric of the list counts 0) or skip (left out of the mean)."
        ),
    )
    users_without_relevant: MissingPolicy = Field(
        "skip",
        description=(
            "Users in the ground truth with no item at or above relevance_threshold: skip "
            "(left out of the mean) or zero (kept; a ratio with a 0 denominator counts 0)."
        ),
    )
    prediction_only_users: PredictionOnly = Field(
        "skip",
        description=(
            "Users in the predictions but not in the ground truth, for the metrics that "
            "read no relevance (diversity, novelty, sufficient_reco, intersection, ...): "
            "skip (not evaluated) or evaluate (averaged with the others, as RecTools, "
            "Jurity and MS Recommenders average over every user of the recommendations). "
            "A metric that reads relevance never counts them."
        ),
    )
    precision_denominator: PrecisionDenominator = Field(
        "k",
        description=(
            "Precision@k divides the hits by k, or by list_length (the user's list truncated at k)."
        ),
    )
    ap_denominator: ApDenominator = Field(
        "min_k_relevant",
        description=(
            "AP@k divides the summed precisions by all relevant items (relevant, trec_eval), "
            "min(k, relevant) (min_k_relevant), the hits in the top k (hits), or k (k: "
            "RecTools' divide_by_k; the list length without a cutoff)."
        ),
    )
    ideal_dcg: IdealDcg = Field(
        "at_k",
        description=(
            "IDCG@k is the DCG of the ideal list truncated at k (at_k), or of the whole "
            "ideal list, every ground-truth item with a positive grade (all_relevant, "
            "Jurity's rule), or of k positions each holding the user's best-graded item "
            "(k_positions: RecTools' default with binary gain; the list length without a "
            "cutoff)."
        ),
    )
    gain: Gain = Field(
        "linear",
        description=(
            "DCG-family gain: linear (rel), exponential (2^rel - 1), or binary (1 for a "
            "relevant item, else 0)."
        ),
    )
    gain_below_threshold: GainBelowThreshold = Field(
        "grade",
        description=(
            "DCG family, linear or exponential gain: a positive grade below "
            "relevance_threshold gains its grade (grade: trec_eval) or nothing and leaves "
            "the ideal list (zero: Microsoft Recommenders, whose rating_true holds only "
            "the relevant rows; ranx with -l)."
        ),
    )
    fractional_grades: FractionalGrades = Field(
        "keep",
        description=(
            "Grades are used as read (keep), or truncated toward zero first (truncate: 2.5 "
            "counts as 2, 0.5 as 0, -1.5 as -1), as trec_eval reads qrels (atol) and ranx "
            "stores them (an integer array)."
        ),
    )
    discount: Discount = Field(
        "log2",
        description=(
            "DCG-family discount: log2 (1/log2(i+1)) or jarvelin (positions 1 and 2 "
            "undiscounted, then 1/log2(i))."
        ),
    )
    score_precision: ScorePrecision = Field(
        "float64",
        description=(
            "Scores are compared as read (float64), or rounded to single precision first "
            "(float32, as trec_eval 9 and pytrec_eval store them: scores equal in float32 then "
            "tie; trec_eval 10.0 keeps doubles)."
        ),
    )
    duplicates: PredictionDuplicates = Field(
        "error",
        description=(
            "A (user, item) repeated in the predictions: error, first (keep the first "
            "row in file order), or max_score (keep the best-ranked row)."
        ),
    )
    truth_duplicates: TruthDuplicates = Field(
        "error",
        description=(
            "A (user, item) repeated in the ground truth: error, first (keep the first "
            "row in file order), or max (keep the highest relevance; in a click log, among "
            "equal clicks, the highest propensity)."
        ),
    )
    max_depth: PositiveInt | None = Field(
        None,
        le=2**32 - 1,  # as cutoffs: no list is longer
        description=(
            "Only the first N items of each list count, for every metric (trec_eval's -M; "
            "rating, AUC and click metrics see each user's first N predictions by score); "
            "none: the whole list."
        ),
    )

    unrated: Unrated = Field(
        "ignore",
        description=(
            "Rating metrics: a predicted (user, item) with no actual rating is ignored, or "
            "scored against default_rating (default)."
        ),
    )
    default_rating: float | None = Field(
        None, description="The actual rating assumed for unrated predictions (unrated: default)."
    )
    unpredicted: Unpredicted = Field(
        "error",
        description=(
            "Rating metrics: a rated (user, item) with no prediction is an error, ignored, or "
            "scored with default_prediction (default)."
        ),
    )
    default_prediction: float | None = Field(
        None, description="The prediction assumed for unpredicted ratings (unpredicted: default)."
    )

    prediction_threshold: float | None = Field(
        None,
        description=(
            "Set metrics with retrieve=threshold: an item is retrieved when its predicted "
            "score is at least this value."
        ),
    )

    _given: frozenset[str] = PrivateAttr(default=frozenset())

    @property
    def given(self) -> frozenset[str]:
        """The settings written explicitly (not taken from the preset or the defaults)."""
        return self._given

    def to_wire(self) -> dict[str, Any]:
        """JSON-ready data that from_wire() turns back into equal conventions (for Spark's
        executors), with which settings were written: a preset's per-metric rules apply
        only to the others, so they must travel too."""
        return {"settings": self.model_dump(mode="json"), "given": sorted(self._given)}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Conventions:
        conventions = cls.model_validate(data["settings"])
        conventions._given = frozenset(data["given"])
        return conventions

    def metric_params(self, spec: MetricSpec) -> dict[str, ParamValue]:
        """The spec's parameters: explicit, else its preset's for this metric (unless the
        user wrote that convention), else these conventions, else the fixed default."""
        preset = PRESETS[self.preset] if self.preset else None
        written = frozenset(spec.param_dict())
        overrides = preset.overrides(spec.name, self.given, written) if preset else None
        return resolved_params(spec, self.model_dump(), overrides)

    @model_validator(mode="after")
    def _defaults_given(self) -> Conventions:
        if self.unrated == "default" and self.default_rating is None:
            raise ValueError("unrated: default needs default_rating, e.g. default_rating: 0")
        if self.unpredicted == "default" and self.default_prediction is None:
            raise ValueError(
                "unpredicted: default needs default_prediction, e.g. default_prediction: 3"
            )
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _apply_preset(
        cls, data: Any, handler: ModelWrapValidatorHandler[Conventions]
    ) -> Conventions:
        """Start from the preset's values; keys given beside it win."""
        if isinstance(data, Conventions):
            return data
        given = frozenset(data) - {"preset"} if isinstance(data, dict) else frozenset()
        if isinstance(data, dict) and data.get("preset") is not None:
            name = data["preset"]
            if not isinstance(name, str) or name not in PRESETS:  # a list or mapping: unhashable
                known = ", ".join(sorted(PRESETS))
                raise SettingError(
                    f"unknown preset '{name}'; choose one of {known}."
                    f"{did_you_mean(str(name), PRESETS)}",
                    found=name,
                )
            data = {**PRESETS[name].conventions, **data}
        conventions = handler(data)
        conventions._given = given
        return conventions
