"""A naive, independent reference implementation of every receval metric and convention.

Plain Python (lists, dicts, loops), written from the definitions in the docs, not from the
polars code, so the property tests can compare the two on random data. Speed is no concern.

Inputs are rows in file order:

    predictions  [(user, item, value), ...]   value is a score (higher is better) or a rank
                                               (lower is better), see `layout`
    truth        [(user, item, grade), ...]

Definitions (for one user; positions i are 1-based):

    ranked list   items by score descending (rank ascending); equal values ordered by the
                  tie_break: item_desc / item_asc (ids compared in their own type),
                  item_text_desc / item_text_asc (ids compared as text: str(id), so 9
                  after 10 ascending) or input_order (file order); or expected: each
                  metric is the mean of its values over every order of the tied items
                  (every permutation of each run of equal values, enumerated)
    R             truth items with grade >= relevance_threshold
    hits@k        items of R among the first k of the list (k = None: the whole list)
    gain(g)       0 for a missing or negative grade; linear: g; exponential: 2^g - 1
    discount(i)   log2: 1/log2(i + 1); jarvelin: 1 for i <= 2, else 1/log2(i)
    x / 0         0
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_CONVENTIONS: dict[str, Any] = {
    "preset": None,
    "relevance_threshold": 1.0,
    "tie_break": "item_desc",
    "users_without_recommendations": "zero",
    "users_without_relevant": "skip",
    "prediction_only_users": "skip",
    "precision_denominator": "k",
    "ap_denominator": "min_k_relevant",
    "ideal_dcg": "at_k",
    "gain": "linear",
    "gain_below_threshold": "grade",
    "fractional_grades": "keep",
    "discount": "log2",
    "score_precision": "float64",
    "duplicates": "error",
    "truth_duplicates": "error",
    "max_depth": None,
    "unrated": "ignore",
    "default_rating": None,
    "unpredicted": "error",
    "default_prediction": None,
    "prediction_threshold": None,
}

# metric name -> {parameter name: the convention that gives its default}
PARAMS: dict[str, dict[str, str | None]] = {
    "precision": {"denominator": "precision_denominator"},
    "recall": {},
    "f1": {"denominator": "precision_denominator"},
    "fbeta": {"denominator": "precision_denominator", "beta": None},
    "hit_rate": {},
    "mrr": {},
    "map": {"denominator": "ap_denominator"},
    "r_precision": {},
    "cg": {"gain": "gain", "below_threshold": "gain_below_threshold"},
    "dcg": {"gain": "gain", "below_threshold": "gain_below_threshold", "discount": "discount"},
    "idcg": {
        "gain": "gain",
        "below_threshold": "gain_below_threshold",
        "discount": "discount",
        "ideal": "ideal_dcg",
    },
    "ndcg": {
        "gain": "gain",
        "below_threshold": "gain_below_threshold",
        "discount": "discount",
        "ideal": "ideal_dcg",
    },
    "num_ret": {},
    "num_rel": {},
    "num_rel_ret": {},
}
# Every metric also takes the two user policies as parameters.
USER_PARAMS = {
    "users_without_recommendations": "users_without_recommendations",
    "users_without_relevant": "users_without_relevant",
}
for _params in PARAMS.values():
    _params.update(USER_PARAMS)
SUMMED = {"num_ret", "num_rel", "num_rel_ret"}  # reported as sums over users, not means
NO_CUTOFF = {"r_precision", *SUMMED}
UPPER_BOUND_ONE = set(PARAMS) - {"cg", "dcg", "idcg", *SUMMED}


class ReferenceError(ValueError):
    """The data cannot be evaluated (receval raises InputError in the same cases)."""


@dataclass
class ReferenceReport:
    metrics: dict[str, float]
    status: dict[Any, str]
    # None where the user is not in that metric's mean
    per_user: dict[Any, dict[str, float | None]] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------
# metric specs: name[@k][(param=value,...)]


def parse_spec(text: str) -> tuple[str, int | None, dict[str, Any]]:
    """A small parser of its own; values are numbers when they read as numbers."""
    match = re.fullmatch(r"(\w+)(?:@(\w+))?(?:\((.*)\))?", text.strip())
    if match is None:
        raise ValueError(f"bad spec {text!r}")
    name, raw_k, raw_params = match.groups()
    k = None if raw_k in (None, "all") else int(raw_k)
    params: dict[str, Any] = {}
    if raw_params:
        for part in raw_params.split(","):
            key, value = part.split("=")
            try:
                params[key.strip()] = float(value)
            except ValueError:
                params[key.strip()] = value.strip()
    if name not in PARAMS:
        raise ValueError(f"unknown metric {name!r}")
    return name, k, params


# ---------------------------------------------------------------------------------------
# building blocks


def gain(grade: float | None, kind: str, threshold: float, below: str = "grade") -> float:
    """`below`: "zero" gives no gain to a grade under the threshold (gain_below_threshold)."""
    if kind == "binary":
        return 1.0 if grade is not None and grade >= threshold else 0.0
    if grade is None or grade <= 0:
        return 0.0
    if below == "zero" and grade < threshold:
        return 0.0
    if kind == "linear":
        return float(grade)
    return 2.0**grade - 1.0


def discount(position: int, kind: str) -> float:
    if kind == "log2":
        return 1.0 / math.log2(position + 1)
    if position <= 2:
        return 1.0
    return 1.0 / math.log2(position)


def divide(numerator: float, denominator: float) -> float:
    if denominator == 0:
        return 0.0
    return numerator / denominator


def top(ranked: list[Any], k: int | None) -> list[Any]:
    if k is None:
        return list(ranked)
    return ranked[:k]


def rank_list(entries: list[tuple[Any, float, int]], layout: str, tie_break: str) -> list[Any]:
    """Order (item, value, row) entries: best value first, then the tie break."""

    def compare(a: tuple[Any, float, int], b: tuple[Any, float, int]) -> int:
        item_a, value_a, row_a = a
        item_b, value_b, row_b = b
        if value_a != value_b:
            a_first = value_a > value_b if layout == "score" else value_a < value_b
            return -1 if a_first else 1
        if tie_break == "input_order":
            return -1 if row_a < row_b else (1 if row_a > row_b else 0)
        if item_a == item_b:
            return 0
        if tie_break.startswith("item_text_"):
            item_a, item_b = str(item_a), str(item_b)
        a_first = item_a > item_b if tie_break.endswith("_desc") else item_a < item_b
        return -1 if a_first else 1

    ordered = sorted(entries, key=functools.cmp_to_key(compare))
    return [entry[0] for entry in ordered]


def every_order(entries: list[tuple[Any, float, int]], layout: str) -> list[list[Any]]:
    """Every order of a user's list among its tied items: best value first, each run of
    equal values in each of its permutations."""
    ordered = sorted(entries, key=lambda e: -e[1] if layout == "score" else e[1])
    runs = [[e[0] for e in run] for _, run in itertools.groupby(ordered, key=lambda e: e[1])]
    return [
        [item for part in parts for item in part]
        for parts in itertools.product(*(itertools.permutations(run) for run in runs))
    ]


def dedupe_predictions(
    rows: Sequence[tuple[Any, Any, float]], layout: str, policy: str
) -> dict[Any, list[tuple[Any, float, int]]]:
    """user -> [(item, value, row)], one entry per item, following `duplicates`."""
    kept: dict[tuple[Any, Any], tuple[float, int]] = {}
    for row, (user, item, value) in enumerate(rows):
        key = (user, item)
        if key not in kept:
            kept[key] = (value, row)
            continue
        if policy == "error":
            raise ReferenceError(f"duplicate prediction {key}")
        if policy == "max_score":
            old_value, _old_row = kept[key]
            better = value > old_value if layout == "score" else value < old_value
            if better:
                kept[key] = (value, row)
        # policy "first": keep what is there (the earlier row)
    lists: dict[Any, list[tuple[Any, float, int]]] = {}
    for (user, item), (value, row) in kept.items():
        lists.setdefault(user, []).append((item, value, row))
    return lists


def dedupe_truth(
    rows: Sequence[tuple[Any, Any, float]], policy: str
) -> dict[Any, dict[Any, float]]:
    """user -> {item: grade}, following `truth_duplicates`."""
    grades: dict[Any, dict[Any, float]] = {}
    for user, item, grade in rows:
        items = grades.setdefault(user, {})
        if item not in items:
            items[item] = grade
        elif policy == "error":
            raise ReferenceError(f"duplicate truth row {(user, item)}")
        elif policy == "max":
            items[item] = max(items[item], grade)
    return grades


# ---------------------------------------------------------------------------------------
# one metric for one user


def user_metric(
    name: str,
    k: int | None,
    params: dict[str, Any],
    ranked: list[Any],
    grades: dict[Any, float],
    threshold: float,
) -> float:
    relevant = {item for item, grade in grades.items() if grade >= threshold}
    n_rel = len(relevant)
    shown = top(ranked, k)
    hits = sum(1 for item in shown if item in relevant)

    def precision_value() -> float:
        if params["denominator"] == "k" and k is not None:
            return divide(hits, k)
        return divide(hits, len(shown))

    if name == "precision":
        return precision_value()
    if name == "recall":
        return divide(hits, n_rel)
    if name in ("f1", "fbeta"):
        beta = 1.0 if name == "f1" else float(params["beta"])
        p, r = precision_value(), divide(hits, n_rel)
        return divide((1 + beta * beta) * p * r, beta * beta * p + r)
    if name == "hit_rate":
        return 1.0 if hits > 0 else 0.0
    if name == "mrr":
        for position, item in enumerate(shown, start=1):
            if item in relevant:
                return 1.0 / position
        return 0.0
    if name == "map":
        total, found = 0.0, 0
        for position, item in enumerate(shown, start=1):
            if item in relevant:
                found += 1
                total += found / position
        denominator = params["denominator"]
        if denominator == "relevant":
            return divide(total, n_rel)
        if denominator == "hits":
            return divide(total, hits)
        if denominator == "k":
            return divide(total, len(shown) if k is None else k)
        return divide(total, n_rel if k is None else min(k, n_rel))
    if name == "r_precision":
        return divide(sum(1 for item in ranked[:n_rel] if item in relevant), n_rel)
    if name == "num_ret":
        return float(len(ranked))
    if name == "num_rel":
        return float(n_rel)
    if name == "num_rel_ret":
        return float(sum(1 for item in ranked if item in relevant))

    gain_kind, below = params["gain"], params["below_threshold"]
    if name == "cg":
        return sum(gain(grades.get(item), gain_kind, threshold, below) for item in shown)
    discount_kind = params["discount"]
    dcg = 0.0
    for position, item in enumerate(shown, start=1):
        dcg += gain(grades.get(item), gain_kind, threshold, below) * discount(
            position, discount_kind
        )
    if name == "dcg":
        return dcg
    # The ideal list: every ground-truth item, best grade first.
    ideal = sorted(grades.values(), reverse=True)
    if params["ideal"] == "at_k" and k is not None:
        ideal = ideal[:k]
    idcg = 0.0
    for position, grade in enumerate(ideal, start=1):
        idcg += gain(grade, gain_kind, threshold, below) * discount(position, discount_kind)
    if params["ideal"] == "k_positions":  # k positions, each with the best-graded item
        best = max((gain(g, gain_kind, threshold, below) for g in grades.values()), default=0.0)
        positions = len(ranked) if k is None else k
        idcg = best * sum(discount(i, discount_kind) for i in range(1, positions + 1))
    if name == "idcg":
        return idcg
    if name == "ndcg":
        return divide(dcg, idcg)
    raise ValueError(name)


# ---------------------------------------------------------------------------------------
# the whole evaluation


def evaluate(
    predictions: Sequence[tuple[Any, Any, float]],
    truth: Sequence[tuple[Any, Any, float]],
    metrics: Sequence[str],
    conventions: dict[str, Any] | None = None,
    layout: str = "score",
) -> ReferenceReport:
    """Per-user values and means of `metrics` (spec strings; the keys of the result)."""
    conv = {**DEFAULT_CONVENTIONS, **(conventions or {})}
    if layout == "score" and conv["score_precision"] == "float32":
        # single precision, as C's float: pack and unpack through 4 bytes
        predictions = [
            (user, item, struct.unpack("f", struct.pack("f", score))[0])
            for user, item, score in predictions
        ]
    lists = dedupe_predictions(predictions, layout, conv["duplicates"])
    grades = dedupe_truth(truth, conv["truth_duplicates"])
    if conv["fractional_grades"] == "truncate":  # toward zero, as C's atol reads "2.5"
        grades = {u: {i: float(int(g)) for i, g in judged.items()} for u, judged in grades.items()}
    threshold = float(conv["relevance_threshold"])
    depth = conv["max_depth"]  # only the first max_depth items of a list count
    expected = conv["tie_break"] == "expected"
    orders = {
        user: every_order(entries, layout)
        if expected
        else [rank_list(entries, layout, conv["tie_break"])]
        for user, entries in lists.items()
    }
    orders = {user: [order[:depth] for order in found] for user, found in orders.items()}
    ranked = {user: found[0] for user, found in orders.items()}

    specs = []
    for text in metrics:
        name, k, given = parse_spec(text)
        params = {}
        for param, convention in PARAMS[name].items():
            if param in given:
                params[param] = given[param]
            elif convention is not None:
                params[param] = conv[convention]
            else:
                raise ValueError(f"{text}: parameter {param} is required")
        specs.append((text, name, k, params))

    status: dict[Any, str] = {}
    per_user: dict[Any, dict[str, float | None]] = {}
    n_relevant = {
        user: sum(1 for grade in judged.values() if grade >= threshold)
        for user, judged in grades.items()
    }
    for user in set(ranked) | set(grades):
        if user not in grades:
            status[user] = "only_in_predictions"
            continue
        user_list = ranked.get(user, [])
        n_rel = sum(1 for grade in grades[user].values() if grade >= threshold)
        if n_rel == 0 and conv["users_without_relevant"] == "skip":
            status[user] = "no_relevant"
        elif not user_list and conv["users_without_recommendations"] == "skip":
            status[user] = "no_recommendations"
        else:
            status[user] = "evaluated"
        found = orders.get(user, [[]])
        per_user[user] = {
            text: math.fsum(
                user_metric(name, k, params, order, grades[user], threshold) for order in found
            )
            / len(found)
            for text, name, k, params in specs
        }

    if not set(ranked) & set(grades):
        raise ReferenceError("no user is in both the predictions and the ground truth")
    evaluated = [user for user, state in status.items() if state == "evaluated"]
    if not evaluated:
        raise ReferenceError("no user can be evaluated")
    means = {}
    for text, name, _k, params in specs:
        users = [
            user
            for user in grades
            if not (params["users_without_relevant"] == "skip" and n_relevant[user] == 0)
            and not (params["users_without_recommendations"] == "skip" and not ranked.get(user))
        ]
        if not users:
            raise ReferenceError(f"no user is left to average {text} over")
        total = math.fsum(per_user[user][text] for user in users)
        means[text] = total if name in SUMMED else total / len(users)
        for user in set(grades) - set(users):  # not in this metric's mean: no value
            per_user[user][text] = None
    return ReferenceReport(means, status, per_user)
