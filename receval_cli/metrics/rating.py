"""Rating prediction metrics, over the (user, item) pairs with both a predicted rating (the
predictions' score) and an actual rating (the ground truth's relevance).

Each is one value over all pairs, not a per-user mean. Which pairs count is set by the
conventions `unrated` (predicted but not rated) and `unpredicted` (rated but not predicted);
the report counts the pairs used and dropped. Notation: p_i the prediction, r_i the actual
rating, n the number of pairs.
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.registry import Params, register
from receval_cli.metrics.stats import Stats

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
    return _error.abs().mean()


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
    return _error.pow(2).mean()


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
    return _error.pow(2).mean().sqrt()


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
    residual = _error.pow(2).sum()
    total = (actual - actual.mean()).pow(2).sum()
    return pl.when(total > 0).then(1.0 - residual / total).otherwise(0.0)
