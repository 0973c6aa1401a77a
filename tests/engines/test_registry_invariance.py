"""The registry matrix of test_engine_parity (every registered metric, at several cutoffs
and with each parameter value that changes its computation) through what must not change
a value: the Python API against the CLI, the rows of every input in another order, and the
ids written as text in the same order (zero-padded: "0009" < "0010" as 9 < 10). Every
value must be the same bit for bit (compared by repr).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from engine_parity import CONVENTIONS, registry_data, run_cli

import receval_cli

INPUTS = ("predictions.parquet", "truth.csv", "catalog.parquet", "log.csv", "baseline.csv")


def graded(folder: Path) -> dict[str, Any]:
    """The matrix's graded config (every scope but the click metrics), no segments."""
    config = registry_data(folder, seed=11)["graded"]
    del config["segments"], config["segment_by"]
    return config


def metric_values(folder: Path, config: dict[str, Any], name: str) -> dict[str, Any]:
    code, stderr = run_cli(folder, config, name)
    assert code == 0, stderr
    report = json.loads((folder / f"{name}.json").read_text())
    values: dict[str, Any] = report["models"]["model"]["metrics"]
    return values


def read(path: Path) -> pl.DataFrame:
    return pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_csv(path)


def write(frame: pl.DataFrame, path: Path) -> None:
    if path.suffix == ".parquet":
        frame.write_parquet(path)
    else:
        frame.write_csv(path)


def differing(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    assert set(expected) == set(got)
    return [
        f"{k}: {expected[k]!r} != {got[k]!r}" for k in expected if repr(expected[k]) != repr(got[k])
    ]


@pytest.mark.slow
def test_every_registered_metric_is_the_same_by_the_api(tmp_path: Path) -> None:
    config = graded(tmp_path)
    cli = metric_values(tmp_path, config, "cli")
    report = receval_cli.evaluate(
        tmp_path / "predictions.parquet",
        tmp_path / "truth.csv",
        config["metrics"],
        conventions=CONVENTIONS,
        catalog=tmp_path / "catalog.parquet",
        catalog_columns=config["catalog"]["columns"],
        interactions=tmp_path / "log.csv",
        baseline=tmp_path / "baseline.csv",
    )
    assert len(cli) == len(config["metrics"]) > 300
    assert differing(cli, dict(report.metrics)) == []


@pytest.mark.slow
def test_every_registered_metric_is_the_same_whatever_the_row_order(tmp_path: Path) -> None:
    """Each input's rows shuffled (the conventions break ties by item, never by row)."""
    config = graded(tmp_path)
    before = metric_values(tmp_path, config, "ordered")
    rng = random.Random(3)
    for name in INPUTS:
        frame = read(tmp_path / name)
        order = list(range(frame.height))
        rng.shuffle(order)
        write(frame[order], tmp_path / name)
    assert differing(before, metric_values(tmp_path, config, "shuffled")) == []


@pytest.mark.slow
def test_every_registered_metric_is_the_same_with_text_ids(tmp_path: Path) -> None:
    """The user and item ids of every input written as zero-padded text: text ids in the
    same order as the integers, so every tie breaks the same way."""
    config = graded(tmp_path)
    before = metric_values(tmp_path, config, "integers")
    for name in INPUTS:
        frame = read(tmp_path / name)
        ids = [c for c in ("user", "item") if c in frame.columns]
        assert ids, name
        padded = (pl.col(c).cast(pl.Int64).cast(pl.String).str.zfill(8) for c in ids)
        write(frame.with_columns(padded), tmp_path / name)
        if name.endswith(".parquet"):
            assert all(read(tmp_path / name).schema[c] == pl.String for c in ids), name
        else:  # zero-padded: receval keeps a CSV id column as text (not canonical integers)
            assert (tmp_path / name).read_text().splitlines()[1].startswith("0000"), name
    after = metric_values(tmp_path, config, "text")
    assert differing(before, after) == []
