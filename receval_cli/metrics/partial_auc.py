"""Partial ROC AUC of the top of each list (RecTools' PartialAUC and PAP).

For one user, a relevant recommended item at rank i has f_i = the non-relevant items at
ranks <= i. pAUC@k compares every relevant item with the k first non-relevant items of the
list: the pairs it wins are those negatives ranked below it, k - f_i when f_i < k. A
relevant item that is not recommended wins none (it ranks below every recommended item:
RecTools' insufficient_handling="ignore", which also counts, for a list with fewer than k
negatives, the missing negatives as ranked below its relevant items).
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.registry import Params, register
from receval_cli.metrics.stats import Stats, safe_div


def _cutoff(k: int | None) -> int:
    assert k is not None, "resolve() refuses these metrics without a cutoff"
    return k


@register(
    "partial_auc",
    summary="ROC AUC of all relevant items against the top k non-relevant ones.",
    formula="sum over relevant recommended i with f_i < k of (k - f_i) / (k |R|)",
    aliases=("pauc",),
    needs_cutoff=True,
)
def partial_auc(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """RecTools' PartialAUC@k. Needs a cutoff. Example: the list [x, a, y, z] with a and
    b relevant (b not recommended), k = 2: a has f = 1 negative above it, wins 2 - 1 = 1
    pair; b wins none: 1 / (2 * 2) = 0.25. No relevant item: 0."""
    k = _cutoff(k)
    denominator = s.n_relevant().cast(pl.Int64) * k
    return safe_div(s.partial_auc_sum(k, top_positives=False), denominator)


@register(
    "pap",
    summary="Partial AUC of the top k relevant items against the top k non-relevant ones.",
    formula="sum over the first k relevant listed i with f_i < k of (k - f_i) / (k min(k, |R|))",
    needs_cutoff=True,
)
def pap(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """RecTools' PAP@k (pAp@k, Budhiraja et al. 2020): like partial_auc, over the first
    min(k, |R|) relevant items only; it behaves like precision@k when |R| >= k. Needs a
    cutoff. Example: [x, a, y, z], a and b relevant, k = 2: 1 / (2 * 2) = 0.25; k = 1:
    a has 1 negative above it, wins nothing: 0. No relevant item: 0."""
    k = _cutoff(k)
    denominator = pl.min_horizontal(s.n_relevant(), k).cast(pl.Int64) * k
    return safe_div(s.partial_auc_sum(k, top_positives=True), denominator)
