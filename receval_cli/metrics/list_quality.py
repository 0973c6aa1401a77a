"""Data-quality metrics of the recommendation lists themselves (RecTools' DQ metrics)."""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import Stats, per_user_constant

MEASURE = Param(
    "measure",
    "full: 1 when the top k holds k items, else 0; share: the share of the k positions "
    "filled (RecTools' deep=True)",
    choices=("full", "share"),
    default="full",
)


@register(
    "sufficient_reco",
    ties="order_free",
    summary="Whether the list fills its top k (or the share of the k positions it fills).",
    formula="[n >= k]   (measure=share: min(k, n) / k), n the list length",
    params=(MEASURE,),
    reads_relevance=False,
)
def sufficient_reco(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """RecTools' SufficientReco@k. Example: a list of 3, k = 4: 0 (share: 3/4). An empty
    list: 0 (RecTools averages over the users of the recommendations, as
    users_without_recommendations=skip does). Without a cutoff every list is full (1),
    an empty one 0."""
    n = s.retrieved(None)
    if k is None:
        return (n > 0).cast(pl.Float64)
    if p["measure"] == "full":
        return (n >= k).cast(pl.Float64)
    return s.retrieved(k).cast(pl.Float64) / per_user_constant(k)
