"""prediction_only_users: users only in the predictions, for the metrics that
read no relevance: left out (skip, the default) or averaged with the others (evaluate: as
RecTools, Jurity and MS Recommenders average over every user of the recommendations).

By hand: user 1 is in both files with 3 items, user 2 only in the predictions with 1 item.
sufficient_reco@2 (a list of at least 2 items) is 1 for user 1 and 0 for user 2: 1.0
under skip, 0.5 under evaluate. precision@2 reads relevance: user 1's 1/2 either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import evaluate_model, write, write_config
from engine_parity import POLARS_ENGINES

from receval_cli.config.presets import PRESETS

PREDICTIONS = "user,item,score\n1,10,0.9\n1,9,0.8\n1,100,0.7\n2,10,0.5\n"
TRUTH = "user,item,relevance\n1,9,1\n"
METRICS = ["sufficient_reco@2", "precision@2", "categorical_diversity@2"]


def run(folder: Path, conventions: dict[str, Any], **extra: Any) -> Any:
    write(folder / "p.csv", PREDICTIONS)
    write(folder / "t.csv", TRUTH)
    write(folder / "c.csv", "item,category\n10,a\n9,b\n100,a\n")
    config = {
        "predictions": {"path": "p.csv"},
        "ground_truth": {"path": "t.csv", "columns": {"relevance": "relevance"}},
        "catalog": {"path": "c.csv", "columns": {"category": "category"}},
        "metrics": METRICS,
        "conventions": conventions,
        **extra,
    }
    name = f"c{len(list(folder.iterdir()))}.yaml"
    return evaluate_model(folder, config, name, per_user=True)


def test_by_hand(tmp_path: Path) -> None:
    skip = run(tmp_path, {})
    assert skip.metrics["sufficient_reco@2"] == 1.0
    assert skip.metrics["precision@2"] == 0.5
    evaluate = run(tmp_path, {"prediction_only_users": "evaluate"})
    assert evaluate.metrics["sufficient_reco@2"] == 0.5
    assert evaluate.metrics["precision@2"] == 0.5  # reads relevance: user 2 never counts
    # categorical_diversity@2, distinct categories / k: user 1's top 2 (10: a, 9: b) 2/2,
    # user 2's one item 1/2
    assert skip.metrics["categorical_diversity@2"] == 1.0
    assert evaluate.metrics["categorical_diversity@2"] == 0.75
    assert evaluate.users["evaluated"] == 1  # the users block: the ground truth's users
    assert evaluate.users["evaluated_per_metric"]["sufficient_reco@2"] == 2
    rows = {r["user"]: r for r in evaluate.per_user.iter_rows(named=True)}
    assert rows[2]["status"] == "only_in_predictions"
    assert rows[2]["sufficient_reco@2"] == 0.0
    assert evaluate.counted.filter(evaluate.counted["user"] == 2)["sufficient_reco@2"].item()
    assert not evaluate.counted.filter(evaluate.counted["user"] == 2)["precision@2"].item()


def test_a_metric_s_parameter_overrides_the_convention(tmp_path: Path) -> None:
    report = run(tmp_path, {"prediction_only_users": "evaluate"})
    write_config(tmp_path, {})  # (a fresh name for the next config)
    given = run(tmp_path, {}, metrics=["sufficient_reco@2(prediction_only_users=evaluate)"])
    assert (
        given.metrics["sufficient_reco@2(prediction_only_users=evaluate)"]
        == (report.metrics["sufficient_reco@2"])
    )


@pytest.mark.parametrize("engine", list(POLARS_ENGINES))
def test_every_engine_counts_them_alike(tmp_path: Path, engine: str) -> None:
    expected = run(tmp_path / "one", {"prediction_only_users": "evaluate"})
    found = run(tmp_path / "e", {"prediction_only_users": "evaluate"}, **POLARS_ENGINES[engine])
    assert found.metrics == expected.metrics
    assert found.users == expected.users


@pytest.mark.spark
def test_spark_counts_them_alike(tmp_path: Path) -> None:
    expected = run(tmp_path / "one", {"prediction_only_users": "evaluate"})
    found = run(tmp_path / "s", {"prediction_only_users": "evaluate"}, engine="spark")
    assert found.metrics == expected.metrics
    assert found.users == expected.users


def test_each_preset_sets_it_as_its_tool_does() -> None:
    """RecTools, Jurity and MS Recommenders average their list metrics over every user of
    the recommendations; the IR tools and RePlay evaluate the ground truth's users."""
    settings = {name: p.conventions["prediction_only_users"] for name, p in PRESETS.items()}
    assert settings == {
        "trec_eval": "skip",
        "pytrec_eval": "skip",
        "ranx": "skip",
        "replay": "skip",
        "jurity": "evaluate",
        "recommenders": "evaluate",
        "rectools": "evaluate",
    }


def test_user_coverage_over_the_users_with_a_relevant_item(tmp_path: Path) -> None:
    """RecTools' CoveredUsers: u1 (relevant, a list), u2 (only a grade-0 row, a list),
    u3 (relevant, no list). users=truth: 2 of 3 have a list; users=relevant: u1 and u3
    count, u1 alone has a list: 1/2."""
    write(tmp_path / "p.csv", "user,item,score\n1,10,0.9\n2,10,0.5\n")
    write(tmp_path / "t.csv", "user,item,relevance\n1,10,1\n2,9,0\n3,10,2\n")
    config = {
        "predictions": {"path": "p.csv"},
        "ground_truth": {"path": "t.csv", "columns": {"relevance": "relevance"}},
        "metrics": ["user_coverage", "user_coverage(users=relevant)"],
    }

    report = evaluate_model(tmp_path, config)
    assert report.metrics == {"user_coverage": 2 / 3, "user_coverage(users=relevant)": 0.5}
