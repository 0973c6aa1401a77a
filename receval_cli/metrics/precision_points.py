"""trec_eval's set and precision-point measures: precision read at points other than a
fixed cutoff (a multiple of |R|, a recall level, relative to the best possible), the
unranked set measures (set_map, utility) and the interpolated precision-recall curve.

Notation as in ranking.py: R the user's relevant items (grade >= relevance_threshold),
hits@k the relevant items among the top k, retrieved@k = min(k, list length) (the whole
list without a cutoff), r_m the rank of the m-th relevant item. Each is computed per user
and averaged; where a denominator is 0 the value is 0. Definitions from trec_eval 10's
m_set_map.c, m_utility.c, m_rel_P.c, m_set_rel_P.c, m_Rprec_mult.c, m_iprec_at_recall.c and
m_11pt_avg.c.
"""

from __future__ import annotations

import math

import polars as pl

from receval_cli.errors import ConfigError
from receval_cli.metrics.cascade import EMPTY_LIST, NO_LIST
from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import Stats, per_user_constant, safe_div

MULTIPLIER = Param(
    "multiplier",
    "the depth as a multiple of |R|: precision at floor(multiplier * |R| + 0.9)",
    positive_number=True,
    largest=1e9,
)
LEVEL = Param("level", "the recall level, a number from 0 to 1 (e.g. 0.1)")
LEVELS = Param(
    "levels",
    "n >= 2 evenly spaced levels 0..1 (11: 0, 0.1, ..., 1), or the levels: 0.25;0.5;0.75",
    default=11,
    parts="recall levels",
)
ROUNDING = Param(
    "rounding",
    "relevant items t at a level: nearest round(level*|R|) (trec_eval 10), up "
    "floor(level*|R| + 0.9) (pytrec_eval)",
    choices=("nearest", "up"),
    default="nearest",
)
UTILITY_A = Param("a", "worth of a retrieved relevant item", default=1.0)
UTILITY_B = Param("b", "worth of a retrieved non-relevant item", default=-1.0)
UTILITY_C = Param("c", "worth of a relevant item not retrieved", default=0.0)
UTILITY_D = Param("d", "worth of a non-relevant item not retrieved", default=0.0)
COLLECTION = Param(
    "collection_size",
    "the number of items in the collection (trec_eval's -N, default 0); only d uses it",
    default=0,
)


def _number(p: Params, name: str, metric: str) -> float:
    value = p[name]
    if isinstance(value, str) or not math.isfinite(value):
        raise ConfigError(
            f"parameter '{name}' of {metric} is '{value}'; it must be a number",
            key="metrics",
            fix=f"write e.g. {metric}({name}=1)",
        )
    return float(value)


def recall_level(value: object, metric: str) -> float:
    """A recall level: a number in [0, 1]."""
    try:
        level = float(str(value))
    except ValueError:
        level = math.nan
    if not 0.0 <= level <= 1.0:
        raise ConfigError(
            f"recall level '{value}' of {metric} must be a number from 0 to 1",
            key="metrics",
            fix=f"write e.g. {metric}(level=0.1)",
        )
    return level


def recall_levels(value: object) -> tuple[float, ...]:
    """The levels of iprec_avg, ascending: n evenly spaced (an integer n >= 2), or a
    ';'-separated list (a single number is one level)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 2:
            raise ConfigError(
                f"iprec_avg's levels={value}: a count of levels must be at least 2",
                key="metrics",
                fix="write e.g. iprec_avg(levels=11) or iprec_avg(levels=0.25;0.5;0.75)",
            )
        return tuple(i / (value - 1) for i in range(value))
    parts = [part.strip() for part in str(value).split(";")]
    return tuple(sorted(recall_level(part, "iprec_avg") for part in parts))


def _retrieved(s: Stats, k: int | None) -> pl.Expr:
    return s.retrieved(k).cast(pl.Float64)


@register(
    "set_map",
    summary="Unranked average precision: set precision times set recall (trec_eval set_map).",
    formula="hits@k^2 / (retrieved@k * |R|)",
)
def set_map(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """set_map@k = hits@k^2 / (retrieved@k * |R|): each relevant item retrieved counts the
    set precision, each one missed 0. 0 when nothing is retrieved or nothing is relevant.

    Example: 4 items retrieved, 2 of them relevant, 5 relevant: 2^2 / (4 * 5) = 0.2.
    """
    hits = s.hits_at(k).cast(pl.Float64)
    return safe_div(hits * hits, _retrieved(s, k) * s.n_relevant().cast(pl.Float64))


@register(
    "utility",
    summary="Linear utility of the retrieved set: worth a, b, c, d per contingency cell.",
    formula="a*TP + b*FP + c*FN + d*TN   (TN = collection_size - TP - FP - FN)",
    params=(UTILITY_A, UTILITY_B, UTILITY_C, UTILITY_D, COLLECTION, EMPTY_LIST),
    upper_bound=None,
    lower_bound=None,
)
def utility(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """utility@k = a*TP + b*FP + c*FN + d*TN with TP = hits@k, FP = retrieved@k - TP,
    FN = |R| - TP, TN = collection_size + TP - retrieved@k - |R| (trec_eval's defaults
    a=1, b=-1, c=0, d=0, collection_size 0), added in that order as trec_eval does. An
    empty list scores c*|R| + d*(collection_size - |R|); empty_list=placeholder scores a
    user without recommendations on one unjudged item, b + c*|R| + d*(collection_size - 1
    - |R|), as trec_eval 10 -c does for utility written with parameters.

    Example: 4 retrieved, 1 relevant among them, 3 relevant: 1*1 - 1*3 = -2.
    """
    a, b, c, d = (_number(p, name, "utility") for name in ("a", "b", "c", "d"))
    size = p["collection_size"]
    if not isinstance(size, int) or size < 0:
        raise ConfigError(
            f"parameter 'collection_size' of utility is '{size}'; it must be a whole number",
            key="metrics",
            fix="write e.g. utility(d=0.1,collection_size=100000)",
        )
    tp = s.hits_at(k).cast(pl.Int64)
    retrieved = s.retrieved(k).cast(pl.Int64)
    if p["empty_list"] == "placeholder":
        retrieved = pl.when(NO_LIST).then(pl.lit(1, pl.Int64)).otherwise(retrieved)
    relevant = s.n_relevant().cast(pl.Int64)
    tn = (pl.lit(size, pl.Int64) + tp - retrieved - relevant).cast(pl.Float64)
    cells = (tp, retrieved - tp, relevant - tp)
    value = pl.lit(a) * cells[0].cast(pl.Float64) + pl.lit(b) * cells[1].cast(pl.Float64)
    return value + pl.lit(c) * cells[2].cast(pl.Float64) + pl.lit(d) * tn


@register(
    "relative_precision",
    ties="expected",
    summary="Precision at k over the best possible at k, min(k, |R|) (trec_eval relative_P).",
    formula="hits@k / min(k, |R|)   (no cutoff: hits / min(list length, |R|), set_relative_P)",
    aliases=("relative_p",),
)
def relative_precision(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """relative_P@k = hits@k / min(k, |R|): precision up to k = |R|, recall beyond. Without
    a cutoff the list is the set: hits / min(list length, |R|) (trec_eval set_relative_P).
    0 when nothing is relevant (or the list is empty).

    Example: 3 relevant, 2 of them in the top 5: 2 / min(5, 3) = 2/3.
    """
    depth = s.retrieved(None) if k is None else pl.lit(k, pl.UInt32)
    return safe_div(s.hits_at(k), pl.min_horizontal(depth, s.n_relevant()))


@register(
    "rprec_mult",
    ties="expected",
    summary="Precision at a multiple of |R| (trec_eval Rprec_mult).",
    formula="hits@c / c,  c = floor(multiplier * |R| + 0.9)",
    takes_cutoff=False,
    params=(MULTIPLIER,),
)
def rprec_mult(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Rprec_mult = hits@c / c at the depth c = floor(multiplier * |R| + 0.9), computed in
    float64 as trec_eval does (multiplier 1: R-precision). Past the list's end the missing
    items count as non-relevant. 0 when c = 0 (no relevant item).

    Example: |R| = 4, multiplier 0.5: c = floor(2.9) = 2; relevant at ranks 1 and 3:
    hits@2 / 2 = 1/2.
    """
    multiplier = _number(p, "multiplier", "rprec_mult")
    c = (pl.lit(multiplier) * s.n_relevant().cast(pl.Float64) + 0.9).floor()
    hits = s.hits_at_depth_of_r(f"{multiplier!r}R", c)
    return safe_div(hits, c)


@register(
    "iprec_at_recall",
    summary="Interpolated precision at a recall level (trec_eval iprec_at_recall).",
    formula="max over m >= max(t, 1) of m / r_m,  t = round(level * |R|)",
    params=(LEVEL, ROUNDING),
)
def iprec_at_recall(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """iprec(level) = the highest precision at or after the point where the user's recall
    reaches `level`, as trec_eval interpolates it: with t = round(level * |R|) (halves away
    from zero), the largest m / r_m over the m-th relevant items with m >= max(t, 1) within
    the top k. 0 when fewer than t relevant items are retrieved, or none is relevant.
    rounding=up takes t = floor(level * |R| + 0.9) instead, as trec_eval 9 and pytrec_eval.

    Example: |R| = 4, relevant at ranks 1, 3 and 6: iprec(0.5) (t = 2) = max(2/3, 3/6) = 2/3;
    iprec(1.0) (t = 4) = 0.
    """
    level = recall_level(p["level"], "iprec_at_recall")
    return s.interpolated_precision(level, k, str(p["rounding"]))


@register(
    "iprec_avg",
    summary="Interpolated precision averaged over recall levels (trec_eval 11pt_avg).",
    formula="mean over the levels L of iprec_at_recall(level=L)   (default levels 0, 0.1, ..., 1)",
    params=(LEVELS, ROUNDING),
)
def iprec_avg(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """The mean of iprec_at_recall at each level (default the 11 levels 0.0, 0.1, ..., 1.0:
    trec_eval's 11pt_avg), summed from the highest level down, as trec_eval adds them.

    Example: |R| = 2, relevant at ranks 1 and 4: iprec is 1 at the levels 0 to 0.7 (t =
    round(2 L) <= 1), 2/4 at 0.8, 0.9 and 1 (t = 2): (8 * 1 + 3 * 0.5) / 11 = 9.5 / 11.
    """
    levels = recall_levels(p["levels"])
    total = pl.lit(0.0)
    for level in reversed(levels):
        total = total + s.interpolated_precision(level, k, str(p["rounding"]))
    return total / per_user_constant(len(levels))
