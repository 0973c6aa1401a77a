"""receval against the naive reference (tests/support/reference.py) on random small datasets.

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

import pytest
import reference
from hypothesis import given, settings
from reference_data import (
    CONVENTION_CHOICES,
    RATING_CONVENTIONS,
    assert_agrees,
    canonical,
    datasets,
    divided_by_hits,
    param_choices,
    run_receval,
)

from receval_cli.config.conventions import Conventions
from receval_cli.config.presets import PRESETS
from receval_cli.errors import ConfigError, InputError


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
