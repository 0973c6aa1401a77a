"""The report's item exposure: how many lists hold each item in their top k (at the
deepest cutoff), the state it can be read from, and the universe's items beside it.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from receval_cli.metrics import MetricSpec
from receval_cli.metrics.exposure import exposure as exposure_state
from receval_cli.metrics.registry import State, Universe


def exposure_depth(specs: tuple[MetricSpec, ...]) -> int | None:
    """The cutoff of the report's item exposure: the metrics' largest (None: whole lists)."""
    return max((s.k for s in specs if s.k is not None), default=None)


def item_exposure(lists: pl.LazyFrame, k: int | None) -> pl.LazyFrame:
    """Each item of the lists and how many lists hold it in their top k."""
    top = pl.col("items") if k is None else pl.col("items").list.head(k)
    items = lists.select(top.alias("item")).explode("item").drop_nulls()
    return items.group_by("item").agg(pl.len().cast(pl.Int64).alias("lists"))


def same_exposure(states: Mapping[str, tuple[State, pl.LazyFrame]], k: int | None) -> str | None:
    """The state among `states` that is item_exposure at k (metrics/exposure.py's exposure
    state: the same counts), so that the report reads it instead of counting again; None
    where the run builds none."""
    name = exposure_state(k, {}).name
    return name if name in states else None


def with_universe(exposure: pl.DataFrame, universe: Universe) -> pl.DataFrame:
    """The exposures, flagged in or out of the universe, with its unrecommended items (0)."""
    if universe.items is None:
        return exposure.with_columns(in_universe=pl.lit(None, pl.Boolean)).sort("item")
    inside = universe.items.select("item", in_universe=pl.lit(True))
    joined = exposure.join(inside, on="item", how="full", coalesce=True)
    filled = [pl.col("lists").fill_null(0), pl.col("in_universe").fill_null(False)]
    return joined.with_columns(filled).sort("item")
