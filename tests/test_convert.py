"""`receval convert`: any predictions file as a TREC run that evaluates the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_user_error, invoke, write, write_config

ROOT = Path(__file__).parent.parent
SAMPLE = ROOT / "sample_data"
METRICS = ["ndcg@10", "map@10", "precision@5", "mrr", "num_ret", "num_rel_ret"]


def evaluate(folder: Path, predictions: dict[str, object]) -> dict[str, float]:
    config = write_config(
        folder,
        {
            "predictions": predictions,
            "ground_truth": {
                "path": str(SAMPLE / "ground_truth.parquet"),
                "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
            },
            "metrics": METRICS,
            "conventions": {"relevance_threshold": 4},
        },
        name=f"config-{len(list(folder.iterdir()))}.yaml",
    )
    result = invoke("run", config, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["models"]["model"]["metrics"]


@pytest.mark.parametrize(
    ("source", "options"),
    [
        ("predictions.csv", ["--user", "user_id", "--item", "item_id"]),
        ("predictions_lists.jsonl", ["--user", "user_id", "--items", "items"]),
    ],
)
def test_the_run_evaluates_like_the_original(
    tmp_path: Path, source: str, options: list[str]
) -> None:
    run = tmp_path / "model.run"
    result = invoke("convert", SAMPLE / source, "--output", run, *options)
    assert result.exit_code == 0, result.stderr
    assert "wrote 6150 lines for 205 users" in result.stderr
    first = run.read_text().splitlines()[0].split(" ")
    assert first[:4] == ["u001", "Q0", "120", "1"]
    assert first[5] == "receval"
    original = evaluate(
        tmp_path,
        {
            "path": str(SAMPLE / "predictions.csv"),
            "columns": {"user": "user_id", "item": "item_id"},
        },
    )
    assert evaluate(tmp_path, {"path": str(run)}) == original


def test_tied_scores_are_rewritten_for_other_tie_breaks(tmp_path: Path) -> None:
    write(tmp_path / "p.csv", "user,item,score\nq,a,1.0\nq,b,1.0\nq,c,0.5\n")
    run = tmp_path / "p.run"
    result = invoke("convert", tmp_path / "p.csv", "-o", run, "--tie-break", "item_asc")
    assert result.exit_code == 0, result.stderr
    # a before b (ascending); scores strictly decreasing so trec_eval keeps this order
    assert run.read_text() == "q Q0 a 1 3.0 receval\nq Q0 b 2 2.0 receval\nq Q0 c 3 1.0 receval\n"


def test_ids_with_white_space_are_refused(tmp_path: Path) -> None:
    write(tmp_path / "p.csv", "user,item,score\nq,a b,1.0\n")
    run = tmp_path / "p.run"
    result = invoke("convert", tmp_path / "p.csv", "-o", run)
    assert_user_error(result, "p.csv", "'a b'", "white space")
    assert not run.exists()


def test_duplicates_are_refused(tmp_path: Path) -> None:
    write(tmp_path / "p.csv", "user,item,score\nq,a,1.0\nq,a,0.5\n")
    result = invoke("convert", tmp_path / "p.csv", "-o", tmp_path / "p.run")
    assert_user_error(result, "p.csv", "appear more than once", "user 'q', item 'a' (2 rows)")


def test_bad_tie_break_option(tmp_path: Path) -> None:
    write(tmp_path / "p.csv", "user,item,score\nq,a,1.0\n")
    result = invoke("convert", tmp_path / "p.csv", "-o", tmp_path / "p.run", "--tie-break", "x")
    assert_user_error(result, "tie_break", "item_desc")


def test_missing_output_folder(tmp_path: Path) -> None:
    write(tmp_path / "p.csv", "user,item,score\nq,a,1.0\n")
    result = invoke("convert", tmp_path / "p.csv", "-o", tmp_path / "nope" / "p.run")
    assert_user_error(result, "does not exist", "mkdir -p")


def test_messages_name_the_options_not_config_keys(tmp_path: Path) -> None:
    result = invoke("convert", SAMPLE / "predictions.csv", "-o", tmp_path / "p.run")
    message = assert_user_error(result, "no column 'user'", "(set by --user)", "Set --user to")
    assert "predictions.columns" not in message
    missing = invoke("convert", tmp_path / "nope.csv", "-o", tmp_path / "p.run")
    assert_user_error(missing, "nope.csv", "does not exist. Check the path.")
