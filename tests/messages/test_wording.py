"""Messages name a setting for their audience (wording.py): config keys for `receval run`,
keyword arguments for the Python API, options for `receval convert`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import hand_case, invoke, run_process

import receval_cli
from receval_cli.errors import InputError
from receval_cli.wording import audience, folder_fix, missing_file_fix, setting


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        ("config", ["predictions.columns.user", "ground_truth.columns", "catalog.separator"]),
        ("api", ["prediction_columns['user']", "truth_columns", "catalog.separator"]),
        ("convert", ["--user", "ground_truth.columns", "catalog.separator"]),
    ],
)
def test_one_setting_three_audiences(who: str, expected: list[str]) -> None:
    with audience(who):
        found = [
            setting("predictions", "columns", "user"),
            setting("ground_truth", "columns"),
            setting("catalog", "separator"),
        ]
    assert found == expected
    assert setting("predictions", "columns", "user") == "predictions.columns.user"  # reset


def test_path_fixes() -> None:
    assert "Fix predictions.path in the config" in missing_file_fix("predictions")
    assert folder_fix("catalog") == "Point catalog.path at a file."
    with audience("api"):
        assert missing_file_fix("baseline").startswith("Check the path given as baseline")
        assert folder_fix("catalog") == "Give a file as catalog."
    with audience("convert"):
        assert missing_file_fix("predictions") == "Check the path."
        assert folder_fix("predictions") == "Point the SOURCE argument at a file."


def test_the_api_and_convert_word_the_same_error_for_their_users(tmp_path: Path) -> None:
    """A missing score column: the API names its argument, convert its option, run its key."""
    predictions = pl.DataFrame({"user": [1], "item": [2], "points": [0.5]})
    truth = pl.DataFrame({"user": [1], "item": [2]})
    with pytest.raises(InputError, match=r"prediction_columns\['score'\]"):
        receval_cli.evaluate(
            predictions, truth, metrics=["ndcg@2"], prediction_columns={"score": "pts"}
        )
    path = tmp_path / "p.csv"
    predictions.write_csv(path)
    result = invoke("convert", path, "--score", "pts", "-o", tmp_path / "run.txt")
    assert result.exit_code == 2
    assert "--score" in result.stderr
    assert "predictions.columns" not in result.stderr


def json_object(text: str) -> dict[str, Any] | None:
    """A stderr line as the JSON object it is, or None (another line: a warning printed
    by a library)."""
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def test_a_failure_carries_what_it_is_about(tmp_path: Path) -> None:
    """The file, the column, the key, what was found and the fix, as fields: on the JSON
    error line of `--log-format json`, and as `error.fields` in the Python API."""
    named = {"path": "predictions.csv", "columns": {"score": "pts"}}
    config = hand_case(tmp_path, rows="user,item,points\nu1,a,0.5\n", predictions=named)
    result = run_process("--log-format", "json", "run", config, cwd=tmp_path)
    stderr = result.stderr.decode()
    assert result.returncode == 2, stderr  # the message says why when it is not
    records = [json_object(text) for text in stderr.splitlines()]
    errors = [record for record in records if record and record.get("level") == "error"]
    assert len(errors) == 1, stderr
    (line,) = errors
    fields = line["fields"]
    assert fields["path"].endswith("predictions.csv"), stderr
    assert fields["column"] == "pts", stderr
    assert fields["key"] == "predictions.columns.score", stderr
    assert fields["found"] == ["user", "item", "points"], stderr
    assert fields["fix"] == "Set predictions.columns.score to one of them.", stderr
    assert line["message"].endswith(fields["fix"]), stderr

    predictions = pl.DataFrame({"user": [1, 1], "item": [2, 2], "score": [0.5, 0.4]})
    truth = pl.DataFrame({"user": [1], "item": [2]})
    with pytest.raises(InputError) as caught:
        receval_cli.evaluate(predictions, truth, metrics=["ndcg@2"])
    assert caught.value.fields["key"] == "conventions.duplicates"
    assert caught.value.fields["found"] == [{"user": 1, "item": 2, "rows": 2}]
