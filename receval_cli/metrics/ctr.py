"""Off-policy click-through rate from logged data, as Jurity estimates it.

The ground truth is a log: (user, item, click 0/1[, propensity]), the propensity being the
logging policy's probability of having shown the item (1 / number of logged items when
absent, Jurity's default). The predictions are the new policy's recommendations, their
score its predicted reward r^. A recommendation is matched when its (user, item) is in the
log. With w = 1/propensity (clipped at max_weight when given), over the n recommendations
(ctr@k: each user's first k, ranked by score then the tie_break convention, as Jurity's
CTR(k=...) keeps each user's top k by score; ctr: every recommendation, up to max_depth):

    matching   mean click over the matched recommendations
    ips        (1/n) sum over recommendations of [matched] click * w
    snips      sum of [matched] click * w / sum of [matched] w (self-normalized IPS)
    dm         (1/n) sum of r^ (the direct method: the predicted reward alone)
    dr         (1/n) sum over recommendations of r^ + [matched] (click - r^) * w
    switch_dr  dr, the correction kept where w <= switch only (Switch-DR; switch unset: dr)

as the Open Bandit Pipeline defines them (IPW, SNIPW, DM, DR, SwitchDR with lambda_ the
switch), each recommendation a round whose logged action is the recommended item when
matched (tests/peers/obp/). Clipped, ips and dr are obp's IPW and DR with their clipping
lambda_ = max_weight; obp 0.5.7's SNIPW ignores its lambda_ (never clips), so a clipped
snips (or switch_dr) has no obp counterpart. Each estimate is the
mean of its rounds' terms (snips': click * w / mean(w)); its variance, the variance of
those terms over n (ddof 1), is in the report's `logged.variance`.
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import Stats, ordered_mean, ordered_sum

ESTIMATOR = Param(
    "estimator",
    "matching, ips (inverse propensity scoring), snips (self-normalized ips), dm (direct "
    "method), dr (doubly robust) or switch_dr (dr where w <= switch, dm elsewhere)",
    choices=("matching", "ips", "snips", "dm", "dr", "switch_dr"),
    default="matching",
)
SWITCH = Param(
    "switch",
    "switch_dr: keep dr's correction where the inverse propensity is at most this (> 0); "
    "none: everywhere (dr)",
    positive_number=True,
    optional=True,
)
MAX_WEIGHT = Param(
    "max_weight",
    "clip the inverse propensity at this value (> 0); none: no clipping",
    positive_number=True,
    optional=True,
)

_matched = pl.col("click").is_not_null()


def in_top(k: int | None) -> pl.Expr:
    """The recommendations ctr@k counts: the first k of each user's list (every one when k
    is None); `position` is the place in the list (evaluation/prepare.list_positions)."""
    return pl.lit(True) if k is None else pl.col("position") <= k


def _mean(values: pl.Expr) -> pl.Expr:
    """The mean summed in row order (stats.ordered_mean); where that sum overflows 64-bit
    floats though the mean does not (weights near 1e308), the mean of the values divided
    by the largest, times the largest: finite wherever the mean is."""
    plain = ordered_mean(values)
    largest = values.abs().max()
    scaled = ordered_mean(values / largest) * largest
    return pl.when(plain.is_finite() | plain.is_null()).then(plain).otherwise(scaled)


def weight(p: Params) -> pl.Expr:
    """The inverse propensity of each matched recommendation, clipped at max_weight."""
    inverse = 1.0 / pl.col("propensity")
    if "max_weight" in p:
        inverse = inverse.clip(upper_bound=float(p["max_weight"]))
    return inverse


def _ips_terms(k: int | None, p: Params) -> pl.Expr:
    """Each counted recommendation's [matched] click * w (a click of 0 adds 0, however
    large its weight)."""
    clicked = _matched & (pl.col("click") != 0)
    return pl.when(clicked).then(pl.col("click") * weight(p)).otherwise(0.0).filter(in_top(k))


def _weights(k: int | None, p: Params) -> pl.Expr:
    """Each counted recommendation's weight, 0 where it is not matched."""
    return pl.when(_matched).then(weight(p)).otherwise(0.0).filter(in_top(k))


def row_term(k: int | None, p: Params) -> pl.Expr:
    """Each recommendation's round term, null where it is not counted (beyond the first k;
    matching: unmatched too): what evaluation/click_parts.py sums exactly. snips: the ips
    term (its estimate is their sum over the weights' sum)."""
    top = in_top(k)
    estimator = p["estimator"]
    if estimator == "matching":
        return pl.when(_matched & top).then(pl.col("click"))
    if estimator in ("ips", "snips"):
        clicked = _matched & (pl.col("click") != 0)
        ips = pl.when(clicked).then(pl.col("click") * weight(p)).otherwise(0.0)
        return pl.when(top).then(ips)
    score = pl.col("score")
    if estimator == "dm":
        return pl.when(top).then(score)
    w = weight(p)
    corrected = _matched
    if estimator == "switch_dr" and "switch" in p:
        corrected = _matched & (w <= float(p["switch"]))
    return pl.when(top).then(
        score + pl.when(corrected).then((pl.col("click") - score) * w).otherwise(0.0)
    )


def row_weight(k: int | None, p: Params) -> pl.Expr:
    """Each matched recommendation's weight among the first k, null elsewhere (the weights
    of snips' denominator and of the effective sample size)."""
    return pl.when(_matched & in_top(k)).then(weight(p))


def round_terms(k: int | None, p: Params) -> pl.Expr:
    """Each counted recommendation's term (its round's reward estimate): the estimate is
    their mean, its variance their variance over their number. matching: the matched
    clicks alone; snips: click * w / mean(w), w 0 where unmatched."""
    click = pl.col("click")
    top = in_top(k)
    estimator = p["estimator"]
    if estimator == "matching":
        return click.filter(_matched & top)
    if estimator == "ips":
        return _ips_terms(k, p)
    if estimator == "snips":
        return _ips_terms(k, p) / _weights(k, p).mean()
    score = pl.col("score")
    if estimator == "dm":
        return score.filter(top)
    w = weight(p)
    corrected = _matched
    if estimator == "switch_dr" and "switch" in p:
        corrected = _matched & (w <= float(p["switch"]))
    return (score + pl.when(corrected).then((click - score) * w).otherwise(0.0)).filter(top)


@register(
    "ctr",
    ties="whole_list",
    summary="Click-through rate of the recommendations, estimated from logged clicks.",
    formula="matching: mean click of matched; ips: mean [matched] click/p; snips: "
    "sum [matched] click/p / sum [matched] 1/p; dm: mean r^; dr: mean r^ + [matched] "
    "(click - r^)/p; switch_dr: dr's correction where 1/p <= switch",
    params=(ESTIMATOR, MAX_WEIGHT, SWITCH),
    scope="logged",
    upper_bound=None,
    lower_bound=None,
    no_value="matching and snips: no recommendation is in the log, so no click was matched "
    "(the report's logged block counts them)",
)
def ctr(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Jurity's CTR estimators (seed 004) and the Open Bandit Pipeline's. Example:
    recommendations a (score 0.5, logged click 1, propensity 0.5) and b (score 0.2, not
    logged): matching 1, ips (1/0.5 + 0)/2 = 1, snips (1/0.5) / (1/0.5) = 1, dm
    (0.5 + 0.2)/2 = 0.35, dr (0.5 + (1 - 0.5)/0.5 + 0.2) / 2 = 0.85, switch_dr with
    switch 1.5 (a's weight 2 is above it) = dm's 0.35; ctr@1 keeps a alone: 1, 2, 1, 0.5
    and 1.5.

    With k, each user's first k recommendations count (score descending, equal scores in
    the tie_break convention's order: deterministic, where Jurity's sort is not); n is
    then the number of those. No matched recommendation: matching and snips have no value
    (null, as Jurity's None); ips and dr are then 0 and the mean predicted reward.
    """
    estimator = p["estimator"]
    if estimator == "matching":
        return ordered_mean(round_terms(k, p))  # null when nothing matched
    if estimator == "snips":
        weights = ordered_sum(_weights(k, p))
        ratio = ordered_sum(_ips_terms(k, p)) / weights
        return pl.when(weights > 0).then(ratio)  # null when nothing matched
    return _mean(round_terms(k, p))
