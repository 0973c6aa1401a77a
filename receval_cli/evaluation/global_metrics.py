"""Evaluate the global metrics: build each partial state once, merge, finish.

On one machine every state is built from the whole input and "merged" alone; the merge
is the same one a cluster applies to the states of its partitions.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.errors import InputError
from receval_cli.inputs.list_order import tie_order
from receval_cli.inputs.optional import Sources
from receval_cli.inputs.readers import Input
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.registry import (
    GlobalMetric,
    State,
    StateInputs,
    StateSides,
    Universe,
    merge_states,
)

_EXAMPLES = 3


def universe_of(sources: Sources) -> Universe:
    """The catalog's items, else the items of the interactions log, else none."""
    if sources.catalog is not None:
        return Universe(sources.catalog.frame.select("item").collect(), "catalog")
    if sources.interactions is not None:
        items = sources.interactions.frame.select("item").unique().collect()
        return Universe(items, "interactions log")
    return Universe(None, "none")


def state_sides(truth: Input, sources: Sources, conventions: Conventions) -> StateSides:
    """What the states that read more than the lists get (StateSides): the ground truth
    with its relevance, the log and the catalog as given."""
    relevant = pl.col("rel") >= conventions.relevance_threshold
    log = None if sources.interactions is None else sources.interactions.frame
    return StateSides(
        truth=truth.frame.select("user", "item", relevant.alias("relevant")),
        log=log,
        popularity=None if log is None else users_popularity(log, conventions.tie_break),
        catalog=None if sources.catalog is None else sources.catalog.frame,
        item_groups=sources.item_groups,
    )


def users_popularity(log: pl.LazyFrame, tie_break: str) -> pl.LazyFrame:
    """(item, users, place): the log's items by their distinct users, descending, then
    the tie-break (input_order: the item's first row); place 1 is the most popular."""
    pairs = log.group_by("user", "item").agg(pl.col("row").min())
    per_item = pairs.group_by("item").agg(
        pl.len().cast(pl.Int64).alias("users"), pl.col("row").min().alias("first_row")
    )
    return ranked_by_users(per_item, tie_break)


def ranked_by_users(per_item: pl.LazyFrame, tie_break: str) -> pl.LazyFrame:
    """(item, users, place): users_popularity's order of (item, users[, first_row]) rows
    (first_row: input_order's key, the item's first row in the log)."""
    second, descending = tie_order(tie_break, row="first_row")
    ranked = per_item.sort([pl.col("users"), second], descending=[True, descending])
    return ranked.select("item", "users").with_row_index("place", offset=1)


def _global_metric(spec: MetricSpec) -> GlobalMetric:
    found = lookup(spec.name).global_metric
    assert found is not None, spec
    return found


def state_queries(
    specs: tuple[MetricSpec, ...], conventions: Conventions, inputs: StateInputs
) -> dict[str, tuple[State, pl.LazyFrame]]:
    """Each distinct state the specs need, with its lazy query (the states at the specs'
    cutoffs count from one grouping: StateInputs.top_counts)."""
    cutoffs = tuple(sorted({spec.k for spec in specs if spec.k is not None}))
    whole = any(spec.k is None for spec in specs)
    inputs = dataclasses.replace(inputs, cutoffs=cutoffs, whole=whole)
    queries: dict[str, tuple[State, pl.LazyFrame]] = {}
    for spec in specs:
        state = _global_metric(spec).state(spec.k, conventions.metric_params(spec))
        if state.name not in queries:
            queries[state.name] = (state, state.build(inputs))
    return queries


def global_values(
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    states: dict[str, tuple[State, pl.DataFrame]],
    universe: Universe,
) -> dict[str, float | None]:
    """Each global metric's value from its (merged) state (None: no value, see no_value)."""
    values: dict[str, float | None] = {}
    for spec in specs:
        params = conventions.metric_params(spec)
        global_metric = _global_metric(spec)
        state, table = states[global_metric.state(spec.k, params).name]
        merged = merge_states([table], state.keys)
        values[str(spec)] = global_metric.finish(merged, universe, spec.k, params)
    return values


def require_universe(specs: tuple[MetricSpec, ...], universe: Universe) -> None:
    """The global metrics that measure against the catalog have one (see require_named),
    and it is not empty."""
    needing = [str(s) for s in specs if _global_metric(s).needs_universe]
    require_named(specs, universe.items is not None)
    if needing and universe.items is not None and universe.items.height == 0:
        raise InputError(
            f"the {universe.source} has no items, so coverage is undefined.",
            key="catalog" if universe.source == "catalog" else "interactions",
            found=0,
        )


def require_named(specs: tuple[MetricSpec, ...], named: bool) -> None:
    """A global metric that measures against the catalog needs a catalog or an
    interactions log in the config (`named`): checked by the run planner before any row
    is read (on Spark, before a session starts), and again on the items read. `specs`
    may hold metrics of every scope."""
    needing = [
        str(s)
        for s in specs
        if lookup(s.name).scope == "global" and _global_metric(s).needs_universe
    ]
    if needing and not named:
        fix = (
            "add a catalog (catalog.path, every item that could be recommended) or an "
            "interactions log (interactions.path, whose items then stand for the catalog)."
        )
        raise InputError(
            f"{', '.join(needing)} measure(s) the recommendations against the catalog: {fix}",
            key="catalog.path",
            found=needing,
            fix=fix,
        )


def recommended_items(lists: pl.LazyFrame) -> pl.LazyFrame:
    """The distinct items in the (capped) lists."""
    return lists.select(pl.col("items").alias("item")).explode("item").drop_nulls().unique()


def outside_universe(recommended: pl.DataFrame, universe: Universe) -> pl.DataFrame | None:
    """The recommended items that are not in the universe (None without a universe)."""
    if universe.items is None:
        return None
    return recommended.join(universe.items, on="item", how="anti")


def describe_items(
    recommended: pl.DataFrame, universe: Universe, outside: pl.DataFrame | None
) -> dict[str, Any]:
    """The report's `items` block: the universe and the recommended items outside it."""
    block: dict[str, Any] = {"recommended": recommended.height}
    if universe.items is None or outside is None:
        return block
    block.update(
        universe=universe.source,
        universe_size=universe.items.height,
        outside_universe=outside.height,
    )
    if outside.height:
        block["outside_examples"] = outside.get_column("item").sort().head(_EXAMPLES).to_list()
    return block
