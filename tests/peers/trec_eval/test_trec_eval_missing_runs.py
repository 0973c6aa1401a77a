"""trec_eval 10.0's -c: a user of the qrels without a run, under the trec_eval preset
(users_without_recommendations: zero).

trec_eval 10.0 evaluates such a query on a one-document placeholder ranking (trec_eval.c's
"bogus" result, a docno in no qrels), then resets the measures that read it by their
printed name: num_ret, utility, unj_*, rbp_resid. A measure written with parameters
prints another name (utility_2,-1,-1,0, rbp_resid_p=0.5), so it keeps the placeholder's
value: utility adds b for the unjudged document (and takes one document from d's cell),
rbp_resid is p + (1 - p) * 1 = 1. Every value below was printed by trec_eval 10.0 (commit
f425365) on these qrels and this run: `trec_eval -q -c [-N 10] -m MEASURE qrels run`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import evaluate_written, write, write_config

from receval_cli.config.loading import load_config

QRELS = "user,item,relevance\na,x1,1\na,x3,2\nm,m1,1\nm,m2,2\nm,m3,0\n"
RUN = "user,item,score\na,x1,0.9\na,x2,0.5\n"
# user m: 2 relevant, no run; trec_eval -c's value for each measure
MISSING_USER = {
    "utility(a=2,b=-1,c=-1,d=0)": -3.0,  # b * 1 placeholder + c * |R| = -1 - 2
    "utility_2,-1,-1,0": -3.0,
    "utility(a=1,b=-1,c=0,d=0)": -1.0,  # -m utility.1,-1,0,0: the defaults, written
    "utility(a=2,b=-1,c=-1,collection_size=10,d=0.5)": 0.5,  # -N 10: -1 - 2 + 0.5 * 7
    "utility": 0.0,  # reset by name
    "utility(collection_size=10)": 0.0,  # -N 10 -m utility: the default name, reset
    "rbp_resid(p=0.5)": 1.0,  # 0.5 + (1 - 0.5) * 1
    "rbp_resid_p=0.5": 1.0,
    "rbp_resid(p=0.9)": 1.0,
    "rbp_resid": 0.0,  # reset by name
    "rbp(p=0.5)": 0.0,  # the placeholder is not relevant
    "utility@5(a=2,b=-1,c=-1,d=0)": -3.0,  # receval's cutoff: the placeholder is in the top 5
}


def evaluate(tmp_path: Path, metrics: list[str], extra: dict[str, Any]) -> dict[str, Any]:
    write(tmp_path / "qrels.csv", QRELS)
    write(tmp_path / "run.csv", RUN)
    config = {
        "predictions": {"path": "run.csv"},
        "ground_truth": {"path": "qrels.csv"},
        "metrics": metrics,
        **extra,
    }
    report = evaluate_written(tmp_path, config, per_user=True)
    model = report.models["model"]
    rows = {str(row["user"]): row for row in model.per_user.iter_rows(named=True)}
    return {"m": rows["m"], "a": rows["a"], "mean": model.metrics}


TREC_C = {"conventions": {"preset": "trec_eval", "users_without_recommendations": "zero"}}


def test_a_user_without_a_run_gets_trec_eval_c_values(tmp_path: Path) -> None:
    """Per user and in the mean (over both users, as -c averages): trec_eval's numbers."""
    got = evaluate(tmp_path, list(MISSING_USER), TREC_C)
    for name, expected in MISSING_USER.items():
        assert got["m"][name] == expected, (name, got["m"][name])
        assert got["mean"][name] == (got["a"][name] + expected) / 2, name


def test_a_user_with_a_run_is_scored_as_before(tmp_path: Path) -> None:
    """The placeholder is for users without a run only (user a: 1 hit, 1 miss, 1 relevant
    missed; trec_eval: utility_2,-1,-1,0 = 2 - 1 - 1 = 0, rbp_resid_p=0.5 = 0.25 + 0.5 * 0.5)."""
    got = evaluate(tmp_path, ["utility_2,-1,-1,0", "rbp_resid_p=0.5"], TREC_C)
    assert got["a"]["utility_2,-1,-1,0"] == 0.0
    assert got["a"]["rbp_resid_p=0.5"] == 0.5


def test_without_c_the_user_is_not_evaluated(tmp_path: Path) -> None:
    """The preset's default (no -c): only users in both files count."""
    got = evaluate(
        tmp_path, ["utility(a=2,b=-1,c=-1,d=0)"], {"conventions": {"preset": "trec_eval"}}
    )
    assert got["m"]["status"] == "no_recommendations"
    assert got["mean"]["utility(a=2,b=-1,c=-1,d=0)"] == 0.0


def test_receval_conventions_score_an_empty_list_unless_told(tmp_path: Path) -> None:
    """Under receval's own conventions the user's list is empty (c * |R|; no unjudged rank);
    empty_list=placeholder asks for trec_eval -c's placeholder under any preset."""
    metrics = [
        "utility(a=2,b=-1,c=-1,d=0)",
        "rbp_resid(p=0.5)",
        "utility(a=2,b=-1,c=-1,d=0,empty_list=placeholder)",
        "rbp_resid(empty_list=placeholder,p=0.5)",
    ]
    got = evaluate(tmp_path, metrics, {})["m"]
    assert [got[name] for name in metrics] == [-2.0, 0.0, -3.0, 1.0]


def test_the_trec_eval_preset_can_be_told_to_score_an_empty_list(tmp_path: Path) -> None:
    """empty_list=empty written beside the parameters wins over the preset's placeholder."""
    metrics = ["utility(a=2,b=-1,c=-1,d=0,empty_list=empty)", "rbp_resid(empty_list=empty,p=0.5)"]
    got = evaluate(tmp_path, metrics, TREC_C)["m"]
    assert [got[name] for name in metrics] == [-2.0, 0.0]


def test_pytrec_eval_has_no_placeholder(tmp_path: Path) -> None:
    """trec_eval 9 (pytrec_eval's) has no placeholder ranking: it came in 10.0 (commits
    333bc6d, 72d786a, 3d6be10 of January 2024)."""
    conventions = {"preset": "pytrec_eval", "users_without_recommendations": "zero"}
    got = evaluate(tmp_path, ["rbp_resid(p=0.5)"], {"conventions": conventions})
    assert got["m"]["rbp_resid(p=0.5)"] == 0.0


ENGINES = {
    "streaming": {"engine": "streaming"},
    "partitions 3": {"engine": "in_memory", "partitions": 3},
    "partitions 7": {"engine": "streaming", "partitions": 7},
    "auto": {"engine": "auto"},
}


@pytest.mark.parametrize("engine", list(ENGINES))
def test_every_polars_engine_gives_the_placeholder_values(tmp_path: Path, engine: str) -> None:
    got = evaluate(tmp_path, list(MISSING_USER), {**TREC_C, **ENGINES[engine]})
    assert {name: got["m"][name] for name in MISSING_USER} == MISSING_USER


@pytest.mark.slow
def test_spark_gives_the_placeholder_values(spark: Any, tmp_path: Path) -> None:
    """The means (over users a and m) Spark gives are in memory's, bit for bit."""
    from receval_cli.engines.spark import evaluate_spark

    expected = evaluate(tmp_path, list(MISSING_USER), TREC_C)
    assert {name: expected["m"][name] for name in MISSING_USER} == MISSING_USER
    config = {
        "predictions": {"path": "run.csv"},
        "ground_truth": {"path": "qrels.csv"},
        "metrics": list(MISSING_USER),
        **TREC_C,
        "engine": "spark",
    }
    loaded = load_config(write_config(tmp_path, config, "spark.yaml"))
    report = evaluate_spark(loaded, spark, buckets=3)
    assert report.metrics == expected["mean"]
