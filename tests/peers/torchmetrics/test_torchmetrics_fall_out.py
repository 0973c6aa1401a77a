"""fall_out against torchmetrics 1.9.0's RetrievalFallOut (golden), and by hand.

The golden files (tests/peers/torchmetrics/fall_out_{str,int}.json) were written by
torchmetrics itself (tests/peers/torchmetrics/make.sh, its own environment) on the data
of tests/peers/rectools/make_data.py: ties, ids 9, 10, 100 and 1000, users missing on
either side, users with no relevant item, lists shorter than k and longer than 15.
torchmetrics was given each list's order (receval's tie_break item_desc) as its preds,
and only the lists of users in the truth. It counts a user's negatives among the items
of the user's list (its query's candidates), and divides in float32 (`.float()`): each
per-user value is compared with receval's rounded to float32 (equal), the mean (which
torchmetrics also takes in float32) within 4 float32 ulps at 1 (2.4e-7).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import receval_cli

HERE = Path(__file__).parents[1]
DATASETS = ("str", "int")
CUTOFFS = (1, 3, 5, 10, 30, None)
ACTION_TO_PARAM = {"neg": "zero", "pos": "one", "skip": "skip"}
USERS = "users_without_recommendations=skip,users_without_relevant=zero"
SPECS = {
    f"RetrievalFallOut(top_k={k},empty_target_action={action})": (
        f"fall_out{'' if k is None else f'@{k}'}(no_negatives={value},{USERS})"
    )
    for k in CUTOFFS
    for action, value in ACTION_TO_PARAM.items()
}
MEAN_TOL = 4 * 2.0**-24  # torchmetrics averages in float32: 4 of its ulps at 1


def read(name: str, ids: str) -> pl.DataFrame:
    kind = pl.String if ids == "str" else pl.Int64
    return pl.read_csv(
        HERE / "rectools" / "data" / f"{name}_{ids}.csv",
        schema_overrides={"user": kind, "item": kind},
    )


def golden(ids: str) -> dict[str, Any]:
    return json.loads((HERE / "torchmetrics" / f"fall_out_{ids}.json").read_text())


@pytest.fixture(scope="module", params=DATASETS)
def run(request: pytest.FixtureRequest) -> tuple[dict[str, Any], Any]:
    ids = request.param
    report = receval_cli.evaluate(
        read("predictions", ids),
        read("truth", ids),
        list(SPECS.values()),
        conventions={"relevance_threshold": 1, "tie_break": "item_desc"},
        truth_columns={"relevance": "relevance"},
    )
    return golden(ids), report


def test_golden_files_are_torchmetrics() -> None:
    for ids in DATASETS:
        data = golden(ids)
        assert (data["library"], data["version"], data["dataset"]) == ("torchmetrics", "1.9.0", ids)
        assert set(data["metrics"]) == set(SPECS)


def test_agrees_with_torchmetrics(run: tuple[dict[str, Any], Any]) -> None:
    data, report = run
    for theirs, ours in SPECS.items():
        expected = data["metrics"][theirs]
        frame = report.per_user.filter(pl.col(ours).is_not_null())
        got = dict(zip(frame["user"].to_list(), frame[ours].to_list(), strict=True))
        want = dict(expected["per_user"])
        assert set(got) == set(want), theirs
        for user, value in want.items():
            assert np.float32(got[user]) == np.float32(value), (theirs, user, got[user], value)
        assert math.isclose(report.metrics[ours], expected["mean"], abs_tol=MEAN_TOL), theirs


def test_by_hand() -> None:
    """A list of 5, relevant at ranks 1 and 4 (and a relevant item not listed): 3
    negatives; fall-out@2 = 1/3, @4 = 2/3, whole list 1. A list of relevant items only:
    no_negatives decides (0, 1 or out of the mean)."""
    predictions = pl.DataFrame(
        {
            "user": ["a"] * 5 + ["b"] * 2,
            "item": ["p", "q", "r", "s", "t", "p", "q"],
            "score": [5.0, 4.0, 3.0, 2.0, 1.0, 2.0, 1.0],
        }
    )
    truth = pl.DataFrame(
        {
            "user": ["a", "a", "a", "b", "b"],
            "item": ["p", "s", "z", "p", "q"],
            "relevance": [1.0] * 5,
        }
    )
    specs = [
        "fall_out@2",
        "fall_out@4",
        "fall_out",
        "fall_out@1(no_negatives=one)",
        "fall_out@1(no_negatives=skip)",
    ]
    report = receval_cli.evaluate(
        predictions, truth, specs, truth_columns={"relevance": "relevance"}
    )
    rows = {r["user"]: r for r in report.per_user.iter_rows(named=True)}
    assert rows["a"]["fall_out@2"] == 1 / 3
    assert rows["a"]["fall_out@4"] == 2 / 3
    assert rows["a"]["fall_out"] == 1.0
    assert rows["b"]["fall_out@2"] == 0.0
    assert rows["b"]["fall_out@1(no_negatives=one)"] == 1.0
    assert rows["b"]["fall_out@1(no_negatives=skip)"] is None
    assert report.metrics["fall_out@1(no_negatives=skip)"] == 0.0  # a alone: rank 1 relevant
    assert report.metrics["fall_out@4"] == (2 / 3 + 0.0) / 2
