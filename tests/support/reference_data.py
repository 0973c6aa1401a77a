"""Random small datasets and receval's numbers on them, for the tests against the naive
reference.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import reference
from hypothesis import strategies as st

import receval_cli

TOL = 1e-12


CONVENTION_CHOICES: dict[str, list[Any]] = {
    "preset": [
        None,
        "trec_eval",
        "pytrec_eval",
        "ranx",
        "replay",
        "jurity",
        "recommenders",
        "rectools",
    ],  # keys beside win
    "max_depth": [None, None, 1, 2, 3],
    # the reference's metrics all read relevance: either value must give their numbers
    "prediction_only_users": ["skip", "evaluate"],
    "relevance_threshold": [-1.0, 0.0, 0.5, 1.0, 2.0, 3.0],
    "tie_break": [
        "item_desc",
        "item_asc",
        "item_text_desc",
        "item_text_asc",
        "input_order",
        "expected",
    ],
    "users_without_recommendations": ["zero", "skip"],
    "users_without_relevant": ["zero", "skip"],
    "precision_denominator": ["k", "list_length"],
    "ap_denominator": ["relevant", "min_k_relevant", "hits", "k"],
    "ideal_dcg": ["at_k", "all_relevant", "k_positions"],
    "gain": ["linear", "exponential", "binary"],
    "gain_below_threshold": ["grade", "zero"],
    "fractional_grades": ["keep", "truncate"],
    "discount": ["log2", "jarvelin"],
    "score_precision": ["float64", "float32"],
    "duplicates": ["error", "first", "max_score"],
    "truth_duplicates": ["error", "first", "max"],
}


BETAS = ["0.5", "1", "2.0", "3"]


def param_choices(metric: str, param: str) -> list[str]:
    """The values an explicit parameter may take (the convention gives it otherwise)."""
    convention = reference.PARAMS[metric][param]
    assert convention is not None
    return list(CONVENTION_CHOICES[convention])


INT_ITEMS = list(range(-3, 13))


STR_ITEMS = ["a", "b", "B", "Z", "9", "10", "i1", "i10", "i2", "é", "a b", ""]


INT_USERS = [0, 1, 2, 7, 10, -4]


STR_USERS = ["u1", "u2", "U3", "10", "9", "ü"]


# 0.1 and 0.1 + 1e-9 differ in float64 and are equal in float32
SCORES = [1.0, 0.5, 0.25, 0.0, -0.0, -1.5, 0.75, 0.1, 0.1 + 1e-9]


RANKS = [1, 2, 2, 3, 4, 5, 7]


GRADES = [-1.0, 0.0, 0.5, 1.0, 1.0, 2.0, 3.0]


# Conventions of the rating metrics only (tests/metrics/test_rating.py): no ranking metric reads
# them.
RATING_CONVENTIONS = {
    "unrated",
    "default_rating",
    "unpredicted",
    "default_prediction",
    "prediction_threshold",  # set metrics only: tests/metrics/test_classification.py
}


def canonical(name: str, k: int | None, params: dict[str, str]) -> str:
    text = name if k is None else f"{name}@{k}"
    if params:
        text += "(" + ",".join(f"{p}={params[p]}" for p in sorted(params)) + ")"
    return text


@st.composite
def metric_specs(draw: st.DrawFn) -> list[str]:
    """Every metric at 1-3 cutoffs, maybe the whole list, plain and with explicit params."""
    ks: list[int | None] = sorted(
        draw(st.sets(st.sampled_from([1, 2, 3, 5, 10]), min_size=1, max_size=3))
    )
    whole = draw(st.booleans())
    if whole:
        ks.append(None)  # without it, lists are truncated at the largest cutoff
    specs: list[str] = []
    for name, params in reference.PARAMS.items():
        if name in reference.NO_CUTOFF:
            cutoffs: list[int | None] = [None] if whole else []
        else:
            cutoffs = ks
        for k in cutoffs:
            plain = {"beta": draw(st.sampled_from(BETAS))} if name == "fbeta" else {}
            specs.append(canonical(name, k, plain))
            explicit = dict(plain)
            for param in params:
                if param != "beta" and draw(st.booleans()):
                    explicit[param] = draw(st.sampled_from(param_choices(name, param)))
            if explicit != plain:
                specs.append(canonical(name, k, explicit))
    return list(dict.fromkeys(specs))


@st.composite
def datasets(draw: st.DrawFn) -> dict[str, Any]:
    conventions = {name: draw(st.sampled_from(vs)) for name, vs in CONVENTION_CHOICES.items()}
    layout = draw(st.sampled_from(["score", "rank"]))
    strings = draw(st.booleans())
    # A few items per dataset, so lists and ground truth overlap and duplicates happen.
    item_pool = draw(
        st.lists(
            st.sampled_from(STR_ITEMS if strings else INT_ITEMS),
            min_size=2,
            max_size=7,
            unique=True,
        )
    )
    user_pool = draw(
        st.lists(
            st.sampled_from(STR_USERS if strings else INT_USERS),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )
    items = st.sampled_from(item_pool)
    users = st.sampled_from(user_pool)
    values = st.sampled_from(SCORES if layout == "score" else RANKS)
    predictions = draw(st.lists(st.tuples(users, items, values), max_size=18))
    truth = draw(st.lists(st.tuples(users, items, st.sampled_from(GRADES)), max_size=14))
    # Often a user whose ground truth has nothing at or above the threshold.
    if len(user_pool) > 1 and draw(st.booleans()):
        low = user_pool[-1]
        below = [g for g in GRADES if g < conventions["relevance_threshold"]] or [-2.0]
        truth = [row for row in truth if row[0] != low]
        for item in draw(st.lists(items, min_size=1, max_size=3, unique=True)):
            truth.insert(
                draw(st.integers(0, len(truth))), (low, item, draw(st.sampled_from(below)))
            )
    # An anchor user in both files with a relevant item, so the data can be evaluated; no
    # other truth row shares its key, and it is never duplicated, so it always counts.
    anchor = (user_pool[0], draw(items))
    truth = [row for row in truth if row[:2] != anchor]
    grade = draw(st.sampled_from([3.0, 5.0]))
    truth.insert(draw(st.integers(0, len(truth))), (*anchor, grade))
    predictions.insert(
        draw(st.integers(0, len(predictions))), (anchor[0], draw(items), draw(values))
    )
    # Duplicate (user, item) rows only where a convention says which one counts; then
    # always at least one, with a different value, so the convention matters.
    for rows, key, value_pool in (
        (predictions, "duplicates", SCORES if layout == "score" else RANKS),
        (truth, "truth_duplicates", GRADES),
    ):
        if conventions[key] == "error":
            unique = {(u, i): (u, i, v) for u, i, v in reversed(rows)}
            rows[:] = list(unique.values())[::-1]
            continue
        candidates = [row for row in rows if rows is predictions or row[:2] != anchor]
        if candidates:
            user, item, value = draw(st.sampled_from(candidates))
            other = draw(st.sampled_from([v for v in value_pool if v != value]))
            rows.insert(draw(st.integers(0, len(rows))), (user, item, other))
    binary = draw(st.booleans())
    if binary:  # no relevance column: every listed item has grade 1
        truth = [(u, i, 1.0) for u, i, _g in truth]
        conventions["relevance_threshold"] = min(conventions["relevance_threshold"], 1.0)
    return {
        "conventions": conventions,
        "layout": layout,
        "strings": strings,
        "predictions": predictions,
        "truth": truth,
        "binary": binary,
        "metrics": draw(metric_specs()),
    }


def frames(data: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame]:
    ids = pl.String if data["strings"] else pl.Int64
    value = pl.Float64 if data["layout"] == "score" else pl.Int64
    predictions = pl.DataFrame(
        data["predictions"], schema={"u": ids, "i": ids, "v": value}, orient="row"
    )
    truth = pl.DataFrame(data["truth"], schema={"u": ids, "i": ids, "g": pl.Float64}, orient="row")
    if data["binary"]:
        truth = truth.drop("g")
    return predictions, truth


def divided_by_hits(data: dict[str, Any]) -> bool:
    """Whether a map spec divides by hits@k (tie_break expected refuses it)."""
    for text in data["metrics"]:
        name, _k, given = reference.parse_spec(text)
        by = given.get("denominator", data["conventions"]["ap_denominator"])
        if name == "map" and by == "hits":
            return True
    return False


def run_receval(data: dict[str, Any]) -> Any:
    predictions, truth = frames(data)
    truth_columns = {"user": "u", "item": "i"}
    if not data["binary"]:
        truth_columns["relevance"] = "g"
    return receval_cli.evaluate(
        predictions,
        truth,
        data["metrics"],
        conventions=data["conventions"],
        prediction_columns={"user": "u", "item": "i", data["layout"]: "v"},
        truth_columns=truth_columns,
    )


def assert_agrees(report: Any, expected: reference.ReferenceReport) -> None:
    assert set(report.metrics) == set(expected.metrics)
    rows = {row["user"]: row for row in report.per_user.iter_rows(named=True)}
    assert {user: row["status"] for user, row in rows.items()} == expected.status
    for user, state in expected.status.items():
        if state != "evaluated":
            continue
        for name, value in expected.per_user[user].items():
            got = rows[user][name]
            if value is None or got is None:  # not in the metric's mean: null on both sides
                assert got is value is None, (user, name, got, value)
                continue
            assert math.isclose(got, value, rel_tol=0, abs_tol=TOL), (user, name, got, value)
    for name, value in expected.metrics.items():
        got = report.metrics[name]
        assert math.isclose(got, value, rel_tol=0, abs_tol=TOL), (name, got, value)
    counts = list(expected.status.values())
    assert report.users["evaluated"] == counts.count("evaluated")
    assert report.users["only_in_predictions"] == counts.count("only_in_predictions")
    assert report.users["skipped"] == {
        "no_relevant": counts.count("no_relevant"),
        "no_recommendations": counts.count("no_recommendations"),
    }
