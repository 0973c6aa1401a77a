"""Set classification metrics: the seed's example, thresholds, cutoffs, a naive reference."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from cli_helpers import assert_user_error, invoke, write, write_config
from hypothesis import given, settings
from hypothesis import strategies as st

import receval_cli
from receval_cli.errors import InputError

# seed 002: user1's rated items, actual / predicted rating (unrated ones left out, as the
# seed does); relevant: rating > 3.5
SEED = {
    "item1": (4, 2.3),
    "item2": (2, 3.6),
    "item3": (3, 3.4),
    "item5": (5, 4.5),
    "item7": (2, 4.9),
    "item10": (4, 4.3),
}
PREDICTIONS = pl.DataFrame(
    {"user": ["user1"] * 6, "item": list(SEED), "score": [p for _, p in SEED.values()]}
)
TRUTH = pl.DataFrame(
    {"user": ["user1"] * 6, "item": list(SEED), "relevance": [float(a) for a, _ in SEED.values()]}
)
SEED_CONVENTIONS = {"relevance_threshold": 3.5}
# the metrics test_agrees_with_a_naive_count compares with its naive count
# (tests/metrics/test_registry_coverage.py reads them)
NAIVE_COUNT_METRICS = (
    "set_precision(retrieve=threshold)",
    "set_recall(retrieve=threshold)",
    "set_f1(retrieve=threshold)",
    "set_fbeta(beta=2,retrieve=threshold)",
)


def test_seed_precision_and_recall_at_3() -> None:
    # retrieved @3: item7, item5, item10; relevant: item5, item10, item1
    metrics = ["set_precision@3", "set_recall@3", "set_f1@3"]
    report = receval_cli.evaluate(PREDICTIONS, TRUTH, metrics, conventions=SEED_CONVENTIONS)
    assert report.metrics == pytest.approx(
        {"set_precision@3": 2 / 3, "set_recall@3": 2 / 3, "set_f1@3": 2 / 3}
    )


def test_retrieved_by_a_prediction_threshold() -> None:
    # predicted >= 3.5: item2, item5, item7, item10; of them item5 and item10 are relevant
    conventions = {**SEED_CONVENTIONS, "prediction_threshold": 3.5}
    metrics = [
        "set_precision(retrieve=threshold)",
        "set_recall(retrieve=threshold)",
        "set_fbeta(beta=2,retrieve=threshold)",
        "set_precision@2(retrieve=threshold)",  # top 2 (item7, item5), both above 3.5
        "set_precision(retrieve=threshold,threshold=4.6)",  # only item7
    ]
    got = receval_cli.evaluate(PREDICTIONS, TRUTH, metrics, conventions=conventions).metrics
    p, r = 2 / 4, 2 / 3
    assert got == pytest.approx(
        {
            metrics[0]: p,
            metrics[1]: r,
            metrics[2]: 5 * p * r / (4 * p + r),
            metrics[3]: 1 / 2,
            metrics[4]: 0.0,
        }
    )


def test_threshold_without_a_value_is_a_config_error(tmp_path: Path) -> None:
    write(tmp_path / "p.csv", "user,item,score\nu,a,0.9\n")
    write(tmp_path / "t.csv", "user,item\nu,a\n")
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "p.csv"},
            "ground_truth": {"path": "t.csv"},
            "metrics": ["set_precision(retrieve=threshold)"],
        },
    )
    assert_user_error(invoke("run", config), "retrieve=threshold", "prediction_threshold")


def test_threshold_needs_scores() -> None:
    ranked = pl.DataFrame({"user": ["u"], "item": ["a"], "rank": [1]})
    with pytest.raises(InputError, match="needs scores"):
        receval_cli.evaluate(
            ranked,
            TRUTH,
            ["set_recall(retrieve=threshold,threshold=1)"],
            prediction_columns={"rank": "rank"},
        )


@settings(max_examples=50)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["u1", "u2", "u3"]),
            st.sampled_from(["a", "b", "c", "d", "e"]),
            st.sampled_from([0.1, 0.4, 0.5, 0.9]),
        ),
        min_size=1,
        max_size=15,
        unique_by=lambda row: (row[0], row[1]),
    ),
    st.lists(
        st.tuples(st.sampled_from(["u1", "u2", "u3"]), st.sampled_from(["a", "b", "c", "d"])),
        min_size=1,
        max_size=10,
        unique=True,
    ),
    st.sampled_from([0.0, 0.4, 0.5, 1.0]),
)
def test_agrees_with_a_naive_count(
    predictions: list[tuple[str, str, float]], truth: list[tuple[str, str]], threshold: float
) -> None:
    if not {u for u, _, _ in predictions} & {u for u, _ in truth}:
        return  # nothing to evaluate (receval raises InputError for it)
    metrics = list(NAIVE_COUNT_METRICS)
    report = receval_cli.evaluate(
        pl.DataFrame(predictions, schema=["user", "item", "score"], orient="row"),
        pl.DataFrame(truth, schema=["user", "item"], orient="row"),
        metrics,
        conventions={"prediction_threshold": threshold},
    )
    relevant = {}
    for user, item in truth:
        relevant.setdefault(user, set()).add(item)
    precisions, recalls, f1s, f2s = [], [], [], []
    for user, items in relevant.items():  # every ground-truth user (default conventions)
        retrieved = {i for u, i, s in predictions if u == user and s >= threshold}
        found = len(retrieved & items)
        p = found / len(retrieved) if retrieved else 0.0
        r = found / len(items)
        precisions.append(p)
        recalls.append(r)
        # F_beta = (1 + beta^2) P R / (beta^2 P + R), 0 when P + R = 0 (van Rijsbergen)
        f1s.append(2 * p * r / (p + r) if p + r else 0.0)
        f2s.append(5 * p * r / (4 * p + r) if p + r else 0.0)
    assert report.metrics[metrics[0]] == pytest.approx(sum(precisions) / len(precisions))
    assert report.metrics[metrics[1]] == pytest.approx(sum(recalls) / len(recalls))
    assert report.metrics[metrics[2]] == pytest.approx(sum(f1s) / len(f1s))
    assert report.metrics[metrics[3]] == pytest.approx(sum(f2s) / len(f2s))
