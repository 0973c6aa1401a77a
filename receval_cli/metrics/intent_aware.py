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
from dataclasses import dataclass

# the measures a per-user computation returns, by key (name, cutoff): cutoff None for NRBP
MEASURES = ("alpha_ndcg", "err_ia", "nerr_ia", "nrbp", "nnrbp", "p_ia", "s_recall")
WHOLE_LIST = ("nrbp", "nnrbp")  # the measures over the whole list (no cutoff)


@dataclass(frozen=True)
class IntentRequest:
    """One intent-aware value a metric asks for: the measure (MEASURES), its cutoff (None:
    the whole list, for nrbp and nnrbp), alpha and beta (beta: NRBP's patience; 0.5 where
    the measure does not read it)."""

    measure: str
    k: int | None
    alpha: float
    beta: float = 0.5

    @property
    def column(self) -> str:
        """The per-user table's column of this value."""
        at = "" if self.k is None else f"@{self.k}"
        return f"intent[{self.measure},{self.alpha!r},{self.beta!r}]{at}"


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
    for item, intent in judged:
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
