"""Confusion-matrix metrics of a user's top k, as RecTools and torchmetrics define them.

For one user, with k' the predicted positives (k, or min(k, list length) with
denominator=list_length; the list length without a cutoff), hits@k the relevant items in
the top k, |R| the relevant items and |C| the catalog's items:

    TP = hits@k    FP = k' - TP    FN = |R| - TP    TN = |C| - k' - FN

accuracy and mcc need the `catalog` input (its number of items is |C|). fall_out counts
the negatives of the user's list only (torchmetrics' candidate list), not the catalog's.
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.ranking import PRECISION_DENOMINATOR
from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import Stats, safe_div

NO_NEGATIVES = Param(
    "no_negatives",
    "a list with no non-relevant item: zero (counts 0), one (counts 1, torchmetrics' "
    "default) or skip (left out)",
    choices=("zero", "one", "skip"),
    default="zero",
)


def _predicted(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """k': the predicted positives of the top k (Int64)."""
    if k is not None and p["denominator"] == "k":
        return pl.lit(k, pl.Int64)
    return s.retrieved(k).cast(pl.Int64)


def confusion(s: Stats, k: int | None, p: Params) -> tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]:
    """(TP, FP, FN, TN) of the user's top k, as Int64."""
    tp = s.hits_at(k).cast(pl.Int64)
    predicted = _predicted(s, k, p)
    fn = s.n_relevant().cast(pl.Int64) - tp
    tn = s.catalog_items().cast(pl.Int64) - predicted - fn
    return tp, predicted - tp, fn, tn


@register(
    "accuracy",
    summary="Share of the catalog classified right by the top k (recommended = positive).",
    formula="(TP + TN) / |C|, TN = |C| - k' - FN, k' = k or min(k, n)",
    params=(PRECISION_DENOMINATOR,),
    lower_bound=None,
)
def accuracy(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """RecTools' Accuracy@k: (TP + TN) / |C|. Needs `catalog`. Example: |C| = 10, k = 3,
    |R| = 2, one hit: TP 1, FN 1, TN 10 - 3 - 1 = 6: 7/10. A user with no relevant item
    gets (|C| - k) / |C|; an empty list (denominator=k) TN = |C| - k - |R|. RecTools
    counts k predicted positives even for a shorter list (denominator=k); TN is negative,
    and so can the value be, when k + |R| exceeds the catalog."""
    tp, _fp, _fn, tn = confusion(s, k, p)
    return (tp + tn).cast(pl.Float64) / s.catalog_items().cast(pl.Float64)


@register(
    "mcc",
    summary="Matthews correlation between recommended (top k) and relevant, over the catalog.",
    formula="(TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)), 0 when that is 0",
    params=(PRECISION_DENOMINATOR,),
    lower_bound=-1.0,
    no_value="the catalog has fewer items than k, so TN + FN < 0 and MCC has no real value",
)
def mcc(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """RecTools' MCC@k. Needs `catalog`. Example: |C| = 10, k = 3, |R| = 2, one hit: TP 1,
    FP 2, FN 1, TN 6: (6 - 2) / sqrt(3 * 2 * 8 * 7) = 0.218. 0 when the denominator is 0
    (no relevant item, an empty list with denominator=list_length); no value (the user is
    left out of the mean, as RecTools' NaN is by pandas' mean) when the product under the
    root is negative (TN < 0: a cutoff beyond the catalog)."""
    tp, fp, fn, tn = confusion(s, k, p)
    numerator = (tp * tn - fp * fn).cast(pl.Float64)
    product = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return (
        pl.when(product == 0)
        .then(0.0)
        .when(product > 0)
        .then(numerator / product.cast(pl.Float64).sqrt())
    )


@register(
    "fall_out",
    ties="expected",
    summary="Share of the list's non-relevant items that are in the top k.",
    formula="(min(k, n) - hits@k) / (n - hits@all), n the list length",
    params=(NO_NEGATIVES,),
    higher_is_better=False,
    no_value="no_negatives=skip left out every user: no list has a non-relevant item",
)
def fall_out(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """torchmetrics' RetrievalFallOut(top_k=k): the non-relevant items retrieved in the
    top k over all the non-relevant items of the user's list (its candidates; relevant
    ground-truth items missing from the list do not enter, nor do items outside it).
    Example: a list of 5 with relevant items at ranks 1 and 4: fall-out@2 = 1/3. A list
    with no non-relevant item: no_negatives (0, 1 or left out)."""
    negatives = s.retrieved(None) - s.hits_at(None)
    retrieved = s.retrieved(k) - s.hits_at(k)
    value = safe_div(retrieved, negatives)
    if p["no_negatives"] == "zero":
        return value
    empty = pl.lit(1.0) if p["no_negatives"] == "one" else pl.lit(None, pl.Float64)
    return pl.when(negatives > 0).then(value).otherwise(empty)
