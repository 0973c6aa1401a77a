"""engine: spark reads the optional inputs on the executors: a catalog,
an interactions log and a baseline given as Spark tables or URIs give the in-memory
engine's numbers bit for bit; none of their rows passes through the driver; what the
driver receives from the buckets does not grow with their number; and a bad optional
input in a table is refused with the polars engines' message, exit 2."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import evaluate_written, invoke, write_config

from receval_cli.analysis.runs import evaluate_config
from receval_cli.config.loading import load_config
from receval_cli.engines import run_plan as planner
from receval_cli.engines.spark import evaluate_spark
from receval_cli.inputs.optional import Sources

METRICS = [
    "ndcg@5",
    "novelty@5",
    "arp@5",
    "long_tail_share@5",
    "long_tail_share@5(head=0.1)",
    "serendipity@5",
    "unexpectedness@5",
    "intra_list_diversity@5(feature=category)",
    "intra_list_diversity@5(feature=tags)",
    "intra_list_diversity@5(feature=embedding)",
    "catalog_coverage@5",
    "gini@5",
    "entropy@5",
]


def write_case(folder: Path, seed: int = 3) -> dict[str, Any]:
    """Integer ids (9, 10, 100 among them), tied scores, lists of 1 to 25 items, users
    missing on either side, a log with popularity ties, a baseline, a catalog with a
    category, tags and 3-dimensional embeddings. Returns the config with local paths."""
    rng = random.Random(seed)
    items = [9, 10, 100, *(i for i in range(11, 160) if i != 100)]
    predictions, truth, log, baseline = [], [], [], []
    for user in range(1, 241):
        if user % 11:
            for item in rng.sample(items, rng.randint(1, 25)):
                predictions.append((user, item, rng.choice([0.2, 0.5, 0.5, 0.8])))
        if user % 7:
            truth += [(user, item, rng.choice([1, 2, 3])) for item in rng.sample(items, 5)]
        log += [(user, item) for item in rng.sample(items[:60], rng.randint(0, 8))]
        baseline += [(user, item, 5.0 - r) for r, item in enumerate(rng.sample(items, 5))]
    frames = {
        "predictions": pl.DataFrame(predictions, ["user", "item", "score"], orient="row"),
        "truth": pl.DataFrame(truth, ["user", "item", "relevance"], orient="row"),
        "log": pl.DataFrame(log, ["user", "item"], orient="row"),
        "baseline": pl.DataFrame(baseline, ["user", "item", "score"], orient="row"),
        "catalog": pl.DataFrame(
            {
                "item": items,
                "category": [f"c{i % 5}" for i in items],
                "tags": [[f"t{i % 3}", f"t{i % 4}"] for i in items],
                "embedding": [[float(i % 3), float(i % 5) - 2.0, 1.5] for i in items],
            }
        ),
    }
    for name, frame in frames.items():
        frame.write_parquet(folder / f"{name}.parquet")
    columns = {"category": "category", "tags": "tags", "embedding": "embedding"}
    return {
        "predictions": {"path": "predictions.parquet"},
        "ground_truth": {"path": "truth.parquet"},
        "interactions": {"path": "log.parquet"},
        "baseline": {"path": "baseline.parquet"},
        "catalog": {"path": "catalog.parquet", "columns": columns},
        "metrics": METRICS,
        "conventions": {"relevance_threshold": 2},
    }


def test_optional_inputs_as_tables_and_uris(spark: Any, tmp_path: Path) -> None:
    config = write_case(tmp_path)
    (expected,) = evaluate_written(tmp_path, config).models.values()
    spark.read.parquet(str(tmp_path / "catalog.parquet")).createOrReplaceTempView("items_c")
    spark.read.parquet(str(tmp_path / "baseline.parquet")).createOrReplaceTempView("base_c")
    remote = {
        **config,
        "catalog": {**config["catalog"], "path": "table:items_c"},
        "baseline": {"path": "table:base_c"},
        "interactions": {"path": (tmp_path / "log.parquet").as_uri()},
    }
    got = evaluate_spark(load_config(write_config(tmp_path, remote, "r.yaml")), spark, 9)
    assert got.metrics == expected.metrics  # bit for bit
    assert all(value is not None for value in got.metrics.values())
    assert got.items == expected.items
    assert got.unknown_items == expected.unknown_items
    assert got.inputs["catalog"]["path"] == "table:items_c"
    local = evaluate_spark(load_config(write_config(tmp_path, config)), spark, 5)
    assert local.metrics == expected.metrics


def test_optional_inputs_with_text_ids_beside_integer_ones(spark: Any, tmp_path: Path) -> None:
    """A catalog whose item ids are text (with "007" and "x1" beside "9", "10", "100") and
    a log whose user ids are text, beside integer predictions and ground truth: every id
    is compared as text, as the polars engines compare them (was a cast error, exit 3)."""
    config = write_case(tmp_path)
    catalog = pl.read_parquet(tmp_path / "catalog.parquet").with_columns(pl.col("item").cast(str))
    extra = catalog.head(2).with_columns(pl.Series("item", ["007", "x1"]))
    pl.concat([catalog, extra]).write_parquet(tmp_path / "catalog.parquet")
    log = pl.read_parquet(tmp_path / "log.parquet").with_columns(pl.col("user").cast(str))
    log.write_parquet(tmp_path / "log.parquet")
    (expected,) = evaluate_written(tmp_path, config).models.values()
    got = evaluate_spark(load_config(write_config(tmp_path, config, "s.yaml")), spark, 4)
    assert got.metrics == expected.metrics  # bit for bit
    assert got.items == expected.items


def _unreadable_on_the_driver(sources: Sources) -> Sources:
    """The optional inputs' frames replaced by ones that fail when read: the driver may
    name them, never read their rows."""

    def boom(frame: pl.DataFrame) -> pl.DataFrame:
        raise AssertionError("an optional input was read on the driver")

    for source in sources.given():
        source.frame = source.frame.map_batches(boom)
        source.raw = source.raw.map_batches(boom)
    return sources


def test_optional_rows_never_reach_the_driver(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path, write_case(tmp_path))
    (expected,) = evaluate_config(load_config(config)).models.values()
    read = planner.read_sources  # the run planner reads the local optional inputs
    monkeypatch.setattr(
        planner, "read_sources", lambda *a, **k: _unreadable_on_the_driver(read(*a, **k))
    )

    def no_local_data(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a DataFrame made from the driver's data")

    monkeypatch.setattr(type(spark), "createDataFrame", no_local_data)
    got = evaluate_spark(load_config(config), spark, 7)
    assert got.metrics == expected.metrics


def test_the_driver_receives_one_partial(spark: Any, tmp_path: Path) -> None:
    """The buckets' results are merged on an executor: the driver receives the same
    amount with 4 buckets as with 64 (it received 64 Partials, each with its own copy of
    the item tables)."""
    config = load_config(write_config(tmp_path, write_case(tmp_path)))
    few = evaluate_spark(config, spark, 4).inputs["engine"]["collected_bytes"]
    many = evaluate_spark(config, spark, 64).inputs["engine"]["collected_bytes"]
    assert 0 < many < 1.2 * few


def test_what_the_driver_receives_does_not_grow_with_the_items(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The universe (a catalog, or the log's items) and the unknown-items reference (the
    ground truth's items) stay on Spark: the executor that merges the buckets finishes the
    global metrics, the items block, the unknown items and the exposure histogram. A
    catalog and a ground truth with 60,000 more items (never recommended) change what
    the driver receives by a few digits, and no table comes to the driver as Arrow."""
    monkeypatch.setattr(
        type(spark.range(1)), "toArrow", lambda *_: pytest.fail("a table came to the driver")
    )
    config = write_case(tmp_path)
    small = load_config(write_config(tmp_path, config, "small.yaml"))
    catalog = pl.read_parquet(tmp_path / "catalog.parquet")
    extra = pl.DataFrame({"item": range(1_000, 61_000)}).with_columns(
        category=pl.lit("c9"), tags=pl.lit(["t9"]), embedding=pl.lit([0.0, 1.0, 2.0])
    )
    pl.concat([catalog, extra]).write_parquet(tmp_path / "big_catalog.parquet")
    big = load_config(
        write_config(
            tmp_path,
            {**config, "catalog": {**config["catalog"], "path": "big_catalog.parquet"}},
            "big.yaml",
        )
    )
    found = {name: evaluate_spark(c, spark, 8) for name, c in (("small", small), ("big", big))}
    sizes = {name: r.inputs["engine"]["collected_bytes"] for name, r in found.items()}
    assert abs(sizes["big"] - sizes["small"]) < 64, sizes
    (expected,) = evaluate_config(big).models.values()
    assert found["big"].metrics == expected.metrics
    assert found["big"].items == expected.items
    assert found["big"].unknown_items == expected.unknown_items
    assert found["big"].exposure is not None
    assert expected.exposure is not None
    assert found["big"].exposure.equals(expected.exposure)  # the histogram, 60,160 items
    # the ground truth as the reference (no catalog, no log): its items stay on Spark too
    truth = pl.read_parquet(tmp_path / "truth.parquet")
    more = pl.DataFrame({"user": 1, "item": range(1_000, 61_000), "relevance": 0})
    pl.concat([truth, more.cast(truth.schema)]).write_parquet(tmp_path / "big_truth.parquet")
    plain = {"predictions": config["predictions"], "metrics": ["ndcg@5", "precision@3"]}
    sizes = {}
    for name, path in (("small", "truth.parquet"), ("big", "big_truth.parquet")):
        given = {**plain, "ground_truth": {"path": path}}
        loaded = load_config(write_config(tmp_path, given, f"{name}_t.yaml"))
        report = evaluate_spark(loaded, spark, 8)
        (alone,) = evaluate_config(loaded).models.values()
        assert report.unknown_items == alone.unknown_items
        sizes[name] = report.inputs["engine"]["collected_bytes"]
    assert abs(sizes["big"] - sizes["small"]) < 64, sizes


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"item": [9, 9, 10], "category": ["a", "b", "c"]},
            "catalog file table:bad_c: 1 row(s) repeat an item already listed (e.g. 9). List "
            "each item once.",
        ),
        (
            {"item": [9, None, 10], "category": ["a", "b", "c"]},
            "catalog file table:bad_c: column 'item' has 1 null value(s); drop or fill those rows.",
        ),
        (
            {"item": [9, 10], "category": ["a", None]},
            "catalog file table:bad_c: column 'category' has 1 null value(s); drop or fill "
            "those rows.",
        ),
    ],
)
def test_a_bad_catalog_table(
    spark: Any, tmp_path: Path, change: dict[str, list[Any]], message: str
) -> None:
    config = write_case(tmp_path)
    rows = list(zip(change["item"], change["category"], strict=True))
    spark.createDataFrame(rows, "item bigint, category string").createOrReplaceTempView("bad_c")
    config["catalog"] = {"path": "table:bad_c", "columns": {"category": "category"}}
    config["metrics"] = ["intra_list_diversity@5"]
    config["engine"] = "spark"
    result = invoke("run", write_config(tmp_path, config))
    assert result.exit_code == 2, result.stderr
    assert result.stderr == f"error: {message}\n"


def test_a_baseline_table_with_repeated_pairs(spark: Any, tmp_path: Path) -> None:
    config = write_case(tmp_path)
    rows = [(1, 9, 0.5), (1, 9, 0.4), (1, 10, 0.3), (2, 9, 0.2)]
    schema = "user bigint, item bigint, score double"
    spark.createDataFrame(rows, schema).createOrReplaceTempView("bad_b")
    config["baseline"] = {"path": "table:bad_b"}
    config["metrics"] = ["unexpectedness@5"]
    config["engine"] = "spark"
    result = invoke("run", write_config(tmp_path, config))
    assert result.exit_code == 2, result.stderr
    assert result.stderr == (
        "error: baseline file table:bad_b: 1 (user, item) pair(s) appear more than once, e.g. "
        "user 1, item 9 (2 rows). Remove the duplicates, or set conventions.duplicates to say "
        "which row counts.\n"
    )


def test_validate_reads_tables_with_spark(spark: Any, tmp_path: Path) -> None:
    """`receval validate` on a config with tables (engine: spark): the Spark job's reading
    and checks, a summary of what they counted, exit 0; a bad table: run's error, exit 2."""
    config = write_case(tmp_path)
    spark.read.parquet(str(tmp_path / "predictions.parquet")).createOrReplaceTempView("preds_v")
    spark.read.parquet(str(tmp_path / "catalog.parquet")).createOrReplaceTempView("items_v")
    config["predictions"] = {"path": "table:preds_v"}
    config["catalog"] = {**config["catalog"], "path": "table:items_v"}
    config["engine"] = "spark"
    path = write_config(tmp_path, config)
    result = invoke("validate", path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    health = json.loads(result.stdout)
    assert health["engine"]["name"] == "spark"
    (model,) = health["models"].values()
    (expected,) = evaluate_config(
        load_config(write_config(tmp_path, write_case(tmp_path), "l.yaml"))
    ).models.values()
    assert model["inputs"]["predictions"]["path"] == "table:preds_v"
    assert model["inputs"]["predictions"]["rows"] == expected.inputs["predictions"]["rows"]
    assert model["inputs"]["catalog"]["path"] == "table:items_v"
    assert model["users"] == expected.users
    shown = invoke("validate", path)
    assert shown.exit_code == 0, shown.stderr
    assert "table:preds_v" in shown.stdout
    assert "ok: receval run can evaluate this config" in shown.stdout
    rows = [(9, "a"), (9, "b")]
    spark.createDataFrame(rows, "item bigint, category string").createOrReplaceTempView("items_v")
    config["catalog"] = {"path": "table:items_v", "columns": {"category": "category"}}
    failed = invoke("validate", write_config(tmp_path, config))
    assert failed.exit_code == 2
    assert failed.stderr == (
        "error: catalog file table:items_v: 1 row(s) repeat an item already listed (e.g. 9). "
        "List each item once.\n"
    )
