"""engine: spark agrees with the polars engines to 1e-12, on data with tied scores, users
missing from either file and graded relevance; and refuses what it cannot run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import write_config

from receval_cli.analysis.runs import evaluate_config
from receval_cli.config.loading import load_config
from receval_cli.engines.spark import evaluate_spark
from receval_cli.errors import InputError, UsageError
from receval_cli.results.report import Report

GOLDEN = Path(__file__).parents[1] / "peers" / "data"
SAMPLE = Path(__file__).parents[2] / "sample_data"
RANKING = [
    "precision@5",
    "recall@10",
    "f1@5",
    "hit_rate@3",
    "mrr",
    "map@10",
    "map(denominator=relevant)",
    "r_precision",
    "ndcg@5",
    "ndcg(gain=exponential)",
    "dcg@10",
    "idcg@10",
    "num_rel",
    "num_ret",
    "num_rel_ret",
    "set_recall@5",
]
GLOBAL = ["catalog_coverage@5", "prediction_coverage", "user_coverage", "inter_list_diversity@5"]
GLOBAL += ["gini@5", "entropy@5"]


def polars_and_spark(
    spark: Any, folder: Path, config: dict[str, Any], buckets: int = 7
) -> tuple[Report, Report]:
    path = write_config(folder, config)
    (in_memory,) = evaluate_config(load_config(path)).models.values()
    on_spark = evaluate_spark(load_config(path), spark, buckets=buckets)
    return in_memory, on_spark


def assert_agree(expected: Report, got: Report) -> None:
    assert got.metrics.keys() == expected.metrics.keys()
    for name, value in expected.metrics.items():
        assert got.metrics[name] == pytest.approx(value, abs=1e-12), name
    assert got.users == expected.users
    assert got.unknown_items == expected.unknown_items
    assert got.warnings == expected.warnings


@pytest.mark.parametrize(
    "conventions",
    [
        {},
        {"users_without_relevant": "zero", "users_without_recommendations": "skip"},
        {"relevance_threshold": 2, "tie_break": "item_asc", "precision_denominator": "list_length"},
    ],
)
def test_ties_missing_users_and_grades(
    spark: Any, tmp_path: Path, conventions: dict[str, Any]
) -> None:
    """ties_*: tied scores, users only in one file, grades 0-3."""
    catalog = pl.read_csv(GOLDEN / "ties_predictions.csv").select("item").unique().sort("item")
    catalog.write_csv(tmp_path / "catalog.csv")
    config = {
        "predictions": {"path": str(GOLDEN / "ties_predictions.csv")},
        "ground_truth": {"path": str(GOLDEN / "ties_truth.csv")},
        "catalog": {"path": "catalog.csv"},
        "metrics": [*RANKING, *GLOBAL],
        "conventions": conventions,
    }
    assert_agree(*polars_and_spark(spark, tmp_path, config))


@pytest.mark.parametrize("tie_break", ["item_desc", "item_text_desc", "item_text_asc"])
def test_integer_ids_ties_by_number_or_by_text(spark: Any, tmp_path: Path, tie_break: str) -> None:
    """Integer ids whose text and number orders differ (9, 10, 100), tied scores: each tie
    rule ranks on Spark as on polars (item_text_desc is the trec_eval preset's)."""
    predictions = pl.DataFrame(
        {"user": [1, 1, 1, 2, 2, 2, 3], "item": [9, 10, 100, 7, 56, 3, 9]}
    ).with_columns(score=pl.Series([0.5, 0.5, 0.5, 0.9, 0.9, 0.1, 0.2]))
    truth = pl.DataFrame({"user": [1, 2, 3], "item": [9, 7, 10], "relevance": [1, 2, 1]})
    predictions.write_parquet(tmp_path / "p.parquet")
    truth.write_parquet(tmp_path / "t.parquet")
    config = {
        "predictions": {"path": "p.parquet"},
        "ground_truth": {"path": "t.parquet"},
        "metrics": ["precision@1", "mrr", "ndcg@2"],
        "conventions": {"preset": "trec_eval", "tie_break": tie_break},
    }
    expected, got = polars_and_spark(spark, tmp_path, config)
    assert_agree(expected, got)
    first_is_relevant = {"item_desc": 0.0, "item_text_desc": 1.0, "item_text_asc": 0.0}
    assert got.metrics["precision@1"] == first_is_relevant[tie_break] * 2 / 3


@pytest.mark.parametrize("check", [True, False])
def test_unknown_items_against_the_ground_truth(spark: Any, tmp_path: Path, check: bool) -> None:
    """No catalog: the reference is the ground truth, read by Spark; or no count at all."""
    config = {
        "predictions": {"path": str(GOLDEN / "ties_predictions.csv")},
        "ground_truth": {"path": str(GOLDEN / "ties_truth.csv")},
        "metrics": RANKING,
        "unknown_items": {"check": check, "warn": 0.1},
    }
    expected, got = polars_and_spark(spark, tmp_path, config)
    assert_agree(expected, got)
    assert (got.unknown_items is not None) == check


def test_parquet_sample_and_bucket_counts(spark: Any, tmp_path: Path) -> None:
    """The sample data (string ids, graded Parquet truth); the numbers do not depend on the
    number of buckets."""
    config = {
        "predictions": {
            "path": str(SAMPLE / "predictions.csv"),
            "columns": {"user": "user_id", "item": "item_id", "score": "score"},
        },
        "ground_truth": {
            "path": str(SAMPLE / "ground_truth.parquet"),
            "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
        },
        "metrics": RANKING,
        "conventions": {"relevance_threshold": 4},
    }
    expected, one = polars_and_spark(spark, tmp_path, config, buckets=1)
    assert_agree(expected, one)
    _, many = polars_and_spark(spark, tmp_path, config, buckets=13)
    assert_agree(expected, many)
    assert many.inputs["engine"]["buckets"] == 13


def test_the_cli_runs_spark(tmp_path: Path, spark: Any) -> None:
    from cli_helpers import run_json

    config = {
        "predictions": {"path": str(GOLDEN / "tiefree_predictions.csv")},
        "ground_truth": {"path": str(GOLDEN / "tiefree_truth.csv")},
        "metrics": ["ndcg@10", "precision@5"],
        "engine": "spark",
    }
    report = run_json(write_config(tmp_path, config))
    plain = run_json(write_config(tmp_path, {**config, "engine": "in_memory"}, "plain.yaml"))
    for name, value in plain["models"]["model"]["metrics"].items():
        assert report["models"]["model"]["metrics"][name] == pytest.approx(value, abs=1e-12)
    assert report["models"]["model"]["inputs"]["engine"]["name"] == "spark"


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"conventions": {"tie_break": "input_order"}}, "has no file order"),
    ],
)
def test_what_spark_refuses(spark: Any, tmp_path: Path, extra: dict[str, Any], words: str) -> None:
    config = {
        "predictions": {"path": str(GOLDEN / "tiefree_predictions.csv")},
        "ground_truth": {"path": str(GOLDEN / "tiefree_truth.csv")},
        "metrics": ["ndcg@10"],
        **extra,
    }
    with pytest.raises(UsageError, match=words):
        evaluate_spark(load_config(write_config(tmp_path, config)), spark)


def test_a_missing_optional_input_is_an_error(spark: Any, tmp_path: Path) -> None:
    config = {
        "predictions": {"path": str(GOLDEN / "tiefree_predictions.csv")},
        "ground_truth": {"path": str(GOLDEN / "tiefree_truth.csv")},
        "metrics": ["novelty@5"],
    }
    with pytest.raises(InputError, match="novelty@5 needs the interactions input"):
        evaluate_spark(load_config(write_config(tmp_path, config)), spark)


def test_beyond_accuracy_on_spark(spark: Any, tmp_path: Path) -> None:
    """The catalog's features, the log's popularity and what users knew, a baseline file:
    Spark agrees with the polars engine."""
    import yaml

    root = Path(__file__).parents[2] / "configs"
    config = yaml.safe_load((root / "beyond.yaml").read_text(encoding="utf-8"))
    for key in ("predictions", "ground_truth", "catalog", "interactions"):
        config[key]["path"] = str((root / config[key]["path"]).resolve())
    config.pop("gates")
    config["metrics"].append({"name": "unexpectedness", "k": 5})
    baseline = pl.read_csv(SAMPLE / "popular_predictions.csv")
    baseline.write_csv(tmp_path / "baseline.csv")
    config["baseline"] = {
        "path": str(tmp_path / "baseline.csv"),
        "columns": {"user": "user_id", "item": "item_id", "score": "score"},
    }
    assert_agree(*polars_and_spark(spark, tmp_path, config))
