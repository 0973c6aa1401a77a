"""Set classification metrics: the recommended items as a set of positive predictions.

"Retrieved" is the user's list (its top k) with retrieve=list, or the items whose predicted
score is at least prediction_threshold (within the top k, when a cutoff is given) with
retrieve=threshold. "Relevant" is relevance >= relevance_threshold. Each is computed per
user and averaged, like the ranking metrics; a ratio with a 0 denominator counts 0.
"""

from __future__ import annotations

import polars as pl

from receval_cli.errors import ConfigError
from receval_cli.metrics.ranking import BETA
from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import Stats, f_beta, safe_div

RETRIEVE = Param(
    "retrieve",
    "list: the recommended items; threshold: those scored >= prediction_threshold",
    choices=("list", "threshold"),
    default="list",
)
THRESHOLD = Param(
    "threshold",
    "the predicted score at which an item counts as retrieved (retrieve=threshold)",
    convention="prediction_threshold",
)


def _counts(s: Stats, k: int | None, p: Params) -> tuple[pl.Expr, pl.Expr]:
    """(relevant retrieved, retrieved) for one user."""
    if p["retrieve"] == "list":
        return s.hits_at(k), s.retrieved(k)
    if "threshold" not in p:
        fix = (
            "set conventions.prediction_threshold, or write e.g. "
            "set_precision(retrieve=threshold,threshold=3.5)"
        )
        raise ConfigError(
            f"set metrics with retrieve=threshold need a threshold: {fix}",
            key="conventions.prediction_threshold",
            fix=fix,
        )
    threshold = float(p["threshold"])
    return s.hits_above(k, threshold), s.retrieved_above(k, threshold)


def _precision(s: Stats, k: int | None, p: Params) -> pl.Expr:
    found, retrieved = _counts(s, k, p)
    return safe_div(found, retrieved)


def _recall(s: Stats, k: int | None, p: Params) -> pl.Expr:
    found, _ = _counts(s, k, p)
    return safe_div(found, s.n_relevant())


def _f_beta(s: Stats, k: int | None, p: Params, beta: float) -> pl.Expr:
    return f_beta(_precision(s, k, p), _recall(s, k, p), beta)


@register(
    "set_precision",
    ties="expected",
    summary="Share of the retrieved items that are relevant.",
    formula="|retrieved ∩ R| / |retrieved|",
    params=(RETRIEVE, THRESHOLD),
)
def set_precision(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """tp / (tp + fp). Example (seed): of the 3 retrieved item7, item5, item10, item5 and
    item10 are relevant (rating > 3.5): 2/3."""
    return _precision(s, k, p)


@register(
    "set_recall",
    ties="expected",
    summary="Share of the relevant items that are retrieved.",
    formula="|retrieved ∩ R| / |R|",
    params=(RETRIEVE, THRESHOLD),
)
def set_recall(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """tp / (tp + fn). Example (seed): 2 of the 3 relevant items retrieved: 2/3."""
    return _recall(s, k, p)


@register(
    "set_f1",
    ties="expected",
    summary="Harmonic mean of set precision and set recall.",
    formula="2 P R / (P + R)",
    params=(RETRIEVE, THRESHOLD),
)
def set_f1(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """F1 = 2PR / (P + R); 0 when P + R = 0."""
    return _f_beta(s, k, p, 1.0)


@register(
    "set_fbeta",
    ties="expected",
    summary="Weighted harmonic mean of set precision and set recall.",
    formula="(1 + beta^2) P R / (beta^2 P + R)",
    params=(RETRIEVE, THRESHOLD, BETA),
)
def set_fbeta(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """F_beta; beta > 1 weighs recall more. 0 when both are 0."""
    beta = p["beta"]
    assert not isinstance(beta, str)
    return _f_beta(s, k, p, float(beta))
