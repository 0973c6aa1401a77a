"""Intent-aware diversity measures over a ground truth whose rows carry an intent (TREC's
diversity qrels, `topic intent doc rel`), as ndeval (TREC Web track's ndeval 4.5, the C
code ir_measures runs through pyndeval) computes them.

A user's ground truth judges items per intent. An item is relevant to an intent when its
grade for it is at least relevance_threshold (grades are binary here, as in ndeval: a
grade of 2 counts as 1). The user's intents N are those with at least one relevant item
(ndeval's actualSubtopics: an intent whose items are all graded 0 is not counted). An
item of the list that the ground truth does not judge, or judges for no intent, gains
nothing. Without an intent column every row is of one intent (ir_measures reads a plain
qrels file's iteration, 0, as the intent), and the measures are their one-intent forms.

The gain of the item at rank r (1-based) rewards each intent it is relevant to, less for
every item above it relevant to the same intent (c_j(r): how many items above rank r are
relevant to intent j):

    g(r)         = sum over intents j of item r of (1 - alpha)^c_j(r)
    alpha-DCG@k  = sum over r <= k of g(r) / log2(r + 1)
    alpha-nDCG@k = alpha-DCG@k / alpha-DCG@k of the ideal list (0 when the former is 0)
    ERR-IA@k     = sum over r <= k of g(r) / r, divided by sum over r <= k of
                   N (1 - alpha)^(r - 1) / r (the "ideal ideal": every intent at every rank)
    nERR-IA@k    = sum over r <= k of g(r) / r, over the same sum for the ideal list
    NRBP         = (1 - (1 - alpha) beta) / N * sum over r of g(r) beta^(r - 1) (the whole
                   list)
    nNRBP        = NRBP / NRBP of the ideal list (its whole length)
    P-IA@k       = (sum over r <= k of the number of intents item r is relevant to) / (k N)
    S-recall@k   = |the intents of the items at ranks <= k| / N

The ideal list is ndeval's greedy one: at each rank, the item with the largest gain
given the items placed above it, ties to the item whose id is last in text order
(ndeval's `strcmp(...) > 0`), over every relevant item of the user (so its NRBP is
complete). Finding the best ideal is NP-hard (Clarke et al.); the greedy list is the one
ndeval and every TREC diversity result normalise by. It costs (relevant items)^2 x
(intents per item) operations per user: quadratic in the user's relevant items, never in
the catalog. A user with no relevant item (N = 0) scores 0 on every measure (ndeval: 0,
and NaN for nNRBP, 0 / 0).

Where receval departs from ndeval: ndeval leaves ERR-IA@1 unnormalised (its loop divides
from rank 2 on), so it can exceed 1 (a first item relevant to 4 intents scores 4);
receval divides at rank 1 too (g(1) / N). nERR-IA@1 and every other value are ndeval's.
ndeval computes to depth 20 at most; receval at any depth, by the same definitions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence

import polars as pl

from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import IntentRequest, Stats

WHOLE_LIST = ("nrbp", "nnrbp")  # the measures over the whole list (no cutoff)

ALPHA = Param(
    "alpha",
    "redundancy: each item relevant to an intent already covered c times gains "
    "(1 - alpha)^c for it, in (0, 1] (ndeval: 0.5)",
    default=0.5,
    share=True,
)
BETA = Param(
    "beta",
    "patience: the chance the user goes on to the next rank, in (0, 1) (ndeval: 0.5)",
    default=0.5,
    share=True,
    below_one=True,
)
_INTENTS = (
    "over the ground truth's intents (ground_truth.columns.intent; without it, one intent); "
    "ndeval's conventions (docs/metrics.md, 'Intent-aware diversity')"
)


def _request(measure: str, k: int | None, p: Params) -> IntentRequest:
    beta = float(p["beta"]) if "beta" in p else 0.5
    return IntentRequest(measure, k, float(p["alpha"]), beta)


@register(
    "alpha_ndcg",
    summary=f"alpha-nDCG@k (Clarke et al. 2008), normalised by ndeval's greedy ideal, {_INTENTS}",
    formula="sum over r <= k of g(r) / log2(r + 1), over the same of the greedy ideal list; "
    "g(r) = sum over the intents j of item r of (1 - alpha)^(items above r relevant to j)",
    params=(ALPHA,),
    needs_cutoff=True,
)
def alpha_ndcg(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """alpha-nDCG@k, ndeval's: the run's alpha-DCG@k over the greedy ideal list's (0 when
    the run gains nothing). See the module's docstring for g(r) and the ideal."""
    return s.intent(_request("alpha_ndcg", k, p))


@register(
    "err_ia",
    summary=f"intent-aware ERR@k as ndeval computes it (alpha-discounted gains), {_INTENTS}",
    formula="sum over r <= k of g(r) / r, over sum over r <= k of N (1 - alpha)^(r - 1) / r "
    "(N: the user's intents with a relevant item)",
    params=(ALPHA,),
    needs_cutoff=True,
)
def err_ia(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """ERR-IA@k, ndeval's "collection-independent" normalisation: every intent covered at
    every rank is 1. ndeval leaves ERR-IA@1 unnormalised; receval divides it too."""
    return s.intent(_request("err_ia", k, p))


@register(
    "nerr_ia",
    summary=f"intent-aware ERR@k normalised by ndeval's greedy ideal list, {_INTENTS}",
    formula="sum over r <= k of g(r) / r, over the same of the greedy ideal list",
    params=(ALPHA,),
    needs_cutoff=True,
)
def nerr_ia(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """nERR-IA@k, ndeval's: ERR-IA@k over that of the greedy ideal (0 when the run gains
    nothing)."""
    return s.intent(_request("nerr_ia", k, p))


@register(
    "nrbp",
    summary=f"novelty- and rank-biased precision (Clarke et al. 2009), {_INTENTS}",
    formula="(1 - (1 - alpha) beta) / N * sum over r of g(r) beta^(r - 1), the whole list",
    params=(ALPHA, BETA),
    takes_cutoff=False,
)
def nrbp(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """NRBP over the whole list (after max_depth), ndeval's normalisation by the user's
    intents N."""
    return s.intent(_request("nrbp", k, p))


@register(
    "nnrbp",
    summary=f"NRBP normalised by that of ndeval's greedy ideal list, {_INTENTS}",
    formula="NRBP / NRBP of the greedy ideal list (its whole length)",
    params=(ALPHA, BETA),
    takes_cutoff=False,
)
def nnrbp(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """nNRBP: NRBP over the ideal's (0 for a user with no relevant item, where ndeval
    divides 0 by 0)."""
    return s.intent(_request("nnrbp", k, p))


@register(
    "p_ia",
    summary=f"intent-aware precision@k (Agrawal et al. 2009), {_INTENTS}",
    formula="sum over r <= k of (the intents item r is relevant to) / (k N)",
    needs_cutoff=True,
)
def p_ia(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """P-IA@k: precision@k of each intent, averaged over the user's intents (k in the
    denominator however short the list)."""
    return s.intent(IntentRequest("p_ia", k, 0.5))


@register(
    "s_recall",
    summary=f"subtopic recall@k (Zhai et al. 2003): the share of intents covered, {_INTENTS}",
    formula="|the intents of the items at ranks <= k| / N",
    needs_cutoff=True,
)
def s_recall(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """S-recall@k: the share of the user's intents with a relevant item in the top k."""
    return s.intent(IntentRequest("s_recall", k, 0.5))


def _text(item: Hashable) -> str:
    """An item's id as ndeval compares it: its text (an integer id: its decimal text)."""
    return item if isinstance(item, str) else str(item)


def run_gains(
    ranked: Sequence[Hashable], intents_of: Mapping[Hashable, Collection[Hashable]], alpha: float
) -> list[float]:
    """g(r) for every rank of the list, in rank order (ndeval's computeDCG loop)."""
    seen: dict[Hashable, float] = {}
    gains = []
    for item in ranked:
        score = 0.0
        for intent in intents_of.get(item, ()):
            weight = seen.get(intent, 1.0)
            score += weight
            seen[intent] = weight * (1.0 - alpha)
        gains.append(score)
    return gains


def ideal_order(
    intents_of: Mapping[Hashable, Collection[Hashable]], alpha: float, depth: int | None
) -> list[Hashable]:
    """ndeval's greedy ideal list (idealResult), `depth` items long (None: every relevant
    item): at each rank the item of the largest gain given those above it; among equal
    gains, the item whose id's text is last."""
    left = sorted(intents_of, key=_text)  # ascending text: the later of equals wins
    weight: dict[Hashable, float] = {}
    order: list[Hashable] = []
    limit = len(left) if depth is None else min(depth, len(left))
    while len(order) < limit:
        best, best_score = -1, 0.0
        for place, item in enumerate(left):
            score = 0.0
            for intent in intents_of[item]:
                score += weight.get(intent, 1.0)
            if best == -1 or score >= best_score:
                best, best_score = place, score
        chosen = left.pop(best)
        order.append(chosen)
        for intent in intents_of[chosen]:
            weight[intent] = weight.get(intent, 1.0) * (1.0 - alpha)
    return order


def _discount(rank: int) -> float:
    """ndeval's discount at 1-based rank r: log(2) / log(r + 1) = 1 / log2(r + 1)."""
    return math.log(2.0) / math.log(rank + 1.0)


def _cumulative(gains: Sequence[float], k: int, weight: Callable[[int], float]) -> float:
    """sum over r <= k of gains[r - 1] * weight(r), added in rank order."""
    total = 0.0
    for rank in range(1, min(k, len(gains)) + 1):
        total += gains[rank - 1] * weight(rank)
    return total


def _nrbp_sum(gains: Sequence[float], beta: float) -> float:
    total, decay = 0.0, 1.0
    for gain in gains:
        total += gain * decay
        decay *= beta
    return total


def intent_values(
    ranked: Sequence[Hashable],
    judged: Sequence[tuple[Hashable, Hashable]],
    requests: Collection[IntentRequest],
) -> dict[IntentRequest, float]:
    """One user's value of every request: `ranked` the user's list in rank order (as deep as
    the requests read it), `judged` its relevant (item, intent) pairs (each pair once)."""
    intents_of: dict[Hashable, list[Hashable]] = {}
    # in one order whatever the rows' order (a gain adds its intents' weights in it)
    for item, intent in sorted(judged, key=lambda pair: (_text(pair[0]), _text(pair[1]))):
        intents_of.setdefault(item, []).append(intent)
    n = len({intent for _, intent in judged})
    if n == 0:
        return dict.fromkeys(requests, 0.0)
    # per alpha: the run's gains and the greedy ideal's, as deep as the requests read it
    deepest: dict[float, int | None] = {}
    for request in requests:
        old = deepest.get(request.alpha, 0)
        deeper = None if request.k is None or old is None else max(request.k, old)
        deepest[request.alpha] = deeper
    by_alpha = {
        alpha: (
            run_gains(ranked, intents_of, alpha),
            run_gains(ideal_order(intents_of, alpha, depth), intents_of, alpha),
        )
        for alpha, depth in deepest.items()
    }
    values: dict[IntentRequest, float] = {}
    for request in requests:
        values[request] = _value(request, ranked, intents_of, n, *by_alpha[request.alpha])
    return values


def _value(
    request: IntentRequest,
    ranked: Sequence[Hashable],
    intents_of: Mapping[Hashable, Collection[Hashable]],
    n: int,
    gains: list[float],
    ideal: list[float],
) -> float:
    measure, k, alpha, beta = request.measure, request.k, request.alpha, request.beta
    if measure in WHOLE_LIST:
        nrbp = _nrbp_sum(gains, beta) * ((1.0 - (1.0 - alpha) * beta) / n)
        if measure == "nrbp":
            return nrbp
        best = _nrbp_sum(ideal, beta) * ((1.0 - (1.0 - alpha) * beta) / n)
        return nrbp / best if nrbp else 0.0
    assert k is not None
    if measure == "alpha_ndcg":
        dcg = _cumulative(gains, k, _discount)
        return dcg / _cumulative(ideal, k, _discount) if dcg else 0.0
    if measure in ("err_ia", "nerr_ia"):
        err = _cumulative(gains, k, lambda rank: 1.0 / rank)
        if measure == "nerr_ia":
            return err / _cumulative(ideal, k, lambda rank: 1.0 / rank) if err else 0.0
        everything = [n * (1.0 - alpha) ** (rank - 1) for rank in range(1, k + 1)]
        return err / _cumulative(everything, k, lambda rank: 1.0 / rank)
    top = ranked[:k]
    if measure == "p_ia":
        return sum(len(intents_of.get(item, ())) for item in top) / (k * n)
    assert measure == "s_recall", measure
    return len({j for item in top for j in intents_of.get(item, ())}) / n
