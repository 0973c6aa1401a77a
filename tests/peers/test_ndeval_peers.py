"""The intent-aware measures through `receval run` against ndeval's own values (golden:
tests/peers/ndeval/, pyndeval 0.0.8 through ir_measures 0.4.3, made by its make.sh), per
user and mean, under receval's names and ir_measures'; and the same values on every engine,
bit for bit.

The data (tests/peers/ndeval/make_data.py) are random diversity qrels: several intents per
user, items relevant to several, grades 0/1/2, users without a relevant item, users
missing from the run or only in it, lists shorter and longer than 20, heavy score ties and
integer ids whose text and number orders differ (9, 10, 100). ndeval's conventions:
binary grades (>= 1), ties by docno ascending as text (tie_break item_text_asc), every
user of the qrels averaged (users_without_recommendations and users_without_relevant:
zero). Where ndeval differs (module doc of metrics/intent_aware.py): its ERR-IA@1 is
unnormalised (receval's is divided by the user's intents; ir_measures' ERR_IA@1 is refused
in a config), and its nNRBP of a user without relevant items is 0 / 0 (NaN; receval: 0).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import per_user_rows, report_metrics, run_report
from ndeval_golden import GOLDEN, PEER, intent_counts, parsed

NDEVAL = {
    "tie_break": "item_text_asc",
    "score_precision": "float64",
    "users_without_recommendations": "zero",
    "users_without_relevant": "zero",
}


def receval_spec(measure: str) -> str:
    """ir_measures' printed name as receval's spec: alpha_nDCG(alpha=0.3)@5 is
    alpha_ndcg@5(alpha=0.3)."""
    metric, k, params = parsed(measure)
    at = "" if k is None else f"@{k}"
    given = ",".join(f"{key}={value}" for key, value in params.items())
    return f"{metric}{at}({given})" if given else f"{metric}{at}"


# the receval specs this module checks (tests/metrics/test_registry_coverage.py)
CHECKED_SPECS = tuple(receval_spec(measure) for measure in GOLDEN)


def config(metrics: list[str], **settings: Any) -> dict[str, Any]:
    return {
        "predictions": {"path": str(PEER / "diversity_run.csv")},
        "ground_truth": {
            "path": str(PEER / "diversity_truth.csv"),
            "columns": {"intent": "intent", "relevance": "rel"},
        },
        "metrics": metrics,
        "conventions": dict(NDEVAL),
        **settings,
    }


def test_agrees_with_ndeval_per_user_and_mean(tmp_path: Path) -> None:
    report = run_report(tmp_path, config(list(CHECKED_SPECS)), "ndeval", per_user=True)
    metrics = report_metrics(report)
    rows = per_user_rows(tmp_path, "ndeval").filter(pl.col("status") == "evaluated")
    found = {str(row["user"]): row for row in rows.iter_rows(named=True)}
    n = intent_counts()
    for measure, golden in GOLDEN.items():
        spec = receval_spec(measure)
        assert set(found) == set(golden["per_user"]), measure  # every user of the qrels
        for user, expected in golden["per_user"].items():
            value = found[user][spec]
            if spec == "err_ia@1":
                expected /= max(n.get(user, 0), 1)  # ndeval's unnormalised ERR-IA@1
            if math.isnan(expected):  # ndeval's nNRBP without relevant items: 0 / 0
                assert (spec.startswith("nnrbp"), n.get(user, 0), value) == (True, 0, 0.0)
            else:
                assert value == pytest.approx(expected, abs=1e-12, rel=0), (measure, user)
        if not math.isnan(golden["mean"]) and spec != "err_ia@1":
            assert metrics[spec] == pytest.approx(golden["mean"], abs=1e-12, rel=0), measure


def test_ir_measures_names_give_ndevals_means(tmp_path: Path) -> None:
    names = [m for m in GOLDEN if m != "ERR_IA@1" and not math.isnan(GOLDEN[m]["mean"])]
    plain = config([f"ir_measures:{m}" for m in names])
    del plain["conventions"]  # the dialect's own: every qrels user, docno ascending
    metrics = report_metrics(run_report(tmp_path, plain, "dialect"))
    assert len(metrics) == len(names)
    for measure in names:
        found = metrics[f"ir_measures:{measure}"]
        assert found == pytest.approx(GOLDEN[measure]["mean"], abs=1e-12, rel=0), measure


ENGINE_METRICS = [
    "alpha_ndcg@5",
    "alpha_ndcg@20(alpha=0.3)",
    "err_ia@3",
    "nerr_ia@10",
    "nrbp(alpha=0.8,beta=0.8)",
    "nnrbp",
    "p_ia@5",
    "s_recall@10",
    "ndcg@10",
]


def exact(folder: Path, settings: dict[str, Any], name: str) -> tuple[Any, pl.DataFrame]:
    report = run_report(folder, config(ENGINE_METRICS, **settings), name, per_user=True)
    values = {k: float(v).hex() for k, v in report_metrics(report).items()}
    return values, per_user_rows(folder, name)


@pytest.mark.slow
@pytest.mark.parametrize(
    "settings",
    [{"engine": "streaming"}, {"partitions": 3}, {"engine": "streaming", "partitions": 7}],
)
def test_every_engine_agrees(tmp_path: Path, settings: dict[str, Any]) -> None:
    expected, expected_rows = exact(tmp_path, {"engine": "in_memory"}, "one")
    found, rows = exact(tmp_path, settings, "other")
    assert found == expected
    assert rows.sort("user").equals(expected_rows.sort("user"))


@pytest.mark.spark
def test_spark_agrees(spark: Any, tmp_path: Path) -> None:
    expected, expected_rows = exact(tmp_path, {"engine": "in_memory"}, "one")
    for buckets in (1, 5):
        found, rows = exact(tmp_path, {"engine": "spark", "partitions": buckets}, "spark")
        assert found == expected
        assert rows.sort("user").equals(expected_rows.sort("user"))
