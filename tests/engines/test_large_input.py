"""A log larger than a small memory budget, evaluated by the streaming engine in partitions.

20M prediction rows (200k users x 100) and 4M graded truth rows, about 480 MB as raw
columns. On the 2-core development machine one pass peaks at about 1.2 GiB (in memory)
or 1.3 GiB (streaming) for these 3 metrics; 4 partitions of the streaming engine must stay
within a 1 GiB budget (they took about 0.5 GiB), measured as receval's own peak RSS. The
numbers are checked against a plain polars computation of the same metrics.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from cli_helpers import write_config

USERS, PER_USER, TRUTH_PER_USER = 200_000, 100, 20
BUDGET_MIB = 1024


def _generate(folder: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(7)
    users = np.repeat(np.arange(USERS, dtype=np.int64), PER_USER)
    items = rng.integers(0, 50_000, size=USERS * PER_USER, dtype=np.int64)
    # distinct scores within a user: the rank is the position, shuffled
    scores = rng.permuted(
        np.tile(np.arange(PER_USER, dtype=np.float64), (USERS, 1)), axis=1
    ).ravel()
    predictions = pl.DataFrame({"user": users, "item": items, "score": scores})
    predictions = predictions.unique(["user", "item"], keep="first", maintain_order=True)
    truth_users = np.repeat(np.arange(USERS, dtype=np.int64), TRUTH_PER_USER)
    truth = pl.DataFrame(
        {
            "user": truth_users,
            "item": rng.integers(0, 50_000, size=truth_users.size, dtype=np.int64),
            "rating": rng.integers(1, 6, size=truth_users.size, dtype=np.int64),
        }
    ).unique(["user", "item"], keep="first", maintain_order=True)
    paths = folder / "predictions.parquet", folder / "truth.parquet"
    predictions.write_parquet(paths[0])
    truth.write_parquet(paths[1])
    return paths


def _expected(predictions: Path, truth: Path) -> dict[str, float]:
    """precision@10 and hit_rate@10 (relevant: rating >= 4; every truth user) by plain polars."""
    top = (
        pl.scan_parquet(predictions)
        .sort(["user", "score", "item"], descending=[False, True, True])
        .group_by("user")
        .head(10)
    )
    relevant = pl.scan_parquet(truth).filter(pl.col("rating") >= 4).select("user", "item")
    hits = top.join(relevant, on=["user", "item"]).group_by("user").len()
    users = relevant.select("user").unique()
    per_user = users.join(hits, on="user", how="left").with_columns(pl.col("len").fill_null(0))
    row = per_user.select(
        (pl.col("len") / 10).mean().alias("precision@10"),
        (pl.col("len") > 0).mean().alias("hit_rate@10"),
    ).collect()
    return row.row(0, named=True)


@pytest.mark.slow
def test_streaming_partitions_stay_within_a_small_memory_budget(tmp_path: Path) -> None:
    predictions, truth = _generate(tmp_path)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": predictions.name},
            "ground_truth": {"path": truth.name, "columns": {"relevance": "rating"}},
            "metrics": ["precision@10", "hit_rate@10", "ndcg@10"],
            "conventions": {"relevance_threshold": 4},
            "engine": "streaming",
            "partitions": 4,
        },
    )
    out = tmp_path / "report.json"
    run = [sys.executable, "-m", "receval_cli", "run", str(config), "-o", str(out), "-q"]
    # a forked child starts with its parent's resident pages in ru_maxrss: a small launcher
    # process starts receval, so the peak measured is receval's own
    launcher = (
        "import os, subprocess, sys; p = subprocess.Popen(sys.argv[1:]); "
        "_, status, usage = os.wait4(p.pid, 0); "
        "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)"
    )
    finished = subprocess.run(
        [sys.executable, "-c", launcher, *run], capture_output=True, text=True, timeout=600
    )
    code, peak_kib = (int(v) for v in finished.stdout.splitlines()[-1].split())
    assert code == 0, finished.stderr
    assert peak_kib / 1024 < BUDGET_MIB, f"peak RSS {peak_kib / 1024:.0f} MiB"
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["models"]["model"]["inputs"]["engine"]["partitions"] == 4
    expected = _expected(predictions, truth)
    for name, value in expected.items():
        assert report["models"]["model"]["metrics"][name] == pytest.approx(value, abs=1e-12), name
