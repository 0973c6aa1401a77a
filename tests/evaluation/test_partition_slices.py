"""A hash partition's predictions read as slices of the whole file, each filtered
(inputs/readers.py `PartOf`, evaluation/kernel_core.py `read_batches`): the partition's
rows in the file's order, whatever the slice; the whole file read once a partition, never
the filtered scan's streaming batches (which decode the file ahead of the reader)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from cli_helpers import invoke, write_config

from receval_cli.evaluation import kernel_core
from receval_cli.inputs.readers import Input, PartOf


def _input(path: Path) -> Input:
    frame = pl.scan_parquet(path).select(
        user=pl.col("u"), item=pl.col("i").cast(pl.Int64), score=pl.col("s")
    )
    return Input("predictions", path, "parquet", "score", {}, frame, frame)


@pytest.fixture
def parquet(tmp_path: Path) -> Path:
    path = tmp_path / "predictions.parquet"
    users = np.arange(1000) // 7  # 143 users of 7 rows, ascending
    frame = pl.DataFrame({"u": users, "i": np.arange(1000)[::-1] % 97})
    frame.with_columns(s=pl.col("i") / 3).write_parquet(path, row_group_size=64)
    return path


@pytest.mark.parametrize("rows", [1, 7, 250, 1000])
@pytest.mark.parametrize("partitions", [1, 3])
def test_a_partition_is_read_as_filtered_slices(
    parquet: Path, rows: int, partitions: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _input(parquet)
    sliced: list[int] = []
    slices = kernel_core._slices

    def counted(frame: pl.LazyFrame, size: int, engine: str) -> object:
        sliced.append(size)
        return slices(frame, size, engine)

    monkeypatch.setattr(kernel_core, "_slices", counted)
    for bucket in range(partitions):
        keep = (pl.col("user").hash(seed=0) % partitions) == bucket
        part = PartOf.of(whole, keep)
        parted = part.parted()
        assert parted is not None
        batches = list(kernel_core.read_batches(part.frame, rows, "streaming", parted))
        expected = whole.frame.filter(keep).collect()
        assert pl.concat(batches).equals(expected)
        assert sum(b.height for b in batches) == expected.height
    assert sliced == [2 * rows] * partitions  # slices of the whole file, twice the rows


def test_a_frame_replaced_since_is_read_as_it_is(parquet: Path) -> None:
    """A partition's Input whose frame was replaced (another filter, a join) no longer
    says it is a filter of the whole file: it is read as its own frame."""
    part = PartOf.of(_input(parquet), pl.col("user") % 2 == 0)
    assert part.parted() is not None
    other = dataclasses.replace(part, frame=part.frame.filter(pl.col("score") > 5))
    assert other.parted() is None
    assert _input(parquet).parted() is None


def test_partitions_give_the_one_pass_report_from_parquet(tmp_path: Path, parquet: Path) -> None:
    """The partitions read as filtered slices give the one pass's report, value for value
    (users with no truth, a truth user with no predictions, the unknown-items block)."""
    truth = pl.DataFrame(
        {"user": [0, 0, 3, 3, 50, 141, 500], "item": [96, 5, 70, 1, 94, 3, 7], "rel": 1}
    )
    truth.write_parquet(tmp_path / "truth.parquet")
    config = {
        "predictions": {"path": str(parquet), "columns": {"user": "u", "item": "i", "score": "s"}},
        "ground_truth": {"path": "truth.parquet"},
        "metrics": ["ndcg@5", "precision@3", "recall@10", "mrr", "hit_rate@2"],
    }
    reports = {}
    for name, extra in (("one", {}), ("three", {"partitions": 3, "engine": "streaming"})):
        path = write_config(tmp_path, {**config, **extra}, f"{name}.yaml")
        result = invoke("run", path, "--format", "json")
        assert result.exit_code == 0, result.stderr
        reports[name] = result.stdout
    one, three = (json.loads(reports[n])["models"]["model"] for n in ("one", "three"))
    assert three["metrics"] == one["metrics"]
    assert three["unknown_items"] == one["unknown_items"]
    assert three["inputs"]["engine"]["partitions"] == 3
