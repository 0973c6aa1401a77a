"""Hand-computed cases of metrics/precision_points.py and of the mean parameter.

Each expected value is worked out in the comment beside it from the definitions (trec_eval
10's m_*.c), not computed by receval.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

import receval_cli
from receval_cli.errors import RecEvalError

# One user "u": a list of 6 items, ranks 1..6 = items 1..6; relevant items 1, 3, 6 and
# item 7 (not recommended): |R| = 4. User "v": 4 items, relevant at ranks 1 and 4, |R| = 2.
# User "w": 2 items, nothing relevant (a judged 0).
PREDICTIONS = pl.DataFrame(
    {
        "user": ["u"] * 6 + ["v"] * 4 + ["w"] * 2,
        "item": [1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 21, 22],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.9, 0.8, 0.7, 0.6, 0.9, 0.8],
    }
)
TRUTH = pl.DataFrame(
    {
        "user": ["u", "u", "u", "u", "v", "v", "w"],
        "item": [1, 3, 6, 7, 11, 14, 21],
        "relevance": [1, 2, 1, 3, 1, 1, 0],
    }
)
CONVENTIONS = {"users_without_relevant": "zero", "relevance_threshold": 1}


def per_user(metrics: list[str]) -> dict[str, dict[str, float]]:
    report = receval_cli.evaluate(PREDICTIONS, TRUTH, metrics, conventions=CONVENTIONS)
    return {row["user"]: row for row in report.per_user.iter_rows(named=True)}


def test_set_map() -> None:
    rows = per_user(["set_map", "set_map@4"])
    assert rows["u"]["set_map"] == 9 / 24  # 3 hits^2 / (6 retrieved * 4 relevant)
    assert rows["u"]["set_map@4"] == 4 / 16  # top 4 holds 2 hits: 2^2 / (4 * 4)
    assert rows["v"]["set_map"] == 4 / 8  # 2^2 / (4 * 2)
    assert rows["w"]["set_map"] == 0.0  # nothing relevant


def test_utility_defaults_and_parameters() -> None:
    specs = ["utility", "utility@2", "utility(a=2,c=-1)", "utility(d=0.5,collection_size=100)"]
    rows = per_user(specs)
    assert rows["u"]["utility"] == 3 - 3  # TP 3, FP 3: 1*3 - 1*3
    assert rows["u"]["utility@2"] == 1 - 1  # top 2: TP 1, FP 1
    assert rows["u"]["utility(a=2,c=-1)"] == 2 * 3 - 3 - 1  # FN 1 (item 7)
    # TN = 100 + TP - retrieved - |R| = 100 + 3 - 6 - 4 = 93: 3 - 3 + 0.5 * 93
    assert rows["u"]["utility(collection_size=100,d=0.5)"] == 46.5
    assert rows["w"]["utility"] == -2.0  # 2 retrieved, none relevant


def test_relative_precision() -> None:
    rows = per_user(["relative_precision@2", "relative_precision@5", "relative_precision"])
    assert rows["u"]["relative_precision@2"] == 1 / 2  # 1 hit / min(2, 4)
    assert rows["u"]["relative_precision@5"] == 2 / 4  # 2 hits / min(5, 4)
    assert rows["u"]["relative_precision"] == 3 / 4  # 3 hits / min(6, 4): set_relative_P
    assert rows["v"]["relative_precision@5"] == 2 / 2  # 2 hits / min(5, 2)
    assert rows["w"]["relative_precision"] == 0.0


def test_rprec_mult() -> None:
    specs = [f"rprec_mult(multiplier={m})" for m in (0.1, 0.5, 1.0, 2.0)]
    rows = per_user(specs)
    u = rows["u"]  # |R| = 4
    assert u["rprec_mult(multiplier=0.1)"] == 1 / 1  # c = floor(0.4 + 0.9) = 1
    assert u["rprec_mult(multiplier=0.5)"] == 1 / 2  # c = floor(2.9) = 2: ranks 1, 2
    assert u["rprec_mult(multiplier=1.0)"] == 2 / 4  # c = 4: R-precision
    assert u["rprec_mult(multiplier=2.0)"] == 3 / 8  # c = 8 > 6 items: 3 hits / 8
    assert rows["v"]["rprec_mult(multiplier=0.5)"] == 1.0  # c = floor(1.9) = 1
    assert rows["w"]["rprec_mult(multiplier=1.0)"] == 0.0  # c = floor(0.9) = 0


def test_iprec_at_recall() -> None:
    levels = ["0.0", "0.3", "0.5", "0.75", "1.0"]
    specs = [f"iprec_at_recall(level={x})" for x in levels]
    specs += ["iprec_at_recall(level=0.3,rounding=up)", "iprec_at_recall@2(level=0.5)"]
    rows = per_user(specs)
    u = rows["u"]  # relevant at ranks 1, 3, 6; |R| = 4: m / r_m = 1, 2/3, 1/2
    assert u["iprec_at_recall(level=0.0)"] == 1.0  # t = 0: max over all
    assert u["iprec_at_recall(level=0.3)"] == 1.0  # t = round(1.2) = 1
    assert u["iprec_at_recall(level=0.3,rounding=up)"] == 2 / 3  # t = floor(2.1) = 2
    assert u["iprec_at_recall(level=0.5)"] == 2 / 3  # t = 2: max(2/3, 1/2)
    assert u["iprec_at_recall(level=0.75)"] == 1 / 2  # t = 3
    assert u["iprec_at_recall(level=1.0)"] == 0.0  # t = 4: only 3 retrieved
    assert u["iprec_at_recall@2(level=0.5)"] == 0.0  # top 2 holds 1 relevant < t = 2
    assert rows["w"]["iprec_at_recall(level=0.0)"] == 0.0  # nothing relevant


def test_iprec_avg() -> None:
    rows = per_user(["iprec_avg", "iprec_avg(levels=0.25;0.5;0.75)", "iprec_avg(levels=3)"])
    v = rows["v"]  # |R| = 2, relevant at ranks 1 and 4: m / r_m = 1, 2/4
    # t = round(2 L) is 1 up to L = 0.7 (iprec 1), 2 from L = 0.8 (iprec 1/2)
    assert v["iprec_avg"] == (0.5 + 0.5 + 0.5 + 1 * 8) / 11
    # t = round(0.5) = 1, round(1.0) = 1, round(1.5) = 2: (1/2 + 1 + 1) / 3
    assert v["iprec_avg(levels=0.25;0.5;0.75)"] == 2.5 / 3
    assert v["iprec_avg(levels=3)"] == (0.5 + 1 + 1) / 3  # levels 0, 0.5, 1
    assert rows["w"]["iprec_avg"] == 0.0


def test_geometric_mean() -> None:
    report = receval_cli.evaluate(
        PREDICTIONS, TRUTH, ["map", "map(mean=geometric)"], conventions=CONVENTIONS
    )
    rows = {row["user"]: row for row in report.per_user.iter_rows(named=True)}
    # AP: u (1 + 2/3 + 3/6) / 4 = 13/24; v (1 + 2/4) / 2 = 3/4; w 0, counted as 1e-5
    assert rows["u"]["map(mean=geometric)"] == rows["u"]["map"]  # per user: AP itself
    want = math.exp((math.log(13 / 24) + math.log(3 / 4) + math.log(1e-5)) / 3)
    assert math.isclose(report.metrics["map(mean=geometric)"], want, rel_tol=1e-15)
    assert report.metrics["map"] == pytest.approx((13 / 24 + 3 / 4) / 3, abs=1e-15)


def test_a_geometric_mean_has_no_interval_or_test() -> None:
    report = receval_cli.evaluate(
        PREDICTIONS, TRUTH, ["map", "map(mean=geometric)"], conventions=CONVENTIONS
    )
    from receval_cli.analysis.intervals import with_intervals
    from receval_cli.config.model import ConfidenceConfig

    intervals = with_intervals(report, ConfidenceConfig(method="normal")).confidence
    assert intervals is not None
    assert set(intervals["intervals"]) == {"map"}


@pytest.mark.parametrize(
    "spec",
    [
        "num_rel(mean=geometric)",  # a sum has no mean
        "rprec_mult",  # the multiplier is required
        "iprec_at_recall(mean=geometric)",  # the level is required (bare: trec_eval's name)
        "iprec_at_recall(level=1.5)",
        "iprec_avg(levels=1)",
        "iprec_avg(levels=0.5;x)",
        "utility(a=x)",
        "utility(collection_size=2.5)",
    ],
)
def test_bad_parameters_are_refused(spec: str) -> None:
    with pytest.raises(RecEvalError):
        receval_cli.evaluate(PREDICTIONS, TRUTH, [spec], conventions=CONVENTIONS)
