"""Rating prediction metrics, over the (user, item) pairs with both a predicted rating (the
predictions' score) and an actual rating (the ground truth's relevance).

Each is one value over all pairs, not a per-user mean. Which pairs count is set by the
conventions `unrated` (predicted but not rated) and `unpredicted` (rated but not predicted);
the report counts the pairs used and dropped. Notation: p_i the prediction, r_i the actual
rating, n the number of pairs.
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import Stats, ordered_mean, ordered_sum

_error = pl.col("predicted") - pl.col("actual")


@register(
    "mae",
    summary="Mean absolute error of the predicted ratings.",
    formula="(1/n) sum |p_i - r_i|",
    takes_cutoff=False,
    upper_bound=None,
    scope="pairs",
    higher_is_better=False,
)
def mae(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """MAE = mean |p - r|. Example: errors 1, -2, 0.5: (1 + 2 + 0.5) / 3 = 7/6."""
    return ordered_mean(_error.abs())


@register(
    "mse",
    summary="Mean squared error of the predicted ratings.",
    formula="(1/n) sum (p_i - r_i)^2",
    takes_cutoff=False,
    upper_bound=None,
    scope="pairs",
    higher_is_better=False,
)
def mse(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """MSE = mean (p - r)^2. Example: errors 1, -2, 0.5: (1 + 4 + 0.25) / 3 = 1.75."""
    return ordered_mean(_error.pow(2))


@register(
    "rmse",
    summary="Root mean squared error of the predicted ratings.",
    formula="sqrt((1/n) sum (p_i - r_i)^2)",
    takes_cutoff=False,
    upper_bound=None,
    scope="pairs",
    higher_is_better=False,
)
def rmse(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """RMSE = sqrt(MSE); RMSE >= MAE always. Example: errors 1, -2, 0.5: sqrt(1.75)."""
    return ordered_mean(_error.pow(2)).sqrt()


@register(
    "r2",
    summary="Coefficient of determination of the predicted ratings.",
    formula="1 - sum (p_i - r_i)^2 / sum (r_i - mean r)^2   (0 when every r_i is equal)",
    takes_cutoff=False,
    upper_bound=1.0,
    scope="pairs",
    lower_bound=None,
)
def r2(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """R^2 = 1 - SS_res / SS_tot (as scikit-learn's r2_score; can be negative).

    Example: r = (1, 2, 3), p = (1, 2, 4): 1 - 1 / 2 = 0.5.
    """
    actual = pl.col("actual")
    residual = ordered_sum(_error.pow(2))
    total = ordered_sum((actual - ordered_mean(actual)).pow(2))
    return pl.when(total > 0).then(1.0 - residual / total).otherwise(0.0)


_clicked = pl.col("relevant")


def _clicked_ranks(rank: pl.Expr) -> pl.Expr:
    return pl.when(_clicked).then(rank).otherwise(0.0)


def _auc(rank_sum: pl.Expr, positives: pl.Expr, count: pl.Expr) -> pl.Expr:
    """Mann-Whitney: (sum of the clicked pairs' ranks - P(P+1)/2) / (P * N), the ranks
    being average ranks of the score (so a tied clicked/unclicked pair counts 1/2) and P, N
    the clicked and unclicked pairs."""
    return (rank_sum - positives * (positives + 1) / 2) / (positives * (count - positives))


@register(
    "auc",
    summary="Area under the ROC curve over the scored pairs: clicked (relevant) vs not.",
    formula="P(score of a relevant pair > score of a non-relevant pair), ties count 1/2",
    takes_cutoff=False,
    scope="pairs",
)
def auc(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """AUC over the (user, item) pairs in both files (Jurity's definition); a pair is clicked
    when its relevance >= relevance_threshold. 0 when there is no clicked or no other pair.

    Example: scores (0.9 clicked, 0.8 not, 0.8 clicked, 0.1 not): pairs (0.9>0.8, 0.9>0.1,
    0.8=0.8 counts 1/2, 0.8>0.1) give 3.5 / 4 = 0.875.
    """
    positives = _clicked.sum().cast(pl.Float64)
    rank_sum = _clicked_ranks(pl.col("predicted").rank("average")).sum()
    value = _auc(rank_sum, positives, pl.len().cast(pl.Float64))
    return pl.when((positives > 0) & (positives < pl.len())).then(value).otherwise(0.0)


GAUC_WEIGHT = Param(
    "weight",
    "impressions: each user weighs by its scored pairs; none: every user alike",
    choices=("impressions", "none"),
    default="impressions",
)


@register(
    "gauc",
    summary="Group AUC: each user's AUC over its own pairs, averaged over users.",
    formula="sum_u w_u AUC_u / sum_u w_u over users with clicked and non-clicked pairs",
    takes_cutoff=False,
    scope="pairs",
    params=(GAUC_WEIGHT,),
)
def gauc(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """GAUC: AUC per user, weighted by the user's pairs (weight=impressions) or not
    (weight=none); users whose pairs are all clicked or all not clicked are left out."""
    positives = _clicked.sum().over("user").cast(pl.Float64)
    count = pl.len().over("user").cast(pl.Float64)
    rank = pl.col("predicted").rank("average").over("user")
    per_user = _auc(_clicked_ranks(rank).sum().over("user"), positives, count)
    kept = pl.col("user").is_first_distinct() & (positives > 0) & (positives < count)
    weight = count if p["weight"] == "impressions" else pl.lit(1.0)
    total = ordered_sum(weight.filter(kept))
    weighted = ordered_sum((per_user * weight).filter(kept))
    return pl.when(total > 0).then(weighted / total).otherwise(0.0)
