"""What a run's report needs of its items, computed where the items are.

The recommended items, their exposure, the global metrics' states (keyed by item), the
universe (the catalog's or the log's items) and the unknown-items reference all grow with
the number of items. `item_facts` turns them into what the report shows: the global
metrics' values, the `items` block, the unknown-items count with examples, and the
exposure as a histogram (how many items are in how many lists, which is all the HTML
report's long-tail and Lorenz plots and the Gini caption read), with the errors their
checks found (kept, to be raised in the report's order by assembly.finish). A polars
engine computes them on one machine when it finishes; Spark computes them on the executor
that merges the buckets, so the driver receives only these few values (engines/spark.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.errors import InputError
from receval_cli.evaluation import unknown_items
from receval_cli.evaluation.global_metrics import (
    describe_items,
    global_values,
    outside_universe,
    require_universe,
)
from receval_cli.evaluation.item_exposure import with_universe
from receval_cli.evaluation.item_popularity import item_popularity
from receval_cli.evaluation.plan import metric_exprs
from receval_cli.evaluation.side_columns import raise_unknown_features
from receval_cli.evaluation.wire import from_ipc_text, ipc_text
from receval_cli.inputs.optional import Sources
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.fairness_state import FAIRNESS_STATE
from receval_cli.metrics.registry import State, Universe, merge_states

FEATURES = {"category", "tags", "embedding"}


@dataclass
class ItemTables:
    """A merged Partial's item-level tables (one entry per bucket merged)."""

    recommended: list[pl.DataFrame]  # the distinct recommended items
    exposure: list[pl.DataFrame]  # (item, lists)
    states: dict[str, list[pl.DataFrame]]  # per global metric state
    unknown: pl.DataFrame | None = None  # a one-bucket run's unknown-items row, if counted
    recommended_later: Callable[[], pl.DataFrame] | None = None  # Partial's: made if read


@dataclass
class ItemFacts:
    """The report's item-level results: the global metrics' values, the `items` block,
    the unknown-items row (unknown_items.unknown_query's), the exposure histogram (lists,
    items: how many of the universe's items are in that many lists; sorted by lists), and
    the first error of the universe's and the catalog's checks (`check_error`) and of the
    global metrics' finish (`value_error`)."""

    values: dict[str, float | None]
    items: dict[str, Any] | None = None
    unknown: pl.DataFrame | None = None
    exposure: pl.DataFrame | None = None
    check_error: InputError | None = None
    value_error: InputError | None = None
    popularity_bias: pl.DataFrame | None = None  # see popularity_bias()
    # the item-fairness states, merged, by state name (metrics/fairness.py): the report's
    # per-item-group table is read from them
    fairness_states: dict[str, pl.DataFrame] | None = None

    def to_json(self) -> dict[str, Any]:
        def table(frame: pl.DataFrame | None) -> str | None:
            return None if frame is None else ipc_text(frame)

        return {
            "values": self.values,
            "items": self.items,
            "unknown": table(self.unknown),
            "exposure": table(self.exposure),
            "popularity_bias": table(self.popularity_bias),
            "fairness_states": {k: ipc_text(v) for k, v in (self.fairness_states or {}).items()},
            "check_error": _error_json(self.check_error),
            "value_error": _error_json(self.value_error),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ItemFacts:
        def table(text: str | None) -> pl.DataFrame | None:
            return None if text is None else from_ipc_text(text)

        return cls(
            values=data["values"],
            items=data["items"],
            unknown=table(data["unknown"]),
            exposure=table(data["exposure"]),
            popularity_bias=table(data.get("popularity_bias")),
            fairness_states={
                k: from_ipc_text(v) for k, v in data.get("fairness_states", {}).items()
            }
            or None,
            check_error=_error_of(data["check_error"]),
            value_error=_error_of(data["value_error"]),
        )


def _error_json(error: InputError | None) -> dict[str, Any] | None:
    return None if error is None else {"message": str(error), "fields": error.fields}


def _error_of(data: dict[str, Any] | None) -> InputError | None:
    return None if data is None else InputError(data["message"], **data["fields"])


def item_facts(
    tables: ItemTables,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    sources: Sources,
    universe: Universe,
    reference: pl.LazyFrame | None,
    finish_values: bool = True,
    with_popularity_bias: bool = True,
) -> ItemFacts:
    """The item-level results of a merged Partial's `tables`, against the `universe` and
    the unknown-items `reference` (None: the check is off); `finish_values` False: the
    checks only, not the global metrics' values (validate builds no state);
    `with_popularity_bias` False: no popularity-bias table (Spark's merging executor has
    no whole log to rank the items by)."""
    global_specs = tuple(s for s in specs if lookup(s.name).scope == "global")
    # the distinct recommended items, made where read: a run of ranking metrics alone,
    # its unknown items counted by the buckets, never reads them (73M items at 1B rows)
    listed = bool(tables.recommended) or tables.recommended_later is not None
    recommended = functools.cache(lambda: _distinct_recommended(tables))
    facts = ItemFacts({})
    try:
        require_universe(global_specs, universe)
        if sources.catalog is not None and listed:
            featured = FEATURES & recs_sides(specs, conventions, sources)
            # with a catalog, the universe is the catalog: outside = items without features
            assert universe.items is not None
            outside = recommended().join(universe.items, on="item", how="anti")
            if featured:
                raise_unknown_features(outside, sources.catalog, featured)
    except InputError as error:
        facts.check_error = error
        return facts
    needed = _states_needed(global_specs, conventions)
    if not finish_values or not needed <= set(tables.states):  # no state: a Partial of no user
        return facts
    try:
        states = _states(tables, global_specs, conventions)
        facts.values = {**global_values(global_specs, conventions, states, universe)}
        fairness = {n: t for n, (_, t) in states.items() if n.startswith(FAIRNESS_STATE)}
        facts.fairness_states = fairness or None
    except InputError as error:
        facts.value_error = error
        return facts
    # the items block: where the buckets counted the exposure, or would have for the figures
    described = bool(tables.exposure) or (
        not sources.figures
        and describes_items(global_specs, recs_sides(specs, conventions, sources), sources)
    )
    if described and listed:
        items = recommended()
        facts.items = describe_items(items, universe, outside_universe(items, universe))
    if reference is not None and listed:
        found = tables.unknown
        if found is None:
            # streaming: the reference (the whole ground truth's items, say) read in batches
            query = unknown_items.unknown_query(recommended().lazy(), reference)
            found = query.collect(engine="streaming")
        facts.unknown = found
    if tables.exposure:
        summed = pl.concat(tables.exposure).group_by("item").agg(pl.col("lists").sum())
        exposed = with_universe(summed, universe).filter(pl.col("in_universe").fill_null(True))
        facts.exposure = (
            exposed.group_by("lists").agg(pl.len().cast(pl.Int64).alias("items")).sort("lists")
        )
        # a Spark bucket's popularity rows hold only its own items: no whole-log ranking
        if (
            with_popularity_bias
            and sources.interactions is not None
            and not sources.popularity_rows
        ):
            popular = sources.popularity
            if popular is None:
                log = sources.interactions.frame
                popular = item_popularity(log, conventions.tie_break, users=False)
            facts.popularity_bias = popularity_bias(summed, popular)
    return facts


def _distinct_recommended(tables: ItemTables) -> pl.DataFrame:
    later = tables.recommended_later
    return distinct_items(tables.recommended or ([later()] if later is not None else []))


def describes_items(
    global_specs: tuple[MetricSpec, ...], sides: set[str], sources: Sources
) -> bool:
    """Whether the report describes the recommended items (the `items` block; and their
    exposure, for the figures): with a global metric, a per-user metric of the recs
    table (its `sides`), or a catalog."""
    return bool(global_specs or sides) or sources.catalog is not None


GROUPS = 10


def popularity_bias(exposure: pl.DataFrame, popular: pl.LazyFrame) -> pl.DataFrame:
    """The log's items ranked by popularity (their rows, then the tie-break) in GROUPS
    groups of equal size (1: the most popular tenth), and per group its items, its log
    rows and its recommended slots (the exposure `lists` summed); recommended items the
    log lacks form the group null, last. The HTML report compares each group's share of
    the log with its share of the recommendations."""
    ranked = popular.select("item", "count", "popular_rank").collect()
    total = max(ranked.height, 1)
    grouped = ranked.with_columns(
        group=((pl.col("popular_rank") - 1) * GROUPS // total + 1).cast(pl.Int64)
    )
    joined = grouped.join(exposure, on="item", how="full", coalesce=True)
    return (
        joined.group_by("group")
        .agg(
            items=pl.len().cast(pl.Int64),
            log_rows=pl.col("count").fill_null(0).sum().cast(pl.Int64),
            recommendations=pl.col("lists").fill_null(0).sum().cast(pl.Int64),
        )
        .sort("group", nulls_last=True)
    )


def _states_needed(specs: tuple[MetricSpec, ...], conventions: Conventions) -> set[str]:
    return {_state_of(spec, conventions).name for spec in specs}


def _state_of(spec: MetricSpec, conventions: Conventions) -> State:
    global_metric = lookup(spec.name).global_metric
    assert global_metric is not None
    return global_metric.state(spec.k, conventions.metric_params(spec))


def _states(
    tables: ItemTables, specs: tuple[MetricSpec, ...], conventions: Conventions
) -> dict[str, tuple[State, pl.DataFrame]]:
    states: dict[str, tuple[State, pl.DataFrame]] = {}
    for spec in specs:
        state = _state_of(spec, conventions)
        states[state.name] = (state, merge_states(tables.states[state.name], state.keys))
    return states


def distinct_items(recommended: list[pl.DataFrame], ordered: bool = True) -> pl.DataFrame:
    """The distinct recommended items of every bucket, sorted (`ordered`), else in no
    particular order (buckets' tables made compact before the finish sorts them)."""
    # a Series' unique: several times faster than a one-column frame's (a row hash each)
    found = pl.concat([table.get_column("item") for table in recommended]).unique()
    if ordered and found.is_sorted():  # one sorted table (the compiled core's): no copy
        return found.set_sorted().to_frame()
    return (found.sort() if ordered else found).to_frame()


def recs_sides(
    specs: tuple[MetricSpec, ...], conventions: Conventions, sources: Sources
) -> set[str]:
    """The side columns the run's per-user metrics join to the recommendations."""
    user_specs = tuple(s for s in specs if lookup(s.name).scope == "user")
    stats, _ = metric_exprs(user_specs, conventions, sources)
    return set(stats.sides)
