"""receval's `auc` against Jurity 2.1.0's AUC (tests/peers/jurity/auc_*.json).

tests/peers/jurity/run_jurity_auc.py fed the shared data (tests/peers/data) to
jurity.recommenders.AUC: actual = every truth row with click = relevance >= 1, predicted =
every prediction with its score. Jurity inner-joins the two on (user, item), so it scores
only the pairs in both files: receval's `unrated: ignore` (the default) and
`unpredicted: ignore`. Its AUC is scikit-learn's roc_auc_score (a tie counts 1/2, row order
does not matter), so every dataset is compared, ties included, with string ids and with
integer ids (pl.Int64). Jurity is never run here.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import golden_files
import pytest

import receval_cli
from receval_cli.results.report import Report

TOL = 1e-9
DATASETS = golden_files.DATASETS
METRICS = ("auc",)  # compared with Jurity (tests/metrics/test_registry_coverage.py reads them)


@cache
def golden(dataset: str) -> dict[str, Any]:
    return golden_files.golden("jurity", f"auc_{dataset}")


@cache
def receval(dataset: str, preset: bool = False) -> Report:
    predictions, truth = golden_files.frames(dataset)
    return receval_cli.evaluate(
        predictions,
        truth,
        list(METRICS),
        # relevance_threshold 1 is the default; the jurity preset sets unpredicted: ignore
        conventions={"preset": "jurity"} if preset else {"unpredicted": "ignore"},
        truth_columns={"relevance": "relevance"},
    )


@pytest.mark.parametrize("dataset", DATASETS)
def test_golden_file_is_jurity_2_1_0(dataset: str) -> None:
    data = golden(dataset)
    assert (data["library"], data["version"], data["dataset"]) == ("jurity", "2.1.0", dataset)
    assert data["pandas"].startswith("2.")
    assert data["order_independent"] is True
    # the cross-check: scikit-learn on the pairs in both files gives Jurity's number
    assert data["sklearn_roc_auc_score_on_pairs_in_both"] == pytest.approx(data["auc"], abs=1e-12)


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("preset", [False, True])
def test_auc_matches_jurity(dataset: str, preset: bool) -> None:
    value = receval(dataset, preset).metrics["auc"]
    assert value == pytest.approx(golden(dataset)["auc"], abs=TOL)


@pytest.mark.parametrize("dataset", DATASETS)
def test_scored_pairs_match_jurity(dataset: str) -> None:
    """receval scores the pairs Jurity's inner join keeps, and drops the same others."""
    pairs = receval(dataset).pairs
    expected = golden(dataset)["pairs"]
    assert pairs is not None
    assert pairs["used"] == expected["used"] == golden(dataset)["support"]
    assert pairs["unrated"]["count"] == expected["predictions_without_truth_row"]
    assert pairs["unpredicted"]["count"] == expected["truth_rows_without_prediction"]


@pytest.mark.parametrize("dataset", ["ties", "ties_int"])
def test_ties_dataset_has_tied_scores(dataset: str) -> None:
    """The ties comparison does exercise ties among the scored pairs."""
    assert golden(dataset)["pairs"]["scored_pairs_sharing_a_score"] > 10
