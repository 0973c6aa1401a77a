"""receval against pytrec_eval (trec_eval 9.x in a Python binding) on random data.

Under trec_eval's conventions receval must give trec_eval's per-query numbers and means:

    tie_break=item_text_desc          trec_eval sorts by score, then docno descending as
                                      text (9 before 10 before 100), whatever the ids' type
    users_without_recommendations=skip  trec_eval evaluates the queries in both run and qrels
    relevance_threshold=1, ap_denominator=relevant, ideal_dcg=at_k, gain=linear,
    discount=log2, precision_denominator=k
    users_without_relevant=zero       see test_trec_eval_keeps_queries_without_relevant_docs:
                                      a query whose judgments are all 0 is still evaluated
                                      (every measure 0) and enters trec_eval's mean

The data: string ids (docnos like d2 and d10, so string order is not numeric order), or
integer ids whose text and number orders differ (9, 10, 100; given to receval as
integers, to trec_eval as their text), grades 0..3, scores rounded to one or two decimals
(many ties), short lists, users in only one of the two files, users whose judgments are
all 0.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
import pytrec_eval
from pytrec_eval_runs import (
    MEASURES,
    PAIRS,
    SEEDS,
    TOL,
    TREC_CONVENTIONS,
    random_data,
    receval_report,
)

import receval_cli
from receval_cli.config.conventions import Conventions


def test_the_preset_holds_these_conventions() -> None:
    """What the agreement below relies on, spelled out (the tests run the preset itself)."""
    assert Conventions(preset="pytrec_eval").model_dump().items() >= TREC_CONVENTIONS.items()


def test_trec_eval_keeps_queries_without_relevant_docs() -> None:
    """The finding behind users_without_relevant=zero: trec_eval reports such a query."""
    qrels = {"q1": {"a": 1}, "q2": {"a": 0, "b": 0}, "q3": {"x": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"a": 1.0}, "q4": {"a": 1.0}}
    results = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.1"}).evaluate(run)
    # q3 has no run and q4 no qrels: left out. q2 is there, with zeros.
    assert set(results) == {"q1", "q2"}
    assert results["q2"] == {"map": 0.0, "P_1": 0.0}
    report = receval_report(qrels, run, ["map", "precision@1"])
    assert report.metrics == {"map": 0.5, "precision@1": 0.5}  # the mean over q1 and q2
    statuses = dict(report.per_user.select("user", "status").iter_rows())
    assert statuses == {
        "q1": "evaluated",
        "q2": "evaluated",
        "q3": "no_recommendations",
        "q4": "only_in_predictions",
    }


def test_trec_eval_breaks_ties_by_docno_descending() -> None:
    """trec_eval orders equal scores by docno, descending (as strings: d9 before d10)."""
    qrels = {"q": {"d10": 1}}
    run = {"q": {"d9": 0.5, "d10": 0.5, "d1": 0.5, "d2": 0.9}}
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    assert trec["q"]["recip_rank"] == 1 / 3  # d2, then d9, d10, d1
    assert receval_report(qrels, run, ["mrr"]).metrics["mrr"] == 1 / 3


def test_trec_eval_ties_scores_equal_in_single_precision() -> None:
    """pytrec_eval (trec_eval 9 inside) keeps scores as C floats: 0.1 and 0.1 + 1e-9 tie,
    then d9 beats d10."""
    qrels = {"q": {"d10": 1}}
    run = {"q": {"d9": 0.1, "d10": 0.1 + 1e-9}}
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    assert trec["q"]["recip_rank"] == 1 / 2
    predictions = pl.DataFrame(
        {"user": ["q", "q"], "item": ["d9", "d10"], "score": [0.1, 0.1 + 1e-9]}
    )
    truth = pl.DataFrame({"user": ["q"], "item": ["d10"]})
    preset = receval_cli.evaluate(
        predictions, truth, ["mrr"], conventions={"preset": "pytrec_eval"}
    )
    assert preset.metrics["mrr"] == 1 / 2
    # trec_eval 10.0 keeps doubles (tests/peers/trec_eval/conformance/trec_eval_scores): no tie
    # there
    trec_eval_10 = receval_cli.evaluate(predictions, truth, ["mrr"], conventions="trec_eval")
    assert trec_eval_10.metrics["mrr"] == 1.0
    exact = receval_cli.evaluate(predictions, truth, ["mrr"])  # float64: d10 scores higher
    assert exact.metrics["mrr"] == 1.0


def test_random_data_has_the_edge_cases() -> None:
    """Across the seeds: ties, users on one side only, queries with no relevant document."""
    ties = only_qrels = only_run = no_relevant = 0
    for seed in SEEDS:
        qrels, run = random_data(seed)
        ties += sum(len(set(s.values())) < len(s) for s in run.values())
        only_qrels += len(set(qrels) - set(run))
        only_run += len(set(run) - set(qrels))
        no_relevant += sum(max(qrels[q].values()) == 0 for q in set(qrels) & set(run))
    assert min(ties, only_qrels, only_run, no_relevant) >= 5


@pytest.mark.parametrize("ids", ["text", "integer"])
@pytest.mark.parametrize("seed", SEEDS)
def test_agrees_with_trec_eval(seed: int, ids: str) -> None:
    qrels, run = random_data(seed, ids)
    trec = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    report = receval_report(qrels, run, sorted(set(PAIRS.values())), ids)

    evaluated = report.per_user.filter(pl.col("status") == "evaluated")
    assert sorted(evaluated["user"]) == sorted(trec)

    rows = {row["user"]: row for row in evaluated.iter_rows(named=True)}
    for query, values in trec.items():
        assert set(PAIRS) <= set(values)
        for measure, metric in PAIRS.items():
            got, want = rows[query][metric], values[measure]
            assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (query, measure, got, want)
    for measure, metric in PAIRS.items():
        want = math.fsum(values[measure] for values in trec.values()) / len(trec)
        got = report.metrics[metric]
        assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (measure, got, want)
