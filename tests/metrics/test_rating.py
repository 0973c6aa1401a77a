"""Rating prediction metrics: hand-computed cases, the seed's table, scikit-learn, properties."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from cli_helpers import assert_user_error, invoke, write, write_config
from hypothesis import given, settings
from hypothesis import strategies as st

import receval_cli
from receval_cli.errors import ConfigError, InputError

RATING_METRICS = ["mae", "mse", "rmse", "r2"]
# the metrics test_auc_agrees_with_scikit_learn compares with roc_auc_score
# (tests/metrics/test_registry_coverage.py reads them)
SKLEARN_AUC_METRICS = ["auc", "gauc(weight=none)"]


def frames(pairs: list[tuple[str, str, float | None, float | None]]) -> tuple:
    """(user, item, predicted, actual); None leaves the pair out of that file."""
    predictions = pl.DataFrame(
        [(u, i, p) for u, i, p, _ in pairs if p is not None],
        schema={"user": pl.String, "item": pl.String, "score": pl.Float64},
        orient="row",
    )
    truth = pl.DataFrame(
        [(u, i, a) for u, i, _, a in pairs if a is not None],
        schema={"user": pl.String, "item": pl.String, "relevance": pl.Float64},
        orient="row",
    )
    return predictions, truth


def test_hand_computed_errors() -> None:
    # errors p - r: 1, -2, 0.5
    data = frames([("u", "a", 3.0, 2.0), ("u", "b", 1.0, 3.0), ("v", "c", 4.5, 4.0)])
    report = receval_cli.evaluate(*data, RATING_METRICS)
    assert report.metrics["mae"] == pytest.approx(7 / 6)
    assert report.metrics["mse"] == pytest.approx(1.75)
    assert report.metrics["rmse"] == pytest.approx(math.sqrt(1.75))
    mean = (2 + 3 + 4) / 3
    assert report.metrics["r2"] == pytest.approx(1 - 5.25 / ((2 - mean) ** 2 + 0 + 1))


def test_r2_example_and_its_constant_case() -> None:
    data = frames([("u", "a", 1.0, 1.0), ("u", "b", 2.0, 2.0), ("u", "c", 4.0, 3.0)])
    assert receval_cli.evaluate(*data, ["r2"]).metrics["r2"] == pytest.approx(0.5)
    constant = frames([("u", "a", 1.0, 3.0), ("u", "b", 2.0, 3.0)])
    assert receval_cli.evaluate(*constant, ["r2"]).metrics["r2"] == 0.0  # SS_tot = 0


SEED_TABLE = {  # seed 002: user1's actual / predicted ratings ("?" = unrated)
    "item1": (4, 2.3),
    "item2": (2, 3.6),
    "item3": (3, 3.4),
    "item4": (None, 4.3),
    "item5": (5, 4.5),
    "item6": (None, 2.3),
    "item7": (2, 4.9),
    "item8": (None, 4.3),
    "item9": (None, 3.3),
    "item10": (4, 4.3),
}


def test_seed_table_ignores_unrated_recommendations() -> None:
    data = frames([("user1", i, p, a) for i, (a, p) in SEED_TABLE.items()])
    report = receval_cli.evaluate(*data, ["mae", "rmse"])
    errors = [abs(p - a) for a, p in SEED_TABLE.values() if a is not None]
    assert report.metrics["mae"] == pytest.approx(sum(errors) / 6)  # 7.4 / 6
    assert report.metrics["rmse"] == pytest.approx(math.sqrt(sum(e * e for e in errors) / 6))
    assert report.pairs == {
        "used": 6,
        "with_both": 6,
        "unrated": {"count": 4, "rule": "ignore"},
        "unpredicted": {"count": 0, "rule": "error"},
    }


def test_unrated_scored_against_a_default_rating() -> None:
    data = frames([("user1", i, p, a) for i, (a, p) in SEED_TABLE.items()])
    report = receval_cli.evaluate(
        *data, ["mae"], conventions={"unrated": "default", "default_rating": 1.0}
    )
    errors = [abs(p - (1.0 if a is None else a)) for a, p in SEED_TABLE.values()]
    assert report.metrics["mae"] == pytest.approx(sum(errors) / 10)
    assert report.pairs is not None
    assert report.pairs["used"] == 10


def test_unpredicted_ratings() -> None:
    data = frames([("u", "a", 3.0, 2.0), ("u", "b", None, 5.0)])
    with pytest.raises(InputError, match=r"1 rated \(user, item\) pair\(s\) have no prediction"):
        receval_cli.evaluate(*data, ["mae"])
    ignored = receval_cli.evaluate(*data, ["mae"], conventions={"unpredicted": "ignore"})
    assert ignored.metrics["mae"] == 1.0
    defaulted = receval_cli.evaluate(
        *data, ["mae"], conventions={"unpredicted": "default", "default_prediction": 3.0}
    )
    assert defaulted.metrics["mae"] == pytest.approx((1 + 2) / 2)


def test_a_default_rule_needs_its_value() -> None:
    data = frames([("u", "a", 3.0, 2.0)])
    with pytest.raises(ConfigError, match="needs default_rating"):
        receval_cli.evaluate(*data, ["mae"], conventions={"unrated": "default"})


def test_rating_metrics_need_scores() -> None:
    predictions = pl.DataFrame({"user": ["u"], "item": ["a"], "rank": [1]})
    truth = pl.DataFrame({"user": ["u"], "item": ["a"], "relevance": [4.0]})
    with pytest.raises(InputError, match="no score column"):
        receval_cli.evaluate(predictions, truth, ["rmse"], prediction_columns={"rank": "rank"})


@settings(max_examples=60)
@given(
    st.lists(
        st.tuples(
            st.floats(-5, 5, allow_nan=False, allow_subnormal=False),
            st.floats(-5, 5, allow_nan=False, allow_subnormal=False),
        ),
        min_size=1,
        max_size=30,
    )
)
@pytest.mark.slow
def test_agrees_with_scikit_learn_and_rmse_bounds_mae(pairs: list[tuple[float, float]]) -> None:
    from sklearn.metrics import (  # here: collecting the module stays light
        mean_absolute_error,
        mean_squared_error,
        r2_score,
    )

    predicted = [p for p, _ in pairs]
    actual = [a for _, a in pairs]
    data = frames([(f"u{i % 3}", f"i{i}", p, a) for i, (p, a) in enumerate(pairs)])
    got = receval_cli.evaluate(*data, RATING_METRICS).metrics
    assert got["mae"] == pytest.approx(mean_absolute_error(actual, predicted), abs=1e-12)
    assert got["mse"] == pytest.approx(mean_squared_error(actual, predicted), abs=1e-12)
    assert got["rmse"] == pytest.approx(math.sqrt(mean_squared_error(actual, predicted)), abs=1e-12)
    # scikit-learn's r2 of a constant target is a special case, and so is one whose squared
    # deviations underflow to 0 (ratings 0 and 1e-167)
    if max(actual) - min(actual) > 1e-9:
        assert got["r2"] == pytest.approx(r2_score(actual, predicted), rel=1e-9, abs=1e-9)
    assert got["rmse"] >= got["mae"] - 1e-12


def test_cli_reports_the_pairs_and_errors_cleanly(tmp_path: Path) -> None:
    write(tmp_path / "p.csv", "user,item,score\nu,a,3.0\nu,b,4.0\n")
    write(tmp_path / "t.csv", "user,item,rating\nu,a,2\nu,c,5\n")
    config = {
        "predictions": {"path": "p.csv"},
        "ground_truth": {"path": "t.csv", "columns": {"relevance": "rating"}},
        "metrics": ["rmse", "ndcg@2"],
    }
    path = write_config(tmp_path, config)
    assert_user_error(
        invoke("run", path), "t.csv", "have no prediction", "user 'u', item 'c'", "unpredicted"
    )
    config["conventions"] = {"unpredicted": "ignore"}
    result = invoke("run", write_config(tmp_path, config), "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["models"]["model"]["metrics"]["rmse"] == 1.0
    assert report["models"]["model"]["pairs"]["unrated"] == {"count": 1, "rule": "ignore"}
    assert report["models"]["model"]["pairs"]["unpredicted"] == {"count": 1, "rule": "ignore"}
    table = invoke("run", write_config(tmp_path, config)).stdout
    assert "rating pairs: 1 scored; 1 unrated (ignore), 1 unpredicted (ignore)" in table


def test_config_default_rule_without_value(tmp_path: Path) -> None:
    write(tmp_path / "p.csv", "user,item,score\nu,a,3.0\n")
    write(tmp_path / "t.csv", "user,item,rating\nu,a,2\n")
    path = write_config(
        tmp_path,
        {
            "predictions": {"path": "p.csv"},
            "ground_truth": {"path": "t.csv"},
            "metrics": ["mae"],
            "conventions": {"unpredicted": "default"},
        },
    )
    assert_user_error(invoke("run", path), "conventions", "needs default_prediction")


def clicks(rows: list[tuple[str, str, float, float]]) -> tuple:
    """(user, item, score, click) for AUC: every pair is in both files."""
    return frames([(u, i, s, c) for u, i, s, c in rows])


def test_auc_counts_a_tie_as_one_half() -> None:
    data = clicks([("u", "a", 0.9, 1), ("u", "b", 0.8, 0), ("u", "c", 0.8, 1), ("u", "d", 0.1, 0)])
    # positive-negative pairs: a>b, a>d, c=b (1/2), c>d: 3.5 of 4
    assert receval_cli.evaluate(*data, ["auc"]).metrics["auc"] == pytest.approx(3.5 / 4)


def test_gauc_weights_users_by_impressions_or_not() -> None:
    data = clicks(
        [
            ("u", "a", 0.9, 1),
            ("u", "b", 0.1, 0),  # u: AUC 1, 2 pairs
            ("v", "a", 0.1, 1),
            ("v", "b", 0.5, 0),
            ("v", "c", 0.9, 0),
            ("v", "d", 0.2, 1),  # v: positives 0.1, 0.2 vs 0.5, 0.9: AUC 0, 4 pairs
            ("w", "a", 0.3, 1),  # w: only clicks, left out
        ]
    )
    report = receval_cli.evaluate(*data, ["gauc", "gauc(weight=none)", "auc"])
    assert report.metrics["gauc"] == pytest.approx((1 * 2 + 0 * 4) / 6)
    assert report.metrics["gauc(weight=none)"] == pytest.approx(0.5)


def test_auc_without_both_classes_has_no_value() -> None:
    """One class of pairs is no AUC at all (it was 0.0, a perfectly wrong
    ranking): null, with a warning that says why."""
    data = clicks([("u", "a", 0.9, 1), ("u", "b", 0.1, 1)])
    report = receval_cli.evaluate(*data, ["auc", "gauc", "mae"])
    assert report.metrics == {"auc": None, "gauc": None, "mae": pytest.approx(0.5)}
    assert len(report.warnings) == 2
    assert report.warnings[0].startswith("auc has no value (null): its pairs are all clicked")
    assert "no user has both a clicked and an unclicked pair" in report.warnings[1]


@settings(max_examples=60)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), st.booleans()),
        min_size=2,
        max_size=40,
    )
)
@pytest.mark.slow
def test_auc_agrees_with_scikit_learn(rows: list[tuple[float, bool]]) -> None:
    from sklearn.metrics import roc_auc_score  # here: collecting the module stays light

    labels = [int(c) for _, c in rows]
    scores = [s for s, _ in rows]
    data = clicks([(f"u{i % 4}", f"i{i}", s, float(c)) for i, (s, c) in enumerate(rows)])
    got = receval_cli.evaluate(*data, SKLEARN_AUC_METRICS).metrics
    if 0 < sum(labels) < len(labels):
        assert got["auc"] == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    else:  # one class: scikit-learn raises, receval has no value
        assert got["auc"] is None
    per_user = []
    for u in range(4):
        mine = [(s, c) for i, (s, c) in enumerate(rows) if i % 4 == u]
        user_labels = [int(c) for _, c in mine]
        if 0 < sum(user_labels) < len(user_labels):
            per_user.append(roc_auc_score(user_labels, [s for s, _ in mine]))
    if per_user:
        expected = sum(per_user) / len(per_user)
        assert got["gauc(weight=none)"] == pytest.approx(expected, abs=1e-12)
    else:
        assert got["gauc(weight=none)"] is None


def test_duplicate_predictions_follow_the_duplicates_convention() -> None:
    predictions = pl.DataFrame({"user": ["u", "u"], "item": ["a", "a"], "score": [2.0, 4.0]})
    truth = pl.DataFrame({"user": ["u"], "item": ["a"], "relevance": [3.0]})
    report = receval_cli.evaluate(
        predictions, truth, ["mae"], conventions={"duplicates": "max_score"}
    )
    assert report.metrics["mae"] == 1.0  # the kept prediction is 4.0
    assert report.pairs is not None
    assert report.pairs["used"] == 1
    with pytest.raises(InputError, match="appear more than once"):
        receval_cli.evaluate(predictions, truth, ["mae"])
