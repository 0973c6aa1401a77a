"""A gate against the history store names the past runs its reference was of: as many as
were used ("vs the median of the last 2 runs"), never the configured `runs` when fewer
(or none) were, in its requirement, its sentence and its JSON (`runs_used`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_json
from history_runs import GATE, cron

from receval_cli.analysis.gate_judging import check_history
from receval_cli.config.model import HistoryDrop
from receval_cli.results.gates import GateResult


def gate_of(past: list[float], value: float | None = 0.5, **bar: object) -> GateResult:
    drop_gate = HistoryDrop.model_validate({"vs": "history", "relative": 0.1, **bar})
    return check_history("ndcg@10", drop_gate, None, value, past, higher_is_better=True)


@pytest.mark.parametrize(
    ("past", "words"),
    [
        ([], "vs the median of past runs (none used)"),
        ([0.5], "vs the median of the last 1 run"),
        ([0.5, 0.6], "vs the median of the last 2 runs"),
        ([0.5, 0.6, 0.7], "vs the median of the last 3 runs"),
    ],
)
def test_the_requirement_counts_the_runs_used(past: list[float], words: str) -> None:
    """runs: 3 configured, min_runs 1: 0 runs waives, 1 to 3 are used as found."""
    gate = gate_of(past, runs=3, min_runs=1)
    assert gate.requirement == f"relative drop <= 10% {words}"
    assert gate.detail["runs_used"] == len(past)
    assert "of 3 runs" not in gate.describe()


def test_a_waived_gate_used_no_run() -> None:
    """Two past runs, four needed: none is used, whatever `runs` says."""
    gate = gate_of([0.5, 0.6], runs=7, min_runs=4)
    assert gate.state == "waived"
    assert gate.requirement.endswith("vs the median of past runs (none used)")
    assert gate.detail["runs_used"] == 0


def test_last_uses_one_run() -> None:
    gate = gate_of([0.5, 0.6, 0.7], runs=3, stat="last")
    assert gate.requirement == "relative drop <= 10% vs the last run"
    assert "from the last run in the history (0.5)" in gate.describe()


def test_mean_of_the_runs_found() -> None:
    gate = gate_of([0.4, 0.6], runs=5, min_runs=2, stat="mean")
    assert gate.requirement == "relative drop <= 10% vs the mean of the last 2 runs"
    assert "from the mean of the last 2 runs in the history (0.5)" in gate.describe()


def test_a_run_labels_its_gate_by_the_runs_used(tmp_path: Path) -> None:
    """`runs: 3, min_runs: 1`: the second night compares with 1 run, the third with 2."""
    bar = {"max_drop": {**GATE["max_drop"], "runs": 3, "min_runs": 1}}  # type: ignore[dict-item]
    store, reports = cron(tmp_path, ["hand", "hand", "hand"], gates={"precision@1": bar})
    used = [r["gates"]["results"][0].get("runs_used") for r in reports]
    assert used == [0, 1, 2]
    report = run_json(tmp_path / "job" / "config.yaml", "--history", store)
    (gate,) = report["gates"]["results"]
    assert gate["runs_used"] == 3
    assert gate["runs_wanted"] == 3
