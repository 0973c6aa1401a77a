"""One JSON shape whatever the number of models, and the shape of receval 0.1
still read by `receval compare` and `--baseline-report`.

Since 0.2 every report nests each model's results under `models.NAME` (a one-file config:
the model "model"); 0.1 wrote a one-model report flat (`metrics`, `users`, ... at the top).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cli_helpers import (
    NDCG_2,
    PRECISION_1,
    hand_case,
    invoke,
    run_json,
    write,
    write_config,
)

ROOT = Path(__file__).resolve().parents[2]

# the other model of the two-model config: both users' first item is relevant
OTHER_CSV = "user,item,score\nu1,b,0.9\nu1,a,0.8\nu2,d,0.9\nu2,e,0.5\n"

# the keys of a model's block, in their order, and the run-wide keys (docs/reports.md)
MODEL_KEYS = ["metrics", "confidence", "users", "pairs", "logged", "items", "unknown_items"]
MODEL_KEYS += ["segments", "inputs"]
RUN_KEYS = ["receval_version", "run", "models", "best", "comparisons", "history", "gates"]
RUN_KEYS += ["warnings", "conventions", "config", "elapsed_seconds"]


def in_order(keys: list[str], order: list[str]) -> bool:
    """Every key is one of `order`, and they come in that order."""
    return all(k in order for k in keys) and keys == sorted(keys, key=order.index)


def as_written_by_0_1(report: dict[str, Any]) -> dict[str, Any]:
    """A one-model report in the flat shape receval 0.1 wrote (its Report.to_dict): the
    model's blocks at the top, between the run-wide keys, in 0.1's order."""
    (model,) = report["models"].values()
    order = ["receval_version", "metrics", "gates", "confidence", "users", "pairs", "logged"]
    order += ["items", "unknown_items", "warnings", "segments", "conventions", "inputs"]
    order += ["config", "elapsed_seconds"]
    merged = {**report, **model}
    return {key: merged[key] for key in order if key in merged}


def two_models(folder: Path, *args: str) -> Path:
    """The hand case's predictions as model "base" and OTHER_CSV as model "other"."""
    hand_case(folder)
    write(folder / "other.csv", OTHER_CSV)
    config = {
        "predictions": {"models": {"base": "predictions.csv", "other": "other.csv"}},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1", "ndcg@2"],
        "confidence": {"resamples": 50, "seed": 3},
    }
    return write_config(folder, config, "two.yaml")


def test_one_model_and_several_have_one_shape(tmp_path: Path) -> None:
    one = run_json(hand_case(tmp_path))
    several = run_json(two_models(tmp_path))
    for report in (one, several):
        assert in_order(list(report), RUN_KEYS), list(report)
        for block in report["models"].values():
            assert in_order(list(block), MODEL_KEYS), list(block)
    assert list(one["models"]) == ["model"]
    assert list(several["models"]) == ["base", "other"]
    # the run-wide keys are the same; a comparison adds its block
    assert [k for k in several if k != "comparisons"] == list(one)
    # the same file gives the same model block (the comparison adds intervals)
    base = {k: v for k, v in several["models"]["base"].items() if k != "confidence"}
    assert base["metrics"] == one["models"]["model"]["metrics"]
    assert base["users"] == one["models"]["model"]["users"]
    assert list(base) == list(one["models"]["model"])
    assert one["models"]["model"]["metrics"] == {"precision@1": PRECISION_1, "ndcg@2": NDCG_2}
    assert one["best"] == {"precision@1": ["model"], "ndcg@2": ["model"]}
    assert several["best"]["precision@1"] == ["other"]  # both of its users hit at the top


def test_every_block_of_a_model_sits_in_the_model(tmp_path: Path) -> None:
    """Intervals, segments and the unknown items are the model's; gates and warnings the
    run's."""
    config = hand_case(
        tmp_path,
        confidence={"resamples": 20, "seed": 1},
        segment_by=["group"],
        segments={"path": "users.csv"},
        unknown_items={"warn": 0.1},
        gates={"precision@1": {"min": 0.9}},
    )
    write(tmp_path / "users.csv", "user,group\nu1,a\nu2,b\n")
    report = run_json(config, expect=1)
    block = report["models"]["model"]
    assert list(block) == ["metrics", "confidence", "users", "unknown_items", "segments", "inputs"]
    assert set(block["segments"]) == {"group=a", "group=b"}
    assert block["confidence"]["intervals"]["precision@1"][0] <= PRECISION_1
    assert report["gates"]["passed"] is False
    (warning,) = report["warnings"]
    assert "recommended items" in warning
    assert not warning.startswith("model ")  # one model: not named


def saved(folder: Path, name: str, report: dict[str, Any]) -> Path:
    return write(folder / f"{name}.json", json.dumps(report))


def compare_json(*paths: Path) -> dict[str, Any]:
    result = invoke("compare", *paths, "--format", "json")
    assert result.exit_code == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def test_compare_reads_reports_of_0_1_and_0_2_alike(tmp_path: Path) -> None:
    new = run_json(hand_case(tmp_path / "a", confidence={"resamples": 30, "seed": 2}))
    old = as_written_by_0_1(new)
    assert old["metrics"] == new["models"]["model"]["metrics"]  # the flat shape
    other = run_json(two_models(tmp_path / "b"))
    folder = tmp_path / "saved"
    got_new = compare_json(saved(folder, "new", new), saved(folder, "two", other))
    got_old = compare_json(saved(folder, "old", old), folder / "two.json")
    # a one-model report is one column named by its file; several models, FILE:MODEL
    assert got_new["columns"] == ["new", "two:base", "two:other"]
    assert got_old["columns"] == ["old", "two:base", "two:other"]
    for metric, row in got_new["metrics"].items():
        assert row["new"] == got_old["metrics"][metric]["old"], metric
        assert row["new"]["low"] is not None  # the intervals are read from both shapes
        assert row["two:other"] == got_old["metrics"][metric]["two:other"]


def test_baseline_report_reads_reports_of_0_1_and_0_2_alike(tmp_path: Path) -> None:
    new = run_json(hand_case(tmp_path / "a"))
    folder = tmp_path / "saved"
    new_path, old_path = saved(folder, "new", new), saved(folder, "old", as_written_by_0_1(new))
    config = hand_case(tmp_path / "b", rows=OTHER_CSV, gates={"precision@1": {"max_drop": 0.0}})
    against_new = run_json(config, "--baseline-report", new_path)
    against_old = run_json(config, "--baseline-report", old_path)
    for report in (against_new, against_old):
        results = report["comparisons"]["results"]
        assert {r["metric"] for r in results} == {"precision@1", "ndcg@2"}
        (gate,) = report["gates"]["results"]
        assert gate["passed"]  # precision@1 1.0 against the saved 0.5
    assert against_new["comparisons"]["results"] == against_old["comparisons"]["results"]
    assert against_new["comparisons"]["baseline_report"] == str(new_path)


def test_the_docs_show_the_reports_shape() -> None:
    """docs/reports.md's JSON example has the keys, in their order, of the quickstart's
    report, and its values rounded."""
    section = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    example = json.loads(re.search(r"```json\n(.*?)```", section, re.S).group(1))  # type: ignore[union-attr]
    report = run_json(ROOT / "configs" / "quickstart.yaml")
    assert list(example) == list(report)
    assert list(example["models"]) == list(report["models"]) == ["model"]
    shown, real = example["models"]["model"], report["models"]["model"]
    assert list(shown) == list(real)
    for metric, value in shown["metrics"].items():
        assert value == round(real["metrics"][metric], 4), metric
    assert shown["users"] == real["users"]
    assert shown["unknown_items"] == real["unknown_items"]
    assert example["receval_version"] == report["receval_version"]
