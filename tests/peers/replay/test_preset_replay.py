"""receval under the replay preset against RePlay 0.22.0's own numbers (tests/peers/replay).

The golden files were written by RePlay itself (tests/peers/replay/make.sh, its own
virtual environment: RePlay pins pandas 2 and polars 1.44); this test never runs RePlay.
RePlay's metrics are binary: it was fed the truth rows with grade >= 1 as (user, item)
pairs, and every prediction. receval reads the same files with their grades; the preset's
relevance_threshold 1 and gain binary make them binary. RePlay evaluates every user of the
ground truth it is given (a user with no recommendation counts 0), so users whose rows are
all grade 0, absent from what RePlay saw, are skipped (users_without_relevant: skip).
RePlay sorts by score, then item, both descending (tie_break item_desc; integer ids as
numbers): deterministic, so every dataset is checked, string and integer ids (pl.Int64),
ties included.
"""

from __future__ import annotations

import math
from typing import Any

import golden_files
import polars as pl
import pytest

import receval_cli

TOL = 1e-9
DATASETS = golden_files.DATASETS
CUTOFFS = (1, 3, 5, 10, 30)
# RePlay metric class -> receval metric
REPLAY_TO_RECEVAL = {
    "Precision": "precision",
    "Recall": "recall",
    "HitRate": "hit_rate",
    "MRR": "mrr",
    "MAP": "map",
    "NDCG": "ndcg",
}


def receval_name(replay_metric: str) -> str:
    name, k = replay_metric.split("@")
    return f"{REPLAY_TO_RECEVAL[name]}@{k}"


def load(dataset: str) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame]:
    return golden_files.load("replay", dataset)


def evaluate(
    golden: dict[str, Any], predictions: pl.DataFrame, truth: pl.DataFrame, **overrides: Any
) -> Any:
    metrics = [receval_name(m) for m in golden["metrics"]]
    return receval_cli.evaluate(
        predictions,
        truth,
        metrics,
        conventions={"preset": "replay", **overrides},
        truth_columns={"relevance": "relevance"},
    )


@pytest.mark.parametrize("dataset", DATASETS)
def test_golden_file_is_replay(dataset: str) -> None:
    golden, _, _ = load(dataset)
    assert golden["library"] == "replay-rec"
    assert golden["version"] == "0.22.0"
    assert golden["dataset"] == dataset
    assert set(golden["metrics"]) == {f"{m}@{k}" for m in REPLAY_TO_RECEVAL for k in CUTOFFS}


@pytest.mark.parametrize("dataset", DATASETS)
def test_agrees_with_replay(dataset: str) -> None:
    golden, predictions, truth = load(dataset)
    report = evaluate(golden, predictions, truth)

    # RePlay's users: those with a relevant item (grade >= 1), with or without a
    # recommendation; users only in the predictions are not evaluated.
    relevant_users = set(truth.filter(pl.col("relevance") >= 1)["user"])
    evaluated = report.per_user.filter(pl.col("status") == "evaluated")
    assert sorted(evaluated["user"]) == sorted(golden["users"])
    assert set(golden["users"]) == relevant_users
    assert relevant_users - set(predictions["user"])  # some have no recommendation
    assert set(truth["user"]) - relevant_users  # some have only grade-0 rows

    rows = {row["user"]: row for row in evaluated.iter_rows(named=True)}
    for replay_metric, values in golden["metrics"].items():
        metric = receval_name(replay_metric)
        for user, want in zip(golden["users"], values["per_user"], strict=True):
            got = rows[user][metric]
            assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (replay_metric, user, got, want)
        got, want = report.metrics[metric], values["mean"]
        assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (replay_metric, got, want)


@pytest.mark.parametrize("dataset", ["ties", "ties_int"])
def test_ties_decide_some_values(dataset: str) -> None:
    """The `ties` data tests the tie rule: in file order, receval no longer matches RePlay."""
    golden, predictions, truth = load(dataset)
    report = evaluate(golden, predictions, truth, tie_break="input_order")
    differ = sum(
        not math.isclose(report.metrics[receval_name(m)], v["mean"], rel_tol=0, abs_tol=TOL)
        for m, v in golden["metrics"].items()
    )
    assert differ > 0


def test_integer_ids_order_ties_as_numbers() -> None:
    """`ties` and `ties_int` hold the same rows; only the ids' type differs. RePlay orders
    tied integer items as numbers (1000 before 100 before 10 before 9) and string items as
    text ("i9" before "i100"), so some of its own values differ between the two."""
    text, _, _ = load("ties")
    numbers, _, _ = load("ties_int")

    def by_user(golden: dict[str, Any], metric: str) -> dict[str, float]:
        users = [str(u).removeprefix("u") for u in golden["users"]]
        return dict(zip(users, golden["metrics"][metric]["per_user"], strict=True))

    differ = 0
    for metric in text["metrics"]:
        as_text, as_numbers = by_user(text, metric), by_user(numbers, metric)
        assert as_text.keys() == as_numbers.keys()
        differ += sum(as_text[u] != as_numbers[u] for u in as_text)
    assert differ > 0
