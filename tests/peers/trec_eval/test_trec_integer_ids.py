"""trec_eval's tie rule with integer ids: trec_eval breaks tied scores by the
docno as text, descending ("9" before "10" before "100"), whatever the ids look like.

The `trec_eval` preset reproduces it on integer ids read from CSV or Parquet (tie_break
item_text_desc), and `receval convert` writes runs that trec_eval ranks exactly as receval
ranked them, whatever the tie-break and the id type. The reference is pytrec_eval.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import pytrec_eval
from cli_helpers import invoke, run_metrics, write_config

# user 1: items 56 and 7 tied at the top, 7 relevant; user 2: 100, 10 and 9 tied, 9 relevant
HAND_PREDICTIONS = {"user": [1, 1, 1, 2, 2, 2], "item": [56, 7, 3, 100, 10, 9]}
HAND_SCORES = [0.9, 0.9, 0.1, 0.5, 0.5, 0.5]
HAND_TRUTH = {"user": [1, 2], "item": [7, 9]}


def write_hand_case(folder: Path, fmt: str, ids: str) -> tuple[Path, Path]:
    predictions = pl.DataFrame({**HAND_PREDICTIONS, "score": HAND_SCORES})
    truth = pl.DataFrame(HAND_TRUTH)
    if ids == "text":
        predictions = predictions.with_columns(pl.col("user", "item").cast(pl.String))
        truth = truth.with_columns(pl.col("user", "item").cast(pl.String))
    paths = folder / f"p.{fmt}", folder / f"t.{fmt}"
    for frame, path in zip((predictions, truth), paths, strict=True):
        frame.write_csv(path) if fmt == "csv" else frame.write_parquet(path)
    return paths


def hand_metrics(folder: Path, predictions: Path, truth: Path, conventions: dict[str, Any]) -> Any:
    config = {
        "predictions": {"path": str(predictions)},
        "ground_truth": {"path": str(truth)},
        "metrics": ["precision@1", "mrr"],
        "conventions": conventions,
    }
    return run_metrics(folder, config, "c")


@pytest.mark.parametrize("ids", ["integer", "text"])
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_the_preset_breaks_ties_by_docno_as_text(tmp_path: Path, fmt: str, ids: str) -> None:
    """User 1: "7" > "56" as text, so 7 (relevant) ranks first; user 2: "9" > "100" > "10",
    so 9 (relevant) ranks first: precision@1 = 1 for both, as trec_eval says, whatever the
    id type and the file format."""
    predictions, truth = write_hand_case(tmp_path, fmt, ids)
    got = hand_metrics(tmp_path, predictions, truth, {"preset": "trec_eval"})
    qrels = {
        str(u): {str(i): 1} for u, i in zip(HAND_TRUTH["user"], HAND_TRUTH["item"], strict=True)
    }
    run: dict[str, dict[str, float]] = {}
    for u, i, s in zip(
        HAND_PREDICTIONS["user"], HAND_PREDICTIONS["item"], HAND_SCORES, strict=True
    ):
        run.setdefault(str(u), {})[str(i)] = s
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"P.1", "recip_rank"}).evaluate(run)
    assert {q: v["P_1"] for q, v in trec.items()} == {"1": 1.0, "2": 1.0}
    assert got == {"precision@1": 1.0, "mrr": 1.0}


def test_item_desc_orders_integer_ids_as_numbers(tmp_path: Path) -> None:
    """item_desc keeps the ids' own order: 56 before 7, 100 before 10 before 9, so neither
    user's relevant item is first (the rule receval's default and RePlay follow)."""
    predictions, truth = write_hand_case(tmp_path, "parquet", "integer")
    got = hand_metrics(tmp_path, predictions, truth, {"tie_break": "item_desc"})
    assert got == {"precision@1": 0.0, "mrr": (1 / 2 + 1 / 3) / 2}
    text = hand_metrics(tmp_path, predictions, truth, {"tie_break": "item_text_desc"})
    assert text == {"precision@1": 1.0, "mrr": 1.0}
    ascending = hand_metrics(tmp_path, predictions, truth, {"tie_break": "item_text_asc"})
    # as text ascending: "56" < "7", and "10" < "100" < "9"
    assert ascending == {"precision@1": 0.0, "mrr": (1 / 2 + 1 / 3) / 2}


def random_case(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Integer ids whose text and number orders differ, scores rounded to one decimal (many
    ties), lists shorter and longer than the cutoffs, graded truth with zeros."""
    rng = random.Random(seed)
    pool = [7, 9, 10, 56, 100, 1000, *rng.sample(range(11, 999), 14)]
    predictions, truth = [], []
    for user in range(1, 31):
        for item in rng.sample(pool, rng.randint(1, 18)):
            predictions.append((user, item, round(rng.random(), 1)))
        for item in rng.sample(pool, rng.randint(1, 6)):
            truth.append((user, item, rng.choice([0, 1, 1, 2, 3])))
    return (
        pl.DataFrame(predictions, schema=["user", "item", "score"], orient="row"),
        pl.DataFrame(truth, schema=["user", "item", "relevance"], orient="row"),
    )


MEASURES = {"P.1,5,10": "precision@{}", "ndcg_cut.5,10": "ndcg@{}", "recip_rank": "mrr"}
PAIRS = {"P_1": "precision@1", "P_5": "precision@5", "P_10": "precision@10"}
PAIRS |= {"ndcg_cut_5": "ndcg@5", "ndcg_cut_10": "ndcg@10", "recip_rank": "mrr"}


def trec_eval_on(run_file: Path, truth: pl.DataFrame) -> dict[str, dict[str, float]]:
    """pytrec_eval on a TREC run file as written (docnos and scores as text)."""
    run: dict[str, dict[str, float]] = {}
    for line in run_file.read_text(encoding="utf-8").splitlines():
        query, _, doc, _, score, _ = line.split(" ")
        run.setdefault(query, {})[doc] = float(score)
    qrels: dict[str, dict[str, int]] = {}
    for user, item, grade in truth.iter_rows():
        qrels.setdefault(str(user), {})[str(item)] = grade
    measures = {"P.1,5,10", "ndcg_cut.5,10", "recip_rank"}
    found: dict[str, dict[str, float]] = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(
        run
    )
    return found


@pytest.mark.slow
@pytest.mark.parametrize("tie_break", ["item_desc", "item_asc", "item_text_desc", "item_text_asc"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_convert_writes_runs_trec_eval_ranks_as_receval(
    tmp_path: Path, seed: int, tie_break: str
) -> None:
    """For integer ids and every tie-break: receval's numbers (trec_eval's conventions, this
    tie-break) on the original file equal trec_eval's on the run convert wrote, per user."""
    predictions, truth = random_case(seed)
    source, truth_path = tmp_path / "p.parquet", tmp_path / "t.parquet"
    predictions.write_parquet(source)
    truth.write_parquet(truth_path)
    run_file = tmp_path / "p.run"
    result = invoke("convert", source, "-o", run_file, "--tie-break", tie_break)
    assert result.exit_code == 0, result.stderr
    trec = trec_eval_on(run_file, truth)
    config = {
        "predictions": {"path": str(source)},
        "ground_truth": {"path": str(truth_path)},
        "metrics": sorted(set(PAIRS.values())),
        "conventions": {"preset": "trec_eval", "tie_break": tie_break},
    }
    per_user = tmp_path / "users.csv"
    result = invoke("run", write_config(tmp_path, config, "c.yaml"), "--per-user", per_user)
    assert result.exit_code == 0, result.stderr
    rows = {
        str(row["user"]): row
        for row in pl.read_csv(per_user).iter_rows(named=True)
        if row["status"] == "evaluated"
    }
    assert sorted(rows) == sorted(trec)
    for query, values in trec.items():
        for measure, metric in PAIRS.items():
            assert rows[query][metric] == pytest.approx(values[measure], abs=1e-12), (
                query,
                measure,
            )


def test_convert_keeps_the_scores_when_trec_eval_breaks_ties_the_same_way(
    tmp_path: Path,
) -> None:
    """item_text_desc is trec_eval's own rule: the original scores are written; item_desc on
    integer ids is not (100 before 10 before 9 in number order), so ranks become scores."""
    predictions = pl.DataFrame({"user": [1, 1, 1], "item": [9, 10, 100], "score": [0.5] * 3})
    source = tmp_path / "p.parquet"
    predictions.write_parquet(source)
    kept, rewritten = tmp_path / "kept.run", tmp_path / "rewritten.run"
    assert invoke("convert", source, "-o", kept, "--tie-break", "item_text_desc").exit_code == 0
    assert invoke("convert", source, "-o", rewritten, "--tie-break", "item_desc").exit_code == 0
    assert kept.read_text() == (
        "1 Q0 9 1 0.5 receval\n1 Q0 100 2 0.5 receval\n1 Q0 10 3 0.5 receval\n"
    )
    assert rewritten.read_text() == (
        "1 Q0 100 1 3.0 receval\n1 Q0 10 2 2.0 receval\n1 Q0 9 3 1.0 receval\n"
    )
