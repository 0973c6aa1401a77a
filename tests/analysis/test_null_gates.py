"""A gate on a metric with no value (null): its verdict and the run's warning agree.

The run warns "METRIC has no value (null): ... A gate on it fails." and the gate fails
(exit 1), whatever it compares with and whatever the history store holds: a history gate
whose past runs have no value either is not waived for too few past runs. `on_null:
waive` in the gate waives it instead (exit 0), and then the warning says so. Each case
is one run writing every format at once (tests/analysis/test_gate_matrix.py's helpers), checked
format by format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_no_traceback, assert_user_error, invoke, write, write_config
from gate_matrix import CHECKS, CONVENTIONS, HAND, ONE_CLASS, TRUTH_CSV, outputs, truth_text

from receval_cli.results.gates import NULL_FAILS, NULL_WAIVED, NULL_WAIVES

HISTORY = {"vs": "history", "runs": 3, "min_runs": 2, "relative": 0.05}
# the formats that print the run's warnings (csv and junit: the verdict alone)
WARNING_FORMATS = ("table", "json", "markdown", "html", "github", "latex")


def nightly(folder: Path, rows: str, gates: dict[str, Any] | None = None) -> Path:
    """The config of a nightly job of auc and ndcg@2 on today's predictions `rows`."""
    write(folder / "truth.csv", truth_text(TRUTH_CSV))
    write(folder / "model.csv", rows)
    config: dict[str, Any] = {
        "predictions": {"path": "model.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["auc", "ndcg@2"],
        "conventions": CONVENTIONS,
    }
    if gates:
        config["gates"] = gates
    return write_config(folder, config)


def store_of(folder: Path, nights: list[str]) -> Path:
    """A history store of past nights run without gates, each night's predictions."""
    store = folder / "history"
    for number, rows in enumerate(nights):
        config = nightly(folder / "past", rows)
        result = invoke("run", config, "--history", store, "--label", f"night{number}")
        assert result.exit_code == 0, result.stderr
    return store


def every_format(folder: Path, config: Path, store: Path, expect: int) -> dict[str, str]:
    """One run writing every format; the texts by format."""
    args, places = outputs(folder / "out")
    (folder / "out").mkdir()
    result = invoke("run", config, "--history", store, *args)
    assert_no_traceback(result)
    assert result.exit_code == expect, (result.exit_code, result.stdout, result.stderr)
    return {
        fmt: result.stdout if path is None else path.read_text(encoding="utf-8")
        for fmt, path in places.items()
    }


def auc_gate(texts: dict[str, str]) -> dict[str, Any]:
    report = json.loads(texts["json"])
    (gate,) = [g for g in report["gates"]["results"] if g["metric"] == "auc"]
    assert report["models"]["model"]["metrics"]["auc"] is None
    return dict(gate)


def assert_agreement(texts: dict[str, str], state: str) -> None:
    """Each format's verdict is `state` (null: failed with its reason; waived), and where
    the format shows the warning, its last sentence says that verdict, never the other."""
    gate = auc_gate(texts)
    said, contradiction = (
        (NULL_FAILS, NULL_WAIVES) if state == "null" else (NULL_WAIVES, NULL_FAILS)
    )
    for fmt, text in texts.items():
        if fmt == "table" and state == "waived":  # its cell says why, not "N of M runs"
            assert "waived: no value (on_null: waive)" in text, text
            assert "gate waived:" in text
        else:
            CHECKS[fmt](text, state, gate)
        flat = " ".join(text.replace("\\", "").split())  # wrapped lines, Markdown escapes
        assert contradiction not in flat, fmt
        if fmt in WARNING_FORMATS:
            assert "auc has no value (null)" in flat, fmt
            assert said in flat, fmt
        if state == "null":
            assert "no value" in text, fmt


@pytest.mark.slow
def test_a_history_gate_on_null_fails_whatever_the_history(tmp_path: Path) -> None:
    """The report: auc null today and in both stored runs was "waived: 0 of 2 past runs",
    exit 0, while the warning said a gate on it fails."""
    store = store_of(tmp_path, [ONE_CLASS, ONE_CLASS])
    config = nightly(tmp_path, ONE_CLASS, {"auc": {"max_drop": HISTORY}})
    texts = every_format(tmp_path, config, store, expect=1)
    gate = auc_gate(texts)
    assert gate["passed"] is False
    assert "waived" not in gate
    assert (gate["runs"], gate["runs_used"]) == (0, 0)
    assert_agreement(texts, "null")


@pytest.mark.parametrize(
    "past", [[ONE_CLASS, ONE_CLASS], [HAND]], ids=["null-in-every-run", "one-valued-run"]
)
def test_a_history_gate_on_null_fails_with_too_few_past_runs(
    tmp_path: Path, past: list[str]
) -> None:
    """0 or 1 past run with a value, two needed: a value today would be waived; no value
    today fails (the JSON alone: the quick suite's check of the report)."""
    store = store_of(tmp_path, past)
    config = nightly(tmp_path, ONE_CLASS, {"auc": {"max_drop": HISTORY}})
    result = invoke("run", config, "--history", store, "--format", "json")
    assert result.exit_code == 1, result.stderr
    (gate,) = json.loads(result.stdout)["gates"]["results"]
    assert gate["passed"] is False
    assert gate["value"] is None
    assert "waived" not in gate


@pytest.mark.slow
@pytest.mark.parametrize("bar", [{"min": 0.5}, {"max_drop": HISTORY}], ids=["min", "history"])
def test_on_null_waive_waives_and_the_warning_says_so(tmp_path: Path, bar: dict[str, Any]) -> None:
    store = store_of(tmp_path, [HAND, HAND])
    config = nightly(tmp_path, ONE_CLASS, {"auc": {**bar, "on_null": "waive"}})
    texts = every_format(tmp_path, config, store, expect=0)
    gate = auc_gate(texts)
    assert gate["passed"] is True
    assert gate["on_null"] == "waive"
    assert "on_null: waive" in gate["waived"]
    assert_agreement(texts, "waived")


def test_on_null_fail_is_the_default_and_a_value_still_judges(tmp_path: Path) -> None:
    """`on_null: fail` spelled out is the default; `waive` changes nothing for a metric
    with a value (ndcg@2, 1.0, above its bar still fails)."""
    gates = {"auc": {"min": 0.5, "on_null": "fail"}}
    config = nightly(tmp_path, ONE_CLASS, gates)
    assert invoke("run", config, "-q").exit_code == 1
    gates = {"ndcg@2": {"max": 0.5, "on_null": "waive"}}
    config = nightly(tmp_path, ONE_CLASS, gates)
    result = invoke("run", config, "--format", "json")
    assert result.exit_code == 1, result.stderr
    (gate,) = json.loads(result.stdout)["gates"]["results"]
    assert gate["passed"] is False
    assert "waived" not in gate


def test_on_null_takes_fail_or_waive(tmp_path: Path) -> None:
    config = nightly(tmp_path, ONE_CLASS, {"auc": {"min": 0.5, "on_null": "pass"}})
    assert_user_error(invoke("run", config), "gates.auc.on_null", "fail", "waive")


def test_with_several_models_the_gated_model_s_warning_agrees(tmp_path: Path) -> None:
    """Model B has no auc, model A (the baseline) has one; B's gate is waived by on_null
    and B's warning (named "model B: ...") says so."""
    write(tmp_path / "a.csv", "user,item,score\nu,a,0.9\nu,b,0.1\n")
    write(tmp_path / "b.csv", "user,item,score\nu,a,0.9\n")
    write(tmp_path / "t.csv", "user,item,relevance\nu,a,1\nu,b,0\n")
    config = {
        "predictions": {"models": {"A": "a.csv", "B": "b.csv"}},
        "ground_truth": {"path": "t.csv"},
        "conventions": {"unpredicted": "ignore"},
        "metrics": ["auc"],
        "gates": {"auc": {"min": 0.5, "on_null": "waive"}},
    }
    result = invoke("run", write_config(tmp_path, config), "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    (gate,) = report["gates"]["results"]  # A, the baseline, is not under test
    assert (gate["model"], gate["waived"]) == ("B", NULL_WAIVED)
    (warning,) = [w for w in report["warnings"] if "has no value" in w]
    assert warning.startswith("model B: auc has no value (null)")
    assert warning.endswith(NULL_WAIVES)
