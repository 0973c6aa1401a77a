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

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import evaluate_model, invoke, write_config
from engine_parity import (
    BEYOND,
    CATALOG_SIZE,
    CONVENTIONS,
    ENGINES,
    OWN_DATA,
    POLARS_ENGINES,
    RANKING,
    RATING,
    SETS,
    check_engine,
    exact,
    matrix,
    parity_data,
    registry_data,
    run_cli,
)
from suite_modules import load_test_module

from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import load_config
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.registry import REGISTRY


@pytest.mark.slow
def test_polars_engines_agree_bit_for_bit(tmp_path: Path) -> None:
    config = parity_data(tmp_path)
    found = {
        name: exact(
            evaluate_model(tmp_path, {**config, **settings}, f"{name.replace(' ', '_')}.yaml")
        )
        for name, settings in POLARS_ENGINES.items()
    }
    expected = found.pop("in_memory")
    assert len(expected) == len(RANKING) + len(SETS) + len(RATING) + len(BEYOND) + 2
    hashes = set()
    for settings in POLARS_ENGINES.values():
        model = evaluate_model(tmp_path, {**config, **settings}, "h.yaml")
        hashes.add(model.inputs["ground_truth"]["content_hash"])
    assert len(hashes) == 1  # the ground truth's fingerprint, whatever the engine
    for name, metrics in found.items():
        assert metrics == expected, name


def test_spark_agrees_bit_for_bit(spark: Any, tmp_path: Path) -> None:
    from receval_cli.engines.spark import evaluate_spark

    config = parity_data(tmp_path)  # accuracy and mcc too: the catalog's size, counted once
    single = evaluate_model(tmp_path, config, "single.yaml")
    expected = exact(single)
    content_hash = single.inputs["ground_truth"]["content_hash"]
    loaded = load_config(write_config(tmp_path, {**config, "engine": "spark"}, "spark.yaml"))
    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        for buckets, shuffle in ((3, "2"), (64, "7")):
            spark.conf.set("spark.sql.shuffle.partitions", shuffle)
            report = evaluate_spark(loaded, spark, buckets=buckets)
            assert exact(report) == expected, (buckets, shuffle)
            # the ground truth's fingerprint too: the same hash on Spark
            assert report.inputs["ground_truth"]["content_hash"] == content_hash
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


def test_a_users_value_does_not_depend_on_the_others(tmp_path: Path) -> None:
    """Per-user values are computed per user: the same alone as among all users (polars
    divides a column by a scalar through its reciprocal, which differs in the last bit
    from a true division, and only for batches of two rows or more)."""
    config = {**parity_data(tmp_path), "metrics": [*RANKING, *SETS, "novelty@10"]}
    whole = evaluate_model(tmp_path, config, "whole.yaml")
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
        alone = evaluate_model(folder, config, "alone.yaml")
        assert alone.per_user is not None
        mine = whole.per_user.filter(pl.col("user") == user).drop("status")
        for column in mine.columns[1:]:
            assert float.hex(mine[column][0]) == float.hex(alone.per_user[column][0]), (
                user,
                column,
            )


# the Spark case asks for the fixture inside the test: marked here, so -m "not spark" skips it
@pytest.mark.parametrize("engine", ["partitions", pytest.param("spark", marks=pytest.mark.spark)])
def test_per_user_file_is_the_same_on_every_engine(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """--per-user with partitions: 4 and with Spark writes the rows of a single pass, in
    the same order, bit for bit."""
    config = parity_data(tmp_path)
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


def test_the_metrics_that_read_the_catalog_size_are_named() -> None:
    """accuracy and mcc read the catalog's number of items (Spark counts it once for its
    buckets, which see only part of the catalog)."""
    from receval_cli.config.conventions import Conventions
    from receval_cli.evaluation.plan import catalog_size_metrics
    from receval_cli.metrics import MetricSpec

    specs = tuple(MetricSpec.parse(m) for m in [*CATALOG_SIZE, "ndcg@5", "partial_auc@5"])
    assert catalog_size_metrics(specs, Conventions()) == CATALOG_SIZE


def test_the_matrix_holds_every_registered_metric() -> None:
    """A metric added to the registry joins the matrix: its names are the registry's,
    every parameter with choices takes each of them, and every other one is varied."""
    conventions = Conventions(**CONVENTIONS)
    specs = [MetricSpec.parse(s) for s in matrix()]
    assert {s.name for s in specs} == set(REGISTRY) - set(OWN_DATA)  # OWN_DATA: their own
    for definition in REGISTRY.values():
        if definition.name in OWN_DATA:
            continue
        mine = [s for s in specs if s.name == definition.name]
        taken = [conventions.metric_params(s) for s in mine]
        for param in definition.all_params():
            if param.choices:
                assert {t.get(param.name) for t in taken} >= set(param.choices), param
            else:
                assert any(param.name in s.param_dict() for s in mine), param


@pytest.mark.slow
def test_every_registered_metric_agrees_on_every_polars_engine(tmp_path: Path) -> None:
    """The matrix on the polars engines: in memory, streaming, partitions: 3 and 7, auto."""
    groups = registry_data(tmp_path, seed=11)
    counts = {
        (group, engine): check_engine(tmp_path, group, config, engine, settings)
        for group, config in groups.items()
        for engine, settings in ENGINES.items()
    }
    assert counts["graded", "partitions 7"] == len(groups["graded"]["metrics"])
    assert all(counts["clicks", engine] == len(groups["clicks"]["metrics"]) for engine in ENGINES)
    report = json.loads((tmp_path / "graded_in_memory.json").read_text())
    segments = report["models"]["model"]["segments"]
    assert set(segments) == {"band=low", "band=mid", "band=high", "band=(none)"}
    per_user = [
        s for s in groups["graded"]["metrics"] if lookup(MetricSpec.parse(s).name).scope == "user"
    ]
    columns = pl.read_parquet(tmp_path / "graded_in_memory.parquet").columns
    assert columns == ["model", "user", "status", *per_user, "band"]


@pytest.mark.slow
def test_every_registered_metric_agrees_in_ranges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The matrix in ranges of users (auto on predictions grouped by user, engines/ranges.py)
    of 400 prediction rows: the in-memory files, bit for bit."""
    groups = registry_data(tmp_path, seed=11)
    monkeypatch.setenv("RECEVAL_RANGE_ROWS", "400")
    for group, config in groups.items():
        for engine, settings in (("in_memory", ENGINES["in_memory"]), ("ranges", {})):
            assert check_engine(tmp_path, group, config, engine, settings)
    report = json.loads((tmp_path / "graded_ranges.json").read_text())
    assert report["models"]["model"]["inputs"]["engine"]["ranges"] >= 2


def test_every_registered_metric_agrees_on_spark(spark: Any, tmp_path: Path) -> None:
    """The matrix on Spark with 5 and 16 buckets: the metrics it runs give the in-memory
    files bit for bit (the click metrics, the item-group fairness metrics, co-occurrence and
    the catalog's size included): none is refused. (A bucket of one user, as 64 buckets
    give, is test_..._for_a_user_alone's case.)"""
    groups = registry_data(tmp_path, seed=11)
    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        for group, config in groups.items():
            check_engine(tmp_path, group, config, "in_memory", ENGINES["in_memory"])
            for buckets, shuffle in ((5, "3"), (16, "7")):
                spark.conf.set("spark.sql.shuffle.partitions", shuffle)
                settings = {"engine": "spark", "partitions": buckets}
                ran = check_engine(tmp_path, group, config, f"spark {buckets}", settings)
                assert ran == len(config["metrics"])
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


@pytest.mark.slow
def test_every_registered_metric_is_the_same_for_a_user_alone(tmp_path: Path) -> None:
    """A user's values over the whole matrix are the same alone as among every user, as
    in a Spark or `partitions` bucket that holds one user: polars takes other paths for
    one row (a whole exponent of one row is raised by repeated multiplication, a scalar
    divisor is divided by truly), and the values must not follow."""
    config = registry_data(tmp_path, seed=11)["graded"]
    del config["segments"], config["segment_by"]
    per_user = [s for s in config["metrics"] if lookup(MetricSpec.parse(s).name).scope == "user"]
    config["metrics"] = per_user
    assert run_cli(tmp_path, config, "whole")[0] == 0
    whole = pl.read_parquet(tmp_path / "whole.parquet")
    truth = pl.read_csv(tmp_path / "truth.csv")
    predictions = pl.read_parquet(tmp_path / "predictions.parquet")
    # 1073's one hit is at rank 10 (p^9 in rbp); 9 and 100 order differently as text
    for user in (9, 100, 1073):
        folder = tmp_path / f"user{user}"
        folder.mkdir()
        for name in ("catalog.parquet", "log.csv", "baseline.csv"):
            (folder / name).write_bytes((tmp_path / name).read_bytes())
        mine = predictions.filter(pl.col("user") == user)
        assert mine.height > 1
        mine.write_parquet(folder / "predictions.parquet")
        truth.filter(pl.col("user") == user).write_csv(folder / "truth.csv")
        code, stderr = run_cli(folder, config, "alone")
        assert code == 0, stderr
        alone = pl.read_parquet(folder / "alone.parquet")
        among = whole.filter(pl.col("user") == user)
        assert alone.columns == among.columns
        changed = [c for c in among.columns if not alone[c].equals(among[c])]
        assert not changed, (user, changed)


def test_every_metric_of_its_own_data_runs_on_every_engine_elsewhere() -> None:
    """A metric left out of the matrix has its own engine test, named in OWN_DATA."""
    for name, module in OWN_DATA.items():
        assert name in REGISTRY, name
        tests = vars(load_test_module(module))
        assert "test_every_engine_agrees" in tests, module
        assert "test_spark_agrees" in tests, module
