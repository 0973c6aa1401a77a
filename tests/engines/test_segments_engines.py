"""segment_by on every engine: in memory, streaming, `partitions: N` and Spark give the
same segments, bit for bit, as one run on the inputs filtered to each segment's users.

The segments come from the run's own pass on every engine (evaluation/segment_split.py):
each bucket splits its users by segment. The data is test_engine_parity's (integer ids
whose text and number orders differ, heavy ties, fractional and negative grades, users
on one side only, short and long lists), with a segments file whose ids are text: `0100`
does not name user 100, users without a value or without a row fall in `(none)`, and one
value holds no user of the inputs (a segment that cannot be evaluated, with its reason).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import evaluate_model, invoke, write_config
from engine_parity import RANKING, parity_data

from receval_cli.config.loading import load_config
from receval_cli.results.report import Report

GLOBAL = ["catalog_coverage@10", "gini@10", "inter_list_diversity@5", "novelty@10"]
METRICS = [*RANKING[:8], "map(mean=geometric)", "rmse", "auc", *GLOBAL]
PLAIN = ["ndcg@5", "precision@3", "map@10", "rmse", "catalog_coverage@10"]  # no side inputs


def segmented(folder: Path) -> dict[str, Any]:
    """parity_data with a segments file: `band` for most users (text ids, one written
    `0100`), a `tier` with nulls, and a band value no user of the inputs has."""
    config = parity_data(folder)
    users = [9, 10, *range(1000, 1080)]
    rows = [
        (str(user), ["low", "mid", "high"][user % 3], None if user % 4 == 0 else f"t{user % 2}")
        for user in users
    ]
    rows += [("0100", "high", "t1"), ("77777", "ghost", "t0")]  # 100 has no value; a ghost
    table = pl.DataFrame(rows, schema=["uid", "band", "tier"], orient="row")
    table.write_csv(folder / "segments.csv")
    return {
        **config,
        "metrics": METRICS,
        "segments": {"path": "segments.csv", "columns": {"user": "uid"}},
        "segment_by": ["band", "tier"],
    }


def exact(report: Report) -> dict[str, Any]:
    """Each segment's metrics as float.hex and its users block; each skipped reason."""
    found: dict[str, Any] = {}
    for name, part in report.segments.items():
        found[name] = {
            "metrics": {k: None if v is None else float.hex(v) for k, v in part.metrics.items()},
            "users": part.users,
        }
    found.update(report.segments_skipped)
    return found


def test_segments_hold_what_the_data_says(tmp_path: Path) -> None:
    """The segment list and the (none) and unknown-value cases, on one engine."""
    report = evaluate_model(tmp_path, segmented(tmp_path), "one.yaml")
    names = set(report.segments) | set(report.segments_skipped)
    assert names == {
        "band=low",
        "band=mid",
        "band=high",
        "band=ghost",
        "band=(none)",
        "tier=t0",
        "tier=t1",
        "tier=(none)",
    }
    assert "no user appears in both" in report.segments_skipped["band=ghost"]
    # band=(none): user 100 (the file writes 0100) and the users without a row
    none = report.segments["band=(none)"].users
    assert none["in_ground_truth"] + none["only_in_predictions"] >= 3


def test_a_segment_equals_the_run_on_its_users_alone(tmp_path: Path) -> None:
    """An independent check of two segments: the inputs filtered to the segment's users
    (ids compared as text, as the segments file writes them), run without segments."""
    config = segmented(tmp_path)
    report = evaluate_model(tmp_path, {**config, "partitions": 3}, "parts.yaml")
    table = pl.read_csv(tmp_path / "segments.csv", schema_overrides={"uid": pl.String})
    predictions = pl.read_parquet(tmp_path / "predictions.parquet")
    truth = pl.read_csv(tmp_path / "truth.csv")
    for name, inside in (
        (
            "band=high",
            pl.col("user")
            .cast(pl.String)
            .is_in(table.filter(pl.col("band") == "high")["uid"].implode()),
        ),
        (
            "tier=(none)",
            ~pl.col("user")
            .cast(pl.String)
            .is_in(table.filter(pl.col("tier").is_not_null())["uid"].implode()),
        ),
    ):
        folder = tmp_path / name.replace("=", "_").replace("(", "").replace(")", "")
        folder.mkdir()
        for copied in ("catalog.csv", "log.csv"):
            (folder / copied).write_bytes((tmp_path / copied).read_bytes())
        predictions.filter(inside).write_parquet(folder / "predictions.parquet")
        truth.filter(inside).write_csv(folder / "truth.csv")
        plain = {k: v for k, v in config.items() if k not in ("segments", "segment_by")}
        alone = evaluate_model(folder, plain, "alone.yaml")
        got = report.segments[name]
        assert {k: float.hex(v) for k, v in got.metrics.items() if v is not None} == {
            k: float.hex(v) for k, v in alone.metrics.items() if v is not None
        }, name
        assert got.users == alone.users, name


ENGINES = {
    "streaming": {"engine": "streaming"},
    "partitions 2": {"engine": "in_memory", "partitions": 2},
    "partitions 5": {"engine": "streaming", "partitions": 5},
}


@pytest.mark.slow
def test_every_polars_engine_gives_the_same_segments(tmp_path: Path) -> None:
    config = segmented(tmp_path)
    expected = exact(evaluate_model(tmp_path, config, "single.yaml"))
    assert len(expected) == 8
    for name, settings in ENGINES.items():
        found = evaluate_model(tmp_path, {**config, **settings}, f"{name.replace(' ', '_')}.yaml")
        assert exact(found) == expected, name


def test_segments_from_a_ground_truth_column_on_partitions(tmp_path: Path) -> None:
    config = segmented(tmp_path)
    truth = pl.read_csv(tmp_path / "truth.csv")
    truth.with_columns(
        group=pl.when(pl.col("user") % 5 == 0)
        .then(None)
        .otherwise((pl.col("user") % 2).cast(pl.String))
    ).write_csv(tmp_path / "truth.csv")
    own = {k: v for k, v in config.items() if k != "segments"} | {"segment_by": ["group"]}
    expected = exact(evaluate_model(tmp_path, own, "single.yaml"))
    assert set(expected) == {"group=0", "group=1", "group=(none)"}
    assert exact(evaluate_model(tmp_path, {**own, "partitions": 4}, "parts.yaml")) == expected


def test_per_user_rows_carry_the_segment_values_on_partitions(tmp_path: Path) -> None:
    config = segmented(tmp_path)
    single = write_config(tmp_path, config, "single.yaml")
    assert invoke("run", single, "--per-user", tmp_path / "single.parquet").exit_code == 0
    parts = write_config(tmp_path, {**config, "partitions": 3}, "parts.yaml")
    result = invoke("run", parts, "--per-user", tmp_path / "parts.parquet")
    assert result.exit_code == 0, result.stderr
    expected = pl.read_parquet(tmp_path / "single.parquet")
    assert expected.columns[-2:] == ["band", "tier"]
    assert expected.filter(pl.col("user") == 100)["band"].to_list() == [None]  # 0100 is not 100
    assert pl.read_parquet(tmp_path / "parts.parquet").equals(expected)


def test_a_gate_on_a_segment_on_partitions(tmp_path: Path) -> None:
    config = segmented(tmp_path)
    gated = {**config, "partitions": 3, "gates": {"ndcg@5": {"min": 0.99, "segment": "band=low"}}}
    result = invoke("run", write_config(tmp_path, gated, "gated.yaml"), "--format", "json")
    assert result.exit_code == 1, result.stderr
    gates = json.loads(result.stdout)["gates"]["results"]
    assert [(g["metric"], g["passed"]) for g in gates] == [("ndcg@5 [band=low]", False)]
    wrong = {**gated, "gates": {"ndcg@5": {"min": 0.1, "segment": "band=nope"}}}
    result = invoke("run", write_config(tmp_path, wrong, "wrong.yaml"))
    assert result.exit_code == 2
    assert "gates.ndcg@5.segment 'band=nope' is not a segment of this run" in result.stderr


# ------------------------------------------------------------------------------ Spark


@pytest.mark.spark
def test_spark_gives_the_same_segments(spark: Any, tmp_path: Path) -> None:
    """A local segments file, the same as a Spark table, and attributes from a ground
    truth column: the segments of a single pass, bit for bit, with 3 and 64 buckets."""
    from receval_cli.engines.spark import evaluate_spark

    config = segmented(tmp_path)
    expected = exact(evaluate_model(tmp_path, config, "single.yaml"))
    loaded = load_config(write_config(tmp_path, {**config, "engine": "spark"}, "s.yaml"))
    for buckets in (3, 64):
        assert exact(evaluate_spark(loaded, spark, buckets=buckets)) == expected, buckets
    table = spark.read.csv(str(tmp_path / "segments.csv"), header=True)  # every column text
    table.write.mode("overwrite").saveAsTable("receval_segments_test")
    from_table = {
        **config,
        "engine": "spark",
        "segments": {"path": "table:receval_segments_test", "columns": {"user": "uid"}},
    }
    loaded = load_config(write_config(tmp_path, from_table, "t.yaml"))
    assert exact(evaluate_spark(loaded, spark, buckets=5)) == expected
    truth = pl.read_csv(tmp_path / "truth.csv")
    truth.with_columns(group=(pl.col("user") % 3).cast(pl.String)).write_csv(tmp_path / "truth.csv")
    own = {k: v for k, v in config.items() if k != "segments"} | {"segment_by": ["group"]}
    expected = exact(evaluate_model(tmp_path, own, "own.yaml"))
    loaded = load_config(write_config(tmp_path, {**own, "engine": "spark"}, "o.yaml"))
    assert exact(evaluate_spark(loaded, spark, buckets=4)) == expected


@pytest.mark.spark
def test_spark_per_user_rows_and_gates_with_segments(spark: Any, tmp_path: Path) -> None:
    config = {**segmented(tmp_path), "metrics": PLAIN}
    single = write_config(tmp_path, config, "single.yaml")
    assert invoke("run", single, "--per-user", tmp_path / "single.parquet").exit_code == 0
    gated = {
        **config,
        "engine": "spark",
        "partitions": 4,
        "gates": {"ndcg@5": {"min": 0.99, "segment": "tier=t0"}},
    }
    path = write_config(tmp_path, gated, "spark.yaml")
    result = invoke("run", path, "--per-user", tmp_path / "spark.parquet", "--format", "json")
    assert result.exit_code == 1, result.stderr
    gates = json.loads(result.stdout)["gates"]["results"]
    assert [(g["metric"], g["passed"]) for g in gates] == [("ndcg@5 [tier=t0]", False)]
    expected = pl.read_parquet(tmp_path / "single.parquet")
    assert pl.read_parquet(tmp_path / "spark.parquet").equals(expected)


@pytest.mark.spark
def test_spark_refuses_bad_segments_as_the_polars_engines_do(spark: Any, tmp_path: Path) -> None:
    """A repeated user in a segments table, and several values of an attribute for one
    user in the ground truth: the polars engines' messages, exit 2."""
    config = {**segmented(tmp_path), "metrics": PLAIN, "engine": "spark"}
    rows = [("10", "a"), ("9", "b"), ("10", "c"), ("9", "d"), ("100", "e")]
    spark.createDataFrame(rows, ["uid", "band"]).write.mode("overwrite").saveAsTable(
        "receval_repeated_segments"
    )
    table = {
        **config,
        "segment_by": ["band"],
        "segments": {"path": "table:receval_repeated_segments", "columns": {"user": "uid"}},
    }
    repeated = write_config(tmp_path, table, "r.yaml")
    for command in ("run", "validate"):  # validate runs the Spark job's checks on a table
        result = invoke(command, repeated)
        assert result.exit_code == 2, command
        assert result.stderr == (
            "error: segments file table:receval_repeated_segments: 2 row(s) repeat a user "
            "already listed; give each user one row.\n"
        ), command
    truth = pl.read_csv(tmp_path / "truth.csv")
    truth.with_columns(group=pl.col("item").cast(pl.String)).write_csv(tmp_path / "truth.csv")
    own = {k: v for k, v in config.items() if k != "segments"} | {"segment_by": ["group"]}
    polars_run = invoke("run", write_config(tmp_path, {**own, "engine": "in_memory"}, "p.yaml"))
    spark_run = invoke("run", write_config(tmp_path, own, "s.yaml"))
    assert polars_run.exit_code == spark_run.exit_code == 2
    assert "has several values in the ground truth" in polars_run.stderr
    assert spark_run.stderr == polars_run.stderr
