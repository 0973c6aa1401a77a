"""Rating prediction metrics, over the (user, item) pairs with both a predicted rating (the
predictions' score) and an actual rating (the ground truth's relevance).

Each is one value over all pairs, not a per-user mean. Which pairs count is set by the
conventions `unrated` (predicted but not rated) and `unpredicted` (rated but not predicted);
the report counts the pairs used and dropped. Notation: p_i the prediction, r_i the actual
rating, n the number of pairs.

A rating metric is finished from terms that add up over any split of the users (so every
engine gives the same bits): exact sums of per-pair terms (`sums`) and keyed integer
counts (`table`); see registry.PairMetric. Each value is the exact result of those sums,
rounded once to float64 (a square root rounds once more).
"""

from __future__ import annotations

import math
from fractions import Fraction

import polars as pl

from receval_cli.metrics.registry import PairTotals, Param, Params, register_pairs

_error = pl.col("predicted") - pl.col("actual")
_actual = pl.col("actual")


def _ratio(numerator: Fraction, denominator: Fraction) -> float:
    """numerator / denominator, correctly rounded (+-inf beyond float64's range)."""
    try:
        return float(numerator / denominator)
    except OverflowError:
        return math.inf if (numerator > 0) == (denominator > 0) else -math.inf


@register_pairs(
    "mae",
    summary="Mean absolute error of the predicted ratings.",
    formula="(1/n) sum |p_i - r_i|",
    sums=lambda p: {"abs_error": _error.abs()},
    upper_bound=None,
    higher_is_better=False,
)
def mae(t: PairTotals, p: Params) -> float:
    """MAE = mean |p - r|. Example: errors 1, -2, 0.5: (1 + 2 + 0.5) / 3 = 7/6."""
    return t.sums["abs_error"].mean(t.pairs)


def _squares(p: Params) -> dict[str, pl.Expr]:
    return {"squared_error": _error.pow(2)}


@register_pairs(
    "mse",
    summary="Mean squared error of the predicted ratings.",
    formula="(1/n) sum (p_i - r_i)^2",
    sums=_squares,
    upper_bound=None,
    higher_is_better=False,
)
def mse(t: PairTotals, p: Params) -> float:
    """MSE = mean (p - r)^2. Example: errors 1, -2, 0.5: (1 + 4 + 0.25) / 3 = 1.75."""
    return t.sums["squared_error"].mean(t.pairs)


@register_pairs(
    "rmse",
    summary="Root mean squared error of the predicted ratings.",
    formula="sqrt((1/n) sum (p_i - r_i)^2)",
    sums=_squares,
    upper_bound=None,
    higher_is_better=False,
)
def rmse(t: PairTotals, p: Params) -> float:
    """RMSE = sqrt(MSE); RMSE >= MAE always. Example: errors 1, -2, 0.5: sqrt(1.75)."""
    return math.sqrt(t.sums["squared_error"].mean(t.pairs))


@register_pairs(
    "r2",
    summary="Coefficient of determination of the predicted ratings.",
    formula="1 - sum (p_i - r_i)^2 / sum (r_i - mean r)^2   (0 when every r_i is equal)",
    sums=lambda p: {
        "squared_error": _error.pow(2),
        "actual": _actual,
        "actual_squared": _actual.pow(2),
    },
    upper_bound=1.0,
    lower_bound=None,
)
def r2(t: PairTotals, p: Params) -> float:
    """R^2 = 1 - SS_res / SS_tot (as scikit-learn's r2_score; can be negative), with
    SS_tot = sum r^2 - (sum r)^2 / n computed exactly.

    Example: r = (1, 2, 3), p = (1, 2, 4): 1 - 1 / 2 = 0.5.
    """
    residual = t.sums["squared_error"].fraction()
    actual = t.sums["actual"].fraction()
    squares = t.sums["actual_squared"].fraction()
    if residual is None or actual is None or squares is None:  # an infinite or NaN term
        return math.nan
    total = squares - actual * actual / t.pairs
    if total <= 0:
        return 0.0
    return _ratio(total - residual, total)


_clicked = pl.col("relevant")


def _auc(rank_sum_twice: Fraction, positives: int, count: int) -> float:
    """Mann-Whitney: (sum of the clicked pairs' ranks - P(P+1)/2) / (P * N), the ranks
    being average ranks of the score (so a tied clicked/unclicked pair counts 1/2) and P, N
    the clicked and unclicked pairs; `rank_sum_twice` is twice the rank sum."""
    numerator = rank_sum_twice - positives * (positives + 1)
    return _ratio(numerator, Fraction(2 * positives * (count - positives)))


@register_pairs(
    "auc",
    summary="Area under the ROC curve over the scored pairs: clicked (relevant) vs not.",
    formula="P(score of a relevant pair > score of a non-relevant pair), ties count 1/2",
    sums=lambda p: {},
    table=lambda p: (
        ("predicted",),
        {"positives": _clicked.sum().cast(pl.Int64), "pairs": pl.len().cast(pl.Int64)},
    ),
)
def auc(t: PairTotals, p: Params) -> float:
    """AUC over the (user, item) pairs in both files (Jurity's definition); a pair is clicked
    when its relevance >= relevance_threshold. 0 when there is no clicked or no other pair.

    Example: scores (0.9 clicked, 0.8 not, 0.8 clicked, 0.1 not): pairs (0.9>0.8, 0.9>0.1,
    0.8=0.8 counts 1/2, 0.8>0.1) give 3.5 / 4 = 0.875.
    """
    # one row per distinct predicted score, ascending; a group's average rank is
    # (pairs before it) + (pairs + 1) / 2, so twice the clicked pairs' rank sum is an
    # integer (exact in Int64 below about 2 * 10^9 pairs)
    pairs, clicked = pl.col("pairs"), pl.col("positives")
    before = pairs.cum_sum() - pairs
    positives, count, rank_sum_twice = (
        t.tables["auc"]
        .sort("predicted")
        .select(
            clicked.sum().alias("positives"),
            pairs.sum().alias("count"),
            (clicked * (2 * before + pairs + 1)).sum().alias("rank_sum_twice"),
        )
        .row(0)
    )
    if positives == 0 or positives == count:
        return 0.0
    return _auc(Fraction(rank_sum_twice), positives, count)


GAUC_WEIGHT = Param(
    "weight",
    "impressions: each user weighs by its scored pairs; none: every user alike",
    choices=("impressions", "none"),
    default="impressions",
)


def _gauc_terms(p: Params) -> dict[str, pl.Expr]:
    """Per user (on its first pair; 0 on the others): its weight times its AUC, and its
    weight, for the users with both clicked and non-clicked pairs."""
    positives = _clicked.sum().over("user").cast(pl.Float64)
    count = pl.len().over("user").cast(pl.Float64)
    rank = pl.col("predicted").rank("average").over("user")
    rank_sum = pl.when(_clicked).then(rank).otherwise(0.0).sum().over("user")
    per_user = (rank_sum - positives * (positives + 1) / 2) / (positives * (count - positives))
    kept = pl.col("user").is_first_distinct() & (positives > 0) & (positives < count)
    weight = count if p["weight"] == "impressions" else pl.lit(1.0)
    return {
        f"weighted_auc({p['weight']})": pl.when(kept).then(per_user * weight).otherwise(0.0),
        f"weight({p['weight']})": pl.when(kept).then(weight).otherwise(0.0),
    }


@register_pairs(
    "gauc",
    summary="Group AUC: each user's AUC over its own pairs, averaged over users.",
    formula="sum_u w_u AUC_u / sum_u w_u over users with clicked and non-clicked pairs",
    sums=_gauc_terms,
    params=(GAUC_WEIGHT,),
)
def gauc(t: PairTotals, p: Params) -> float:
    """GAUC: AUC per user, weighted by the user's pairs (weight=impressions) or not
    (weight=none); users whose pairs are all clicked or all not clicked are left out."""
    weighted = t.sums[f"weighted_auc({p['weight']})"].fraction()
    total = t.sums[f"weight({p['weight']})"].fraction()
    if weighted is None or total is None or total == 0:
        return 0.0
    return _ratio(weighted, total)
