"""Judgment-based metrics: measures for incomplete ground truth (trec_eval's bpref, infAP,
unj, num_nonrel_judged_ret; ir_measures' Judged).

Judged and unjudged, as trec_eval defines them (form_res_rels.c): a recommended item is
judged when it is in the user's ground truth with a grade of 0 or more, whatever the
grade; an item that is not in the ground truth is unjudged (not in the pool), and so is an
item in the ground truth with a negative grade (in the pool but unjudged, as trec_eval reads
a qrels line with relevance -1). Grades are read after `fractional_grades`. For one user:
R is the relevant items (grade >= relevance_threshold, |R| their number), N the judged
non-relevant items of the ground truth (0 <= grade < relevance_threshold).
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.ranking import PRECISION_DENOMINATOR
from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import JUDGED, Stats, per_user_constant, safe_div

# trec_eval.h: INFAP_EPSILON, the smoothing of infAP's estimate of the precision above
INFAP_EPSILON = 0.00001

_rank = pl.col("rank")
_relevant = pl.col("relevant")
_judged_nonrelevant = JUDGED & ~_relevant
_unjudged = ~JUDGED & ~_relevant  # in the ground truth with a negative grade

NEGATIVE_GRADES = Param(
    "negative_grades",
    "unjudged: a negative grade is unjudged (trec_eval); judged: any grade (ir_measures)",
    choices=("unjudged", "judged"),
    default="unjudged",
)


def _nonrelevant_above(s: Stats) -> pl.Expr:
    """On each hits row: the judged non-relevant items ranked at or above it."""
    return s.hits_running_count("judged_nonrelevant", _judged_nonrelevant)


@register(
    "bpref",
    summary="Binary preference: how rarely judged non-relevant items outrank relevant ones.",
    formula="sum over relevant r in the top k of (1 - min(n_r, |R|) / min(N, |R|)) / |R|",
)
def bpref(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """bpref@k = (1/|R|) sum over relevant items r in the top k of
    (1 - min(n_r, |R|) / min(N, |R|)), where n_r is the number of judged non-relevant
    items ranked above r (a term is 1 when n_r = 0). Unjudged items are skipped: they
    neither count in n_r nor end the list. trec_eval's bpref (m_bpref.c), its terms
    added in rank order. Without a cutoff: the whole list; @k reads only the top k, as
    trec_eval -M k does.

    0 when |R| = 0 or the list is empty. Example: judged list (rel, non, rel, unjudged,
    rel), |R| = 4, N = 2: (1 + (1 - 1/2) + (1 - 1/2)) / 4 = 0.5.
    """
    n_relevant = s.truth_on_hits("n_relevant")
    s.n_judged_nonrelevant()
    nonrelevant = s.truth_on_hits("n_judged_nonrelevant")
    above = _nonrelevant_above(s)
    share = pl.min_horizontal(above, n_relevant).cast(pl.Float64) / pl.min_horizontal(
        nonrelevant, n_relevant
    ).cast(pl.Float64)
    term = pl.when(_relevant & (above > 0)).then(1.0 - share).when(_relevant).then(1.0)
    return safe_div(s.hits_sum("bpref", term.otherwise(0.0), k), s.n_relevant())


@register(
    "infap",
    summary="Inferred AP (Yilmaz and Aslam): AP estimated from a sample of judgments.",
    formula="sum over relevant r in the top k of E[P@rank(r)] / |R|   (trec_eval's infAP)",
    aliases=("infAP",),
)
def infap(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """infAP@k = (1/|R|) sum over relevant items r in the top k of the expected precision
    at r's rank i (trec_eval's infAP, m_infap.c, its constants and order of operations):
    1 when i = 1, else, with j = i - 1 items above r, of which h relevant, n judged
    non-relevant and u unjudged with a negative grade (items not in the ground truth are
    the j - h - n - u others),

        1/i + ((j/i) * ((h + n + u) / j)) * ((h + eps) / (h + n + 2 eps)),  eps = 1e-5.

    Items outside the ground truth count as non-relevant (the not-pooled part);
    negative-grade items as relevant in the proportion of the judged ones above. Without a
    cutoff: the whole list; @k reads only the top k, as trec_eval -M k does. 0 when
    |R| = 0 or the list is empty. Example: (rel, not in the ground truth, rel), |R| = 2:
    (1 + (1/3 + (2/3)(1/2)(1.00001/1.00002))) / 2 = 0.8333317 (rounded).
    """
    relevant_so_far = s.hits_running_count("relevant", _relevant).cast(pl.Float64)
    nonrelevant = _nonrelevant_above(s).cast(pl.Float64)
    unjudged = s.hits_running_count("unjudged", _unjudged).cast(pl.Float64)
    j = (_rank - 1).cast(pl.Float64)
    h = relevant_so_far - 1.0
    above = (j / (j + 1.0)) * ((h + nonrelevant + unjudged) / j)
    estimate = (h + INFAP_EPSILON) / (h + nonrelevant + 2 * INFAP_EPSILON)
    later = 1.0 / (j + 1.0) + above * estimate
    term = pl.when(_relevant & (_rank == 1)).then(1.0).when(_relevant).then(later)
    return safe_div(s.hits_sum("infap", term.otherwise(0.0), k), s.n_relevant())


@register(
    "unj",
    ties="expected",
    summary="Share of the top k that is unjudged (trec_eval's unj, a coverage red flag).",
    formula="(min(k, list length) - judged@k) / k",
)
def unj(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """unj@k = unjudged items in the top k / k: items not in the ground truth or with a
    negative grade. A list shorter than k counts its missing places as judged (trec_eval's
    m_unjudged.c), so the denominator stays k. Without a cutoff: the unjudged share of the
    whole list. 0 for an empty list. Example: 15 items, 11 of them judged: unj@20 = 4/20.
    """
    unjudged = s.retrieved(k) - s.hits_count("judged", JUDGED, k)
    denominator = s.retrieved(k) if k is None else per_user_constant(k)
    return safe_div(unjudged, denominator)


@register(
    "judged",
    ties="expected",
    summary="Share of the top k that is judged (ir_measures' Judged@k).",
    formula="judged@k / k   (denominator=list_length: judged@k / min(k, list length))",
    params=(PRECISION_DENOMINATOR, NEGATIVE_GRADES),
)
def judged(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Judged@k = judged items in the top k / k; denominator=list_length divides by
    min(k, list length) instead, as ir_measures does. negative_grades=judged counts every
    ground-truth item as judged (ir_measures), unjudged leaves out the negative grades
    (trec_eval). Without a cutoff: the judged share of the whole list. 0 for an empty
    list. Example: 15 items, 11 of them judged: Judged@20 = 11/20 (list_length: 11/15).
    """
    condition = JUDGED if p["negative_grades"] == "unjudged" else pl.lit(True)
    name = "judged" if p["negative_grades"] == "unjudged" else "in_ground_truth"
    count = s.hits_count(name, condition, k)
    by_k = p["denominator"] == "k"
    denominator = per_user_constant(k) if k is not None and by_k else s.retrieved(k)
    return safe_div(count, denominator)


@register(
    "num_nonrel_judged_ret",
    ties="expected",
    summary="Judged non-relevant items recommended, summed over users.",
    formula="sum over users of the judged non-relevant items in the whole list",
    takes_cutoff=False,
    upper_bound=None,
    aggregate="sum",
)
def num_nonrel_judged_ret(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """num_nonrel_judged_ret = recommended items with 0 <= grade < relevance_threshold
    (after max_depth), trec_eval's measure of that name; 0 for an empty list."""
    return s.hits_count("judged_nonrelevant", _judged_nonrelevant, None).cast(pl.Float64)
