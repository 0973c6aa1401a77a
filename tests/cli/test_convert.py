"""`receval convert`: any predictions file as a TREC run, any ground truth as TREC qrels
(--qrels), each evaluating as the original."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_user_error, invoke, write, write_config

ROOT = Path(__file__).parents[2]
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
    out = tmp_path / "expected.run"
    result = invoke("convert", tmp_path / "p.csv", "-o", out, "--tie-break", "expected")
    assert_user_error(result, "--tie-break expected", "a TREC run writes one order")
    assert not out.exists()


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


# --- --qrels: a ground truth as TREC qrels ----------------------------------------------


def qrels_of(tmp_path: Path, source: Path, *options: str) -> tuple[str, str]:
    out = tmp_path / "truth.qrels"
    result = invoke("convert", source, "--qrels", "-o", out, *options)
    assert result.exit_code == 0, result.stderr
    return out.read_text(encoding="utf-8"), result.stderr


def test_qrels_by_hand(tmp_path: Path) -> None:
    """Sorted by user then item (in the ids' own order: 9, 10, 100), grades as written:
    whole numbers as integers, 0 and negative grades kept."""
    write(tmp_path / "t.csv", "user,item,relevance\n10,100,2\n9,10,0\n9,9,-1\n10,9,3\n")
    text, stderr = qrels_of(tmp_path, tmp_path / "t.csv")
    assert text == "9 0 9 -1\n9 0 10 0\n10 0 9 3\n10 0 100 2\n"
    assert "wrote 4 lines for 2 users" in stderr


def test_qrels_of_a_binary_truth_and_of_lists(tmp_path: Path) -> None:
    write(tmp_path / "t.csv", "user,item\nq,b\nq,a\n")
    assert qrels_of(tmp_path, tmp_path / "t.csv")[0] == "q 0 a 1\nq 0 b 1\n"
    lines = '{"u": "q", "items": ["b", "a"], "grades": [2, 1]}\n'
    write(tmp_path / "t.jsonl", lines)
    options = ("--user", "u", "--items", "items", "--relevances", "grades")
    assert qrels_of(tmp_path, tmp_path / "t.jsonl", *options)[0] == "q 0 a 1\nq 0 b 2\n"


def test_fractional_grades_are_written_and_told(tmp_path: Path) -> None:
    write(tmp_path / "t.csv", "user,item,relevance\nq,a,2.5\nq,b,1\n")
    text, stderr = qrels_of(tmp_path, tmp_path / "t.csv")
    assert text == "q 0 a 2.5\nq 0 b 1.0\n"
    assert "trec_eval reads a grade as an integer (atol: 2.5 is 2)" in stderr


def test_the_qrels_evaluate_like_the_original(tmp_path: Path) -> None:
    """The sample ground truth as qrels, read back as a TREC file: every value equal (ids
    compared as text, so the tie-break compares them as text in both runs)."""
    text, _ = qrels_of(
        tmp_path,
        SAMPLE / "ground_truth.parquet",
        "--user", "user_id", "--item", "item_id", "--relevance", "rating",
    )  # fmt: skip
    assert text.splitlines()[0] == "u001 0 1 5"
    found = {}
    for name, truth in (
        ("original", {
            "path": str(SAMPLE / "ground_truth.parquet"),
            "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
        }),
        ("qrels", {"path": str(tmp_path / "truth.qrels")}),
    ):  # fmt: skip
        config = write_config(
            tmp_path,
            {
                "predictions": {
                    "path": str(SAMPLE / "predictions.csv"),
                    "columns": {"user": "user_id", "item": "item_id"},
                },
                "ground_truth": truth,
                "metrics": METRICS,
                "conventions": {"relevance_threshold": 4, "tie_break": "item_text_desc"},
            },
            name=f"{name}.yaml",
        )
        result = invoke("run", config, "--format", "json")
        assert result.exit_code == 0, result.stderr
        found[name] = json.loads(result.stdout)["models"]["model"]["metrics"]
    assert found["qrels"] == found["original"]


@pytest.mark.parametrize(
    ("rows", "options", "message"),
    [
        ("user,item\nq,a\nq,a\n", (), "truth_duplicates"),
        ("user,item\nq,a b\n", (), "white space, which a TREC qrels cannot carry"),
        ("user,item\nq,a\n", ("--tag", "x"), "--tag is for runs, not --qrels"),
        ("user,item\nq,a\n", ("--score", "s"), "--score is for runs, not --qrels"),
        ("user,item\nq,a\n", ("--relevance", "grade"), "grade"),
    ],
)
def test_bad_qrels_are_refused(
    tmp_path: Path, rows: str, options: tuple[str, ...], message: str
) -> None:
    write(tmp_path / "t.csv", rows)
    out = tmp_path / "t.qrels"
    result = invoke("convert", tmp_path / "t.csv", "--qrels", "-o", out, *options)
    assert result.exit_code == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert message in result.stderr
    assert not out.exists()


def test_relevance_options_need_qrels(tmp_path: Path) -> None:
    write(tmp_path / "p.csv", "user,item,score\nq,a,1.0\n")
    result = invoke("convert", tmp_path / "p.csv", "-o", tmp_path / "p.run", "--relevance", "r")
    assert_user_error(result, "--relevance is for --qrels only")
