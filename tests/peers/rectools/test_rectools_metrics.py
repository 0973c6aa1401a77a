"""RecTools 0.19.0's metrics against receval: golden files and hand-computed cases.

The golden files (tests/peers/rectools/{str,int}.json) were written by RecTools itself
(tests/peers/rectools/make.sh, its own environment) on the fresh seeded data of
tests/peers/rectools/make_data.py: ties, ids 9, 10, 100 and 1000 (string and integer),
users only in the predictions or only in the truth, users with no relevant item, lists
shorter than every cutoff and longer than 15, a baseline (RecTools' reference
recommendations) and a catalog. RecTools reads ranks: its script ranked each list by
score, then item descending in the id's own order, which is receval's tie_break
item_desc; receval reads the scores and ranks them itself.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import receval_cli
from receval_cli.errors import ConfigError, InputError

TOL = 1e-9
HERE = Path(__file__).parent
DATASETS = ("str", "int")
CUTOFFS = (1, 3, 5, 10, 30)
# users RecTools counts, as receval's user parameters: its interactions' users (relevant
# rows only) for the ranking metrics, the lists' users for the list metrics
# (they read no relevance: every user of the lists, those only in the predictions too)
ON_LISTS = "prediction_only_users=evaluate,users_without_recommendations=skip"
# RecTools metric (with its arguments) -> receval spec, {k} the cutoff
RECTOOLS_TO_RECEVAL = {
    "MAP@{k}": "map@{k}(denominator=relevant)",
    "MAP@{k}(divide_by_k=True)": "map@{k}(denominator=k)",
    "NDCG@{k}": "ndcg@{k}(gain=binary,ideal=k_positions)",
    "NDCG@{k}(divide_by_achievable=True)": "ndcg@{k}(gain=binary,ideal=at_k)",
    "Accuracy@{k}": "accuracy@{k}(denominator=k)",
    "MCC@{k}": "mcc@{k}(denominator=k)",
    "PartialAUC@{k}": "partial_auc@{k}",
    "PAP@{k}": "pap@{k}",
    "SufficientReco@{k}": f"sufficient_reco@{{k}}({ON_LISTS})",
    "SufficientReco@{k}(deep=True)": f"sufficient_reco@{{k}}(measure=share,{ON_LISTS})",
    "Intersection@{k}": f"intersection@{{k}}({ON_LISTS})",
    "Intersection@{k}(ref_k=5)": f"intersection@{{k}}(baseline_k=5,{ON_LISTS})",
}
# one value: the mean of RecTools' per user (its users: those with a relevant row)
GLOBAL = {"CoveredUsers@{k}": "user_coverage(users=relevant)"}
# under the rectools preset: its measures as plain specs (the preset sets the rest)
PRESET_TO_RECEVAL = {
    "Precision@{k}": "precision@{k}",
    "Recall@{k}": "recall@{k}",
    "F1Beta@{k}": "f1@{k}",
    "HitRate@{k}": "hit_rate@{k}",
    "MRR@{k}": "mrr@{k}",
    "MAP@{k}": "map@{k}",
    "MAP@{k}(divide_by_k=True)": "map@{k}(denominator=k)",
    "NDCG@{k}": "ndcg@{k}",
    "NDCG@{k}(divide_by_achievable=True)": "ndcg@{k}(ideal=at_k)",
    "Accuracy@{k}": "accuracy@{k}",
    "MCC@{k}": "mcc@{k}",
    "PartialAUC@{k}": "partial_auc@{k}",
    "PAP@{k}": "pap@{k}",
    "SufficientReco@{k}": "sufficient_reco@{k}",
    "SufficientReco@{k}(deep=True)": "sufficient_reco@{k}(measure=share)",
    "Intersection@{k}": "intersection@{k}",
    "Intersection@{k}(ref_k=5)": "intersection@{k}(baseline_k=5)",
}


def read(name: str, ids: str) -> pl.DataFrame:
    kind = pl.String if ids == "str" else pl.Int64
    return pl.read_csv(
        HERE / "data" / f"{name}_{ids}.csv", schema_overrides={"user": kind, "item": kind}
    )


def golden(ids: str) -> dict[str, Any]:
    return json.loads((HERE / f"{ids}.json").read_text())


def pairs(table: dict[str, str] = RECTOOLS_TO_RECEVAL) -> dict[str, str]:
    return {r.format(k=k): s.format(k=k) for r, s in table.items() for k in CUTOFFS}


def evaluate(ids: str, specs: list[str], conventions: dict[str, Any]) -> Any:
    return receval_cli.evaluate(
        read("predictions", ids),
        read("truth", ids),
        specs,
        conventions=conventions,
        truth_columns={"relevance": "relevance"},
        catalog=read("catalog", ids),
        baseline=read("baseline", ids),
    )


def assert_agrees(data: dict[str, Any], report: Any, table: dict[str, str]) -> int:
    """Every per-user value and mean of the table's measures; the number of values."""
    compared = 0
    for theirs, ours in table.items():
        expected = data["metrics"][theirs]
        frame = report.per_user.filter(pl.col(ours).is_not_null())
        got = dict(zip(frame["user"].to_list(), frame[ours].to_list(), strict=True))
        want = dict(expected["per_user"])
        assert set(got) == set(want), theirs
        for user, value in want.items():
            assert math.isclose(got[user], value, abs_tol=TOL), (theirs, user, got[user], value)
        assert math.isclose(report.metrics[ours], expected["mean"], abs_tol=TOL), theirs
        compared += len(want) + 1
    return compared


@pytest.fixture(scope="module", params=DATASETS)
def run(request: pytest.FixtureRequest) -> tuple[dict[str, Any], Any]:
    ids = request.param
    specs = [*pairs().values(), "user_coverage(users=relevant)"]
    conventions = {"relevance_threshold": 1, "tie_break": "item_desc"}
    return golden(ids), evaluate(ids, specs, conventions)


def test_golden_files_are_rectools() -> None:
    for ids in DATASETS:
        data = golden(ids)
        assert (data["library"], data["version"], data["dataset"]) == ("rectools", "0.19.0", ids)
        expected = {
            *pairs(),
            *pairs(PRESET_TO_RECEVAL),
            *(g.format(k=k) for g in GLOBAL for k in CUTOFFS),
        }
        assert set(data["metrics"]) == expected


def test_agrees_with_rectools(run: tuple[dict[str, Any], Any]) -> None:
    data, report = run
    assert assert_agrees(data, report, pairs()) > 2000


@pytest.mark.parametrize("ids", DATASETS)
def test_the_rectools_preset_agrees_with_plain_names(ids: str) -> None:
    """Under the preset, RecTools' measures are receval's plain names (its table in
    config/presets.py), Precision, Recall, F1Beta, HitRate and MRR included."""
    table = pairs(PRESET_TO_RECEVAL)
    report = evaluate(ids, [*table.values(), "user_coverage"], {"preset": "rectools"})
    assert assert_agrees(golden(ids), report, table) > 3000


def test_covered_users_is_user_coverage(run: tuple[dict[str, Any], Any]) -> None:
    data, report = run
    for k in CUTOFFS:  # ranks start at 1, so every k covers the same users
        assert math.isclose(
            report.metrics["user_coverage(users=relevant)"],
            data["metrics"][f"CoveredUsers@{k}"]["mean"],
            abs_tol=TOL,
        )


def _by_hand(specs: list[str], **inputs: Any) -> dict[str, dict[str, Any]]:
    """One user `a`: the list p, q, r, s, t (scores descending); relevant p, s and z (z
    not listed), x graded 0; a catalog of 10 items; a baseline list p, x, q."""
    predictions = pl.DataFrame(
        {"user": ["a"] * 5, "item": list("pqrst"), "score": [5.0, 4.0, 3.0, 2.0, 1.0]}
    )
    truth = pl.DataFrame(
        {"user": ["a"] * 4, "item": list("pszx"), "relevance": [1.0, 2.0, 1.0, 0.0]}
    )
    report = receval_cli.evaluate(
        predictions,
        truth,
        specs,
        conventions={"relevance_threshold": 1},
        truth_columns={"relevance": "relevance"},
        **inputs,
    )
    return {r["user"]: r for r in report.per_user.iter_rows(named=True)}


CATALOG = pl.DataFrame({"item": list("pqrstuvwxz")})
BASELINE = pl.DataFrame({"user": ["a"] * 3, "item": list("pxq"), "score": [3.0, 2.0, 1.0]})


def test_by_hand() -> None:
    specs = [
        "map@5(denominator=k)",
        "map@5(denominator=relevant)",
        "map(denominator=k)",
        "ndcg@3(gain=binary,ideal=k_positions)",
        "ndcg@3(gain=binary,ideal=at_k)",
        "accuracy@3",
        "accuracy@10(denominator=list_length)",
        "mcc@3",
        "partial_auc@1",
        "partial_auc@2",
        "pap@1",
        "pap@3",
        "sufficient_reco@5",
        "sufficient_reco@6",
        "sufficient_reco@6(measure=share)",
        "sufficient_reco",
        "intersection@3",
        "intersection@3(baseline_k=1)",
        "intersection@5(baseline_k=5)",
    ]
    a = _by_hand(specs, catalog=CATALOG, baseline=BASELINE)["a"]
    # hits at ranks 1 (p) and 4 (s); |R| = 3 (z is not listed)
    assert a["map@5(denominator=k)"] == pytest.approx((1 / 1 + 2 / 4) / 5, abs=1e-15)
    assert a["map@5(denominator=relevant)"] == pytest.approx(1.5 / 3, abs=1e-15)
    assert a["map(denominator=k)"] == pytest.approx(1.5 / 5, abs=1e-15)  # the list length
    ideal3 = 1 + 1 / math.log2(3) + 1 / 2
    assert a["ndcg@3(gain=binary,ideal=k_positions)"] == pytest.approx(1 / ideal3, abs=1e-15)
    assert a["ndcg@3(gain=binary,ideal=at_k)"] == pytest.approx(1 / ideal3, abs=1e-15)
    # @3: TP 1, FP 2, FN 2, TN 10 - 3 - 2 = 5
    assert a["accuracy@3"] == (1 + 5) / 10
    # @10 with list_length: k' = 5, TP 2, FN 1, TN 10 - 5 - 1 = 4
    assert a["accuracy@10(denominator=list_length)"] == (2 + 4) / 10
    assert a["mcc@3"] == pytest.approx((1 * 5 - 2 * 2) / math.sqrt(3 * 3 * 7 * 7), abs=1e-15)
    # p has 0 negatives above it, s has 2 (q, r); z wins no pair
    assert a["partial_auc@1"] == 1 / (1 * 3)  # p: 1 - 0
    assert a["partial_auc@2"] == 2 / (2 * 3)  # p: 2 - 0; s: 2 negatives, not < 2
    assert a["pap@1"] == 1 / (1 * 1)  # the first relevant item only
    assert a["pap@3"] == (3 + 1) / (3 * 3)  # p: 3 - 0, s: 3 - 2
    assert a["sufficient_reco@5"] == 1.0
    assert a["sufficient_reco@6"] == 0.0
    assert a["sufficient_reco@6(measure=share)"] == 5 / 6
    assert a["sufficient_reco"] == 1.0  # without a cutoff: any non-empty list
    assert a["intersection@3"] == 2 / 3  # p, q in B@3
    assert a["intersection@3(baseline_k=1)"] == 1 / 3
    assert a["intersection@5(baseline_k=5)"] == 2 / 5


def test_rectools_docstring_examples() -> None:
    """RecTools' own examples (PartialAUC, PAP; its users 1-3 as u1-u3)."""
    predictions = pl.DataFrame(
        {
            "user": ["u1", "u1", "u2", "u2", "u2", "u3", "u3"],
            "item": ["1", "2", "3", "1", "2", "3", "2"],
            "rank": [1, 2, 1, 2, 3, 1, 2],
        }
    )
    truth = pl.DataFrame(
        {"user": ["u1", "u1", "u2", "u2", "u3", "u3"], "item": ["1", "2", "1", "3", "1", "2"]}
    )
    report = receval_cli.evaluate(
        predictions,
        truth,
        ["partial_auc@1", "partial_auc@3", "pap@1", "pap@3"],
        prediction_columns={"rank": "rank"},
    )
    rows = report.per_user.sort("user")
    assert rows["partial_auc@1"].to_list() == [1.0, 1.0, 0.0]
    assert rows["partial_auc@3"].to_list() == pytest.approx([1.0, 1.0, 1 / 3], abs=1e-15)
    assert rows["pap@1"].to_list() == [1.0, 1.0, 0.0]
    assert rows["pap@3"].to_list() == pytest.approx([1.0, 1.0, 1 / 3], abs=1e-15)


def test_accuracy_needs_a_catalog() -> None:
    with pytest.raises(InputError, match="needs the catalog input"):
        _by_hand(["accuracy@3"])


@pytest.mark.parametrize("spec", ["partial_auc", "pap"])
def test_needs_a_cutoff(spec: str) -> None:
    with pytest.raises(ConfigError, match="needs a cutoff"):
        _by_hand([spec])


def test_baseline_k_is_a_whole_number() -> None:
    with pytest.raises(ConfigError, match="whole number"):
        _by_hand(["intersection@3(baseline_k=2.5)"], baseline=BASELINE)


def test_k_positions_with_grades_and_without_a_cutoff() -> None:
    """ideal=k_positions: k copies of the best-graded item (s, grade 2); without a cutoff
    the list's 5 positions. Linear gain: DCG@3 = 1 (p at rank 1); IDCG@3 = 2 * (1 +
    1/log2(3) + 1/2). Whole list: DCG = 1 + 2/log2(5), IDCG = 2 * sum_{i<=5} 1/log2(i+1)."""
    specs = [
        "ndcg@3(gain=linear,ideal=k_positions)",
        "ndcg(gain=binary,ideal=k_positions)",
        "idcg(gain=linear,ideal=k_positions)",
    ]
    a = _by_hand(specs)["a"]
    ideal3 = 1 + 1 / math.log2(3) + 1 / 2
    ideal5 = sum(1 / math.log2(i + 1) for i in range(1, 6))
    assert a[specs[0]] == pytest.approx(1 / (2 * ideal3), abs=1e-15)
    assert a[specs[1]] == pytest.approx((1 + 1 / math.log2(5)) / ideal5, abs=1e-15)
    assert a[specs[2]] == pytest.approx(2 * ideal5, abs=1e-14)


def test_mcc_has_no_value_beyond_the_catalog() -> None:
    """k = 12 on a catalog of 10: TN + FN = |C| - k < 0, the product under the root is
    negative (RecTools' NaN, which pandas' mean leaves out): no user has a value. At k =
    10, TN + FN = 0: 0. Accuracy is still defined, and negative."""
    a = _by_hand(["mcc@10", "accuracy@12"], catalog=CATALOG)["a"]
    assert a["mcc@10"] == 0.0
    assert a["accuracy@12"] == (2 + (10 - 12 - 1)) / 10
    with pytest.raises(InputError, match="mcc@12 is undefined for every evaluated user"):
        _by_hand(["mcc@12"], catalog=CATALOG)
