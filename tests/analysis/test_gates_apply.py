"""Every configured gate is evaluated or refused: a gate never silently applies to
nothing. A run of one model gates it whatever its name, with or without `model:`; a gate
on the baseline model that compares with the baseline is refused (exit 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_user_error, hand_case, invoke, run_json

ENGINES: list[dict[str, Any]] = [{}, {"engine": "streaming"}, {"partitions": 2}]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("scope", [{}, {"model": "als"}])
def test_one_named_model_is_gated_with_or_without_model_key(
    tmp_path: Path, engine: dict[str, Any], scope: dict[str, str]
) -> None:
    """`models: {als: FILE}` with a min gate it fails: exit 1 and one failed gate, on
    every engine; `model: als` used to skip the gate (exit 0, no gate result)."""
    config = hand_case(
        tmp_path,
        predictions={"models": {"als": "predictions.csv"}},
        metrics=["ndcg@2"],
        gates={"ndcg@2": {"min": 0.99, **scope}},
        **engine,
    )
    report = run_json(config, expect=1)
    (gate,) = report["gates"]["results"]
    assert (gate["metric"], gate["bound"], gate["passed"]) == ("ndcg@2", "min", False)


def test_a_min_gate_naming_the_only_model_passes_when_met(tmp_path: Path) -> None:
    config = hand_case(
        tmp_path,
        predictions={"models": {"als": "predictions.csv"}},
        metrics=["ndcg@2"],
        gates={"ndcg@2": {"min": 0.1, "model": "als"}},
    )
    (gate,) = run_json(config)["gates"]["results"]
    assert gate["passed"] is True


@pytest.mark.parametrize("bound", [{"max_drop": 0.01}, {"max_relative_drop": 0.1}])
def test_a_drop_gate_on_the_baseline_model_is_refused(
    tmp_path: Path, bound: dict[str, float]
) -> None:
    """The baseline is the reference: a gate comparing it with itself applies to no model
    (it used to be skipped, exit 0)."""
    config = hand_case(
        tmp_path,
        predictions={"models": {"als": "predictions.csv", "base": "predictions.csv"}},
        comparison={"baseline": "base"},
        metrics=["ndcg@2"],
        gates={"ndcg@2": {**bound, "model": "base"}},
    )
    result = invoke("run", config, "-q")
    message = assert_user_error(result, "gates.ndcg@2.model", "'base' is the baseline", "als")
    assert str(config) in message


def test_a_min_gate_on_the_baseline_model_is_judged(tmp_path: Path) -> None:
    config = hand_case(
        tmp_path,
        predictions={"models": {"als": "predictions.csv", "base": "predictions.csv"}},
        comparison={"baseline": "base"},
        metrics=["ndcg@2"],
        gates={"ndcg@2": {"min": 0.99, "model": "base"}},
    )
    (gate,) = run_json(config, expect=1)["gates"]["results"]
    assert (gate["model"], gate["passed"]) == ("base", False)


@pytest.mark.parametrize(
    ("gate", "key", "found"),
    [
        ({"min": 0.1, "model": "knn"}, "gates.ndcg@2.model", "knn"),
        ({"min": 0.1, "segment": "group=z"}, "gates.ndcg@2.segment", "group=z"),
    ],
)
def test_a_gate_on_what_the_run_does_not_compute_is_refused(
    tmp_path: Path, gate: dict[str, Any], key: str, found: str
) -> None:
    config = hand_case(
        tmp_path,
        truth_rows="user,item,group\nu1,b,a\nu2,d,b\nu2,f,b\n",
        predictions={"models": {"als": "predictions.csv"}},
        metrics=["ndcg@2"],
        segment_by=["group"],
        gates={"ndcg@2": gate},
    )
    assert_user_error(invoke("run", config, "-q"), key, found)


def test_a_gate_on_a_cutoff_the_run_does_not_compute_is_refused(tmp_path: Path) -> None:
    config = hand_case(tmp_path, metrics=["ndcg@2"], gates={"ndcg@5": {"min": 0.1}})
    assert_user_error(invoke("run", config, "-q"), "gates.ndcg@5", "ndcg@2")
