"""The pytrec_eval preset (trec_eval's conventions, scores as floats as trec_eval 9 kept
them) against pytrec_eval (live) on the shared golden data.

tests/peers/make_data.py writes the data every preset is checked on: string and integer
ids (9, 10, 100, 1000: text order is not number order), many ties (one decimal) and
float32-only ties, grades 0-4 with 2.5 and -1, users with no relevant item, users on one
side only, lists shorter than k and longer than 15, and a cutoff (30) beyond every list.

pytrec_eval is fed what trec_eval itself would read from files of these rows:
  qrels  {user: {item: int(grade)}} with every truth row; ids as text. pytrec_eval takes
         integer grades only; trec_eval reads a qrels file's grade with atol(), so "2.5"
         is 2, "-1" is -1 and "0.5" is 0: int() truncates the same way.
  run    {user: {item: score}} with every prediction; ids as text (trec_eval's docnos).
receval reads the same files under `preset: pytrec_eval`, integer ids as pl.Int64, grades as
numbers (pl.Float64), and must give pytrec_eval's per-query values and means to 1e-9.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import golden_files
import polars as pl
import pytest
import pytrec_eval
import trec_measures

import receval_cli
from receval_cli.metrics import lookup

TOL = 1e-9
CUTOFFS = (1, 3, 5, 10, 30)
PAIRS = trec_measures.pairs(CUTOFFS, counts=True)
MEASURES = trec_measures.measures(CUTOFFS, counts=True)


@cache
def trec(dataset: str) -> dict[str, dict[str, float]]:
    predictions, truth = golden_files.frames(dataset)
    qrels: dict[str, dict[str, int]] = {}
    for user, item, grade in truth.iter_rows():
        qrels.setdefault(str(user), {})[str(item)] = int(grade)  # atol(): truncation
    run: dict[str, dict[str, float]] = {}
    for user, item, score in predictions.iter_rows():
        run.setdefault(str(user), {})[str(item)] = score
    results: dict[str, dict[str, float]] = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(
        run
    )
    return results


@cache
def receval(dataset: str) -> Any:
    predictions, truth = golden_files.frames(dataset)
    return receval_cli.evaluate(
        predictions,
        truth,
        sorted(set(PAIRS.values())),
        conventions={"preset": "pytrec_eval"},
        truth_columns={"relevance": "relevance"},
    )


def test_the_data_has_every_shape() -> None:
    """The shapes the preset tests need, on the data these comparisons read."""
    for dataset in golden_files.DATASETS:
        predictions, truth = golden_files.frames(dataset)
        assert predictions["user"].dtype == golden_files.id_type(dataset)
        grades = set(truth["relevance"])
        assert {0, 1, 2, 3, 4, 2.5, -1} <= grades
        lengths = predictions.group_by("user").len()["len"]
        assert lengths.min() == 1
        assert 15 < lengths.max() < max(CUTOFFS)
        assert set(truth["user"]) - set(predictions["user"])  # only in the truth
        assert set(predictions["user"]) - set(truth["user"])  # only in the predictions
        relevant = set(truth.filter(pl.col("relevance") >= 1)["user"])
        assert set(truth["user"]) - relevant  # no relevant item
        items = {str(i).removeprefix("i") for i in predictions["item"]}
        assert {"9", "10", "100", "1000"} <= items
        per_user = predictions.group_by("user").agg(
            f64=pl.col("score").n_unique(),
            f32=pl.col("score").cast(pl.Float32).n_unique(),
            n=pl.len(),
        )
        assert (per_user["f32"] < per_user["f64"]).sum() >= 5  # float32-only ties
        if dataset.startswith("tiefree"):
            assert (per_user["f64"] == per_user["n"]).all()
        else:
            long_tied = per_user.filter((pl.col("n") > 15) & (pl.col("f64") < pl.col("n")))
            assert long_tied.height >= 3


def test_integer_and_string_variants_hold_the_same_rows() -> None:
    for name in ("tiefree", "ties"):
        text = golden_files.frames(name)
        numbers = golden_files.frames(f"{name}_int")
        for a, b in zip(text, numbers, strict=True):
            assert a["user"].to_list() == [f"u{u}" for u in b["user"]]
            assert a["item"].to_list() == [f"i{i}" for i in b["item"]]
            assert a.columns == b.columns
            assert a[:, 2].equals(b[:, 2])


@pytest.mark.parametrize("dataset", golden_files.DATASETS)
def test_agrees_with_trec_eval(dataset: str) -> None:
    results = trec(dataset)
    report = receval(dataset)
    evaluated = report.per_user.filter(pl.col("status") == "evaluated")
    assert sorted(map(str, evaluated["user"])) == sorted(results)

    rows = {str(row["user"]): row for row in evaluated.iter_rows(named=True)}
    differ = []
    for query, values in results.items():
        for measure, metric in PAIRS.items():
            got, want = rows[query][metric], values[measure]
            if not math.isclose(got, want, rel_tol=0, abs_tol=TOL):
                differ.append((measure, query, got, want))
    for measure, metric in PAIRS.items():
        # trec_eval's summary: the mean over queries, the sum for the num_* counts
        want = math.fsum(values[measure] for values in results.values())
        if lookup(metric.split("@")[0]).aggregate == "mean":
            want /= len(results)
        got = report.metrics[metric]
        if not math.isclose(got, want, rel_tol=0, abs_tol=TOL):
            differ.append((measure, "mean", got, want))
    assert not differ, f"{len(differ)} values differ, e.g. {differ[:6]}"
