"""A naive, independent implementation of the beyond-accuracy metrics: plain Python loops
over users, pairs and items, written from the definitions in docs/metrics.md (not from
receval's code). Slow and obvious on purpose; the tests compare receval with it.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations
from typing import Any

Lists = dict[Any, list[Any]]


def top(lists: Lists, k: int) -> Lists:
    return {u: items[:k] for u, items in lists.items()}


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def catalog_coverage(lists: Lists, k: int, catalog: set[Any]) -> float:
    shown = {i for items in top(lists, k).values() for i in items}
    return len(shown & catalog) / len(catalog)


def inter_list_diversity(lists: Lists, k: int) -> float:
    sets = [set(items) for items in top(lists, k).values() if items]
    distances = [1 - len(a & b) / math.sqrt(len(a) * len(b)) for a, b in combinations(sets, 2)]
    return mean(distances)


def exposure(lists: Lists, k: int) -> Counter[Any]:
    return Counter(i for items in top(lists, k).values() for i in items)


def gini(lists: Lists, k: int, catalog: set[Any]) -> float:
    counts = exposure(lists, k)
    x = sorted(counts.get(i, 0) for i in catalog)
    n = len(x)
    # the mean absolute difference form: sum_ij |x_i - x_j| / (2 n^2 mean)
    total = sum(abs(a - b) for a in x for b in x)
    return total / (2 * n * n * (sum(x) / n))


def entropy(lists: Lists, k: int) -> float:
    counts = exposure(lists, k)
    total = sum(counts.values())
    return -sum(c / total * math.log2(c / total) for c in counts.values())


def popularity(log: list[tuple[Any, Any]]) -> tuple[Counter[Any], dict[Any, int]]:
    rows = Counter(item for _, item in log)
    users: dict[Any, set[Any]] = {}
    for user, item in log:
        users.setdefault(item, set()).add(user)
    return rows, {item: len(holders) for item, holders in users.items()}


def novelty_user(
    items: list[Any],
    log: list[tuple[Any, Any]],
    user: Any,
    share: str = "interactions",
    only_new: bool = False,
    unseen: str = "skip",
) -> float:
    rows, holders = popularity(log)
    log_users = len({u for u, _ in log})
    known = {i for u, i in log if u == user}
    terms = []
    for item in items:
        if item not in rows:
            if unseen == "zero":
                terms.append(0.0)
            continue
        p = rows[item] / len(log) if share == "interactions" else holders[item] / log_users
        terms.append(0.0 if only_new and item in known else -math.log2(p))
    return sum(terms) / len(terms) if terms else 0.0


def arp_user(items: list[Any], log: list[tuple[Any, Any]]) -> float:
    rows, _ = popularity(log)
    return sum(rows.get(i, 0) for i in items) / len(items) if items else 0.0


def head_items(log: list[tuple[Any, Any]], head: float) -> set[Any]:
    rows, _ = popularity(log)
    ordered = sorted(rows.values(), reverse=True)
    cut = ordered[max(math.ceil(round(head * len(ordered), 9)), 1) - 1]
    return {i for i, c in rows.items() if c >= cut}


def long_tail_user(items: list[Any], log: list[tuple[Any, Any]], head: float) -> float:
    heads = head_items(log, head)
    return sum(i not in heads for i in items) / len(items) if items else 0.0


def popular_baseline(log: list[tuple[Any, Any]], k: int) -> list[Any]:
    """The k most popular items, ties by item id descending (tie_break item_desc)."""
    rows, _ = popularity(log)
    return sorted(rows, key=lambda i: (-rows[i], _desc_key(i)))[:k]


def _desc_key(item: Any) -> Any:
    return -item if isinstance(item, int) else tuple(-ord(c) for c in item)


def unexpectedness_user(items: list[Any], baseline: list[Any]) -> float:
    return sum(i not in baseline for i in items) / len(items) if items else 0.0


def serendipity_user(items: list[Any], baseline: list[Any], relevant: set[Any], k: int) -> float:
    return sum(i in relevant and i not in baseline for i in items) / k


def cosine(a: list[float], b: list[float]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    if na == 0 or nb == 0:
        return 0.0
    return sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb)


def jaccard(a: set[Any], b: set[Any]) -> float:
    return 1.0 if not a and not b else len(a & b) / len(a | b)


def intra_list_diversity_user(items: list[Any], feature: str, features: dict[Any, Any]) -> float:
    pairs = list(combinations(items, 2))
    if not pairs:
        return math.nan
    if feature == "category":
        similar = [float(features[a] == features[b]) for a, b in pairs]
    elif feature == "tags":
        similar = [jaccard(set(features[a]), set(features[b])) for a, b in pairs]
    else:
        similar = [cosine(features[a], features[b]) for a, b in pairs]
    return 1 - sum(similar) / len(pairs)
