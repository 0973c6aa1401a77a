"""Ranking metrics. Each is computed per user, then averaged over the evaluated users.

Notation: for one user, rel_i is the relevance grade of the item at rank i (0 when the
item is not in the ground truth), R the set of relevant items (grade >= the
relevance_threshold), hits@k the relevant items among the top k. Where a denominator is
0 the per-user value is 0 (which users enter the mean is set by the conventions).
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import (
    OrderDependent,
    Stats,
    f_beta,
    gain_kind,
    per_user_constant,
    safe_div,
)

GAIN = Param(
    "gain",
    "linear: rel; exponential: 2^rel - 1; binary: 1 if relevant",
    choices=("linear", "exponential", "binary"),
    convention="gain",
)
BELOW_THRESHOLD = Param(
    "below_threshold",
    "grade: a positive grade below relevance_threshold gains its grade; zero: it gains "
    "nothing and leaves the ideal list",
    choices=("grade", "zero"),
    convention="gain_below_threshold",
)
GAINS = Param(
    "gains",
    "a grade -> gain map written grade:gain;grade:gain (trec_eval's ndcg.1=3,2=9,4=4.5 is "
    "gains=1:3;2:9;4:4.5); grades not in it gain as `gain` says",
    optional=True,
    gain_map=True,
    parts="grades of the gains map",
)
DISCOUNT = Param(
    "discount",
    "log2: 1/log2(i+1); jarvelin: 1 for i <= 2, then 1/log2(i)",
    choices=("log2", "jarvelin"),
    convention="discount",
)
IDEAL = Param(
    "ideal",
    "at_k: ideal list truncated at k; all_relevant: the whole ideal list; k_positions: k "
    "copies of the best-graded item",
    choices=("at_k", "all_relevant", "k_positions"),
    convention="ideal_dcg",
)
PRECISION_DENOMINATOR = Param(
    "denominator",
    "k, or list_length (the list truncated at k)",
    choices=("k", "list_length"),
    convention="precision_denominator",
)
AP_DENOMINATOR = Param(
    "denominator",
    "relevant: |R|; min_k_relevant: min(k, |R|); hits: hits@k; k: k (or the list length)",
    choices=("relevant", "min_k_relevant", "hits", "k"),
    convention="ap_denominator",
)
BETA = Param(
    "beta",
    "weight of recall against precision (> 0, at most 1e100)",
    positive_number=True,
    largest=1e100,
)


def metric_gain_kind(p: Params) -> str:
    gains = p.get("gains")
    return gain_kind(
        str(p["gain"]), str(p["below_threshold"]), None if gains is None else str(gains)
    )


@register(
    "precision",
    ties="expected",
    summary="Share of the top k that is relevant.",
    formula="hits@k / k   (denominator=list_length: hits@k / min(k, list length))",
    params=(PRECISION_DENOMINATOR,),
)
def precision(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """P@k = hits@k / k. Without a cutoff, k is the list length.

    Example: relevant items at ranks 1 and 3 of 5 give P@5 = 2/5.
    """
    by_k = p["denominator"] == "k"
    denominator = per_user_constant(k) if k is not None and by_k else s.retrieved(k)
    return safe_div(s.hits_at(k), denominator)


@register(
    "recall",
    ties="expected",
    summary="Share of the relevant items found in the top k.",
    formula="hits@k / |R|",
)
def recall(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """R@k = hits@k / |R|. Example: 8 relevant, 5 in the top 10: R@10 = 5/8."""
    return safe_div(s.hits_at(k), s.n_relevant())


def _f_beta(s: Stats, k: int | None, p: Params, beta: float) -> pl.Expr:
    return f_beta(precision(s, k, p), recall(s, k, p), beta)


@register(
    "f1",
    ties="expected",
    summary="Harmonic mean of precision@k and recall@k, per user.",
    formula="2 * P@k * R@k / (P@k + R@k)",
    params=(PRECISION_DENOMINATOR,),
)
def f1(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """F1@k = 2 P R / (P + R), 0 when P + R = 0. Example: P = 0.5, R = 0.25: F1 = 1/3."""
    return _f_beta(s, k, p, 1.0)


@register(
    "fbeta",
    ties="expected",
    summary="Weighted harmonic mean of precision@k and recall@k, per user.",
    formula="(1 + beta^2) * P@k * R@k / (beta^2 * P@k + R@k)",
    params=(PRECISION_DENOMINATOR, BETA),
)
def fbeta(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """F_beta@k; beta > 1 weighs recall more. 0 when both are 0."""
    beta = p["beta"]
    assert not isinstance(beta, str)
    return _f_beta(s, k, p, float(beta))


@register(
    "hit_rate",
    ties="expected",
    summary="1 when any relevant item is in the top k, else 0.",
    formula="[hits@k > 0]",
    aliases=("success", "hr"),
)
def hit_rate(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """HR@k = 1 if hits@k > 0 else 0 (trec_eval's success_k); under tie_break expected,
    the chance that a relevant item is in the top k."""
    return s.any_hit(k)


@register(
    "hits",
    ties="expected",
    summary="Relevant items in the top k (a count per user, averaged: ranx's hits).",
    formula="hits@k",
    upper_bound=None,
)
def hits(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Hits@k = the number of relevant items in the top k (ranx's hits); without a cutoff,
    in the whole list. Empty list or no relevant item: 0. Example: relevant at ranks 1
    and 3: Hits@2 = 1, Hits@3 = 2.
    """
    return s.hits_at(k).cast(pl.Float64)


@register(
    "mrr",
    ties="expected",
    summary="Reciprocal rank of the first relevant item in the top k (0 if none).",
    formula="1 / rank of the first relevant item within the top k",
    aliases=("rr", "recip_rank"),
)
def mrr(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """RR@k = 1/rank_first. Example: first relevant at rank 3: RR = 1/3; at rank 6, RR@5 = 0."""
    return s.reciprocal_rank(k)


@register(
    "map",
    ties="expected",
    summary="Average precision at the relevant items of the top k, per user (mean = MAP).",
    formula="sum over relevant i <= k of P@i / denominator   (|R|, min(k, |R|), hits@k or k)",
    params=(AP_DENOMINATOR,),
    aliases=("ap",),
)
def average_precision(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """AP@k = (sum of P@i at each relevant rank i <= k) / denominator.

    Example: relevant at ranks 1, 4 and 5 of 5, |R| = 3: AP = (1/1 + 2/4 + 3/5) / 3 = 0.7;
    with denominator=k (RecTools' MAP(divide_by_k=True)) AP@5 = 2.1 / 5 = 0.42. Without a
    cutoff, denominator=k divides by the list length. A 0 denominator (no relevant item,
    no hit, an empty list) gives 0.
    """
    by = p["denominator"]
    if by == "relevant":
        denominator = s.n_relevant()
    elif by == "hits":
        if s.expected_ties:  # a ratio of two counts that move together
            raise OrderDependent("AP divided by hits@k: a ratio of two counts that move together")
        denominator = s.hits_at(k)
    elif by == "k":
        denominator = per_user_constant(k) if k is not None else s.retrieved(None)
    else:
        denominator = s.n_relevant() if k is None else pl.min_horizontal(s.n_relevant(), k)
    return safe_div(s.precision_sum(k), denominator)


@register(
    "r_precision",
    ties="expected",
    summary="Precision at rank |R|, the user's number of relevant items.",
    formula="hits@|R| / |R|",
    takes_cutoff=False,
    aliases=("rprec",),
)
def r_precision(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """R-Prec = hits@|R| / |R|. Example: 4 relevant, 2 of them in the top 4: 0.5."""
    return safe_div(s.hits_at_r(), s.n_relevant())


@register(
    "cg",
    ties="expected",
    summary="Cumulative gain: the sum of the gains of the top k items.",
    formula="sum_{i<=k} gain(rel_i)",
    params=(GAIN, BELOW_THRESHOLD, GAINS),
    upper_bound=None,
)
def cg(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """CG@k = sum of gains. Example: grades (2, 0, 3, 2): CG@4 = 7."""
    return s.cg(k, metric_gain_kind(p))


@register(
    "dcg",
    ties="expected",
    summary="Discounted cumulative gain of the top k.",
    formula="sum_{i<=k} gain(rel_i) * discount(i)",
    params=(GAIN, BELOW_THRESHOLD, GAINS, DISCOUNT),
    upper_bound=None,
)
def dcg(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """DCG@k. Example: grades (3, 2, 2, 0), linear, log2: 3 + 2/log2(3) + 2/2 = 5.26."""
    return s.dcg(k, metric_gain_kind(p), str(p["discount"]))


@register(
    "idcg",
    ties="order_free",
    summary="DCG of the ideal ranking (ground truth by relevance, descending).",
    formula="DCG@k of the ideal list (all_relevant: uncut; k_positions: k best grades)",
    params=(GAIN, BELOW_THRESHOLD, GAINS, DISCOUNT, IDEAL),
    upper_bound=None,
)
def idcg(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """IDCG@k: the DCG of the user's ground truth sorted by grade, descending.

    The ideal list holds every ground-truth item with a positive gain (also those below
    the relevance threshold, as their grades count in DCG, unless below_threshold=zero);
    ideal=all_relevant does not truncate it at k. ideal=k_positions fills all k positions
    with the user's best-graded item, whatever the ground truth holds: the gain of its
    best grade times sum_{i<=k} discount(i) (k the list length without a cutoff; 0
    without a positive grade). With gain=binary that is sum_{i<=k} discount(i) for every
    user with a relevant item, RecTools' NDCG (divide_by_achievable=False). Example: k = 3,
    binary, log2: 1 + 1/log2(3) + 1/2 = 2.13.
    With `gains` (a grade -> gain map), a listed grade gains its mapped value (>= 0), the
    others as `gain` says.
    """
    if p["ideal"] == "k_positions":
        return s.best_gain_dcg(k, metric_gain_kind(p), str(p["discount"]))
    cut = k if p["ideal"] == "at_k" else None
    return s.idcg(cut, metric_gain_kind(p), str(p["discount"]))


@register(
    "ndcg",
    ties="expected",
    summary="DCG@k normalised by the ideal DCG.",
    formula="DCG@k / IDCG@k   (0 when IDCG is 0)",
    params=(GAIN, BELOW_THRESHOLD, GAINS, DISCOUNT, IDEAL),
)
def ndcg(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """NDCG@k = DCG@k / IDCG@k. Example: grades (2, 0, 3, 2), linear, log2: 4.36/5.26 = 0.83."""
    return safe_div(dcg(s, k, p), idcg(s, k, p))
