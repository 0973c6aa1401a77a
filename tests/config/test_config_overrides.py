"""`--set KEY=VALUE` and `${NAME}` in a config: one config for a cron job's
every model and day. Both change the mapping read from the YAML before it is validated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import (
    PREDICTIONS_CSV,
    assert_no_traceback,
    hand_case,
    invoke,
    run_json,
    write,
    write_config,
)

import receval

# the hand case's predictions with u2's relevant item ranked last: precision@1 0.0, not 0.5
OTHER_CSV = "user,item,score\nu1,a,0.9\nu1,b,0.8\nu1,c,0.7\nu2,d,0.1\nu2,e,0.5\n"


def variable_case(folder: Path, path: str) -> Path:
    hand_case(folder)
    return write_config(
        folder,
        {
            "predictions": {"path": path},
            "ground_truth": {"path": "truth.csv"},
            "metrics": ["precision@1"],
        },
    )


def test_a_variable_in_a_path_is_the_environments(tmp_path: Path) -> None:
    write(tmp_path / "day-2" / "predictions.csv", OTHER_CSV)
    config = variable_case(tmp_path, "${RECEVAL_TEST_DAY}/predictions.csv")
    result = invoke("run", config, "--format", "json", env={"RECEVAL_TEST_DAY": "day-2"})
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["models"]["model"]["metrics"] == {"precision@1": 0.0}
    assert report["config"]["predictions"]["path"] == "day-2/predictions.csv"  # as run


def test_a_variable_not_set_is_refused_naming_the_key(tmp_path: Path) -> None:
    config = variable_case(tmp_path, "${RECEVAL_TEST_UNSET}/predictions.csv")
    result = invoke("run", config, env={"RECEVAL_TEST_UNSET": None})
    assert_no_traceback(result)
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {config}: predictions.path uses ${{RECEVAL_TEST_UNSET}}, and the "
        "environment has no RECEVAL_TEST_UNSET; set it (export RECEVAL_TEST_UNSET=...), or "
        "write $${RECEVAL_TEST_UNSET} for the text itself.\n"
    )


def test_a_doubled_dollar_is_the_text_itself(tmp_path: Path) -> None:
    write(tmp_path / "p${x}.csv", PREDICTIONS_CSV)
    config = variable_case(tmp_path, "p$${x}.csv")
    assert run_json(config)["models"]["model"]["metrics"] == {"precision@1": 0.5}


@pytest.mark.parametrize("text", ["${}", "${1DAY}", "${A-B}"])
def test_a_variable_without_a_name_is_refused(tmp_path: Path, text: str) -> None:
    config = variable_case(tmp_path, f"{text}/predictions.csv")
    result = invoke("run", config)
    assert result.exit_code == 2
    assert "predictions.path holds" in result.stderr
    assert "which names no variable" in result.stderr


def test_set_changes_the_run(tmp_path: Path) -> None:
    write(tmp_path / "other.csv", OTHER_CSV)
    config = hand_case(tmp_path)
    report = run_json(
        config,
        "--set", "predictions.path=other.csv",  # read from the config's folder
        "--set", "metrics=[precision@1, mrr]",
        "--set", "conventions.tie_break=item_asc",  # a key the file does not have
    )  # fmt: skip
    # u1: b at rank 2; u2: d (score 0.1) below e: rank 2 too
    assert report["models"]["model"]["metrics"] == {"precision@1": 0.0, "mrr": 0.5}
    assert report["conventions"]["tie_break"] == "item_asc"
    assert report["config"]["predictions"]["path"] == "other.csv"


@pytest.mark.parametrize("command", ["run", "validate", "inspect"])
def test_every_command_that_reads_a_config_takes_set(tmp_path: Path, command: str) -> None:
    config = hand_case(tmp_path)
    result = invoke(command, config, "--set", "predictions.path=missing.csv")
    assert_no_traceback(result)
    assert result.exit_code == 2
    assert "missing.csv" in result.stderr


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("metrics", "--set 'metrics': write KEY=VALUE, the key dotted as in the config"),
        ("a..b=1", "--set 'a..b=1': write KEY=VALUE"),
        ("=1", "--set '=1': write KEY=VALUE"),
        ("metrics=[a", "--set 'metrics=[a': the value is not valid YAML"),
        ("metrics.a=1", "--set 'metrics.a=1': metrics is a list (['precision@1', 'ndcg@2'])"),
        ("predictions.path.x=1", "--set 'predictions.path.x=1': predictions.path is a str"),
        ("conventions.gain=nonsense", "conventions.gain"),  # validated as the file's own
    ],
)
def test_a_bad_setting_is_refused(tmp_path: Path, setting: str, message: str) -> None:
    config = hand_case(tmp_path)
    result = invoke("run", config, "--set", setting)
    assert_no_traceback(result)
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr


def test_the_apis_config_mapping_reads_variables_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hand_case(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RECEVAL_TEST_NAME", "predictions")
    config = {
        "predictions": {"path": "${RECEVAL_TEST_NAME}.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1"],
    }
    assert receval.run(config).models["model"].metrics == {"precision@1": 0.5}
