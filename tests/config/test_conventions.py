"""Hand-computed cases, one table row per convention value.

User A's list is p, x, q, y (scores 0.9 .. 0.6); its ground truth grades x=2, y=1, z=3
and w=0, so |R| = 3 (x, y, z) and the hits are at ranks 2 and 4.
User B is in the ground truth (s=1) with no recommendation.
User C is recommended t, and its only ground-truth item t has grade 0 (no relevant item).
User D has recommendations but no ground truth (never evaluated).
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest

import receval_cli

PREDICTIONS = pl.DataFrame(
    {
        "user": ["A", "A", "A", "A", "C", "D"],
        "item": ["p", "x", "q", "y", "t", "x"],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.5],
    }
)
TRUTH = pl.DataFrame(
    {
        "user": ["A", "A", "A", "A", "B", "C"],
        "item": ["x", "y", "z", "w", "s", "t"],
        "relevance": [2.0, 1.0, 3.0, 0.0, 1.0, 0.0],
    }
)
L2 = math.log2
# Values of user A under the default conventions (hand-computed).
A_DCG2 = 2 / L2(3)
A_IDCG2 = 3 + 2 / L2(3)
A_DCG5 = 2 / L2(3) + 1 / L2(5)
A_IDCG5 = 3 + 2 / L2(3) + 1 / L2(4)


def per_user(metric: str, conventions: dict[str, Any] | None = None) -> dict[str, float]:
    report = receval_cli.evaluate(PREDICTIONS, TRUTH, [metric], conventions=conventions)
    evaluated = report.per_user.filter(pl.col("status") == "evaluated")
    return dict(zip(evaluated["user"], evaluated[metric], strict=True))


@pytest.mark.parametrize(
    ("metric", "conventions", "expected_a"),
    [
        ("precision@2", {}, 1 / 2),
        ("precision@5", {"precision_denominator": "k"}, 2 / 5),
        ("precision@5", {"precision_denominator": "list_length"}, 2 / 4),
        ("precision@5(denominator=list_length)", {}, 2 / 4),
        ("precision", {}, 2 / 4),
        ("recall@2", {}, 1 / 3),
        ("recall@5", {}, 2 / 3),
        ("f1@5", {}, 2 * (2 / 5) * (2 / 3) / (2 / 5 + 2 / 3)),
        ("fbeta@5(beta=2)", {}, 5 * (2 / 5) * (2 / 3) / (4 * 2 / 5 + 2 / 3)),
        ("hit_rate@1", {}, 0.0),
        ("hit_rate@2", {}, 1.0),
        ("mrr@1", {}, 0.0),
        ("mrr", {}, 1 / 2),
        # AP: precisions at the hits are P@2 = 1/2 and P@4 = 2/4.
        ("map@2", {"ap_denominator": "relevant"}, (1 / 2) / 3),
        ("map@2", {"ap_denominator": "min_k_relevant"}, (1 / 2) / 2),
        ("map@2", {"ap_denominator": "hits"}, (1 / 2) / 1),
        ("map@5", {"ap_denominator": "relevant"}, (1 / 2 + 2 / 4) / 3),
        ("map@5", {"ap_denominator": "min_k_relevant"}, (1 / 2 + 2 / 4) / 3),
        ("map@5", {"ap_denominator": "hits"}, (1 / 2 + 2 / 4) / 2),
        ("map@2", {"ap_denominator": "k"}, (1 / 2) / 2),
        ("map@5", {"ap_denominator": "k"}, (1 / 2 + 2 / 4) / 5),
        ("map", {"ap_denominator": "k"}, (1 / 2 + 2 / 4) / 4),  # the list length
        ("r_precision", {}, 1 / 3),  # top 3 = p, x, q: one hit
        ("cg@2", {}, 0 + 2),
        ("cg@5(gain=exponential)", {}, 3 + 1),
        ("dcg@2", {}, A_DCG2),
        ("idcg@2", {}, A_IDCG2),
        ("idcg@2", {"ideal_dcg": "all_relevant"}, A_IDCG5),
        ("ndcg@2", {}, A_DCG2 / A_IDCG2),
        ("ndcg@2", {"ideal_dcg": "all_relevant"}, A_DCG2 / A_IDCG5),
        ("ndcg@5", {}, A_DCG5 / A_IDCG5),
        # k_positions: k copies of the best grade (z = 3); whole list: its 4 positions
        ("idcg@2", {"ideal_dcg": "k_positions"}, 3 * (1 + 1 / L2(3))),
        ("ndcg@2", {"ideal_dcg": "k_positions"}, A_DCG2 / (3 * (1 + 1 / L2(3)))),
        (
            "ndcg",
            {"ideal_dcg": "k_positions"},
            A_DCG5 / (3 * (1 + 1 / L2(3) + 1 / 2 + 1 / L2(5))),
        ),
        ("ndcg@2(gain=binary)", {"ideal_dcg": "k_positions"}, (1 / L2(3)) / (1 + 1 / L2(3))),
        ("ndcg@2", {"gain": "exponential"}, (3 / L2(3)) / (7 + 3 / L2(3))),
        ("ndcg@2(gain=exponential)", {"gain": "linear"}, (3 / L2(3)) / (7 + 3 / L2(3))),
        ("ndcg@2", {"discount": "jarvelin"}, 2 / (3 + 2)),
        ("ndcg@4", {"relevance_threshold": 2}, A_DCG5 / A_IDCG5),  # grades still count
        ("recall@5", {"relevance_threshold": 2}, 1 / 2),  # R = {x, z}
    ],
)
def test_user_a(metric: str, conventions: dict[str, Any], expected_a: float) -> None:
    assert per_user(metric, conventions)["A"] == pytest.approx(expected_a, abs=1e-12)


@pytest.mark.parametrize(
    ("conventions", "evaluated"),
    [
        ({}, {"A", "B"}),
        ({"users_without_recommendations": "skip"}, {"A"}),
        ({"users_without_relevant": "zero"}, {"A", "B", "C"}),
        (
            {"users_without_relevant": "zero", "users_without_recommendations": "skip"},
            {"A", "C"},
        ),
    ],
)
def test_which_users_enter_the_mean(conventions: dict[str, Any], evaluated: set[str]) -> None:
    report = receval_cli.evaluate(PREDICTIONS, TRUTH, ["recall@5"], conventions=conventions)
    assert set(per_user("recall@5", conventions)) == evaluated
    expected = (2 / 3) / len(evaluated)  # A has 2/3, every other evaluated user has 0
    assert report.metrics["recall@5"] == pytest.approx(expected)
    assert report.users["evaluated"] == len(evaluated)
    assert report.users["only_in_predictions"] == 1  # D


def test_user_counts_say_why_users_were_skipped() -> None:
    report = receval_cli.evaluate(PREDICTIONS, TRUTH, ["ndcg@5"])
    assert report.users == {
        "in_ground_truth": 3,
        "in_predictions": 3,
        "in_both": 2,
        "evaluated": 2,
        "counted_as_zero": {"no_recommendations": 1, "no_relevant": 0},
        "skipped": {"no_relevant": 1, "no_recommendations": 0},
        "only_in_predictions": 1,
    }


TIES = pl.DataFrame({"user": ["E", "E", "E"], "item": ["e2", "e1", "e3"], "score": [0.5, 0.5, 0.5]})
TIES_TRUTH = pl.DataFrame({"user": ["E"], "item": ["e1"]})


@pytest.mark.parametrize(
    ("tie_break", "rank_of_e1"),
    [("item_desc", 3), ("item_asc", 1), ("input_order", 2)],
)
def test_tie_break(tie_break: str, rank_of_e1: int) -> None:
    report = receval_cli.evaluate(TIES, TIES_TRUTH, ["mrr"], conventions={"tie_break": tie_break})
    assert report.metrics["mrr"] == pytest.approx(1 / rank_of_e1)


def test_tie_break_compares_integer_ids_as_numbers() -> None:
    predictions = pl.DataFrame({"user": [1, 1], "item": [9, 10], "score": [1.0, 1.0]})
    truth = pl.DataFrame({"user": [1], "item": [10]})
    report = receval_cli.evaluate(
        predictions, truth, ["mrr"], conventions={"tie_break": "item_desc"}
    )
    assert report.metrics["mrr"] == 1.0  # 10 > 9 numerically (as text "9" > "10")


def test_tie_break_applies_to_equal_ranks() -> None:
    predictions = pl.DataFrame({"user": ["E"] * 3, "item": ["b", "a", "c"], "rank": [1, 1, 2]})
    truth = pl.DataFrame({"user": ["E"], "item": ["a"]})
    asc = receval_cli.evaluate(
        predictions,
        truth,
        ["mrr"],
        conventions={"tie_break": "item_asc"},
        prediction_columns={"rank": "rank"},
    )
    desc = receval_cli.evaluate(predictions, truth, ["mrr"], prediction_columns={"rank": "rank"})
    assert (asc.metrics["mrr"], desc.metrics["mrr"]) == (1.0, 0.5)


DUPLICATED = pl.DataFrame({"user": ["U"] * 3, "item": ["a", "b", "a"], "score": [0.1, 0.5, 0.9]})
DUP_TRUTH = pl.DataFrame({"user": ["U"], "item": ["a"]})


@pytest.mark.parametrize(
    ("policy", "mrr"),
    [("first", 1 / 2), ("max_score", 1.0)],  # first keeps a at 0.1 (rank 2 after b)
)
def test_prediction_duplicates(policy: str, mrr: float) -> None:
    report = receval_cli.evaluate(
        DUPLICATED, DUP_TRUTH, ["mrr"], conventions={"duplicates": policy}
    )
    assert report.metrics["mrr"] == pytest.approx(mrr)


@pytest.mark.parametrize(("policy", "grade"), [("first", 1.0), ("max", 3.0)])
def test_truth_duplicates(policy: str, grade: float) -> None:
    predictions = pl.DataFrame({"user": ["U", "U"], "item": ["a", "b"], "score": [0.9, 0.1]})
    truth = pl.DataFrame(
        {"user": ["U", "U", "U"], "item": ["a", "a", "b"], "relevance": [1.0, 3.0, 2.0]}
    )
    report = receval_cli.evaluate(
        predictions, truth, ["dcg@1"], conventions={"truth_duplicates": policy}
    )
    assert report.metrics["dcg@1"] == grade


def test_a_preset_can_treat_users_differently_per_metric() -> None:
    # Jurity: precision averages over users with a recommendation, recall over all.
    report = receval_cli.evaluate(
        PREDICTIONS, TRUTH, ["precision@5", "recall@5"], conventions={"preset": "jurity"}
    )
    assert report.users["evaluated_per_metric"] == {"precision@5": 1}  # A only; recall: A, B
    assert report.metrics["precision@5"] == pytest.approx(2 / 4)  # list length 4
    assert report.metrics["recall@5"] == pytest.approx((2 / 3 + 0) / 2)


def test_a_convention_written_beside_the_preset_applies_to_every_metric() -> None:
    report = receval_cli.evaluate(
        PREDICTIONS,
        TRUTH,
        ["precision@5", "recall@5"],
        conventions={"preset": "jurity", "users_without_recommendations": "zero"},
    )
    assert "evaluated_per_metric" not in report.users
    assert report.metrics["precision@5"] == pytest.approx((2 / 4 + 0) / 2)
