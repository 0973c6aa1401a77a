"""The jurity preset against Jurity 2.1.0's own numbers (tests/peers/jurity).

tests/peers/jurity/make.sh ran Jurity's Precision, Recall, MAP and NDCG at k = 1, 3, 5, 10
on the shared data (tests/peers/data) and stored each metric's per-user values and mean;
NOTES.md there says how Jurity defines them and why the preset is what it is. Here receval
evaluates the same files under `preset: jurity` and must agree to 1e-9, per user and in
the mean. Jurity itself is never run here.

Jurity orders equal scores by an unstable sort (its order depends on the whole frame, not
on any rule receval can state: its documented limit), so the means are compared on
`tiefree` and `tiefree_int` only (string ids, and integer ids as pl.Int64; their only
equal scores are float32-only ties, distinct as float64). On `ties` and `ties_int` the
metrics still see the same users, and a user whose list has no tied score is ranked the
same by both: those users' values are compared.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import golden_files
import polars as pl
import pytest

import receval_cli
from receval_cli.results.report import Report

TOL = 1e-9
CUTOFFS = (1, 3, 5, 10, 30)
TIEFREE = ("tiefree", "tiefree_int")
TIES = ("ties", "ties_int")
# Jurity metric (its str(), e.g. "NDCG@10", without the cutoff) -> receval metric
METRICS = {"Precision": "precision", "Recall": "recall", "MAP": "map", "NDCG": "ndcg"}
PAIRS = {f"{j}@{k}": f"{r}@{k}" for j, r in METRICS.items() for k in CUTOFFS}


@cache
def golden(dataset: str) -> dict[str, Any]:
    return golden_files.golden("jurity", dataset)


@cache
def frames(dataset: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    return golden_files.frames(dataset)


@cache
def receval(dataset: str) -> Report:
    predictions, truth = frames(dataset)
    return receval_cli.evaluate(
        predictions,
        truth,
        list(PAIRS.values()),
        conventions={"preset": "jurity"},
        truth_columns={"relevance": "relevance"},
    )


per_user = golden_files.per_user_by_text
users_averaged = golden_files.users_averaged


def test_golden_files_are_jurity_2_1_0_on_pandas_2() -> None:
    for dataset in golden_files.DATASETS:
        data = golden(dataset)
        assert (data["library"], data["version"], data["dataset"]) == ("jurity", "2.1.0", dataset)
        assert data["pandas"].startswith("2.")
        assert set(data["metrics"]) == set(PAIRS)


@pytest.mark.parametrize("dataset", TIEFREE)
@pytest.mark.parametrize("jurity_name", sorted(PAIRS))
def test_mean_matches_jurity(jurity_name: str, dataset: str) -> None:
    expected = golden(dataset)["metrics"][jurity_name]["mean"]
    assert receval(dataset).metrics[PAIRS[jurity_name]] == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("dataset", TIEFREE)
@pytest.mark.parametrize("jurity_name", sorted(PAIRS))
def test_per_user_values_match_jurity(jurity_name: str, dataset: str) -> None:
    expected = golden(dataset)["metrics"][jurity_name]["per_user"]
    got = per_user(receval(dataset), PAIRS[jurity_name])
    assert {u: got[u] for u in expected} == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("jurity_name", sorted(PAIRS))
def test_users_in_the_mean_match_jurity(jurity_name: str) -> None:
    """Precision and MAP average over users with a click and a recommendation, Recall and
    NDCG over users with a click: the per-user values Jurity averages are receval's users
    of that metric, so their mean is receval's mean (on both datasets: which users count
    does not depend on ties)."""
    for dataset in golden_files.DATASETS:
        entry = golden(dataset)["metrics"][jurity_name]
        got = per_user(receval(dataset), PAIRS[jurity_name])
        assert len(entry["per_user"]) == entry["support"]
        assert users_averaged(receval(dataset), PAIRS[jurity_name]) == entry["support"]
        mean_over_jurity_users = sum(got[u] for u in entry["per_user"]) / entry["support"]
        assert receval(dataset).metrics[PAIRS[jurity_name]] == pytest.approx(
            mean_over_jurity_users, abs=TOL
        )


@pytest.mark.parametrize("dataset", TIES)
def test_tied_data_users_without_tied_scores_match_jurity(dataset: str) -> None:
    predictions, _ = frames(dataset)
    untied = {
        str(u)
        for u in predictions.group_by("user")
        .agg(tied=pl.col("score").is_duplicated().any())
        .filter(~pl.col("tied"))
        .get_column("user")
    }
    compared = 0
    for jurity_name, metric in PAIRS.items():
        expected = golden(dataset)["metrics"][jurity_name]["per_user"]
        got = per_user(receval(dataset), metric)
        users = sorted(untied & set(expected))
        compared += len(users)
        assert {u: got[u] for u in users} == pytest.approx({u: expected[u] for u in users}, abs=TOL)
    assert compared > 100  # the check is not empty
