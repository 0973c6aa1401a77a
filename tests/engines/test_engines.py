"""The polars engines give the same report, to the last bit; gpu fails loudly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_user_error, evaluate_written, invoke, run_json, write_config

from receval_cli.engines import choice as engines

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize("config", ["quickstart", "beyond", "ratings", "ctr"])
def test_streaming_equals_in_memory(config: str) -> None:
    path = ROOT / "configs" / f"{config}.yaml"
    in_memory = run_json(path, "--engine", "in_memory")
    streaming = run_json(path, "--engine", "streaming")
    assert streaming["models"]["model"]["metrics"] == in_memory["models"]["model"]["metrics"]
    assert streaming["models"]["model"]["users"] == in_memory["models"]["model"]["users"]


def test_auto_streams_from_the_threshold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = tmp_path / "p.csv"
    small.write_text("user,item,score\n1,a,0.5\n", encoding="utf-8")
    assert engines.polars_engine("auto", [small]) == "auto"  # polars decides
    monkeypatch.setattr(engines, "STREAMING_FROM", small.stat().st_size)
    assert engines.polars_engine("auto", [small]) == "streaming"


def test_gpu_fails_loudly_without_its_engine() -> None:
    result = invoke("run", ROOT / "configs" / "quickstart.yaml", "--engine", "gpu")
    assert_user_error(result, "engine: gpu needs polars' GPU engine", "cudf-polars")


GOLDEN = Path(__file__).parents[1] / "peers" / "data"
PARTITIONED = [
    "precision@5",
    "recall@10",
    "map(denominator=relevant)",
    "ndcg@5",
    "mrr",
    "r_precision",
    "num_rel_ret",
    "inter_list_diversity@5",
    "gini@5",
    "entropy@5",
    "user_coverage",
]


@pytest.mark.parametrize("partitions", [2, 3, 7])
@pytest.mark.parametrize(
    "conventions",
    [{}, {"tie_break": "input_order", "users_without_relevant": "zero"}],
)
@pytest.mark.slow
def test_partitions_agree_with_the_whole(
    tmp_path: Path, partitions: int, conventions: dict[str, object]
) -> None:
    """Users in hash buckets, one after the other, merged: the same numbers (ties, users
    missing from either file, grades; file-order ties work locally)."""
    import polars as pl

    catalog = pl.read_csv(GOLDEN / "ties_predictions.csv").select("item").unique()
    catalog.write_csv(tmp_path / "catalog.csv")
    config = {
        "predictions": {"path": str(GOLDEN / "ties_predictions.csv")},
        "ground_truth": {"path": str(GOLDEN / "ties_truth.csv")},
        "catalog": {"path": "catalog.csv"},
        "metrics": PARTITIONED,
        "conventions": conventions,
    }
    whole = run_json(write_config(tmp_path, config))
    split = run_json(write_config(tmp_path, {**config, "partitions": partitions}, "p.yaml"))
    for name, value in whole["models"]["model"]["metrics"].items():
        assert split["models"]["model"]["metrics"][name] == pytest.approx(value, abs=1e-12), name
    assert split["models"]["model"]["users"] == whole["models"]["model"]["users"]
    assert split["models"]["model"]["inputs"]["engine"]["partitions"] == partitions


def test_partitions_give_intervals_and_refuse_click_metrics(tmp_path: Path) -> None:
    """Intervals read the per-user values the partitions keep: the same bits as a single
    pass."""
    config = {
        "predictions": {"path": str(GOLDEN / "ties_predictions.csv")},
        "ground_truth": {"path": str(GOLDEN / "ties_truth.csv")},
        "metrics": ["ndcg@5"],
        "partitions": 3,
    }
    path = write_config(tmp_path, config)
    split = json.loads(invoke("run", path, "--ci", "-q", "-f", "json", "-o", "-").stdout)
    single = write_config(tmp_path, {**config, "partitions": 1}, "one.yaml")
    whole = json.loads(invoke("run", single, "--ci", "-q", "-f", "json", "-o", "-").stdout)
    confidence = split["models"]["model"]["confidence"]
    assert confidence == whole["models"]["model"]["confidence"]
    assert confidence["intervals"]["ndcg@5"][0] < confidence["intervals"]["ndcg@5"][1]


def test_partitions_run_the_rating_metrics(tmp_path: Path) -> None:
    """Rating metrics add up across partitions: the same values as a single pass."""
    config = {
        "predictions": {"path": str(GOLDEN / "ties_predictions.csv")},
        "ground_truth": {"path": str(GOLDEN / "ties_truth.csv")},
        "conventions": {"unpredicted": "ignore"},
        "metrics": ["rmse", "mae", "r2", "auc", "gauc", "ndcg@5"],
    }
    whole = run_json(write_config(tmp_path, config, "w.yaml"))
    split = run_json(write_config(tmp_path, {**config, "partitions": 3}, "p.yaml"))
    assert split["models"]["model"]["metrics"] == whole["models"]["model"]["metrics"]
    assert split["models"]["model"]["pairs"] == whole["models"]["model"]["pairs"]


def test_auto_partitions_big_predictions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from receval_cli.analysis.runs import evaluate_config
    from receval_cli.config.loading import load_config
    from receval_cli.results.report import Report

    predictions = GOLDEN / "ties_predictions.csv"
    size = predictions.stat().st_size
    monkeypatch.setattr(engines, "PARTITION_FROM", size)
    monkeypatch.setattr(engines, "PARTITION_SIZE", size // 3 + 1)
    assert engines.auto_partitions([predictions]) == 3
    config = {
        "predictions": {"path": str(predictions)},
        "ground_truth": {"path": str(GOLDEN / "ties_truth.csv")},
        "metrics": ["ndcg@5", "precision@3"],
    }
    (report,) = evaluate_written(tmp_path, config).models.values()
    assert isinstance(report, Report)
    assert report.inputs["engine"]["partitions"] == 3
    # a run that needs every per-user value (intervals) stays in one pass
    ci_config = write_config(tmp_path, {**config, "confidence": {}})
    (with_ci,) = evaluate_config(load_config(ci_config)).models.values()
    assert isinstance(with_ci, Report)
    assert with_ci.inputs["engine"]["partitions"] == 3  # intervals run on partitions too
    assert with_ci.metrics == report.metrics


def test_partitions_with_catalog_log_and_baseline(tmp_path: Path) -> None:
    """The beyond-accuracy sample (catalog features, the log's popularity and what users
    knew, the popularity baseline): partitions agree with the whole run."""
    import yaml

    config = yaml.safe_load((ROOT / "configs" / "beyond.yaml").read_text(encoding="utf-8"))
    for key in ("predictions", "ground_truth", "catalog", "interactions"):
        config[key]["path"] = str((ROOT / "configs" / config[key]["path"]).resolve())
    config.pop("gates")
    whole = run_json(write_config(tmp_path, config))
    split = run_json(write_config(tmp_path, {**config, "partitions": 4}, "p.yaml"))
    for name, value in whole["models"]["model"]["metrics"].items():
        assert split["models"]["model"]["metrics"][name] == pytest.approx(value, abs=1e-12), name
    assert split["models"]["model"]["users"] == whole["models"]["model"]["users"]
