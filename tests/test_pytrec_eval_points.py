"""The precision-point and set measures (metrics/precision_points.py), gm_map and trec_eval's
set_P / set_recall / set_F against pytrec_eval, per user and in the mean, to 1e-12.

pytrec-eval-terrier is a dev dependency (as for tests/test_pytrec_eval.py); the test skips
where it is not installed. Fresh seeded data: integer item ids whose text and number orders
differ (9, 10, 100; receval reads them as integers, trec_eval as text), scores rounded to
one or two decimals (ties), grades 0..3, lists of 1 to 40 items (shorter and longer than
the cutoffs), users only in the run or only in the qrels, users with no relevant item.

pytrec_eval binds trec_eval 9, which turns a recall level into relevant items as
floor(level * |R| + 0.9); trec_eval 10 rounds (the conformance suite, tests/
test_trec_conformance.py, checks that default): here iprec runs with rounding=up.
"""

from __future__ import annotations

import math
import random
from typing import Any

import polars as pl
import pytest

import receval_cli

pytrec_eval = pytest.importorskip("pytrec_eval")

TOL = 1e-12
LEVELS = [i / 10 for i in range(11)]
CUTOFFS = (1, 3, 5, 10, 20)
MULTIPLIERS = (0.2, 0.5, 1.0, 1.5, 2.0, 5.0)

# one pytrec_eval evaluator per group: its measures, and result name -> receval spec
GROUPS: list[tuple[set[str], dict[str, str]]] = [
    (
        {
            "set_map",
            "utility",
            "set_relative_P",
            "set_P",
            "set_recall",
            "set_F",
            "11pt_avg",
            "iprec_at_recall",
            "relative_P." + ",".join(map(str, CUTOFFS)),
            "Rprec_mult." + ",".join(map(str, MULTIPLIERS)),
        },
        {
            "set_map": "set_map",
            "utility": "utility",
            "set_relative_P": "relative_precision",
            "set_P": "set_precision",
            "set_recall": "set_recall",
            "set_F": "set_f1",
            "11pt_avg": "iprec_avg(rounding=up)",
            **{f"relative_P_{k}": f"relative_precision@{k}" for k in CUTOFFS},
            **{f"Rprec_mult_{m:.2f}": f"rprec_mult(multiplier={m!r})" for m in MULTIPLIERS},
            **{
                f"iprec_at_recall_{level:.2f}": f"iprec_at_recall(level={level!r},rounding=up)"
                for level in LEVELS
            },
        },
    ),
    (
        {"set_F.0.5", "11pt_avg.0.25,0.5,0.75"},
        {
            "set_F": f"set_fbeta(beta={math.sqrt(0.5)!r})",
            "11pt_avg": "iprec_avg(levels=0.25;0.5;0.75,rounding=up)",
        },
    ),
    ({"iprec_at_recall.0.05,0.33,0.45"}, {}),  # filled below: levels between the tenths
]
GROUPS[2][1].update(
    {
        f"iprec_at_recall_{level:.2f}": f"iprec_at_recall(level={level!r},rounding=up)"
        for level in (0.05, 0.33, 0.45)
    }
)
GM_MAP = "map(mean=geometric)"

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


def random_data(seed: int) -> tuple[Qrels, Run]:
    rng = random.Random(seed)
    count = rng.randint(12, 60)
    docs = [str(d) for d in [9, 10, 100, 7, 56, *rng.sample(range(1, 1000), count)]]
    docs = list(dict.fromkeys(docs))[:count]
    qrels: Qrels = {}
    run: Run = {}
    decimals = rng.choice([1, 2])
    for user in (f"u{i}" for i in range(rng.randint(8, 30))):
        side = rng.random()
        if side > 0.15:  # in the qrels
            judged = rng.sample(docs, rng.randint(1, min(15, len(docs))))
            grades = [0, 0, 1, 1, 2, 3] if rng.random() > 0.2 else [0]  # some: no relevant
            qrels[user] = {doc: rng.choice(grades) for doc in judged}
        if side < 0.85 or side > 0.97:  # in the run (some users in neither)
            listed = rng.sample(docs, rng.randint(1, min(40, len(docs))))
            run[user] = {doc: round(rng.random(), decimals) for doc in listed}
    qrels.setdefault("anchor", {})[docs[1]] = 2
    run.setdefault("anchor", {})[docs[1]] = 0.5
    return qrels, run


def receval_report(qrels: Qrels, run: Run, metrics: list[str]) -> Any:
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
        metrics,
        conventions={"preset": "trec_eval"},
        truth_columns={"user": "user", "item": "item", "relevance": "rel"},
    )


SEEDS = range(10)


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
    qrels, run = random_data(seed)
    specs = sorted({s for _, pairs in GROUPS for s in pairs.values()} | {GM_MAP})
    report = receval_report(qrels, run, specs)
    evaluated = report.per_user.filter(pl.col("status") == "evaluated")
    rows = {row["user"]: row for row in evaluated.iter_rows(named=True)}
    compared = 0
    for measures, pairs in GROUPS:
        trec = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
        assert sorted(rows) == sorted(trec)
        for measure, metric in pairs.items():
            for query, values in trec.items():
                got, want = rows[query][metric], values[measure]
                assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (query, measure, got)
                compared += 1
            want = math.fsum(values[measure] for values in trec.values()) / len(trec)
            got = report.metrics[metric]
            assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (measure, got, want)
    assert compared >= 30 * len(rows)
    # gm_map: trec_eval's per-query value is log(max(AP, 1e-5)), its mean exp of their mean
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"gm_map"}).evaluate(run)
    for query, values in trec.items():
        got = math.log(max(rows[query][GM_MAP], 1e-5))
        assert math.isclose(got, values["gm_map"], rel_tol=0, abs_tol=TOL), query
    want = math.exp(math.fsum(v["gm_map"] for v in trec.values()) / len(trec))
    assert math.isclose(report.metrics[GM_MAP], want, rel_tol=0, abs_tol=TOL)
