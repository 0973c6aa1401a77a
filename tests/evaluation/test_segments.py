"""Segments: every metric per user segment equals the run on the input filtered first."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import (
    SAMPLE,
    SAMPLE_INTERACTIONS,
    assert_user_error,
    invoke,
    run_json,
    sample_config,
    write,
    write_config,
)

METRICS = ["ndcg@10", "precision@5", "map@10", "catalog_coverage@10", "rmse"]


def attributes(folder: Path) -> pl.DataFrame:
    truth = pl.read_parquet(SAMPLE / "ground_truth.parquet")
    users = sorted(set(truth["user_id"]))
    rng = random.Random(5)
    table = pl.DataFrame(
        {
            "user_id": users,
            "country": [rng.choice(["DE", "FR", "US"]) for _ in users],
            "tenure": [rng.choice(["new", "old", None]) for _ in users],
        }
    )
    table.write_csv(folder / "users.csv")
    return table


def config(folder: Path, predictions: Path, truth: Path, name: str, **extra: Any) -> Path:
    conventions = {"relevance_threshold": 4, "unpredicted": "ignore"}
    data = sample_config(
        METRICS, predictions, truth, interactions=SAMPLE_INTERACTIONS, conventions=conventions
    )
    return write_config(folder, data | extra, name)


@pytest.mark.slow
def test_segments_equal_filtering_the_input_first(tmp_path: Path) -> None:
    table = attributes(tmp_path)
    segmented = config(
        tmp_path,
        SAMPLE / "predictions.csv",
        SAMPLE / "ground_truth.parquet",
        "segmented.yaml",
        segments={"path": "users.csv", "columns": {"user": "user_id"}},
        segment_by=["country", "tenure"],
    )
    report = run_json(segmented)
    assert set(report["models"]["model"]["segments"]) == {
        "country=DE",
        "country=FR",
        "country=US",
        "tenure=(none)",
        "tenure=new",
        "tenure=old",
    }
    predictions = pl.read_csv(SAMPLE / "predictions.csv")
    truth = pl.read_parquet(SAMPLE / "ground_truth.parquet")
    for name, segment in report["models"]["model"]["segments"].items():
        attribute, value = name.split("=")
        column = table.get_column(attribute)
        if value == "(none)":  # every user without a value, in the truth or not
            valued = table.filter(column.is_not_null()).get_column("user_id").implode()
            inside = ~pl.col("user_id").is_in(valued)
        else:
            users = table.filter(column == value).get_column("user_id").implode()
            inside = pl.col("user_id").is_in(users)
        p = tmp_path / f"p_{attribute}_{value}.csv"
        t = tmp_path / f"t_{attribute}_{value}.parquet"
        predictions.filter(inside).write_csv(p)
        truth.filter(inside).write_parquet(t)
        alone = run_json(config(tmp_path, p, t, f"{attribute}_{value}.yaml"))
        assert segment["metrics"] == alone["models"]["model"]["metrics"], name
        assert segment["users"] == alone["models"]["model"]["users"]["evaluated"]


def test_segments_from_a_ground_truth_column(tmp_path: Path) -> None:
    truth = pl.read_parquet(SAMPLE / "ground_truth.parquet")
    labelled = truth.with_columns(
        group=pl.when(pl.col("user_id") < "u100").then(pl.lit("a")).otherwise(pl.lit("b"))
    )
    labelled.write_parquet(tmp_path / "truth.parquet")
    path = config(
        tmp_path,
        SAMPLE / "predictions.csv",
        tmp_path / "truth.parquet",
        "c.yaml",
        segment_by=["group"],
    )
    report = run_json(path)
    assert sorted(report["models"]["model"]["segments"]) == ["group=a", "group=b"]
    users = (
        report["models"]["model"]["segments"]["group=a"]["users"]
        + report["models"]["model"]["segments"]["group=b"]["users"]
    )
    assert users == report["models"]["model"]["users"]["evaluated"]


def test_a_gate_on_a_segment(tmp_path: Path) -> None:
    attributes(tmp_path)
    extra: dict[str, Any] = {
        "segments": {"path": "users.csv", "columns": {"user": "user_id"}},
        "segment_by": ["country"],
    }
    base = config(
        tmp_path, SAMPLE / "predictions.csv", SAMPLE / "ground_truth.parquet", "c.yaml", **extra
    )
    report = run_json(base)
    value = report["models"]["model"]["segments"]["country=FR"]["metrics"]["ndcg@10"]
    for bound, expect in ((value - 0.01, 0), (value + 0.01, 1)):
        gates = {"ndcg@10": {"min": bound, "segment": "country=FR"}}
        path = config(
            tmp_path,
            SAMPLE / "predictions.csv",
            SAMPLE / "ground_truth.parquet",
            "gated.yaml",
            gates=gates,
            **extra,
        )
        result = invoke("run", path)
        assert result.exit_code == expect, result.stderr
        if expect:
            assert "ndcg@10 [country=FR]" in result.stdout


def test_per_user_output_carries_the_attributes(tmp_path: Path) -> None:
    table = attributes(tmp_path)
    path = config(
        tmp_path,
        SAMPLE / "predictions.csv",
        SAMPLE / "ground_truth.parquet",
        "c.yaml",
        segments={"path": "users.csv", "columns": {"user": "user_id"}},
        segment_by=["country"],
    )
    out = tmp_path / "per_user.parquet"
    assert (
        invoke("run", path, "--per-user", out, "--quiet", "-o", tmp_path / "r.json").exit_code == 0
    )
    frame = pl.read_parquet(out)
    assert "country" in frame.columns
    joined = frame.join(table.rename({"user_id": "user"}), on="user", suffix="_file")
    assert (joined["country"] == joined["country_file"]).all()


@pytest.mark.parametrize(
    ("extra", "users_csv", "words"),
    [
        (
            {"segment_by": ["country"]},
            None,
            ["segment_by names 'country', which is not a column of the ground truth"],
        ),
        (
            {
                "segments": {"path": "users.csv", "columns": {"user": "user_id"}},
                "segment_by": ["region"],
            },
            "user_id,country\nu001,DE\n",
            ["segments file", "no column 'region' (named by segment_by)"],
        ),
        (
            {
                "segments": {"path": "users.csv", "columns": {"user": "user_id"}},
                "segment_by": ["country"],
            },
            "user_id,country\nu001,DE\nu001,FR\n",
            ["1 row(s) repeat a user already listed"],
        ),
        (
            {"segments": {"path": "users.csv", "columns": {"user": "user_id"}}},
            "user_id,country\nu001,DE\n",
            ["segment_by names none of them"],
        ),
        (
            {
                "segments": {"path": "users.csv", "columns": {"user": "user_id"}},
                "segment_by": ["country"],
                "gates": {"ndcg@10": {"min": 0.1, "segment": "country=XX"}},
            },
            "user_id,country\nu001,DE\n",
            ["gates.ndcg@10.segment 'country=XX' is not a segment", "country=DE, country=(none)"],
        ),
    ],
)
def test_segment_errors(
    tmp_path: Path, extra: dict[str, Any], users_csv: str | None, words: list[str]
) -> None:
    if users_csv is not None:
        write(tmp_path / "users.csv", users_csv)
    path = config(
        tmp_path, SAMPLE / "predictions.csv", SAMPLE / "ground_truth.parquet", "c.yaml", **extra
    )
    assert_user_error(invoke("run", path), *words)


def test_several_values_per_user_in_the_ground_truth(tmp_path: Path) -> None:
    truth = pl.read_parquet(SAMPLE / "ground_truth.parquet")
    truth.with_columns(group=pl.col("item_id").cast(pl.String)).write_parquet(
        tmp_path / "t.parquet"
    )
    path = config(
        tmp_path, SAMPLE / "predictions.csv", tmp_path / "t.parquet", "c.yaml", segment_by=["group"]
    )
    assert_user_error(invoke("run", path), "segment_by 'group'", "has several values")
