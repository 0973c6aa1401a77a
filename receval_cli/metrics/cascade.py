"""User-model metrics: a user scans the list from the top and stops at some rank, by
persistence (rank-biased precision) or by satisfaction (expected reciprocal rank).
Computed per user over the recommended items that are in the ground truth, averaged.

Notation as in ranking.py: rel_i the grade at rank i, N the list length (after
max_depth), the top k = the first min(k, N) items.
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.ranking import BELOW_THRESHOLD, GAIN, GAINS, metric_gain_kind
from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import (
    Stats,
    base_gain,
    depth,
    exact_power,
    gain,
    gain_map,
    per_user_constant,
    safe_div,
)

_rank = pl.col("rank")
_rel = pl.col("rel")

PERSISTENCE = Param(
    "p",
    "persistence: the chance the user goes on to the next rank, in (0, 1)",
    default=0.9,
    share=True,
    below_one=True,
)
SCALE = Param(
    "scale",
    "unit: when a gain of the grades 0..the user's highest lies outside [0, 1], gains are "
    "rescaled by that range, (gain - lo) / (hi - lo) (trec_eval); none: as they are (ranx)",
    choices=("unit", "none"),
    default="unit",
)
EMPTY_LIST = Param(
    "empty_list",
    "a user without recommendations (users_without_recommendations: zero) is scored on: "
    "empty, an empty list; placeholder, a list of one unjudged item (trec_eval 10 -c's "
    "placeholder ranking, which it keeps for this measure written with parameters)",
    choices=("empty", "placeholder"),
    default="empty",
)
# a user without recommendations: its list_length is 0 (a user in the predictions has one)
NO_LIST = pl.col("list_length") == 0
MAX_GRADE = Param(
    "max_grade",
    "the grade of a certainly satisfying item: R = (2^grade - 1) / 2^max_grade; higher "
    "grades count as max_grade (gdeval: 4)",
    default=4,
    positive_number=True,
    largest=1000,
)
GRADES = Param(
    "grades",
    "graded: the item's grade; binary: 1 for a relevant item, else 0 (ir_measures' nERR_IA "
    "with max_grade=1)",
    choices=("graded", "binary"),
    default="graded",
)


def _persistence(p: Params) -> float:
    value = p["p"]
    assert not isinstance(value, str)
    return float(value)


def _weight(p: float) -> pl.Expr:
    """p^(i-1) at each row's rank i."""
    return exact_power(p, _rank - 1)


def _rank_ordered_sum(s: Stats, name: str, term: pl.Expr, k: int | None) -> pl.Expr:
    """The sum of a per-row term over the user's hits in the top k, in rank order."""
    within = term.filter(_rank <= depth(k)).sort_by(_rank.filter(_rank <= depth(k)))
    return s.hits.agg(name, within.cum_sum().last()).fill_null(0.0)


def _gain_top(s: Stats, kind: str) -> pl.Expr:
    """hi of trec_eval's rbp rescaling, per user: the greatest of 1, the mapped gains, and
    the gains of the grades 0, 1, ..., the user's highest grade (and of its grades)."""
    mapped = [value for _, value in gain_map(kind)]
    keys = [level for level, _ in gain_map(kind)]
    if kind.startswith("binary"):
        # a column, not a scalar: polars divides by a scalar through its reciprocal
        return per_user_constant(max([1.0, *mapped]))
    top = _rel.filter(_rel >= 0).max().floor()
    candidates = [pl.lit(max([1.0, *mapped]))]
    for step in range(len(keys) + 1):  # the highest whole grade not in the map
        level = top - step
        unmapped = (level >= 0) & ~level.is_in(keys) if keys else level >= 0
        candidates.append(pl.when(unmapped).then(base_gain(level, kind)))
    grades = _rel.filter((_rel >= 0) & ~_rel.is_in(keys)) if keys else _rel.filter(_rel >= 0)
    candidates.append(base_gain(grades, kind).max())
    return s.truth.agg(f"gain_top[{kind}]", pl.max_horizontal(candidates)).fill_null(1.0)


@register(
    "rbp",
    summary="Rank-biased precision: gains weighted by a persistent user's chance to reach them.",
    formula="(1 - p) * sum_{i<=k} gain(rel_i) * p^(i-1)",
    params=(PERSISTENCE, GAIN, BELOW_THRESHOLD, GAINS, SCALE),
    upper_bound=None,
)
def rbp(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """RBP@k = (1 - p) * sum over i <= k of gain_i * p^(i-1) (Moffat and Zobel 2008).

    gain as ndcg's `gain`, `below_threshold` and `gains`; scale=unit rescales them as
    trec_eval does: when a gain of the grades 0, 1, ..., the user's highest grade (or of
    the `gains` map) exceeds 1, every gain is divided by the greatest of them (gains are
    >= 0, so trec_eval's (gain - min) / (max - min) is gain / max).
    Empty cases: empty list or no judged item in it: 0. Example: relevant at ranks 1 and
    3, binary gain, p = 0.5: 0.5 * (1 + 0.25) = 0.625.
    """
    persistence = _persistence(p)
    kind = metric_gain_kind(p)
    name = f"rbp_sum[{kind},{persistence!r}]@{k}"
    weighted = _rank_ordered_sum(s, name, gain(_rel, kind) * _weight(persistence), k)
    if p["scale"] == "none":
        return (1.0 - persistence) * weighted
    return (1.0 - persistence) * safe_div(weighted, _gain_top(s, kind))


@register(
    "rbp_resid",
    summary="RBP's residual: the weight of the unjudged ranks and of the ranks past the list.",
    formula="p^min(k,N) + (1 - p) * sum over unjudged i <= k of p^(i-1)   (0 if none unjudged)",
    params=(PERSISTENCE, EMPTY_LIST),
)
def rbp_resid(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """rbp_resid@k (trec_eval m_rbp_resid.c): how much RBP could still rise if every
    unjudged item (not in the ground truth, or of negative grade) and every rank past the
    list were fully relevant: p^n + (1 - p) * sum over unjudged ranks i of p^(i-1),
    n = min(k, N). As trec_eval: 0 when the top k holds no unjudged item (the ranks past
    the list then do not count). Empty list: 0; with empty_list=placeholder a user without
    recommendations is scored on one unjudged item, p + (1 - p) * 1 (= 1), as trec_eval 10
    -c does for rbp_resid written with parameters.
    """
    persistence = _persistence(p)
    n = s.retrieved(k).cast(pl.Float64)
    judged_rows = pl.when(_rel.fill_null(-1.0) >= 0).then(_weight(persistence)).otherwise(0.0)
    judged = _rank_ordered_sum(s, f"rbp_judged[{persistence!r}]@{k}", judged_rows, k)
    n_judged = s.hits.agg(
        f"judged@{k}", ((_rel.fill_null(-1.0) >= 0) & (_rank <= depth(k))).sum()
    ).fill_null(0)
    reached = exact_power(persistence, n)  # p^n
    listed = 1.0 - reached  # (1 - p) * sum over i <= n of p^(i-1)
    value = reached + listed - (1.0 - persistence) * judged
    value = pl.when(n > n_judged.cast(pl.Float64)).then(value).otherwise(0.0)
    if p["empty_list"] == "placeholder":  # trec_eval's cur_p + (1 - p) * sum, one item
        return pl.when(NO_LIST).then(persistence + (1.0 - persistence)).otherwise(value)
    return value


def _satisfaction(p: Params) -> pl.Expr:
    """R = (2^g - 1) / 2^max_grade, g the grade (binary: 1 if relevant) capped at max_grade."""
    top = p["max_grade"]
    assert not isinstance(top, str)
    if p["grades"] == "binary":
        grade = pl.col("relevant").cast(pl.Float64)
    else:
        grade = _rel.fill_null(0.0).clip(0.0, float(top))
    certain = float(2.0 ** float(top))
    return (pl.lit(2.0).pow(grade.clip(upper_bound=float(top))) - 1.0) / certain


def _err_key(p: Params) -> str:
    return f"{p['grades']},{p['max_grade']!r}"


def _err(s: Stats, k: int | None, p: Params) -> pl.Expr:
    r = _satisfaction(p)
    key = _err_key(p)
    reached = s.hits.row(
        f"err_reached[{key}]",
        (1.0 - r).cum_prod().shift(1, fill_value=1.0).over("user", order_by=_rank),
    )
    term = r * reached / _rank.cast(pl.Float64)
    return _rank_ordered_sum(s, f"err[{key}]@{k}", term, k)


@register(
    "err",
    summary="Expected reciprocal rank: 1/rank of where a cascading user is satisfied.",
    formula="sum_{i<=k} R_i / i * prod_{j<i} (1 - R_j),  R = (2^rel - 1) / 2^max_grade",
    params=(MAX_GRADE, GRADES),
)
def expected_reciprocal_rank(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """ERR@k (Chapelle et al. 2009; gdeval's err@k, max_grade 4): the user stops at rank
    i with chance R_i = (2^rel_i - 1) / 2^max_grade, having gone past every rank above.
    Grades above max_grade count as max_grade, negative and missing ones as 0.
    Empty cases: empty list or no positive grade in the top k: 0. Example: grades (0, 1),
    max_grade 4: R_2 = 1/16, ERR = 1/32.
    """
    return _err(s, k, p)


@register(
    "nerr",
    summary="ERR normalised by the ERR of the ideal ranking.",
    formula="ERR@k / ERR@k of the ground truth sorted by grade",
    params=(MAX_GRADE, GRADES),
)
def nerr(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """nERR@k = ERR@k / ideal ERR@k, the ideal list being the user's ground truth sorted
    by grade, cut at k (ir_measures' nERR_IA@k on one subtopic is grades=binary,
    max_grade=1). Empty cases: ideal ERR 0 (no positive grade): 0; empty list: 0.
    """
    r = _satisfaction(p).sort(descending=True)
    reached = (1.0 - r).cum_prod().shift(1, fill_value=1.0)
    positions = pl.int_range(1, r.len() + 1, dtype=pl.UInt32).cast(pl.Float64)
    running = s.truth.agg(
        f"ideal_err[{_err_key(p)}]", (r * reached / positions).cum_sum().implode()
    )
    ideal = (
        running.list.last()
        if k is None
        else running.list.get(pl.min_horizontal(running.list.len(), k) - 1, null_on_oob=True)
    )
    return safe_div(_err(s, k, p), ideal.fill_null(0.0))
