"""receval under the ranx preset against ranx 0.3.21's own numbers (tests/peers/ranx).

The golden files were written by ranx itself (tests/peers/ranx/make.sh, its own virtual
environment); this test never runs ranx. ranx was fed every truth row with its grade
(relevant: grade >= 1) and every prediction, and evaluated with make_comparable=True, so
its mean is over every ground-truth user: users with no recommendation and users whose rows
are all grade 0 count 0 (users_without_recommendations and users_without_relevant: zero).
ranx breaks ties in file order for lists of at most 15 items (numba's argsort is an
insertion sort there; see tests/peers/ranx/NOTES.md), so every dataset is checked, string
and integer ids (pl.Int64 for receval; ranx takes the ids' text), `ties` with tie_break
input_order. Beyond that documented limit (a list of more than 15 items with tied scores,
listed in each golden file as users_beyond_tie_limit) ranx's order follows no rule: those
users' values, and hence the means on `ties`, are not compared; the means are compared over
the other users (the mean of receval's per-user values against ranx's).
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
# ranx metric name (before @k) -> receval metric spec (before @k, params after)
RANX_TO_RECEVAL = {
    "precision": ("precision", ""),
    "recall": ("recall", ""),
    "f1": ("f1", ""),
    "hit_rate": ("hit_rate", ""),
    "mrr": ("mrr", ""),
    "map": ("map", ""),
    "ndcg": ("ndcg", ""),
    "ndcg_burges": ("ndcg", "(gain=exponential)"),
}


def receval_name(ranx_metric: str) -> str:
    """ranx's name -> receval's; without @k (ranx's k = 0) both mean the whole list."""
    name, at, k = ranx_metric.partition("@")
    base, params = RANX_TO_RECEVAL[name]
    return f"{base}{at}{k}{params}"


def load(dataset: str) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame]:
    return golden_files.load("ranx", dataset)


def evaluate(
    golden: dict[str, Any], predictions: pl.DataFrame, truth: pl.DataFrame, **overrides: Any
) -> Any:
    metrics = [receval_name(m) for m in golden["metrics"]]
    return receval_cli.evaluate(
        predictions,
        truth,
        metrics,
        conventions={"preset": "ranx", **overrides},
        truth_columns={"relevance": "relevance"},
    )


@pytest.mark.parametrize("dataset", DATASETS)
def test_golden_file_is_ranx(dataset: str) -> None:
    golden, _, _ = load(dataset)
    assert golden["library"] == "ranx"
    assert golden["version"] == "0.3.21"
    assert golden["dataset"] == dataset
    cutoffs = ("@1", "@3", "@5", "@10", "@30", "")
    assert set(golden["metrics"]) == {m + k for m in RANX_TO_RECEVAL for k in cutoffs}
    # The ranking ranx used was score descending, then file order (checked when it was made)
    # for every list within the limit.
    assert golden["ties_resolved_in_file_order"] is True
    if dataset.startswith("ties"):
        assert golden["users_with_tied_scores"] > 20
        assert golden["users_beyond_tie_limit"]  # the limit is exercised, and left out
    else:
        assert golden["users_beyond_tie_limit"] == []


@pytest.mark.parametrize("dataset", DATASETS)
def test_agrees_with_ranx(dataset: str) -> None:
    golden, predictions, truth = load(dataset)
    report = evaluate(golden, predictions, truth)

    # ranx's users: every ground-truth user, also those with no recommendation or only
    # grade-0 rows; users only in the predictions are not evaluated.
    evaluated = report.per_user.filter(pl.col("status") == "evaluated")
    assert sorted(map(str, evaluated["user"])) == sorted(golden["users"])
    assert set(map(str, truth["user"])) == set(golden["users"])
    no_recommendation = set(truth["user"]) - set(predictions["user"])
    only_grade_0 = set(truth["user"]) - set(truth.filter(pl.col("relevance") >= 1)["user"])
    assert no_recommendation
    assert only_grade_0

    rows = {str(row["user"]): row for row in evaluated.iter_rows(named=True)}
    beyond = set(golden["users_beyond_tie_limit"])
    for ranx_metric, values in golden["metrics"].items():
        metric = receval_name(ranx_metric)
        compared = []
        for user, want in zip(golden["users"], values["per_user"], strict=True):
            if user in beyond:
                continue
            got = rows[user][metric]
            compared.append((got, want))
            assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (ranx_metric, user, got, want)
        if not beyond:
            got, want = report.metrics[metric], values["mean"]
            assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (ranx_metric, got, want)
        got = math.fsum(g for g, _ in compared) / len(compared)
        want = math.fsum(w for _, w in compared) / len(compared)
        assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (ranx_metric, got, want)


@pytest.mark.parametrize("dataset", ["ties", "ties_int"])
def test_ties_decide_some_values(dataset: str) -> None:
    """The `ties` data tests the tie rule: with item_desc, receval no longer matches ranx."""
    golden, predictions, truth = load(dataset)
    report = evaluate(golden, predictions, truth, tie_break="item_desc")
    differ = sum(
        not math.isclose(report.metrics[receval_name(m)], v["mean"], rel_tol=0, abs_tol=TOL)
        for m, v in golden["metrics"].items()
    )
    assert differ > 0
