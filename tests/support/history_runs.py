"""Runs of `receval run --history` on given days, and the gates on the store."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import polars as pl
from cli_helpers import (
    INV_LOG2_3,
    NDCG_2,
    PREDICTIONS_CSV,
    assert_no_traceback,
    hand_case,
    invoke,
    write,
)
from lazy_modules import lazy

duckdb = lazy("duckdb")  # loaded by the first test that reads it (lazy_modules.py)


# the hand case's items (truth u1: b; u2: d, f) ranked better and worse
BETTER = "user,item,score\nu1,b,0.9\nu1,a,0.8\nu1,c,0.7\nu2,d,0.9\nu2,e,0.5\n"


WORSE = "user,item,score\nu1,c,0.9\nu1,a,0.8\nu1,b,0.7\nu2,e,0.9\nu2,d,0.5\n"


# precision@1 and ndcg@2 of each, by hand: u2 has 2 relevant items, so its ideal DCG@2 is
# 1 + 1/log2(3); u1 has one, ideal 1
DAYS = {
    "better": (BETTER, 1.0, (1.0 + 1 / (1 + INV_LOG2_3)) / 2),
    "hand": (PREDICTIONS_CSV, 0.5, NDCG_2),
    "worse": (WORSE, 0.0, (0.0 + INV_LOG2_3 / (1 + INV_LOG2_3)) / 2),
}


GATE = {"max_drop": {"vs": "history", "runs": 2, "stat": "median", "relative": 0.1}}


def run_day(
    folder: Path, day: str, *args: str | Path, expect: int = 0, **extra: Any
) -> dict[str, Any]:
    """One nightly run: the day's predictions written over the file, then `receval run`
    with the JSON report on stdout."""
    config = hand_case(folder, **extra)
    write(folder / "predictions.csv", DAYS[day][0])
    result = invoke("run", config, "--format", "json", *args)
    assert_no_traceback(result)
    assert result.exit_code == expect, (result.exit_code, result.stdout, result.stderr)
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def cron(tmp_path: Path, days: list[str], **extra: Any) -> tuple[Path, list[dict[str, Any]]]:
    store = tmp_path / "history"
    reports = []
    for number, day in enumerate(days, start=1):
        args = ("--history", store, "--label", f"night{number}", "--tag", "team=search")
        reports.append(run_day(tmp_path / "job", day, *args, **extra))
    return store, reports


def _history(store: Path, *args: str | Path) -> str:
    result = invoke("history", store, *args)
    assert_no_traceback(result)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def _synthetic_store(store: Path, runs: list[tuple[float, float, float]], metric: str) -> None:
    """A store written by hand (not by receval's run): one file per run, one row each."""
    from receval_cli.history.store import SCHEMA

    store.mkdir()
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    for number, (value, low, high) in enumerate(runs):
        run_id = f"2026010{number + 1}T000000.000000Z-0000000{number}"
        row = dict.fromkeys(SCHEMA)
        row.update(
            run_id=run_id,
            started_at=start + datetime.timedelta(days=number),
            model="m",
            metric=metric,
            value=value,
            ci_low=low,
            ci_high=high,
            higher_is_better=not metric.startswith("gini"),
            tags=[],
        )
        pl.DataFrame([row], schema=SCHEMA).write_parquet(store / f"{run_id}.parquet")
