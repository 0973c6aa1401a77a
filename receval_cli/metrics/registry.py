"""The metric registry: one typed entry per metric; every list of metrics comes from here.
Over 400 lines: the registry's types (MetricDef, GlobalMetric, PairMetric, State) and
its registration and lookup, which every metric module imports together."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import polars as pl

from receval_cli.errors import did_you_mean
from receval_cli.metrics.peer_names import unknown_spelling
from receval_cli.metrics.spec import MetricSpec, ParamValue
from receval_cli.metrics.stats import Stats, parse_gains
from receval_cli.results.gates import NULL_FAILS

if TYPE_CHECKING:
    from receval_cli.metrics.exact_sum import ExactSum

Params = Mapping[str, ParamValue]
Compute = Callable[[Stats, int | None, Params], pl.Expr]


@dataclass(frozen=True)
class StateSides:
    """The inputs beside the lists that some states read (metrics/fairness.py), None where
    not given: the ground truth (user, item, relevant: rel >= relevance_threshold) of the
    bucket's users, the whole interactions log (user, item, ...), its items by popularity
    (item, users: distinct, place: 1 = most popular, ties by tie_break) and the whole
    catalog (item[, category, ...])."""

    truth: pl.LazyFrame | None = None
    log: pl.LazyFrame | None = None
    popularity: pl.LazyFrame | None = None
    catalog: pl.LazyFrame | None = None
    # the item groups computed beforehand over the whole log or catalog, by grouping
    # (fairness_state.group_label): (item, group) of the items a bucket needs, and (group,
    # items) the groups' sizes (an engine whose buckets see part of the log or catalog)
    item_groups: Mapping[str, tuple[pl.LazyFrame, pl.LazyFrame]] | None = None


@dataclass(frozen=True)
class StateInputs:
    """What a global metric's partial state is built from (one machine, or one partition).

    lists     one row per user of the predictions: `items`, the ranked list (capped at the
              deepest cutoff asked); `placed()`: the same, one row per item
    items     the deduped predictions (user, item), whole lists
    users     the per-user table (in_truth, list_length)
    """

    lists: pl.LazyFrame
    items: pl.LazyFrame
    users: pl.LazyFrame
    # columns of all three that the state is built per, as if each group were alone (the
    # segments of a bucket, evaluation/segment_split.py); they lead the state's rows
    by: tuple[str, ...] = ()
    # (*by, item, rank, length): the lists' items one per row, where the core has them at
    # hand (the compiled core's ranked rows); else `placed` explodes the lists
    ranked: pl.LazyFrame | None = None
    # the finite cutoffs of the run's global metrics, ascending: the states at these
    # depths count from one grouping of the placed rows (top_counts)
    cutoffs: tuple[int, ...] = ()
    sides: StateSides = StateSides()
    # False: no state reads the whole lists, so the grouping leaves out the rows past the
    # deepest cutoff (most of them where the lists run deeper than the global metrics)
    whole: bool = True

    def top_counts(self, k: int | None) -> pl.LazyFrame | None:
        """(*by, length, item, lists): per list length, how many lists hold each item
        within their top k; None where k is not one of `cutoffs`. From one grouping of
        the placed rows by (*by, length, item, band), a row's band being how many cutoffs
        its rank is past, shared by every depth: one pass over the rows, not one a state."""
        if k is not None and k not in self.cutoffs:
            return None
        if k is None and not self.whole:
            return None
        counted = self._counted
        if k is not None:
            counted = counted.filter(pl.col("band") <= self.cutoffs.index(k))
        return counted.drop("band")

    @cached_property
    def _counted(self) -> pl.LazyFrame:
        rank = pl.col("rank")
        band = pl.sum_horizontal([(rank > c).cast(pl.UInt8) for c in self.cutoffs] or [0])
        keys = [*map(pl.col, self.by), pl.col("length").cast(pl.UInt32), pl.col("item")]
        keys.append(band.alias("band"))
        placed = self.placed()
        if not self.whole and self.cutoffs:
            placed = placed.filter(rank <= self.cutoffs[-1])
        counted = placed.group_by(*keys).agg(pl.len().cast(pl.Int64).alias("lists"))
        return counted.cache()

    def placed(self) -> pl.LazyFrame:
        """(*by, item, rank, length): each list's items, one per row: its rank in the list
        (1, 2, ...) and the list's length, both within the lists' cap; empty lists hold
        none. `ranked`, or the lists exploded once for every state that reads them."""
        return self._exploded if self.ranked is None else self.ranked

    @cached_property
    def _exploded(self) -> pl.LazyFrame:
        items = pl.col("items")
        rows = self.lists.select(
            *self.by,
            items.alias("item"),
            pl.int_ranges(1, items.list.len() + 1, dtype=pl.UInt32).alias("rank"),
            items.list.len().alias("length"),
        )
        return rows.explode("item", "rank").drop_nulls("item").cache()


@dataclass(frozen=True)
class State:
    """A mergeable partial state: rows of `keys` and additive integer counts.

    Two partitions' states merge by concatenating them and summing the counts per key
    (`merge_states`), so the same definition serves one machine and a cluster.
    """

    name: str  # metrics asking for the same name share one state
    keys: tuple[str, ...]
    build: Callable[[StateInputs], pl.LazyFrame]


@dataclass(frozen=True)
class Universe:
    """The items a global metric is measured against: the catalog, else the interactions
    log's items (None when neither is given)."""

    items: pl.DataFrame | None
    source: str


Finish = Callable[[pl.DataFrame, Universe, int | None, Params], float | None]


@dataclass(frozen=True)
class PairTotals:
    """What a rating metric is finished from, added up over every bucket of users: the
    pairs scored, the exact sums of per-pair terms (`PairMetric.sums`, by name), and the
    keyed integer counts (`PairMetric.table`, merged by summing per key)."""

    pairs: int
    sums: Mapping[str, ExactSum]
    tables: Mapping[str, pl.DataFrame]


@dataclass(frozen=True)
class PairMetric:
    """A rating metric (scope "pairs"): one value over the scored (user, item) pairs,
    from terms that add up across buckets of users. `sums(params)`: per-pair expressions
    over the scored pairs (columns user, item, predicted, actual, relevant), each summed
    exactly; `table(params)`: None, or (keys, integer aggregations) grouped by the keys;
    `finish(totals, params)`: the value."""

    sums: Callable[[Params], dict[str, pl.Expr]]
    finish: Callable[[PairTotals, Params], float | None]
    table: Callable[[Params], tuple[tuple[str, ...], dict[str, pl.Expr]]] | None = None


@dataclass(frozen=True)
class GlobalMetric:
    """A global metric: its partial state, and the finish step that turns the merged state
    into the value."""

    state: Callable[[int | None, Params], State]
    finish: Finish
    needs_universe: bool = False


def merge_states(states: list[pl.DataFrame], keys: tuple[str, ...]) -> pl.DataFrame:
    """Merge partial states of one kind: concatenate, and sum the counts per key."""
    merged = pl.concat(states)
    counts = [c for c in merged.columns if c not in keys]
    if not keys:
        return merged.select(pl.col(counts).sum())
    return merged.group_by(list(keys)).agg(pl.col(counts).sum()).sort(list(keys))


class SpecError(ValueError):
    """A spec names an unknown metric or parameter, or a value that is not valid."""


@dataclass(frozen=True)
class Param:
    """A metric parameter; its default comes from a convention or is fixed."""

    name: str
    doc: str
    choices: tuple[str, ...] = ()
    convention: str | None = None
    default: ParamValue | None = None
    positive_number: bool = False
    largest: float | None = None  # a positive number's upper bound (where larger overflows)
    share: bool = False  # a number in (0, 1]
    below_one: bool = False  # with share: a number in (0, 1), 1 excluded
    optional: bool = False  # may be left out (no default): the metric then does without
    gain_map: bool = False  # a grade -> gain map, `grade:gain;grade:gain` (stats.parse_gains)
    # what the value lists, each part computed on its own (recall levels, grades): every
    # part counts as one metric value toward the config's bound (config/metric_lists.py)
    parts: str | None = None

    def part_count(self, value: ParamValue) -> int:
        """How many parts the value lists: an integer is a count (levels=11), a text its
        ';'-separated parts (levels=0.25;0.5, gains=1:3;2:9); 1 when `parts` is None."""
        if self.parts is None:
            return 1
        if isinstance(value, int) and not isinstance(value, bool):
            return max(value, 1)
        return str(value).count(";") + 1

    @property
    def required(self) -> bool:
        return self.convention is None and self.default is None and not self.optional

    def check(self, value: ParamValue, spec_text: str) -> ParamValue:
        if self.gain_map:
            try:
                parse_gains(str(value))
            except ValueError as error:
                raise SpecError(
                    f"parameter '{self.name}' of '{spec_text}' is '{value}'; {error}"
                ) from None
            return value
        if self.choices:
            if value not in self.choices:
                raise SpecError(
                    f"parameter '{self.name}' of '{spec_text}' is '{value}'; choose one of "
                    f"{', '.join(self.choices)}.{did_you_mean(str(value), self.choices)}"
                )
            return value
        if self.positive_number and (
            isinstance(value, str) or not math.isfinite(value) or value <= 0
        ):
            raise SpecError(
                f"parameter '{self.name}' of '{spec_text}' is '{value}'; it must be a "
                "positive number"
            )
        if self.largest is not None and not isinstance(value, str) and value > self.largest:
            raise SpecError(
                f"parameter '{self.name}' of '{spec_text}' is '{value}'; it must be at most "
                f"{self.largest:g} (larger values overflow 64-bit floats)"
            )
        if self.share and (
            isinstance(value, str) or not 0 < value <= 1 or (self.below_one and value == 1)
        ):  # one range said at either end (0 and 1 are both outside a share below one)
            allowed = (
                "lie strictly between 0 and 1, e.g. 0.9"
                if self.below_one
                else "be a share in (0, 1], e.g. 0.2"
            )
            raise SpecError(
                f"parameter '{self.name}' of '{spec_text}' is '{value}'; it must {allowed}"
            )
        return value


@dataclass(frozen=True)
class Ratio:
    """Where a per-user metric's parameter `param` is `value`, its report value is a ratio
    of sums over the users in its mean: the sum of their values over the sum of their
    `denominator`s (pyxclib's and napkinXC's normalised psP@k: mean psP@k / mean psP*@k),
    not the mean of their values."""

    param: str
    value: str
    denominator: Compute


@dataclass(frozen=True)
class MetricDef:
    """Everything receval knows about one metric."""

    name: str
    compute: Compute | None  # per-user metrics: the per-user expression
    summary: str
    formula: str
    takes_cutoff: bool = True
    params: tuple[Param, ...] = ()
    aliases: tuple[str, ...] = ()
    higher_is_better: bool = True
    upper_bound: float | None = 1.0
    aggregate: str = "mean"  # how per-user values become the report's value: mean or sum
    scope: str = "user"  # user: a per-user value, averaged; pairs: one value over all pairs
    lower_bound: float | None = 0.0
    global_metric: GlobalMetric | None = None  # scope "global": one value from a mergeable state
    pairs: PairMetric | None = None  # scope "pairs": one value from sums over the pairs
    # when the metric can have no value (null in the report), why: the run's warning says it
    no_value: str | None = None
    # what to do when no user has a value (else: check the cutoff against the inputs)
    no_value_fix: str | None = None
    needs_cutoff: bool = False  # name@k only: the whole list has no meaning for it
    # the smallest cutoff at which the metric is defined, and why (a metric over the pairs
    # of items in a list has no pair in a list of 1): name@k below it is refused as read
    min_cutoff: int = 1
    min_cutoff_reason: str = ""
    # False for a per-user metric that never reads relevance (diversity, novelty, ...): the
    # users_without_relevant rule does not apply to it, so it averages over every user
    # with a list whatever the ground truth holds (as the peer libraries' such measures)
    reads_relevance: bool = True
    # under tie_break expected (metrics/tie_expectation.py): "expected", its expected value
    # over the orders of tied items in closed form; "order_free", its value does not depend
    # on the order; "whole_list", order-free without a cutoff; "order": refused there
    ties: str = "order"
    ratio: Ratio | None = None  # a ratio of sums for some parameter value (Ratio)

    @property
    def function(self) -> Callable[..., object]:
        """The function that defines the metric (its docstring documents it)."""
        if self.global_metric is not None:
            return self.global_metric.finish
        if self.pairs is not None:
            return self.pairs.finish
        assert self.compute is not None
        return self.compute

    def expr(self, stats: Stats, k: int | None, params: Params) -> pl.Expr:
        """The metric's expression (per user, per pair or per logged row)."""
        assert self.compute is not None, f"{self.name} is a global metric"
        return self.compute(stats, k, params)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.all_params() if p.name == name), None)

    def all_params(self) -> tuple[Param, ...]:
        """The metric's own parameters, then (per-user metrics) which users count
        (users_without_relevant only for a metric that reads relevance) and (per-user
        means) how the users' values are averaged."""
        if self.scope != "user":
            return self.params
        relevance = "users_without_relevant" if self.reads_relevance else "prediction_only_users"
        users = [p for p in USER_PARAMS if p.name in ("users_without_recommendations", relevance)]
        return (*self.params, *users, *((MEAN,) if self.aggregate == "mean" else ()))


USER_PARAMS = (
    Param(
        "users_without_recommendations",
        "zero: kept with an empty list; skip: left out of this metric's mean",
        choices=("zero", "skip"),
        convention="users_without_recommendations",
    ),
    Param(
        "users_without_relevant",
        "skip: left out of this metric's mean; zero: kept",
        choices=("zero", "skip"),
        convention="users_without_relevant",
    ),
    Param(
        "prediction_only_users",
        "skip: users only in the predictions are left out; evaluate: averaged with the others",
        choices=("skip", "evaluate"),
        convention="prediction_only_users",
    ),
)

GEOMETRIC_FLOOR = 1e-5  # trec_eval's MIN_GEO_MEAN: a value below counts as this in a geometric mean
MEAN = Param(
    "mean",
    "arithmetic: the mean of the users' values; geometric: exp of the mean of "
    f"log(max(value, {GEOMETRIC_FLOOR:g})) (trec_eval's gm_map)",
    choices=("arithmetic", "geometric"),
    default="arithmetic",
)


def ratio_of(spec: MetricSpec) -> Ratio | None:
    """The spec's Ratio where its report value is a ratio of sums (MetricDef.ratio), else
    None. The Ratio's parameter has a fixed default (no convention): the spec says it."""
    ratio = lookup(spec.name).ratio
    if ratio is None:
        return None
    param = lookup(spec.name).param(ratio.param)
    assert param is not None
    assert param.convention is None  # else the conventions would decide it
    given = spec.param_dict().get(ratio.param, param.default)
    return ratio if given == ratio.value else None


def over_column(spec: MetricSpec) -> str:
    """The per-user table's column of a ratio spec's denominators."""
    return f"{spec}:over"


def finish_ratio(total: ExactSum, over: ExactSum) -> float:
    """A ratio spec's report value: the exact sum of the values over the exact sum of the
    denominators, rounded once (0 where the denominators sum to 0)."""
    numerator, denominator = total.fraction(), over.fraction()
    if numerator is None or denominator is None:
        return math.nan
    return 0.0 if denominator == 0 else float(numerator / denominator)


def is_geometric(spec: MetricSpec) -> bool:
    """Whether the spec's report value is the geometric mean of its users' values (the mean
    parameter has a fixed default and no convention: the spec's own text says it)."""
    return spec.param_dict().get("mean") == "geometric"


def mean_term(value: pl.Expr, spec: MetricSpec) -> pl.Expr:
    """What is summed over the users of a per-user metric's mean: the value itself, or for
    mean=geometric log(max(value, 1e-5)). Summed exactly (metrics/exact_sum.py), then
    finished by `finish_mean`, so the mean is the same whatever the users' partitioning."""
    value = value.cast(pl.Float64)
    return value.clip(lower_bound=GEOMETRIC_FLOOR).log() if is_geometric(spec) else value


def finish_mean(total: ExactSum, count: int, spec: MetricSpec) -> float:
    """The report's value from the exact sum of `mean_term` over `count` (> 0) users: the
    mean rounded once, and for mean=geometric exp of that mean of the logs."""
    mean = total.mean(count)
    return math.exp(mean) if is_geometric(spec) else mean


REGISTRY: dict[str, MetricDef] = {}
_ALIASES: dict[str, str] = {}


def register(
    name: str,
    *,
    summary: str,
    formula: str,
    takes_cutoff: bool = True,
    params: tuple[Param, ...] = (),
    aliases: tuple[str, ...] = (),
    upper_bound: float | None = 1.0,
    aggregate: str = "mean",
    scope: str = "user",
    higher_is_better: bool = True,
    lower_bound: float | None = 0.0,
    no_value: str | None = None,
    no_value_fix: str | None = None,
    needs_cutoff: bool = False,
    reads_relevance: bool = True,
    ties: str = "order",
    ratio: Ratio | None = None,
    min_cutoff: tuple[int, str] = (1, ""),
) -> Callable[[Compute], Compute]:
    """Decorator: add the decorated compute function to the registry under `name`;
    `no_value`: when its value can be null, why (the warning's words), and `no_value_fix`
    what to do when no user has one (else: check the cutoff); `needs_cutoff`:
    name@k only; `reads_relevance`: False when the metric never reads relevance
    (users_without_relevant then does not apply to it); `ties`: what tie_break expected
    computes of it (MetricDef.ties); `min_cutoff`: the smallest cutoff at which it is
    defined, and why (MetricDef.min_cutoff)."""

    def add(compute: Compute) -> Compute:
        _add(
            MetricDef(
                name,
                compute,
                summary,
                formula,
                takes_cutoff,
                params,
                aliases,
                higher_is_better,
                upper_bound,
                aggregate,
                scope,
                lower_bound,
                no_value=no_value,
                no_value_fix=no_value_fix,
                needs_cutoff=needs_cutoff,
                reads_relevance=reads_relevance,
                ties=ties,
                ratio=ratio,
                min_cutoff=min_cutoff[0],
                min_cutoff_reason=min_cutoff[1],
            )
        )
        return compute

    return add


def _add(definition: MetricDef) -> None:
    REGISTRY[definition.name] = definition
    for alias in definition.aliases:
        _ALIASES[alias] = definition.name


def register_global(
    name: str,
    *,
    summary: str,
    formula: str,
    state: Callable[[int | None, Params], State],
    takes_cutoff: bool = True,
    params: tuple[Param, ...] = (),
    aliases: tuple[str, ...] = (),
    upper_bound: float | None = 1.0,
    higher_is_better: bool = True,
    needs_universe: bool = False,
    no_value: str | None = None,
) -> Callable[[Finish], Finish]:
    """Decorator: register a global metric whose finish step is the decorated function;
    `no_value`: when the finish step can give None (null in the report), why."""

    def add(finish: Finish) -> Finish:
        global_metric = GlobalMetric(state, finish, needs_universe)
        _add(
            MetricDef(
                name,
                None,
                summary,
                formula,
                takes_cutoff,
                params,
                aliases,
                higher_is_better,
                upper_bound,
                aggregate="global",
                scope="global",
                global_metric=global_metric,
                ties="whole_list",
                no_value=no_value,
            )
        )
        return finish

    return add


def register_pairs(
    name: str,
    *,
    summary: str,
    formula: str,
    sums: Callable[[Params], dict[str, pl.Expr]],
    table: Callable[[Params], tuple[tuple[str, ...], dict[str, pl.Expr]]] | None = None,
    params: tuple[Param, ...] = (),
    upper_bound: float | None = 1.0,
    lower_bound: float | None = 0.0,
    higher_is_better: bool = True,
    takes_cutoff: bool = False,
    no_value: str | None = None,
) -> Callable[
    [Callable[[PairTotals, Params], float | None]], Callable[[PairTotals, Params], float | None]
]:
    """Decorator: register a rating metric whose finish step is the decorated function.
    `takes_cutoff`: name@k scores only the pairs among each user's first k predictions;
    `no_value`: when its value can be null, why (the warning's words)."""

    def add(
        finish: Callable[[PairTotals, Params], float | None],
    ) -> Callable[[PairTotals, Params], float | None]:
        _add(
            MetricDef(
                name,
                None,
                summary,
                formula,
                takes_cutoff,
                params,
                (),
                higher_is_better,
                upper_bound,
                aggregate="pairs",
                scope="pairs",
                lower_bound=lower_bound,
                pairs=PairMetric(sums, finish, table),
                no_value=no_value,
                ties="whole_list",
            )
        )
        return finish

    return add


def no_value_warning(spec: MetricSpec) -> str:
    """The run's warning for a metric whose value is null."""
    definition, metric = lookup(spec.name), str(spec)
    why = definition.no_value or "it is undefined on these inputs"
    return f"{metric} has no value (null): {why}. {NULL_FAILS}"


# other tools' measure names, as a config writes them (metrics/dialects.py fills it:
# this registry cannot import what reads it): did-you-mean searches them too
OTHER_NAMES: list[str] = []


def _tool_name_hint(name: str) -> str:
    """Did-you-mean among other tools' measure names (names are read lower case here)."""
    lowered = {example.lower(): example for example in OTHER_NAMES}
    hint = did_you_mean(name, lowered)
    for low, example in lowered.items():
        hint = hint.replace(f"'{low}'", f"'{example}'")
    return hint


def lookup(name: str) -> MetricDef:
    canonical = _ALIASES.get(name, name)
    if canonical not in REGISTRY:
        known = sorted([*REGISTRY, *_ALIASES])
        peer = unknown_spelling(name)
        hint = (
            f" '{name}' is ir_measures' name for receval's {peer}: write {peer}, or "
            "ir_measures' own spelling for its numbers."
            if peer is not None
            else did_you_mean(name, known) or _tool_name_hint(name)
        )
        raise SpecError(
            f"unknown metric '{name}'.{hint} Known metrics: "
            f"{', '.join(sorted(REGISTRY))} (run `receval metrics` for their definitions)"
        )
    return REGISTRY[canonical]


def resolve(spec: MetricSpec) -> MetricSpec:
    """Check a spec against the registry and return it under the canonical metric name."""
    definition = lookup(spec.name)
    if spec.k is not None and not definition.takes_cutoff:
        raise SpecError(f"'{spec}': {definition.name} takes no cutoff; write '{definition.name}'")
    if spec.k is None and definition.needs_cutoff:
        raise SpecError(
            f"'{spec}': {definition.name} needs a cutoff (its k is part of the definition); "
            f"write e.g. '{definition.name}@10'"
        )
    if spec.k is not None and spec.k < definition.min_cutoff:
        raise SpecError(
            f"'{spec}': {definition.name} is undefined at a cutoff of {spec.k} "
            f"({definition.min_cutoff_reason}). Use a cutoff of at least "
            f"{definition.min_cutoff} (e.g. {definition.name}@10); beside a shared cutoffs "
            f"list, give it cutoffs of its own, e.g. {{name: {definition.name}, cutoffs: [5, 10]}}."
        )
    for name, value in spec.params:
        param = definition.param(name)
        if param is None:
            names = [p.name for p in definition.all_params()]
            valid = ", ".join(names) if names else "none"
            raise SpecError(
                f"'{spec}': {definition.name} has no parameter '{name}' (its parameters: "
                f"{valid}).{did_you_mean(name, names)}"
            )
        param.check(value, str(spec))
    missing = [p.name for p in definition.params if p.required]
    missing = [m for m in missing if m not in spec.param_dict()]
    if missing:
        example = f"{definition.name}@10({missing[0]}=...)"
        raise SpecError(
            f"'{spec}': {definition.name} needs the parameter '{missing[0]}', e.g. {example}"
        )
    return MetricSpec(definition.name, spec.k, spec.params, spec.label, spec.tool)


def value_count(spec: MetricSpec) -> tuple[int, tuple[str, ...]]:
    """How many metric values a resolved spec counts as toward the config's bound: the
    product of its listing parameters' parts (iprec_avg's levels, a gains map), given or
    default; and what those parts are (e.g. "recall levels")."""
    definition = lookup(spec.name)
    given = spec.param_dict()
    count, what = 1, []
    for param in definition.params:
        value = given.get(param.name, param.default)
        if param.parts is None or value is None:
            continue
        count *= param.part_count(value)
        what.append(param.parts)
    return count, tuple(what)


def resolved_params(
    spec: MetricSpec,
    conventions: Mapping[str, object],
    preset_overrides: Mapping[str, object] | None = None,
) -> dict[str, ParamValue]:
    """Every parameter of the spec's metric: explicit value, else the preset's value for
    this metric, else the convention, else the fixed default."""
    definition = lookup(spec.name)
    given = spec.param_dict()
    values: dict[str, ParamValue] = {}
    for param in definition.all_params():
        if param.name in given:
            values[param.name] = given[param.name]
        elif preset_overrides and param.name in preset_overrides:
            value = preset_overrides[param.name]
            assert isinstance(value, str | int | float)
            values[param.name] = value
        elif param.convention is not None:
            value = conventions[param.convention]
            if value is None:
                continue  # an unset optional convention (e.g. prediction_threshold)
            assert isinstance(value, str | int | float)
            values[param.name] = value
        elif param.default is not None:
            values[param.name] = param.default
    return values
