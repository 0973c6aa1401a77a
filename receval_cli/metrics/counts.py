"""Count metrics: per-user counts whose report value is the SUM over the evaluated users,
as trec_eval reports them (its num_rel, num_ret and num_rel_ret)."""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.registry import Params, register
from receval_cli.metrics.stats import Stats


@register(
    "num_ret",
    ties="order_free",
    summary="Items recommended (after max_depth), summed over users.",
    formula="sum over users of the list length",
    takes_cutoff=False,
    upper_bound=None,
    aggregate="sum",
)
def num_ret(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """num_ret = list length; a user with no recommendation counts 0."""
    return s.retrieved(None).cast(pl.Float64)


@register(
    "num_rel",
    ties="order_free",
    summary="Relevant items in the ground truth, summed over users.",
    formula="sum over users of |R|",
    takes_cutoff=False,
    upper_bound=None,
    aggregate="sum",
)
def num_rel(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """num_rel = |R|, the items with relevance >= relevance_threshold."""
    return s.n_relevant().cast(pl.Float64)


@register(
    "num_rel_ret",
    ties="expected",
    summary="Relevant items recommended, summed over users.",
    formula="sum over users of hits@all",
    takes_cutoff=False,
    upper_bound=None,
    aggregate="sum",
)
def num_rel_ret(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """num_rel_ret = hits in the whole list (after max_depth)."""
    return s.hits_at(None).cast(pl.Float64)
