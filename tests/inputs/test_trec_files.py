"""TREC runs and qrels as inputs, presets on the command line, and their bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import (
    NDCG_2,
    PRECISION_1,
    assert_user_error,
    invoke,
    run_json,
    write,
    write_config,
)

# The hand case of cli_helpers, as a TREC run (tab and space separated, a junk tail) and
# qrels (with a judged non-relevant document).
RUN = (
    "u1 Q0 a 1 0.9 tag\n"
    "u1\tQ0\tb\t2\t0.8\ttag trailing words\n"
    "u1 Q0 c 3   0.7 tag\n"
    "\n"
    "u2 Q0 d 1 0.9 tag\n"
    "u2 Q0 e 2 0.5 tag\n"
)
QRELS = "u1 0 b 1\nu1 0 c 0\nu2 0 d 1\nu2 0 f 1\n"


def trec_config(folder: Path, run_name: str, qrels_name: str, **extra: object) -> Path:
    write(folder / run_name, RUN)
    write(folder / qrels_name, QRELS)
    config: dict[str, object] = {
        "predictions": {"path": run_name},
        "ground_truth": {"path": qrels_name},
        "metrics": ["precision@1", "ndcg@2", "num_ret", "num_rel", "num_rel_ret"],
    }
    config.update(extra)
    return write_config(folder, config)


@pytest.mark.parametrize(
    ("run_name", "qrels_name", "formats"),
    [
        ("run.run", "judgments.qrels", None),  # by extension
        ("results.test", "qrels.test", None),  # by content
        ("run.txt", "qrels.txt", "trec"),  # told
    ],
)
def test_trec_files_give_the_hand_case(
    tmp_path: Path, run_name: str, qrels_name: str, formats: str | None
) -> None:
    config = trec_config(tmp_path, run_name, qrels_name)
    if formats:
        config = write_config(
            tmp_path,
            {
                "predictions": {"path": run_name, "format": formats},
                "ground_truth": {"path": qrels_name, "format": formats},
                "metrics": ["precision@1", "ndcg@2", "num_ret", "num_rel", "num_rel_ret"],
            },
        )
    report = run_json(config)
    assert report["models"]["model"]["metrics"]["precision@1"] == pytest.approx(PRECISION_1)
    assert report["models"]["model"]["metrics"]["ndcg@2"] == pytest.approx(NDCG_2)
    # counts are sums over users: 3 + 2 recommended, 1 + 2 relevant, 1 + 1 found
    assert report["models"]["model"]["metrics"]["num_ret"] == 5
    assert report["models"]["model"]["metrics"]["num_rel"] == 3
    assert report["models"]["model"]["metrics"]["num_rel_ret"] == 2
    assert report["models"]["model"]["inputs"]["predictions"]["format"] == "trec"
    assert report["models"]["model"]["inputs"]["ground_truth"]["layout"] == "graded"


def test_preset_on_the_command_line_and_overrides_beside_it(tmp_path: Path) -> None:
    config = trec_config(
        tmp_path, "run.run", "q.qrels", conventions={"max_depth": 1}, metrics=["precision@2"]
    )
    result = invoke("run", config, "--preset", "trec_eval", "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["conventions"]["preset"] == "trec_eval"
    assert report["conventions"]["ap_denominator"] == "relevant"  # from the preset
    assert report["conventions"]["max_depth"] == 1  # the config's own key wins
    # max_depth 1: u1 keeps a (miss), u2 keeps d (hit); P@2 = (0/2 + 1/2) / 2
    assert report["models"]["model"]["metrics"]["precision@2"] == pytest.approx(0.25)


def test_preset_changes_which_users_count(tmp_path: Path) -> None:
    write(tmp_path / "run.run", "u1 Q0 b 1 0.9 t\n")
    write(tmp_path / "q.qrels", "u1 0 b 1\nu2 0 x 1\n")
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "run.run"},
            "ground_truth": {"path": "q.qrels"},
            "metrics": ["ndcg@1"],
        },
    )
    default = run_json(config)  # u2 has no recommendation: counted as 0
    assert default["models"]["model"]["metrics"]["ndcg@1"] == pytest.approx(0.5)
    result = invoke("run", config, "--preset", "trec_eval", "--format", "json")
    assert result.exit_code == 0, result.stderr
    trec = json.loads(result.stdout)
    assert (
        trec["models"]["model"]["metrics"]["ndcg@1"] == 1.0
    )  # trec_eval averages over users in both files
    assert trec["models"]["model"]["users"]["skipped"]["no_recommendations"] == 1


def test_unknown_preset(tmp_path: Path) -> None:
    config = trec_config(tmp_path, "run.run", "q.qrels")
    result = invoke("run", config, "--preset", "trec")
    assert_user_error(result, "conventions", "unknown preset 'trec'", "Did you mean 'trec_eval'")


def test_malformed_run_line_is_reported(tmp_path: Path) -> None:
    write(tmp_path / "run.run", "u1 Q0 a 1 0.9 tag\nu1 Q0 b 2\n")
    write(tmp_path / "q.qrels", QRELS)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "run.run"},
            "ground_truth": {"path": "q.qrels"},
            "metrics": ["ndcg@2"],
        },
    )
    result = invoke("run", config)
    assert_user_error(result, "run.run", "column 'score'", "1 null value(s)")


def test_score_that_is_not_a_number(tmp_path: Path) -> None:
    write(tmp_path / "run.run", "u1 Q0 a 1 high tag\n")
    write(tmp_path / "q.qrels", QRELS)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "run.run", "format": "trec"},
            "ground_truth": {"path": "q.qrels"},
            "metrics": ["ndcg@2"],
        },
    )
    assert_user_error(invoke("run", config), "run.run", "column 'score'", "null value(s)")


def test_content_that_is_not_trec_still_needs_a_format(tmp_path: Path) -> None:
    write(tmp_path / "run.data", "just some words\n")
    write(tmp_path / "q.qrels", QRELS)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "run.data"},
            "ground_truth": {"path": "q.qrels"},
            "metrics": ["ndcg@2"],
        },
    )
    assert_user_error(
        invoke("run", config), "run.data", "cannot tell the format", "predictions.format"
    )
