"""ir_measures' spellings (#37 item 1, first part): receval reads metric names case-blind,
so `AP@10` and `nDCG@10` are its own map@10 and ndcg@10 under the run's conventions, which
are not ir_measures'. The run says so (a warning naming the preset that reproduces
ir_measures), an ir_measures name receval lacks (`P@10`) names receval's metric, and
`receval metrics` explains a name as the config reads it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_user_error, hand_case, invoke, write_config

from receval_cli.metrics.peer_names import IR_MEASURES_SPELLINGS, PEER_MEASURES, spelling_note
from receval_cli.metrics.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def sample_run(folder: Path, metrics: list[Any], conventions: dict[str, Any]) -> dict[str, Any]:
    config = write_config(
        folder,
        {
            "predictions": {
                "path": str(SAMPLE / "predictions.csv"),
                "columns": {"user": "user_id", "item": "item_id"},
            },
            "ground_truth": {
                "path": str(SAMPLE / "ground_truth.parquet"),
                "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
            },
            "metrics": metrics,
            "conventions": conventions,
        },
        name=f"c{len(list(folder.iterdir()))}.yaml",
    )
    result = invoke("run", config, "-q", "--format", "json")
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_ir_measures_spellings_are_read_as_receval_metrics_and_told(tmp_path: Path) -> None:
    data = sample_run(tmp_path, ["AP@10", "nDCG@10", "ap@5", "Recall@10"], {})
    assert list(data["models"]["model"]["metrics"]) == ["map@10", "ndcg@10", "map@5", "recall@10"]
    notes = [w for w in data["warnings"] if "ir_measures' spelling" in w]
    assert notes == [
        "metrics: 'AP@10' is ir_measures' spelling of map; receval reads it as its own map "
        "under this run's conventions, which are not ir_measures' (it runs trec_eval through "
        "pytrec_eval). To reproduce ir_measures, set conventions.preset: pytrec_eval.",
        spelling_note("nDCG@10"),
    ]  # receval's own names, whatever their case (ap@5, Recall@10), are not told


def test_the_preset_the_note_names_gives_ir_measures_numbers(tmp_path: Path) -> None:
    """ir_measures' AP@10 and nDCG@10 are pytrec_eval's map_cut_10 and ndcg_cut_10:
    live, on the sample files, under the pytrec_eval preset."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    import polars as pl

    truth = pl.read_parquet(SAMPLE / "ground_truth.parquet")
    run = pl.read_csv(SAMPLE / "predictions.csv")
    qrels: dict[str, dict[str, int]] = {}
    for user, item, rating in truth.iter_rows():
        qrels.setdefault(user, {})[str(item)] = int(rating)
    scores: dict[str, dict[str, float]] = {}
    for user, item, score in run.select("user_id", "item_id", "score").iter_rows():
        scores.setdefault(user, {})[str(item)] = float(score)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map_cut_10", "ndcg_cut_10"})
    per_query = evaluator.evaluate(scores)
    expected = {
        measure: sum(v[measure] for v in per_query.values()) / len(per_query)
        for measure in ("map_cut_10", "ndcg_cut_10")
    }
    data = sample_run(tmp_path, ["AP@10", "nDCG@10"], {"preset": "pytrec_eval"})
    metrics = data["models"]["model"]["metrics"]
    assert metrics["map@10"] == pytest.approx(expected["map_cut_10"], abs=1e-12)
    assert metrics["ndcg@10"] == pytest.approx(expected["ndcg_cut_10"], abs=1e-12)


@pytest.mark.parametrize(("written", "metric"), [("P@10", "precision"), ("R@5", "recall")])
def test_an_ir_measures_name_receval_lacks_names_receval_s(
    tmp_path: Path, written: str, metric: str
) -> None:
    config = hand_case(tmp_path, metrics=[written])
    result = invoke("run", config)
    assert_user_error(result, f"is ir_measures' name for receval's {metric}: write {metric}")


@pytest.mark.parametrize(("name", "shown"), [("AP", "map "), ("nDCG@10", "ndcg "), ("RR", "mrr ")])
def test_receval_metrics_explains_a_name_as_the_config_reads_it(name: str, shown: str) -> None:
    result = invoke("metrics", name)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(shown)


def test_every_ir_measures_spelling_is_a_registered_metric() -> None:
    """The spellings come from PEER_MEASURES (one table), each a registered metric."""
    assert {"AP", "nDCG", "P", "R", "RR", "Judged", "ERR", "RBP"} <= set(IR_MEASURES_SPELLINGS)
    for written, metric in IR_MEASURES_SPELLINGS.items():
        assert metric in REGISTRY, written
        assert PEER_MEASURES[metric]["ir_measures"].startswith(written)
        assert spelling_note(f"{written}@10") is not None
