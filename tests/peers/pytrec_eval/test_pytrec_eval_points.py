"""The precision-point and set measures (metrics/precision_points.py), gm_map and trec_eval's
set_P / set_recall / set_F against pytrec_eval, per user and in the mean, to 1e-12.

Two ways, on the seeded data of tests/peers/pytrec_eval/points_data.py (integer ids 9,
10, 100, ties, grades 0..3, lists shorter and longer than the cutoffs, users on one side
only, users with no relevant item): pytrec_eval itself, live (a dev dependency; skipped
where it is not installed), and its golden file tests/peers/pytrec_eval/points.json,
written by pytrec_eval in its own environment (make.sh there), which needs no peer.

pytrec_eval binds trec_eval 9, which turns a recall level into relevant items as
floor(level * |R| + 0.9); trec_eval 10 rounds (the conformance suite, tests/
test_trec_conformance.py, checks that default): here iprec runs with rounding=up. gm_map's
per-query value in trec_eval is log(max(AP, 1e-5)) and its mean exp of their mean.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import polars as pl
import pytest
from cli_helpers import load_script

import receval_cli

HERE = Path(__file__).parent
TOL = 1e-12


def _points_data() -> ModuleType:
    return load_script(HERE / "points_data.py", "points_data")


DATA = _points_data()
GROUPS: list[tuple[list[str], dict[str, str]]] = DATA.GROUPS
random_data = DATA.random_data
GOLDEN: dict[str, list[dict[str, dict[str, float]]]] = json.loads(
    (HERE / "points.json").read_text(encoding="utf-8")
)
SEEDS = range(10)
SPECS = sorted({s for _, pairs in GROUPS for s in pairs.values()})
MEASURES = sum(len(pairs) for _, pairs in GROUPS)  # per query: 35


def receval_report(qrels: dict[str, Any], run: dict[str, Any]) -> Any:
    truth = pl.DataFrame(
        [(u, int(d), g) for u, judged in qrels.items() for d, g in judged.items()],
        schema={"user": pl.String, "item": pl.Int64, "rel": pl.Int64},
        orient="row",
    )
    predictions = pl.DataFrame(
        [(u, int(d), s) for u, scored in run.items() for d, s in scored.items()],
        schema={"user": pl.String, "item": pl.Int64, "score": pl.Float64},
        orient="row",
    )
    return receval_cli.evaluate(
        predictions,
        truth,
        SPECS,
        conventions={"preset": "pytrec_eval"},
        truth_columns={"user": "user", "item": "item", "relevance": "rel"},
    )


def compare(qrels: dict[str, Any], run: dict[str, Any], trec: list[dict[str, Any]]) -> int:
    """receval against pytrec_eval's results (one per group of GROUPS), per query and in
    the mean; the number of per-query values compared."""
    report = receval_report(qrels, run)
    evaluated = report.per_user.filter(pl.col("status") == "evaluated")
    rows = {row["user"]: row for row in evaluated.iter_rows(named=True)}
    compared = 0
    for (_, pairs), results in zip(GROUPS, trec, strict=True):
        assert sorted(rows) == sorted(results)
        for measure, metric in pairs.items():
            geometric = measure == "gm_map"
            for query, values in results.items():
                got = rows[query][metric]
                if geometric:
                    got = math.log(max(got, 1e-5))
                want = values[measure]
                assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (query, measure, got)
                compared += 1
            want = math.fsum(values[measure] for values in results.values()) / len(results)
            if geometric:
                want = math.exp(want)
            got = report.metrics[metric]
            assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (measure, got, want)
    return compared


def test_random_data_has_the_edge_cases() -> None:
    ties = only_qrels = only_run = no_relevant = long_lists = 0
    for seed in SEEDS:
        qrels, run = random_data(seed)
        ties += sum(len(set(s.values())) < len(s) for s in run.values())
        only_qrels += len(set(qrels) - set(run))
        only_run += len(set(run) - set(qrels))
        no_relevant += sum(max(qrels[q].values()) == 0 for q in set(qrels) & set(run))
        long_lists += sum(len(s) > 20 for s in run.values())
    assert min(ties, only_qrels, only_run, no_relevant, long_lists) >= 5


@pytest.mark.parametrize("seed", SEEDS)
def test_agrees_with_pytrec_eval(seed: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = random_data(seed)
    trec = [pytrec_eval.RelevanceEvaluator(qrels, set(m)).evaluate(run) for m, _ in GROUPS]
    assert compare(qrels, run, trec) == MEASURES * len(trec[0])


@pytest.mark.parametrize("seed", sorted(GOLDEN))
def test_agrees_with_the_golden_file(seed: str) -> None:
    qrels, run = random_data(int(seed))
    assert compare(qrels, run, GOLDEN[seed]) == MEASURES * len(GOLDEN[seed][0])
