"""The judgment-based metrics (metrics/judged.py): bpref, infap, unj, judged,
num_nonrel_judged_ret.

Hand-computed cases first; then agreement with pytrec_eval (trec_eval's C code) on random
data with unjudged items (outside the ground truth, and negative grades), integer ids whose
text and number orders differ (9, 10, 100), ties, users on one side only, lists shorter than
k and longer than 15; then ir_measures' Judged@k from its golden files
(tests/peers/ir_measures, written by ir_measures itself). unj has no peer but trec_eval's
own test outputs (tests/peers/trec_eval/test_trec_conformance.py).
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import numpy as np
import polars as pl
import pytest
import pytrec_eval
from golden_files import GOLDEN, frames
from pytrec_eval_runs import receval_report

import receval_cli

TOL = 1e-12
EPS = 0.00001  # trec_eval's INFAP_EPSILON


def evaluate(
    truth: dict[str, dict[str, float]],
    run: dict[str, list[str]],
    metrics: list[str],
    **conventions: Any,
) -> Any:
    """receval on a ground truth {user: {item: grade}} and ranked lists {user: [items]}
    (scores descending in list order)."""
    truth_rows = [(u, i, float(g)) for u, graded in truth.items() for i, g in graded.items()]
    pred_rows = [
        (u, i, float(len(items) - n)) for u, items in run.items() for n, i in enumerate(items)
    ]
    return receval_cli.evaluate(
        pl.DataFrame(pred_rows, schema=["user", "item", "score"], orient="row"),
        pl.DataFrame(truth_rows, schema=["user", "item", "relevance"], orient="row"),
        metrics,
        conventions=conventions,
        truth_columns={"user": "user", "item": "item", "relevance": "relevance"},
    )


def per_user(report: Any, metric: str) -> dict[str, float]:
    return dict(report.per_user.select("user", metric).iter_rows())


# one user: relevant a, c, e, f (|R| = 4); judged non-relevant b, g (N = 2); d graded -1
# (in the pool, unjudged); x not in the ground truth. Ranked: a b c x d e.
TRUTH = {"u": {"a": 1, "b": 0, "c": 2, "d": -1, "e": 1, "f": 3, "g": 0}}
RUN = {"u": ["a", "b", "c", "x", "d", "e"]}


def test_bpref_by_hand() -> None:
    # a: no judged non-relevant above: 1; c and e: b above, 1 - min(1, 4) / min(2, 4) = 1/2;
    # x and d are unjudged and skipped; f is not retrieved.
    report = evaluate(TRUTH, RUN, ["bpref", "bpref@3", "bpref@1"])
    assert report.metrics == {"bpref": 2 / 4, "bpref@3": 1.5 / 4, "bpref@1": 1 / 4}


def test_bpref_caps_the_non_relevant_at_r() -> None:
    # |R| = 1, N = 3: the relevant item below 2 judged non-relevant: 1 - min(2, 1)/min(3, 1) = 0
    truth = {"u": {"r": 1, "n1": 0, "n2": 0, "n3": 0}}
    assert evaluate(truth, {"u": ["n1", "n2", "r"]}, ["bpref"]).metrics["bpref"] == 0.0
    # |R| = 3, N = 2: one non-relevant above the second relevant: 1 - 1/2
    truth = {"u": {"r1": 1, "r2": 1, "r3": 1, "n1": 0, "n2": 0}}
    got = evaluate(truth, {"u": ["r1", "n1", "r2"]}, ["bpref"]).metrics["bpref"]
    assert got == (1 + 0.5) / 3


def test_infap_by_hand() -> None:
    # a at rank 1: 1. c at rank 3: j = 2 above, h = 1 relevant, n = 1 non-relevant, u = 0:
    # 1/3 + (2/3)((1 + 1 + 0)/2)((1 + eps)/(1 + 1 + 2 eps)). e at rank 6: j = 5, h = 2, n = 1,
    # u = 1 (d; x is outside the ground truth): 1/6 + (5/6)(4/5)((2 + eps)/(3 + 2 eps)).
    c = 1 / 3 + (2 / 3) * (2 / 2) * ((1 + EPS) / (2 + 2 * EPS))
    e = 1 / 6 + (5 / 6) * (4 / 5) * ((2 + EPS) / (3 + 2 * EPS))
    report = evaluate(TRUTH, RUN, ["infap", "infAP@3", "infap@2"])
    assert math.isclose(report.metrics["infap"], (1 + c + e) / 4, rel_tol=0, abs_tol=TOL)
    assert math.isclose(report.metrics["infap@3"], (1 + c) / 4, rel_tol=0, abs_tol=TOL)
    assert report.metrics["infap@2"] == 1 / 4


def test_infap_docstring_example() -> None:
    # (relevant, outside the ground truth, relevant), |R| = 2
    expected = (1 + (1 / 3 + (2 / 3) * (1 / 2) * ((1 + EPS) / (1 + 2 * EPS)))) / 2
    got = evaluate({"u": {"a": 1, "b": 1}}, {"u": ["a", "x", "b"]}, ["infap"]).metrics["infap"]
    assert math.isclose(got, expected, rel_tol=0, abs_tol=TOL)
    assert round(got, 7) == 0.8333317


def test_unj_and_judged_by_hand() -> None:
    metrics = [
        "unj@5",
        "unj@10",
        "unj",
        "judged@5",
        "judged@10",
        "judged@10(denominator=list_length)",
        "judged@10(negative_grades=judged)",
        "judged(negative_grades=judged)",
    ]
    report = evaluate(TRUTH, RUN, metrics)
    assert report.metrics == {
        "unj@5": 2 / 5,  # x and d in a b c x d
        "unj@10": 2 / 10,  # the 4 missing places count as judged
        "unj": 2 / 6,
        "judged@5": 3 / 5,
        "judged@10": 4 / 10,
        "judged@10(denominator=list_length)": 4 / 6,
        "judged@10(negative_grades=judged)": 5 / 10,  # d (grade -1) counts as judged
        "judged(negative_grades=judged)": 5 / 6,
    }


def test_num_nonrel_judged_ret_sums_over_users() -> None:
    truth = {**TRUTH, "v": {"p": 0, "q": 0, "r": 1, "s": -1}}
    run = {**RUN, "v": ["p", "s", "q", "r", "z"]}
    report = evaluate(truth, run, ["num_nonrel_judged_ret"])
    assert per_user(report, "num_nonrel_judged_ret") == {"u": 1.0, "v": 2.0}  # b; p, q
    assert report.metrics["num_nonrel_judged_ret"] == 3.0


def test_empty_cases() -> None:
    """No recommendation (kept with users_without_recommendations=zero), no relevant item
    (kept with users_without_relevant=zero), a list shorter than k: every value defined."""
    truth = {"empty": {"a": 1}, "norel": {"a": 0, "b": -1}, "short": {"a": 1}}
    run = {"norel": ["a", "b", "c"], "short": ["a"]}
    metrics = ["bpref", "infap", "unj@5", "judged@5", "num_nonrel_judged_ret"]
    report = evaluate(
        truth,
        run,
        metrics,
        users_without_recommendations="zero",
        users_without_relevant="zero",
    )
    rows = {row["user"]: row for row in report.per_user.iter_rows(named=True)}
    assert {m: rows["empty"][m] for m in metrics} == dict.fromkeys(metrics, 0.0)
    assert {m: rows["norel"][m] for m in metrics} == {
        "bpref": 0.0,
        "infap": 0.0,
        "unj@5": 2 / 5,  # b (grade -1) and c
        "judged@5": 1 / 5,
        "num_nonrel_judged_ret": 1.0,
    }
    assert {m: rows["short"][m] for m in metrics} == {
        "bpref": 1.0,
        "infap": 1.0,
        "unj@5": 0.0,
        "judged@5": 1 / 5,
        "num_nonrel_judged_ret": 0.0,
    }


def test_the_metrics_are_listed() -> None:
    from receval_cli.metrics import lookup

    assert lookup("infAP").name == "infap"
    for name in ("bpref", "infap", "unj", "judged", "num_nonrel_judged_ret"):
        assert lookup(name).function.__doc__


# --- pytrec_eval ---------------------------------------------------------------------------

# trec_eval measure -> receval metric (means; num_nonrel_judged_ret is summed)
PYTREC = {"bpref": "bpref", "infAP": "infap", "num_nonrel_judged_ret": "num_nonrel_judged_ret"}
# the metrics checked at cutoffs: trec_eval on each list cut to its first k (trec_eval -M k)
CUT = {"bpref": "bpref", "infAP": "infap"}
CUTOFFS = (1, 3, 10)
SEEDS = range(10)

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


def random_data(seed: int, ids: str) -> tuple[Qrels, Run]:
    """Judgments on part of the items only (most recommended items are unjudged), grades
    -1..3, scores with one or two decimals (ties), lists of 1-25 items, users on one side."""
    rng = random.Random(seed)
    count = rng.randint(15, 40)
    if ids == "integer":
        pool = [9, 10, 100, 7, 56, *rng.sample(range(1, 1000), count)]
        docs = list(dict.fromkeys(str(d) for d in pool))[:count]
    else:
        docs = [f"d{i}" for i in range(count)]
    qrels: Qrels = {}
    run: Run = {}
    decimals = rng.choice([1, 2])
    for user in [f"u{i}" for i in range(rng.randint(10, 25))]:
        side = rng.random()
        if side > 0.1:
            judged = rng.sample(docs, rng.randint(1, min(12, count)))
            grades = [-1, 0, 0, 1, 1, 2, 3] if rng.random() > 0.2 else [-1, 0]
            qrels[user] = {doc: rng.choice(grades) for doc in judged}
        if side < 0.9 or side > 0.97:
            listed = rng.sample(docs, rng.randint(1, min(25, count)))
            run[user] = {doc: round(rng.random(), decimals) for doc in listed}
    qrels.setdefault("anchor", {})[docs[1]] = 2
    run.setdefault("anchor", {})[docs[1]] = 0.5
    return qrels, run


def trec_order(scored: dict[str, float]) -> list[str]:
    """trec_eval's ranking: score as a C float, descending, then docno descending as text."""
    return sorted(scored, key=lambda d: (np.float32(scored[d]), d), reverse=True)


def test_random_data_has_the_edge_cases() -> None:
    ties = unjudged = negative = long_lists = only_one_side = 0
    for seed in SEEDS:
        qrels, run = random_data(seed, "integer")
        ties += sum(len(set(s.values())) < len(s) for s in run.values())
        unjudged += sum(d not in qrels.get(u, {}) for u, s in run.items() for d in s)
        negative += sum(g < 0 for judged in qrels.values() for g in judged.values())
        long_lists += sum(len(s) > 15 for s in run.values())
        only_one_side += len(set(qrels) ^ set(run))
    assert min(ties, unjudged, negative, long_lists, only_one_side) >= 10


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("ids", ["text", "integer"])
@pytest.mark.parametrize("seed", SEEDS)
def test_agrees_with_trec_eval(seed: int, ids: str, level: int) -> None:
    qrels, run = random_data(seed, ids)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC), relevance_level=level)
    trec = evaluator.evaluate(run)
    metrics = [*PYTREC.values(), *(f"{m}@{k}" for m in CUT.values() for k in CUTOFFS)]
    report = receval_report(qrels, run, metrics, ids, level)
    evaluated = report.per_user.filter(pl.col("status") == "evaluated")
    assert sorted(evaluated["user"]) == sorted(trec)
    rows = {row["user"]: row for row in evaluated.iter_rows(named=True)}
    for query, values in trec.items():
        for measure, metric in PYTREC.items():
            got, want = rows[query][metric], values[measure]
            assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (query, measure, got, want)
    for measure, metric in PYTREC.items():
        total = math.fsum(values[measure] for values in trec.values())
        want = total if measure == "num_nonrel_judged_ret" else total / len(trec)
        got = report.metrics[metric]
        assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (measure, got, want)
    for k in CUTOFFS:
        cut = {u: {d: scored[d] for d in trec_order(scored)[:k]} for u, scored in run.items()}
        trec_k = pytrec_eval.RelevanceEvaluator(qrels, set(CUT), relevance_level=level)
        for query, values in trec_k.evaluate(cut).items():
            for measure, metric in CUT.items():
                got, want = rows[query][f"{metric}@{k}"], values[measure]
                assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (query, measure, k)


# --- ir_measures (golden) ----------------------------------------------------------------

DATASETS = ("tiefree", "ties", "tiefree_int", "ties_int")
# ir_measures' measure -> receval metric (ir_measures divides by min(k, list length) and
# counts every ground-truth row as judged, a grade of -1 too)
IR_MEASURES = {
    **{f"Judged@{k}": f"judged@{k}" for k in (1, 3, 5, 10, 30)},
    "Judged": "judged",
}
IR_MEASURES_PARAMS = "(denominator=list_length,negative_grades=judged)"
# ir_measures: score descending (float64), then docno ascending as text; every user of the
# qrels, one without recommendations counting 0 (its Evaluator fills in the missing queries)
IR_MEASURES_CONVENTIONS = {
    "tie_break": "item_text_asc",
    "score_precision": "float64",
    "users_without_recommendations": "zero",
    "users_without_relevant": "zero",
}


@pytest.mark.parametrize("dataset", DATASETS)
def test_agrees_with_ir_measures(dataset: str) -> None:
    golden = json.loads((GOLDEN / "ir_measures" / f"judged_{dataset}.json").read_text())
    predictions, truth = frames(dataset)
    specs = {m: f"{spec}{IR_MEASURES_PARAMS}" for m, spec in IR_MEASURES.items()}
    report = receval_cli.evaluate(
        predictions,
        truth,
        list(specs.values()),
        conventions=IR_MEASURES_CONVENTIONS,
        truth_columns={"user": "user", "item": "item", "relevance": "relevance"},
    )
    evaluated = report.per_user.filter(pl.col("status") == "evaluated")
    rows = {str(row["user"]): row for row in evaluated.iter_rows(named=True)}
    compared = 0
    for measure, spec in specs.items():
        expected = golden["measures"][measure]
        assert sorted(rows) == sorted(expected["per_user"])
        for user, want in expected["per_user"].items():
            got = rows[user][spec]
            assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (measure, user, got, want)
            compared += 1
        got = report.metrics[spec]
        assert math.isclose(got, expected["mean"], rel_tol=0, abs_tol=TOL), (measure, got)
    assert compared > 300
