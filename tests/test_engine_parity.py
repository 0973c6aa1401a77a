"""Every engine gives the same report, bit for bit: in memory, streaming, `partitions: N`
for several N, and Spark with several bucket and shuffle settings.

The config mixes ranking, set, rating and beyond-accuracy metrics. The data has the
shapes real data has: integer ids whose text and number orders differ (9, 10, 100),
heavily tied scores, fractional and negative grades, users on one side only, lists
shorter than the cutoffs and longer than 15, and item features and a log for the
beyond-accuracy metrics. Values are compared as float.hex, so a difference in the last
bit fails (the means are exact sums divided once: exact_sum.py).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import invoke, write_config

from receval_cli.analysis.runs import evaluate_config
from receval_cli.config.loading import load_config
from receval_cli.report.data import Report

RANKING = [
    "ndcg@5",
    "ndcg@10(gain=exponential)",
    "ndcg(ideal=all_relevant)",
    "map@10",
    "map(denominator=relevant)",
    "precision@3",
    "precision@7",
    "precision@20(denominator=list_length)",
    "recall@10",
    "f1@5",
    "fbeta@5(beta=0.5)",
    "mrr",
    "hit_rate@5",
    "r_precision",
    "dcg@10",
    "idcg@10",
    "num_rel_ret",
    "bpref",
    "infap@10",
    "unj@5",
    "judged@20(denominator=list_length,negative_grades=judged)",
    "num_nonrel_judged_ret",
    "ndcg@10(gains=1:3;2:9)",
    "g",
    "bing",
    "ndcg_rel",
    "rndcg",
    "rbp",
    "rbp@10(gain=binary,p=0.8)",
    "rbp_resid",
    "err@10",
    "nerr@5(grades=binary,max_grade=1)",
    "hits@5",
    "map@10(denominator=k)",
    "ndcg@5(gain=binary,ideal=k_positions)",
    "fall_out@5",
    "fall_out(no_negatives=skip)",
    "partial_auc@3",
    "pap@3",
    "sufficient_reco@5(measure=share)",
    # trec_eval's precision points (metrics/precision_points.py) and a geometric mean
    "map(mean=geometric)",
    "ndcg@10(mean=geometric)",
    "set_map",
    "utility(c=-0.5)",
    "relative_precision@5",
    "relative_precision",
    "rprec_mult(multiplier=0.5)",
    "iprec_at_recall(level=0.3)",
    "iprec_at_recall@10(level=0.5,rounding=up)",
    "iprec_avg",
    "iprec_avg@20(levels=0.25;0.5;0.75)",
]
SETS = ["set_precision", "set_recall", "set_f1"]
RATING = [
    "rmse",
    "mae",
    "mse",
    "r2",
    "auc",
    "gauc",
    "gauc(weight=none)",
    "auc@5",
    "gauc@3",
    "gauc@20",
]
BEYOND = [
    "novelty@10",
    "intra_list_diversity@5(feature=category)",
    "serendipity@10",
    "arp@10",
    "long_tail_share@10",
    "catalog_coverage@10",
    "prediction_coverage",
    "user_coverage",
    "gini@10",
    "entropy@10",
    "inter_list_diversity@5",
    "intersection@5(baseline_k=10)",
]
# per-user metrics that read the catalog's size: the polars engines only (Spark refuses
# them: its buckets see only the catalog rows of the items they recommend)
CATALOG_SIZE = ["accuracy@10", "mcc@5"]


def parity_data(folder: Path, seed: int = 7) -> dict[str, Any]:
    """Write the inputs; return the config that reads them."""
    rng = random.Random(seed)
    items = [9, 10, 100, *range(11, 100), *range(101, 140)]
    users = [9, 10, 100, *range(1000, 1090)]
    predictions, truth = [], []
    for index, user in enumerate(users):
        if index % 11 != 3:  # some users only in the ground truth
            length = rng.choice([0, 1, 2, 4, 9, 16, 23, 40])
            for item in rng.sample(items, length):
                score = round(rng.choice([0.1, 0.5, 0.5, 0.9, rng.random()]), 1)
                predictions.append((user, item, score))
        if index % 13 != 5:  # some users only in the predictions
            for item in rng.sample(items, rng.choice([1, 2, 3, 6, 12])):
                grade = rng.choice([-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
                truth.append((user, item, grade))
    pl.DataFrame(predictions, schema=["user", "item", "score"], orient="row").write_parquet(
        folder / "predictions.parquet"
    )
    pl.DataFrame(truth, schema=["user", "item", "relevance"], orient="row").write_csv(
        folder / "truth.csv"
    )
    categories = [rng.choice(["a", "b", "c", "d"]) for _ in items]
    pl.DataFrame({"item": items, "category": categories}).write_csv(folder / "catalog.csv")
    log = [(rng.choice(users), rng.choice(items[:40])) for _ in range(900)]
    pl.DataFrame(log, schema=["user", "item"], orient="row").unique().write_csv(folder / "log.csv")
    return {
        "predictions": {"path": "predictions.parquet"},
        "ground_truth": {"path": "truth.csv"},
        "catalog": {"path": "catalog.csv", "columns": {"category": "category"}},
        "interactions": {"path": "log.csv"},
        "conventions": {"relevance_threshold": 1.0, "unpredicted": "ignore"},
        "metrics": [*RANKING, *SETS, *RATING, *BEYOND, *CATALOG_SIZE],
    }


def exact(report: Report) -> dict[str, str]:
    return {
        name: None if value is None else float.hex(value)
        for name, value in report.to_dict()["metrics"].items()
    }


def run(folder: Path, config: dict[str, Any], name: str) -> Report:
    run = evaluate_config(load_config(write_config(folder, config, f"{name}.yaml")))
    assert list(run.models) == ["model"]  # a one-file config: one model, named "model"
    return run.models["model"]


POLARS_ENGINES = {
    "in_memory": {"engine": "in_memory"},
    "streaming": {"engine": "streaming"},
    "partitions 1": {"engine": "in_memory", "partitions": 1},
    "partitions 3": {"engine": "in_memory", "partitions": 3},
    "partitions 7": {"engine": "streaming", "partitions": 7},
}


def test_polars_engines_agree_bit_for_bit(tmp_path: Path) -> None:
    config = parity_data(tmp_path)
    found = {
        name: exact(run(tmp_path, {**config, **settings}, name.replace(" ", "_")))
        for name, settings in POLARS_ENGINES.items()
    }
    expected = found.pop("in_memory")
    assert len(expected) == len(RANKING) + len(SETS) + len(RATING) + len(BEYOND) + 2
    hashes = {
        run(tmp_path, {**config, **settings}, "h").inputs["ground_truth"]["content_hash"]
        for settings in POLARS_ENGINES.values()
    }
    assert len(hashes) == 1  # the ground truth's fingerprint, whatever the engine
    for name, metrics in found.items():
        assert metrics == expected, name


def without_catalog_size(config: dict[str, Any]) -> dict[str, Any]:
    return {**config, "metrics": [m for m in config["metrics"] if m not in CATALOG_SIZE]}


def test_spark_agrees_bit_for_bit(spark: Any, tmp_path: Path) -> None:
    from receval_cli.engines.spark import evaluate_spark

    config = without_catalog_size(parity_data(tmp_path))
    single = run(tmp_path, config, "single")
    expected = exact(single)
    content_hash = single.inputs["ground_truth"]["content_hash"]
    loaded = load_config(write_config(tmp_path, {**config, "engine": "spark"}, "spark.yaml"))
    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        for buckets, shuffle in ((3, "2"), (64, "7")):
            spark.conf.set("spark.sql.shuffle.partitions", shuffle)
            report = evaluate_spark(loaded, spark, buckets=buckets)
            assert exact(report) == expected, (buckets, shuffle)
            # the ground truth's fingerprint too (#16 item 6): the same hash on Spark
            assert report.inputs["ground_truth"]["content_hash"] == content_hash
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


def test_a_users_value_does_not_depend_on_the_others(tmp_path: Path) -> None:
    """Per-user values are computed per user: the same alone as among all users (polars
    divides a column by a scalar through its reciprocal, which differs in the last bit
    from a true division, and only for batches of two rows or more)."""
    config = {**parity_data(tmp_path), "metrics": [*RANKING, *SETS, "novelty@10"]}
    whole = run(tmp_path, config, "whole")
    assert whole.per_user is not None
    truth = pl.read_csv(tmp_path / "truth.csv")
    predictions = pl.read_parquet(tmp_path / "predictions.parquet")
    chosen = [u for u in (9, 10, 100, 1001, 1004, 1017) if u in truth["user"].to_list()]
    for user in chosen:
        folder = tmp_path / f"user{user}"
        folder.mkdir()
        for name in ("catalog.csv", "log.csv"):
            (folder / name).write_bytes((tmp_path / name).read_bytes())
        predictions.filter(pl.col("user") == user).write_parquet(folder / "predictions.parquet")
        truth.filter(pl.col("user") == user).write_csv(folder / "truth.csv")
        alone = run(folder, config, "alone")
        assert alone.per_user is not None
        mine = whole.per_user.filter(pl.col("user") == user).drop("status")
        for column in mine.columns[1:]:
            assert float.hex(mine[column][0]) == float.hex(alone.per_user[column][0]), (
                user,
                column,
            )


@pytest.mark.parametrize("engine", ["partitions", "spark"])
def test_per_user_file_is_the_same_on_every_engine(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """--per-user with partitions: 4 and with Spark writes the rows of a single pass, in
    the same order, bit for bit."""
    config = parity_data(tmp_path)
    if engine == "spark":
        config = without_catalog_size(config)
    single = write_config(tmp_path, config, "single.yaml")
    assert invoke("run", single, "--per-user", tmp_path / "single.parquet").exit_code == 0
    if engine == "spark":
        request.getfixturevalue("spark")  # skips without pyspark or Java
        other = {**config, "engine": "spark", "partitions": 5}
    else:
        other = {**config, "partitions": 4}
    path = write_config(tmp_path, other, "other.yaml")
    result = invoke("run", path, "--per-user", tmp_path / "other.csv")
    assert result.exit_code == 0, result.stderr
    expected = pl.read_parquet(tmp_path / "single.parquet")
    got = pl.read_csv(tmp_path / "other.csv", schema=expected.schema)
    assert got.height == expected.height > 50
    assert got.equals(expected)
    metrics = [c for c in expected.columns if c not in ("model", "user", "status")]
    nulls = expected.select(pl.sum_horizontal(pl.col(metrics).null_count())).item()
    assert nulls > 0  # users left out of a mean: null there


def test_spark_refuses_the_metrics_that_read_the_catalog_size() -> None:
    """Spark's buckets see only part of the catalog: accuracy and mcc are named up front."""
    from receval_cli.config.conventions import Conventions
    from receval_cli.evaluation.plan import catalog_size_metrics
    from receval_cli.metrics import MetricSpec

    specs = tuple(MetricSpec.parse(m) for m in [*CATALOG_SIZE, "ndcg@5", "partial_auc@5"])
    assert catalog_size_metrics(specs, Conventions()) == CATALOG_SIZE
