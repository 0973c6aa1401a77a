"""Every gate kind in every state in every output format.

The kinds come from the code's own list (gates.BOUNDS) plus the two scopes a gate can
take (`model:` on one model of several, `segment:`); the states from gates.STATES plus
`null` (a metric with no value); the formats from formats.Format. A combination that
cannot exist is left out by a rule (`exists`), not by a hand list.

Each (kind, state) is one real `receval run` (in process) that writes every format at
once (`-o r.json -o r.md ...`, the extensionless ones on stdout), with a history store:
its exit code (0 passed or waived, 1 failed or null, never 3), each format's verdict
(failed named as failed, waived as waived, passed as passed, a null's reason), nothing
internal, and the run appended to the store. A few subprocess runs check the exit codes
end to end, one per format.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_no_traceback, invoke, run_process, write, write_config
from gate_matrix import (
    CASES,
    CHECKS,
    CONVENTIONS,
    HAND,
    KINDS,
    METRICS,
    PROCESS_CASES,
    TRUTH_CSV,
    _json,
    build,
    outputs,
    truth_text,
)

from receval_cli.formats import Format
from receval_cli.report.destinations import REPORT_EXTENSIONS
from receval_cli.results.gates import BOUNDS, p_text

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it


@pytest.fixture(scope="module")
def past(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with two past runs of the hand case (every metric has a value)."""
    folder = tmp_path_factory.mktemp("past")
    store = folder / "history"
    write(folder / "truth.csv", truth_text(TRUTH_CSV))
    write(folder / "model.csv", HAND)
    config = {
        "predictions": {"path": "model.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": METRICS,
        "conventions": CONVENTIONS,
    }
    config = write_config(folder, config)
    for night in ("1", "2"):
        result = invoke("run", config, "--history", store, "--label", night, "-f", "json")
        assert result.exit_code == 0, result.stderr
    return store


def test_every_format_and_bound_has_a_check() -> None:
    """A new format or bound kind joins the matrix, and fails here until it is checked."""
    assert set(CHECKS) == {f.value for f in Format}
    assert set(KINDS) >= set(BOUNDS)
    assert {k for k, _ in CASES} == set(KINDS)


@pytest.mark.parametrize(("kind", "state"), CASES)
def test_gate_in_every_format(tmp_path: Path, past: Path, kind: str, state: str) -> None:
    config, store = build(tmp_path, kind, state, past)
    before = len(list(store.glob("*.parquet"))) if store.exists() else 0
    args, places = outputs(tmp_path / "out")
    (tmp_path / "out").mkdir()
    result = invoke("run", config, "--history", store, *args)
    assert_no_traceback(result)
    assert "internal error" not in result.stdout + result.stderr
    expected = 1 if state in ("failed", "null") else 0
    assert result.exit_code == expected, (result.exit_code, result.stdout, result.stderr)
    assert len(list(store.glob("*.parquet"))) == before + 1  # the run is in the history
    texts = {
        fmt: result.stdout if path is None else path.read_text(encoding="utf-8")
        for fmt, path in places.items()
    }
    report = json.loads(texts["json"])
    gates = report["gates"]["results"]
    (gate,) = gates
    assert gate["passed"] is (state in ("passed", "waived"))
    if kind in BOUNDS:
        assert gate["bound"] == kind
    if kind == "model":
        assert gate["model"] == "new"
    if kind == "segment":
        assert gate["metric"].endswith("[group=a]")
    if state == "null":
        assert gate["value"] is None
    for fmt, text in texts.items():
        assert "internal error" not in text, fmt
        assert "Traceback" not in text, fmt
        CHECKS[fmt](text, state, gate)
        if state == "null" and fmt != "json":
            assert "no value" in text, (fmt, text)
    if kind == "no_significant_drop":  # the adjusted p, in scientific notation when small
        for fmt in ("table", "markdown", "github", "junit"):
            if state == "failed" or fmt == "table":
                shown = texts[fmt].replace("\\", "")  # markdown escapes . and -
                assert p_text(gate["value"]) in shown, (fmt, shown)


@pytest.mark.parametrize(("fmt", "state"), PROCESS_CASES)
def test_a_history_gate_exits_right_in_a_real_process(
    tmp_path: Path, past: Path, fmt: str, state: str
) -> None:
    """A reported case: `--history runs -o out/n.xml` ended exit 3 (KeyError), the run
    not added to the history; a waived gate read as passed."""
    config, store = build(tmp_path, "history_relative_drop", state, past)
    out = "-" if fmt not in REPORT_EXTENSIONS.values() else None
    args = ["-f", fmt, "-o", "-"] if out else ["-f", fmt, "-o", f"report.{fmt}"]
    done = run_process("run", config, "--history", store, *args, cwd=tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == (1 if state == "failed" else 0), stderr
    assert "internal error" not in stderr
    assert "Traceback" not in stderr
    assert len(list(store.glob("*.parquet"))) == 3
    text = done.stdout.decode() if out else (tmp_path / f"report.{fmt}").read_text("utf-8")
    if fmt == "json":
        _json(text, state, json.loads(text)["gates"]["results"][0])
    elif fmt in ("junit", "github", "markdown"):
        CHECKS[fmt](text, state, {})
