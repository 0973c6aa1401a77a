"""Input errors carry what they are about as fields (path, column, key, found, fix): on the
JSON error line of `receval run --log-format json`, and as `error.fields` in the Python
API, each worded for its audience and named in the message as written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import TRUTH_CSV, hand_case, run_process, write, write_config
from message_words import assert_plain

import receval_cli
from receval_cli.errors import InputError

RAGGED = "user,item,score\nu1,a,0.9\nu1,b,0.8\nu2,d,0.9,extra\n"
TEXT_SCORES = "user,item,score\nu1,a,0.9\nu2,d,high\n"
BROKEN_JSONL = (
    '{"user": "u1", "item": "b", "score": 0.9}\n{"user": "u2", "item": "d", "score": 0.8\n'
)


def error_line(config: Path) -> dict[str, Any]:
    """The error record of `receval --log-format json run CONFIG` (exit code 2)."""
    result = run_process("--log-format", "json", "run", config, cwd=config.parent)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.decode().splitlines()
    records = [json.loads(text) for text in lines if text.startswith("{")]
    (line,) = [record for record in records if record["level"] == "error"]
    assert_plain(line["message"])
    return line


def api_error(predictions: object, truth: object) -> InputError:
    with pytest.raises(InputError) as caught:
        receval_cli.evaluate(predictions, truth, metrics=["ndcg@2"])
    assert_plain(str(caught.value))
    return caught.value


def named_in(message: str, fields: dict[str, object]) -> None:
    """The path, key, column and fix are in the message as they are in the fields."""
    for name in ("path", "key", "column", "fix"):
        if name in fields:
            assert str(fields[name]) in message, (name, fields[name], message)


@pytest.mark.own_process  # a polars query fails (tests/support/process_isolation.py)
def test_a_ragged_csv_line(tmp_path: Path) -> None:
    config = hand_case(tmp_path, rows=RAGGED)
    path = tmp_path / "predictions.csv"
    fix = "Fix that line; a value that holds the separator ',' must be quoted."
    expected = {
        "path": str(path),
        "found": {"line": 4, "text": "u2,d,0.9,extra", "fields": 4, "header_fields": 3},
        "fix": fix,
    }
    line = error_line(config)
    assert line["fields"] == expected
    assert line["message"] == (
        f"predictions file {path} cannot be read as csv: line 4 has 4 fields where the "
        f"header has 3. {fix}"
    )

    error = api_error(str(path), str(tmp_path / "truth.csv"))
    assert error.fields == expected
    assert str(error) == line["message"]


def test_text_in_the_score_column(tmp_path: Path) -> None:
    config = hand_case(tmp_path, rows=TEXT_SCORES)
    path = tmp_path / "predictions.csv"
    found = {"dtype": "String", "value": "high", "data_row": 2}
    line = error_line(config)
    fields = line["fields"]
    assert fields == {
        "path": str(path),
        "column": "score",
        "found": found,
        "fix": "Fix the values, or point predictions.columns at the numeric column.",
    }
    assert line["message"].endswith(fields["fix"])
    named_in(line["message"], fields)

    # the API names its argument, prediction_columns, in the fix as in the message
    error = api_error(str(path), str(tmp_path / "truth.csv"))
    assert error.fields == {
        "path": str(path),
        "column": "score",
        "found": found,
        "fix": "Fix the values, or point prediction_columns at the numeric column.",
    }
    named_in(str(error), error.fields)


def test_an_empty_file(tmp_path: Path) -> None:
    config = hand_case(tmp_path, rows="")
    path = tmp_path / "predictions.csv"
    expected = {"path": str(path), "found": {"bytes": 0}, "fix": "Write the data first."}
    line = error_line(config)
    assert line["fields"] == expected
    assert line["message"] == f"predictions file {path} is empty (0 bytes). Write the data first."

    error = api_error(str(path), str(tmp_path / "truth.csv"))
    assert error.fields == expected


@pytest.mark.own_process  # a polars query fails (tests/support/process_isolation.py)
def test_a_broken_jsonl_line(tmp_path: Path) -> None:
    path = write(tmp_path / "p.jsonl", BROKEN_JSONL)
    write(tmp_path / "truth.csv", TRUTH_CSV)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "p.jsonl"},
            "ground_truth": {"path": "truth.csv"},
            "metrics": ["ndcg@2"],
        },
    )
    fix = "Fix or remove that line: each line holds one JSON object."
    expected = {
        "path": str(path),
        "found": {
            "line": 2,
            "text": '{"user": "u2", "item": "d", "score": 0.8',
            "reason": "Expecting ',' delimiter",
            "position": 41,
        },
        "fix": fix,
    }
    line = error_line(config)
    assert line["fields"] == expected
    assert line["message"] == (
        f"predictions file {path} cannot be read as jsonl: line 2 is not valid JSON "
        f"(Expecting ',' delimiter at column 41). {fix}"
    )

    error = api_error(str(path), str(tmp_path / "truth.csv"))
    assert error.fields == expected


def test_a_segments_file_that_repeats_a_user(tmp_path: Path) -> None:
    path = write(tmp_path / "segments.csv", "user,country\nu1,FR\nu2,DE\nu1,DE\n")
    config = hand_case(tmp_path, segments={"path": "segments.csv"}, segment_by=["country"])
    fix = "give each user one row."
    line = error_line(config)
    assert line["fields"] == {
        "path": str(path),
        "found": {"rows": 1, "examples": ["u1"]},
        "fix": fix,
    }
    assert line["message"] == (
        f"segments file {path}: 1 row(s) repeat a user already listed; {fix}"
    )


def test_null_scores_in_a_frame_given_to_the_api() -> None:
    predictions = pl.DataFrame({"user": [1, 1], "item": [2, 3], "score": [0.5, None]})
    truth = pl.DataFrame({"user": [1], "item": [2]})
    error = api_error(predictions, truth)
    assert error.fields == {
        "path": "<predictions frame>",
        "column": "score",
        "found": "1 null value(s)",
        "fix": "drop or fill those rows.",
    }
    assert str(error) == (
        "predictions file <predictions frame>: column 'score' has 1 null value(s); drop or "
        "fill those rows."
    )
