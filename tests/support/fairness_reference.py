"""A naive, independent implementation of the item-fairness metrics, transcribed from
Elliot's code (github.com/sisinflab/elliot, elliot/evaluation/metrics/fairness/rsp/rsp.py,
reo/reo.py and elliot/evaluation/popularity_utils/popularity.py), in plain Python loops
over users and sets. Not from receval's code. One deliberate difference, receval's
documented rule: a group whose denominator is 0 is left out (Elliot's 0/0 gives nan).
"""

from __future__ import annotations

import math
from typing import Any

Groups = dict[str, set[Any]]


def short_head(train: dict[Any, set[Any]], pop_ratio: float, order: list[Any]) -> Groups:
    """Elliot's Popularity.get_short_head / get_long_tail: pop = the item's users in the
    training log; items sorted by pop descending (a stable sort over `order`, the
    tie-break); the head takes items while the remaining limit is > 0."""
    pop: dict[Any, int] = {}
    for item in order:
        pop[item] = sum(1 for items in train.values() if item in items)
    transactions = sum(len(items) for items in train.values())
    ranked = sorted(pop.items(), key=lambda pair: pair[1], reverse=True)
    limit = transactions * pop_ratio
    head: list[Any] = []
    for item, count in ranked:
        head.append(item)
        limit -= count
        if limit <= 0:
            break
    return {"head": set(head), "tail": {i for i, _ in ranked if i not in head}}


def _spread(numerators: dict[str, float], denominators: dict[str, float]) -> float | None:
    shares = [numerators[g] / denominators[g] for g in sorted(denominators) if denominators[g]]
    mean = sum(shares) / len(shares) if shares else 0.0
    if mean == 0:
        return None  # receval's null (Elliot: nan)
    std = math.sqrt(sum((s - mean) ** 2 for s in shares) / len(shares))  # np.std, ddof 0
    return std / mean


def rsp(
    recs: dict[Any, list[Any]], train: dict[Any, set[Any]], groups: Groups, k: int
) -> float | None:
    """Elliot's RSP.__user_pop_rsp summed over the users of the recommendations."""
    num = dict.fromkeys(groups, 0.0)
    den = dict.fromkeys(groups, 0.0)
    for user, ranked in recs.items():
        recommended = set(ranked[:k])
        for g, members in groups.items():
            num[g] += len(recommended & members)
            den[g] += len(members - train.get(user, set()))
    return _spread(num, den)


def reo(
    recs: dict[Any, list[Any]],
    train: dict[Any, set[Any]],
    relevant: dict[Any, set[Any]],
    groups: Groups,
    k: int,
) -> float | None:
    """Elliot's REO.__user_pop_reo over the users of the recommendations with a relevant
    item."""
    num = dict.fromkeys(groups, 0.0)
    den = dict.fromkeys(groups, 0.0)
    for user, ranked in recs.items():
        mine = relevant.get(user, set())
        if not mine:
            continue
        found = {i for i in ranked[:k] if i in mine}
        for g, members in groups.items():
            num[g] += len(found & members)
            den[g] += len((members & mine) - train.get(user, set()))
    return _spread(num, den)


def exposure_disparity(recs: dict[Any, list[Any]], groups: Groups, k: int) -> float | None:
    """Singh and Joachims' exposure 1/log2(1 + rank), its mean per (user, item of the
    group) over the users of the recommendations; std / mean over the groups."""
    exposure = dict.fromkeys(groups, 0.0)
    for ranked in recs.values():
        for rank, item in enumerate(ranked[:k], start=1):
            for g, members in groups.items():
                if item in members:
                    exposure[g] += 1 / math.log2(1 + rank)
    pairs = {g: float(len(recs) * len(members)) for g, members in groups.items()}
    return _spread(exposure, pairs)
