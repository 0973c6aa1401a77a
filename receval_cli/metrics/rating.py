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


_SPLIT = 2.0**27 + 1  # Veltkamp's splitter for float64
_TINY = 2.0**-300  # below it a square's low bits fall under float64's range: scale first
_SCALE = 2.0**600


def _square_parts(x: pl.Expr, prefix: str) -> dict[str, pl.Expr]:
    """x^2 as three float64 terms whose exact sum is x^2 exactly: Veltkamp's split makes
    x = hi + lo with 26 significant bits each, so hi*hi, 2*hi*lo and lo*lo are exact (for
    |x| in [2^-300, 2^1000])."""
    c = x * _SPLIT
    hi = c - (c - x)
    lo = x - hi
    return {f"{prefix}_hh": hi * hi, f"{prefix}_hl": 2.0 * hi * lo, f"{prefix}_ll": lo * lo}


def _exact_squares(x: pl.Expr, name: str) -> dict[str, pl.Expr]:
    """Terms whose exact sums give sum x^2 exactly (_squares_total): the squares of the
    values from 2^-300 up, and of the smaller ones scaled by 2^600 (a power of two: exact)."""
    small = x.abs() < _TINY
    return {
        **_square_parts(pl.when(small).then(0.0).otherwise(x), name),
        **_square_parts(pl.when(small).then(x * _SCALE).otherwise(0.0), f"{name}_scaled"),
    }


def _squares_total(t: PairTotals, name: str) -> Fraction | None:
    """sum x^2, exactly, from the sums of _exact_squares (None: an infinite or NaN term)."""
    total = Fraction(0)
    for scaled, factor in (("", Fraction(1)), ("_scaled", 1 / Fraction(_SCALE) ** 2)):
        for part in ("hh", "hl", "ll"):
            found = t.sums[f"{name}{scaled}_{part}"].fraction()
            if found is None:
                return None
            total += found * factor
    return total


@register_pairs(
    "r2",
    summary="Coefficient of determination of the predicted ratings.",
    formula="1 - sum (p_i - r_i)^2 / sum (r_i - mean r)^2   (0 when every r_i is equal)",
    sums=lambda p: {
        "squared_error": _error.pow(2),
        "actual": _actual,
        **_exact_squares(_actual, "actual_squared"),
    },
    upper_bound=1.0,
    lower_bound=None,
    no_value="the actual ratings vary so little that 1 - SS_res / SS_tot is below -1.8e308, "
    "beyond 64-bit floats",
)
def r2(t: PairTotals, p: Params) -> float | None:
    """R^2 = 1 - SS_res / SS_tot (as scikit-learn's r2_score; can be negative), with
    SS_tot = sum r^2 - (sum r)^2 / n computed exactly (each r^2 held exactly, so a
    constant target gives exactly 0 however small its values). No value (null, with a
    warning) when the ratings vary so little that R^2 is below float64's range (e.g.
    ratings 0 and 1e-167: SS_tot = 5e-335).

    Example: r = (1, 2, 3), p = (1, 2, 4): 1 - 1 / 2 = 0.5.
    """
    residual = t.sums["squared_error"].fraction()
    actual = t.sums["actual"].fraction()
    squares = _squares_total(t, "actual_squared")
    if residual is None or actual is None or squares is None:  # an infinite or NaN term
        return math.nan
    total = squares - actual * actual / t.pairs
    if total <= 0:
        return 0.0
    value = _ratio(total - residual, total)
    return None if math.isinf(value) else value  # beyond float64 (no_value)


@register_pairs(
    "explained_variance",
    summary="Explained variance of the predicted ratings: 1 - Var(p - r) / Var(r).",
    formula="1 - Var(p_i - r_i) / Var(r_i)   (0 when every r_i is equal)",
    sums=lambda p: {
        "error": _error,
        **_exact_squares(_error, "error_squared"),
        "actual": _actual,
        **_exact_squares(_actual, "actual_squared"),
    },
    upper_bound=1.0,
    lower_bound=None,
    no_value="the actual ratings vary so little that 1 - Var(p - r) / Var(r) is below "
    "-1.8e308, beyond 64-bit floats",
)
def explained_variance(t: PairTotals, p: Params) -> float | None:
    """1 - Var(e) / Var(r), with e = p - r and Var the population variance (as
    scikit-learn's explained_variance_score and MS Recommenders' exp_var, which calls it):
    like r2, but a constant bias in the predictions costs nothing. Both variances are
    computed exactly from exact sums (n Var(x) = sum x^2 - (sum x)^2 / n). When every r_i
    is equal Var(r) is 0 and the value is 0, as for r2 (scikit-learn gives 1 there when
    Var(e) is 0 too, else 0). No value (null, with a warning) beyond float64's range.

    Example: r = (1, 2, 3), p = (2, 3, 5): e = (1, 1, 2), Var(e) = 2/9, Var(r) = 2/3:
    1 - 1/3 = 2/3.
    """
    error = t.sums["error"].fraction()
    actual = t.sums["actual"].fraction()
    error_squares = _squares_total(t, "error_squared")
    actual_squares = _squares_total(t, "actual_squared")
    if error is None or actual is None or error_squares is None or actual_squares is None:
        return math.nan  # an infinite or NaN term
    total = actual_squares - actual * actual / t.pairs
    if total <= 0:
        return 0.0
    spread = error_squares - error * error / t.pairs
    value = _ratio(total - spread, total)
    return None if math.isinf(value) else value  # beyond float64 (no_value)


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
    formula="P(relevant pair's score > non-relevant pair's), ties 1/2; @k: top k per user",
    takes_cutoff=True,
    no_value="its pairs are all clicked or all unclicked, and AUC orders a clicked pair "
    "against an unclicked one (a pair is clicked when its relevance >= relevance_threshold; "
    "the report's pairs block counts them)",
    sums=lambda p: {},
    table=lambda p: (
        ("predicted",),
        {"positives": _clicked.sum().cast(pl.Int64), "pairs": pl.len().cast(pl.Int64)},
    ),
)
def auc(t: PairTotals, p: Params) -> float | None:
    """AUC over the (user, item) pairs in both files (Jurity's definition); a pair is clicked
    when its relevance >= relevance_threshold. No value (null, with a warning) when there is
    no clicked or no unclicked pair: Jurity gives NaN, scikit-learn raises.
    auc@k (Jurity's AUC(k=...)): only the pairs whose prediction is among its user's first
    k by score (equal scores in the tie_break convention's order, deterministic where
    Jurity's sort is not).

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
        return None  # one class: no pair to order (no_value)
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
    formula="sum_u w_u AUC_u / sum_u w_u over users with both classes; @k: top k per user",
    sums=_gauc_terms,
    params=(GAUC_WEIGHT,),
    takes_cutoff=True,
    no_value="no user has both a clicked and an unclicked pair (a pair is clicked when its "
    "relevance >= relevance_threshold)",
)
def gauc(t: PairTotals, p: Params) -> float | None:
    """GAUC: AUC per user, weighted by the user's pairs (weight=impressions) or not
    (weight=none); users whose pairs are all clicked or all not clicked are left out. No
    value (null, with a warning) when no user is left.
    gauc@k: each user's AUC over its pairs among its first k predictions (see auc)."""
    weighted = t.sums[f"weighted_auc({p['weight']})"].fraction()
    total = t.sums[f"weight({p['weight']})"].fraction()
    if weighted is None or total is None or total == 0:
        return None  # no user with both classes (no_value)
    return _ratio(weighted, total)


_EPS = 2.0**-52  # float64's machine epsilon: scikit-learn's clip for float64 probabilities


def _log_loss_terms(p: Params) -> dict[str, pl.Expr]:
    """Per pair: -ln of the probability given to its class (the prediction for a clicked
    pair, 1 - the prediction for another), clipped to [eps, 1 - eps]; and 1 for a
    prediction outside [0, 1]."""
    predicted = pl.col("predicted")
    own = pl.when(_clicked).then(predicted).otherwise(1.0 - predicted)
    return {
        "log_loss": -own.clip(_EPS, 1.0 - _EPS).log(),
        "outside_unit": ((predicted < 0.0) | (predicted > 1.0)).cast(pl.Float64),
    }


@register_pairs(
    "log_loss",
    summary="Log loss (cross-entropy) of the scores read as click probabilities.",
    formula="-(1/n) sum [y_i ln q_i + (1 - y_i) ln(1 - q_i)], q_i = clip(p_i, eps, 1 - eps)",
    sums=_log_loss_terms,
    upper_bound=None,
    higher_is_better=False,
    no_value="a predicted score is outside [0, 1], so it is not a probability (or no pair "
    "was scored)",
)
def log_loss(t: PairTotals, p: Params) -> float | None:
    """Binary log loss, natural logarithm: y_i is 1 for a clicked pair (relevance >=
    relevance_threshold), else 0, and the score p_i is the predicted probability of a
    click. Each probability is clipped to [eps, 1 - eps], eps = 2^-52 (float64's machine
    epsilon), as scikit-learn's log_loss does for float64 input (and MS Recommenders'
    logloss, which calls it), so a certain but wrong prediction costs -ln(2^-52) = 36.04,
    not infinity. No value (null, with a warning) when a score lies outside [0, 1]
    (scikit-learn raises) or no pair was scored. One class only is fine here
    (scikit-learn then needs labels=[0, 1]).

    Example: clicked with p = 0.8, not clicked with p = 0.4: (-ln 0.8 - ln 0.6) / 2 = 0.367.
    """
    outside = t.sums["outside_unit"].fraction()
    if t.pairs == 0 or outside is None or outside > 0:
        return None  # no_value
    return t.sums["log_loss"].mean(t.pairs)
