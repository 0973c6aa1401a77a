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
from collections.abc import Collection, Hashable, Mapping, Sequence

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


def run_gains(
    ranked: Sequence[Hashable], intents_of: Mapping[Hashable, Sequence[Hashable]], alpha: float
) -> list[float]:
    """g(r) for every rank of the list, in rank order (ndeval's computeDCG loop): each
    item's intents added in the order `intents_of` lists them."""
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
    intents_of: Mapping[Hashable, Sequence[Hashable]], alpha: float, depth: int | None
) -> list[Hashable]:
    """ndeval's greedy ideal list (idealResult), `depth` items long (None: every relevant
    item): at each rank the item of the largest gain given those above it; among equal
    gains, the item whose id's text is last (an integer id: its decimal text)."""
    left = sorted(intents_of, key=str)  # ascending text: the later of equals wins
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


_DISCOUNTS = [0.0]  # ndeval's discount at 1-based rank r: log(2) / log(r + 1)


def _discount(rank: int) -> float:
    while len(_DISCOUNTS) <= rank:
        _DISCOUNTS.append(math.log(2.0) / math.log(len(_DISCOUNTS) + 1.0))
    return _DISCOUNTS[rank]


class _Sums:
    """One list's running sums (rank order, as ndeval adds them): alpha-DCG's
    g(r) * discount(r) and ERR's g(r) / r, read at any cutoff."""

    def __init__(self, gains: list[float]) -> None:
        self.gains = gains
        self.dcg: list[float] = []
        self.err: list[float] = []
        dcg = err = 0.0
        for rank, gain in enumerate(gains, start=1):
            dcg += gain * _discount(rank)
            err += gain / rank
            self.dcg.append(dcg)
            self.err.append(err)

    def at(self, sums: list[float], k: int) -> float:
        return sums[min(k, len(sums)) - 1] if sums else 0.0

    def nrbp(self, alpha: float, beta: float, n: int) -> float:
        total, decay = 0.0, 1.0
        for gain in self.gains:
            total += gain * decay
            decay *= beta
        return total * ((1.0 - (1.0 - alpha) * beta) / n)


def intent_values(
    ranked: Sequence[Hashable],
    judged: Sequence[tuple[Hashable, Hashable]],
    requests: Collection[IntentRequest],
) -> dict[IntentRequest, float]:
    """One user's value of every request: `ranked` the user's list in rank order (as deep as
    the requests read it), `judged` its relevant (item, intent) pairs (each pair once, in
    any order)."""
    intents_of: dict[Hashable, list[Hashable]] = {}
    for item, intent in judged:
        intents_of.setdefault(item, []).append(intent)
    if not intents_of:
        return dict.fromkeys(requests, 0.0)
    for intents in intents_of.values():  # one order whatever the rows' (a float sum's)
        intents.sort(key=str)
    n = len({intent for _, intent in judged})
    # per alpha: the run's sums and the greedy ideal's, as deep as the requests read it
    deepest: dict[float, int | None] = {}
    for request in requests:
        old = deepest.get(request.alpha, 0)
        deepest[request.alpha] = None if request.k is None or old is None else max(request.k, old)
    sums = {
        alpha: (
            _Sums(run_gains(ranked, intents_of, alpha)),
            _Sums(run_gains(ideal_order(intents_of, alpha, depth), intents_of, alpha)),
        )
        for alpha, depth in deepest.items()
    }
    return {r: _value(r, ranked, intents_of, n, *sums[r.alpha]) for r in requests}


def _value(
    request: IntentRequest,
    ranked: Sequence[Hashable],
    intents_of: Mapping[Hashable, Sequence[Hashable]],
    n: int,
    run: _Sums,
    ideal: _Sums,
) -> float:
    measure, k, alpha, beta = request.measure, request.k, request.alpha, request.beta
    if measure in WHOLE_LIST:
        nrbp = run.nrbp(alpha, beta, n)
        if measure == "nrbp":
            return nrbp
        return nrbp / ideal.nrbp(alpha, beta, n) if nrbp else 0.0
    assert k is not None
    if measure == "alpha_ndcg":
        dcg = run.at(run.dcg, k)
        return dcg / ideal.at(ideal.dcg, k) if dcg else 0.0
    if measure == "nerr_ia":
        err = run.at(run.err, k)
        return err / ideal.at(ideal.err, k) if err else 0.0
    if measure == "err_ia":  # over every intent covered at every rank ("ideal ideal")
        everything, weight = 0.0, float(n)
        for rank in range(1, k + 1):
            everything += weight / rank
            weight *= 1.0 - alpha
        return run.at(run.err, k) / everything
    top = ranked[:k]
    if measure == "p_ia":
        return sum(len(intents_of.get(item, ())) for item in top) / (k * n)
    assert measure == "s_recall", measure
    return len({j for item in top for j in intents_of.get(item, ())}) / n
