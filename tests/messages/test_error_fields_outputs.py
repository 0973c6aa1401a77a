"""Errors about outputs, gates, saved reports and the users carry what they are about as
fields (path, key, found, fix): on the JSON error line of `--log-format json` (of `receval
run` and `receval compare`), and as `error.fields` in the Python API; each is named in the
message as written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import hand_case, run_process, write
from message_words import assert_plain

import receval_cli
from receval_cli.errors import InputError

HOW_TO_WRITE = "Write one with `receval run CONFIG --format json --output PATH`."


def error_line(*args: str | Path, cwd: Path) -> dict[str, Any]:
    """The error record of `receval --log-format json ARGS...` (exit code 2)."""
    result = run_process("--log-format", "json", *args, cwd=cwd)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.decode().splitlines()
    records = [json.loads(text) for text in lines if text.startswith("{")]
    (line,) = [record for record in records if record["level"] == "error"]
    assert_plain(line["message"])
    return line


def named_in(line: dict[str, Any]) -> None:
    """The path, key, column and fix are in the message as they are in the fields."""
    for name in ("path", "key", "column", "fix"):
        if name in line["fields"]:
            assert str(line["fields"][name]) in line["message"], (name, line)


def test_an_output_that_is_an_input(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    predictions = tmp_path / "predictions.csv"
    line = error_line("run", config, "--output", predictions, cwd=tmp_path)
    fix = "Nothing was read or written; write the output to another path."
    assert line["fields"] == {"path": str(predictions), "found": str(predictions), "fix": fix}
    assert line["message"] == (
        f"output {predictions} would overwrite an input: it is the predictions file "
        f"({predictions}). {fix}"
    )
    named_in(line)


def test_an_output_folder_that_does_not_exist(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    output = tmp_path / "missing" / "report.json"
    line = error_line("run", config, "--output", output, cwd=tmp_path)
    fix = f"Create it first (mkdir -p {tmp_path / 'missing'})."
    assert line["fields"] == {"path": str(output), "found": str(output.parent), "fix": fix}
    assert line["message"] == (f"output {output}: the folder {output.parent} does not exist. {fix}")
    named_in(line)


def test_a_gate_that_names_no_model(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"ndcg@2": {"min": 0.5, "model": "modle"}})
    line = error_line("run", config, cwd=tmp_path)
    fields = line["fields"]
    assert fields["path"] == str(config)
    assert fields["key"] == "gates.ndcg@2.model"
    assert fields["found"] == "modle"
    assert line["message"].startswith(f"{config}: gates.ndcg@2.model 'modle' is not a model")
    named_in(line)


def test_a_saved_report_with_a_metric_that_is_not_a_number(tmp_path: Path) -> None:
    good = {"models": {"a": {"metrics": {"ndcg@2": 0.5}}}}
    bad = {"models": {"a": {"metrics": {"ndcg@2": "high"}}}}
    first = write(tmp_path / "first.json", json.dumps(good))
    second = write(tmp_path / "second.json", json.dumps(bad))
    line = error_line("compare", first, second, cwd=tmp_path)
    assert line["fields"] == {
        "path": str(second),
        "key": "models.a.metrics.ndcg@2",
        "found": "high",
        "fix": HOW_TO_WRITE,
    }
    assert line["message"] == (
        f'report {second}: models.a.metrics.ndcg@2 is "high", not a finite number; it is not '
        f"a receval JSON report. {HOW_TO_WRITE}"
    )
    named_in(line)


def test_a_saved_report_with_a_nan_metric_says_so_in_json(tmp_path: Path) -> None:
    """NaN is no JSON value: the field holds the text the report wrote."""
    first = write(tmp_path / "first.json", '{"metrics": {"ndcg@2": 0.5}}')
    second = write(tmp_path / "second.json", '{"metrics": {"ndcg@2": NaN}}')
    result = run_process("--log-format", "json", "compare", first, second, cwd=tmp_path)
    assert result.returncode == 2
    (text,) = [t for t in result.stderr.decode().splitlines() if '"error"' in t]
    line = json.loads(text, parse_constant=pytest.fail)  # strict JSON: no NaN
    assert line["fields"]["key"] == "metrics.ndcg@2"
    assert line["fields"]["found"] == "NaN"
    named_in(line)


def test_no_user_in_both_files(tmp_path: Path) -> None:
    rows = "user,item,score\nx1,a,0.9\nx2,b,0.8\n"
    config = hand_case(tmp_path, rows=rows)
    line = error_line("run", config, cwd=tmp_path)
    fix = (
        "Check predictions.columns.user and ground_truth.columns.user, and that both files "
        "use the same ids."
    )
    assert line["fields"] == {
        "path": str(tmp_path / "predictions.csv"),
        "key": "predictions.columns.user",
        "found": {"predictions": ["x1", "x2"], "truth": ["u1", "u2"]},
        "fix": fix,
    }
    named_in(line)

    # the Python API names its arguments
    predictions = pl.DataFrame({"user": ["x1"], "item": ["a"], "score": [0.5]})
    truth = pl.DataFrame({"user": ["u1"], "item": ["a"]})
    with pytest.raises(InputError) as caught:
        receval_cli.evaluate(predictions, truth, metrics=["ndcg@2"])
    fields = caught.value.fields
    assert fields["key"] == "prediction_columns['user']"
    assert fields["path"] == "<predictions frame>"
    assert fields["found"] == {"predictions": ["x1"], "truth": ["u1"]}
    assert str(fields["fix"]).startswith("Check prediction_columns['user'] and truth_columns")
    assert str(caught.value).endswith(str(fields["fix"]))
