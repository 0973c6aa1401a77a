"""receval against the naive reference (tests/reference.py) on random small datasets.

Hypothesis draws the ids (integers or strings), graded relevance (negative, 0, fractional),
scores or ranks with many ties, short lists, users on one side only, duplicate rows when
the duplicate conventions allow them, every convention value, and every metric at a few
cutoffs (with and without the whole-list variants, with and without explicit parameters).
Every per-user value, every status and every mean must agree to 1e-12.
"""

from __future__ import annotations

import math
import random
from typing import Any

import polars as pl
import pytest
import reference
from hypothesis import given, settings
from hypothesis import strategies as st

import receval_cli
from receval_cli.config.conventions import Conventions
from receval_cli.config.presets import PRESETS
from receval_cli.errors import ConfigError, InputError

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


# Conventions of the rating metrics only (tests/test_rating.py): no ranking metric reads them.
RATING_CONVENTIONS = {
    "unrated",
    "default_rating",
    "unpredicted",
    "default_prediction",
    "prediction_threshold",  # set metrics only: tests/test_classification.py
}


def test_conventions_cover_every_setting() -> None:
    """The choices above list every convention and every one of its values."""
    assert set(CONVENTION_CHOICES) == set(Conventions.model_fields) - RATING_CONVENTIONS
    assert set(CONVENTION_CHOICES["preset"]) == {None, *PRESETS}
    for name, values in CONVENTION_CHOICES.items():
        annotation = Conventions.model_fields[name].annotation
        if annotation is float or name in ("preset", "max_depth"):
            continue
        assert set(values) == set(annotation.__args__), name  # type: ignore[union-attr]
    assert set(reference.DEFAULT_CONVENTIONS) == set(Conventions.model_fields)
    assert Conventions().model_dump() == reference.DEFAULT_CONVENTIONS


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


@pytest.mark.slow
@settings(max_examples=300)
@given(datasets())
def test_agrees_with_reference(data: dict[str, Any]) -> None:
    if data["conventions"]["tie_break"] == "expected" and divided_by_hits(data):
        with pytest.raises(ConfigError, match="tie_break"):  # no closed form: refused
            run_receval(data)
        return
    try:
        expected = reference.evaluate(
            data["predictions"], data["truth"], data["metrics"], data["conventions"], data["layout"]
        )
    except reference.ReferenceError:
        with pytest.raises(InputError):
            run_receval(data)
        return
    assert_agrees(run_receval(data), expected)


# ---------------------------------------------------------------------------------------
# the reference itself, on the documented examples


def test_reference_matches_hand_computed_values() -> None:
    """Anchor the reference to the worked examples of the metric docs."""
    log2 = math.log2

    def one(grades: list[float], metric: str, extra: dict[str, float] | None = None) -> float:
        items = [f"i{j}" for j in range(len(grades))]
        predictions = [("u", item, float(-j)) for j, item in enumerate(items)]
        truth = [("u", i, g) for i, g in zip(items, grades, strict=True) if g is not None]
        truth += [("u", item, grade) for item, grade in (extra or {}).items()]
        return reference.evaluate(predictions, truth, [metric]).per_user["u"][metric]

    # AP: relevant at ranks 1, 4 and 5 of 5, |R| = 3.
    ap = one([1, 0, 0, 1, 1], "map@5(denominator=relevant)")
    assert ap == pytest.approx((1 / 1 + 2 / 4 + 3 / 5) / 3)
    assert ap == pytest.approx(0.7)
    # Grades (3, 2, 2, 0), linear gain, log2 discount: DCG = 3 + 2/log2(3) + 2/2.
    assert one([3, 2, 2, 0], "dcg@4") == pytest.approx(3 + 2 / log2(3) + 1)
    assert one([2, 0, 3, 2], "cg@4") == 7
    assert one([2, 0, 3, 2], "ndcg@4") == pytest.approx(0.83, abs=0.005)
    assert one([2, 0, 3, 2], "dcg@4(discount=jarvelin)") == pytest.approx(2 + 3 / log2(3) + 1)
    assert one([2, 0, 3, 2], "dcg@2(gain=exponential)") == pytest.approx(3)
    assert one([-2, 3], "cg@2(gain=exponential)") == 7  # a negative grade gives no gain
    # R-precision: 4 relevant, 2 of them in the top 4.
    assert one([1, 0, 1, 0, 1], "r_precision", {"x": 1}) == 0.5
    assert one([0, 0, 1], "mrr") == pytest.approx(1 / 3)
    assert one([0, 0, 1], "mrr@2") == 0
    assert one([1, 0], "precision@5") == pytest.approx(1 / 5)
    assert one([1, 0], "precision@5(denominator=list_length)") == pytest.approx(1 / 2)
    # Ties: item_desc puts "b" before "a"; input_order keeps the file order.
    rows = [("u", "a", 0.5), ("u", "b", 0.5)]
    truth = [("u", "a", 1.0)]
    for tie_break, rr in (("item_desc", 0.5), ("item_asc", 1.0), ("input_order", 1.0)):
        report = reference.evaluate(rows, truth, ["mrr"], {"tie_break": tie_break})
        assert report.metrics["mrr"] == rr, tie_break
    # Integers compare as integers: 10 after 9 in item_asc order.
    report = reference.evaluate([(1, 10, 0.5), (1, 9, 0.5)], [(1, 9, 1)], ["mrr"])
    assert report.metrics["mrr"] == 0.5  # item_desc: 10, then 9


# ---------------------------------------------------------------------------------------
# data that cannot be evaluated


@pytest.mark.parametrize(
    ("predictions", "truth", "conventions"),
    [
        pytest.param([(1, 1, 0.5)], [(2, 1, 1.0)], {}, id="no user in both files"),
        pytest.param(
            [(1, 1, 0.5), (1, 2, 0.4)],
            [(1, 1, 0.0), (1, 2, 0.5)],
            {},
            id="no user with a relevant item",
        ),
        pytest.param(
            [(1, 1, 0.5)],
            [(1, 1, 0.0), (2, 1, 1.0)],
            {"users_without_recommendations": "skip"},
            id="the user with a relevant item has no recommendation",
        ),
    ],
)
def test_unevaluable_data_raises_input_error(
    predictions: list[tuple[int, int, float]],
    truth: list[tuple[int, int, float]],
    conventions: dict[str, str],
) -> None:
    data = {
        "predictions": predictions,
        "truth": truth,
        "conventions": conventions,
        "layout": "score",
        "strings": False,
        "binary": False,
        "metrics": ["ndcg@5", "precision"],
    }
    with pytest.raises(reference.ReferenceError):
        reference.evaluate(predictions, truth, data["metrics"], conventions)
    with pytest.raises(InputError):
        run_receval(data)


def test_the_same_data_evaluates_once_users_count_as_zero() -> None:
    """The control for the case above: users_without_recommendations=zero keeps user 2."""
    data = {
        "predictions": [(1, 1, 0.5)],
        "truth": [(1, 1, 0.0), (2, 1, 1.0)],
        "conventions": {"users_without_relevant": "skip"},
        "layout": "score",
        "strings": False,
        "binary": False,
        "metrics": ["ndcg@5", "recall@5", "idcg@5"],
    }
    report = run_receval(data)
    assert report.metrics == {"ndcg@5": 0.0, "recall@5": 0.0, "idcg@5": 1.0}
    expected = reference.evaluate(data["predictions"], data["truth"], data["metrics"])
    assert_agrees(report, expected)


# ---------------------------------------------------------------------------------------
# longer lists (seeded)


@pytest.mark.parametrize("seed", range(6))
def test_agrees_with_reference_on_longer_lists(seed: int) -> None:
    """30 users, lists up to 25 long, cutoffs up to 20: deeper than hypothesis goes."""
    rng = random.Random(seed)
    strings = seed % 2 == 0
    items = [f"i{j}" if strings else j for j in range(40)]
    predictions, truth = [], []
    for u in range(30):
        user = f"u{u}" if strings else u
        if rng.random() < 0.9:
            for item in rng.sample(items, rng.randint(1, 25)):
                predictions.append((user, item, round(rng.random(), 1)))
        if rng.random() < 0.9:
            for item in rng.sample(items, rng.randint(1, 15)):
                truth.append((user, item, float(rng.choice([-1, 0, 0, 1, 1, 2, 3, 4]))))
    # tie_break expected: the reference enumerates every order, too many at these lengths
    # (hypothesis's short lists check it)
    choices = {**CONVENTION_CHOICES, "tie_break": CONVENTION_CHOICES["tie_break"][:-1]}
    conventions = {name: rng.choice(values) for name, values in choices.items()}
    conventions |= {"duplicates": "error", "truth_duplicates": "error"}
    conventions["relevance_threshold"] = rng.choice([0.0, 1.0, 2.0])
    metrics = []
    for name, params in reference.PARAMS.items():
        base = {"beta": "2.0"} if name == "fbeta" else {}
        cutoffs = [None] if name in reference.NO_CUTOFF else [1, 5, 10, 20, None]
        metrics += [canonical(name, k, base) for k in cutoffs]
        for param in params:
            if param != "beta":
                k = None if name in reference.NO_CUTOFF else 10
                for value in param_choices(name, param):
                    metrics.append(canonical(name, k, {**base, param: value}))
    data = {
        "predictions": predictions,
        "truth": truth,
        "conventions": conventions,
        "layout": "score",
        "strings": strings,
        "binary": False,
        "metrics": list(dict.fromkeys(metrics)),
    }
    expected = reference.evaluate(predictions, truth, data["metrics"], conventions)
    assert_agrees(run_receval(data), expected)
