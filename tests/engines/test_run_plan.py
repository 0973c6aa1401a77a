"""The run planner (engines/run_plan.py) and the cases it fixes (inputs read in one place)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import NDCG_2, hand_case, invoke, run_json

from receval_cli.config.conventions import Conventions
from receval_cli.config.presets import PRESETS
from receval_cli.metrics import MetricSpec
from receval_cli.metrics.registry import REGISTRY


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_conventions_cross_to_spark_s_executors_whole(preset: str) -> None:
    """Spark's executors get the conventions as data (to_wire/from_wire): every metric
    of the registry resolves to the same parameters there, the preset's per-metric rules
    included (they apply only to the settings not written beside the preset, so what was
    written must travel too: Spark used to apply none of them)."""
    given = Conventions.model_validate({"preset": preset, "relevance_threshold": 2})
    back = Conventions.from_wire(given.to_wire())
    assert back == given
    for name in REGISTRY:
        spec = MetricSpec(name, 5 if REGISTRY[name].takes_cutoff else None, ())
        assert back.metric_params(spec) == given.metric_params(spec), name


def test_a_preset_s_rule_survives_the_crossing() -> None:
    """The jurity preset skips users without recommendations in precision only."""
    given = Conventions.model_validate({"preset": "jurity"})
    back = Conventions.from_wire(given.to_wire())
    spec = MetricSpec("precision", 2, ())
    assert back.metric_params(spec)["users_without_recommendations"] == "skip"
    assert given.users_without_recommendations != "skip"


def test_one_model_named_under_models_is_gated(tmp_path: Path) -> None:
    """`models: {als: FILE}` names one model: it is not a baseline, and its gates apply
    (a min gate it fails exits 1)."""
    config = hand_case(
        tmp_path,
        predictions={"models": {"als": "predictions.csv"}},
        metrics=["ndcg@2"],
        gates={"ndcg@2": {"min": 0.99}},
    )
    report = run_json(config, expect=1)
    assert list(report["models"]) == ["als"]
    assert report["models"]["als"]["metrics"]["ndcg@2"] == pytest.approx(NDCG_2, abs=1e-15)
    (gate,) = report["gates"]["results"]
    assert gate["passed"] is False
    assert "comparisons" not in report


@pytest.mark.parametrize("engine", [{"partitions": 2}, {"engine": "streaming"}])
def test_several_models_on_partitions_do_not_crash(tmp_path: Path, engine: dict) -> None:
    """Several models on partitions used to end `ValueError: too many values to unpack`
    (exit 3); now each model runs on the engine, compared as in one pass."""
    models = {"a": "predictions.csv", "b": "predictions.csv"}
    config = hand_case(tmp_path, predictions={"models": models}, metrics=["ndcg@2"], **engine)
    result = invoke("run", config, "-q", "--per-user", tmp_path / "users.csv")
    assert result.exit_code == 0, result.output
    report = run_json(config)
    assert report["models"]["b"]["metrics"]["ndcg@2"] == pytest.approx(NDCG_2, abs=1e-15)
    (comparison,) = report["comparisons"]["results"]
    assert comparison["difference"] == 0.0
    assert comparison["verdict"] == "tie"
