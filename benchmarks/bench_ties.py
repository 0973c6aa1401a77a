"""tie_break: expected against the fastest tie-averaged alternative, and its cost in receval.

Data: --users users x 100 candidates, scores rounded to one decimal (so about ten items
share each score), graded truth (0-3) on a quarter of each user's candidates (every truth
item is a candidate, so scikit-learn's ideal list, which sees only the candidates, is
receval's). Each tool runs in its own fresh process, timed from spawn to exit:

    receval item_desc   `receval run` with tie_break item_desc (one order; the compiled core)
    receval expected    `receval run` with tie_break expected (every order, averaged)
    sklearn             scikit-learn's ndcg_score(ignore_ties=False), McSherry and Najork's
                        tie-averaged nDCG, on the users' 100 x n matrix read from the same
                        Parquet files (the only peer that averages over ties)

The metric is ndcg@10 (linear gain, log2, ideal cut at 10); receval expected's value must
equal scikit-learn's to 1e-12. Usage: uv run python benchmarks/bench_ties.py [--users N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

DATA = Path(__file__).parent / "data"

SKLEARN = """
import sys, time, numpy as np, polars as pl
from sklearn.metrics import ndcg_score
start = time.perf_counter()
p = pl.read_parquet(sys.argv[1]).sort("user_id", "item_id")
t = pl.read_parquet(sys.argv[2])
joined = p.join(t, on=["user_id", "item_id"], how="left")
joined = joined.with_columns(pl.col("rating").fill_null(0))
n = joined.group_by("user_id").len()["len"][0]
scores = joined["score"].to_numpy().reshape(-1, n)
grades = joined["rating"].to_numpy().reshape(-1, n).astype(float)
kept = grades.max(axis=1) >= 1  # receval skips users without a relevant item
value = ndcg_score(grades[kept], scores[kept], k=10, ignore_ties=False)
print(repr(float(value)))
"""


def generate(users: int) -> tuple[Path, Path]:
    DATA.mkdir(exist_ok=True)
    predictions, truth = DATA / f"ties_{users}_p.parquet", DATA / f"ties_{users}_t.parquet"
    if predictions.exists() and truth.exists():
        return predictions, truth
    rng = np.random.default_rng(7)
    user = np.repeat(np.arange(users, dtype=np.int64), 100)
    item = np.tile(np.arange(100, dtype=np.int64), users) + 9
    score = np.round(rng.random(users * 100), 1)
    pl.DataFrame({"user_id": user, "item_id": item, "score": score}).write_parquet(predictions)
    chosen = rng.random(users * 100) < 0.25
    grades = rng.integers(0, 4, users * 100)
    pl.DataFrame({"user_id": user, "item_id": item, "rating": grades}).filter(
        pl.Series(chosen)
    ).write_parquet(truth)
    return predictions, truth


def timed(command: list[str]) -> tuple[float, float, str]:
    """Seconds and peak RSS (MiB) of a fresh process, and its standard output."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    assert process.stdout is not None
    assert process.stderr is not None
    out, err = process.stdout.read().decode(), process.stderr.read().decode()
    assert os.waitstatus_to_exitcode(status) == 0, err
    return elapsed, usage.ru_maxrss / 1024, out


def receval(predictions: Path, truth: Path, tie_break: str) -> tuple[float, float, float]:
    config = DATA / f"ties_{tie_break}.yaml"
    config.write_text(
        json.dumps(
            {
                "predictions": {
                    "path": str(predictions),
                    "columns": {"user": "user_id", "item": "item_id", "score": "score"},
                },
                "ground_truth": {
                    "path": str(truth),
                    "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
                },
                "metrics": ["ndcg@10"],
                "conventions": {"tie_break": tie_break},
            }
        )
    )
    out = DATA / f"ties_{tie_break}.json"
    command = [sys.executable, "-m", "receval_cli", "run", str(config), "-q", "-o", str(out)]
    seconds, rss, _ = timed(command)
    value = json.loads(out.read_text())["models"]["model"]["metrics"]["ndcg@10"]
    return seconds, rss, value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    predictions, truth = generate(args.users)
    rows: dict[str, list[tuple[float, float, float]]] = {}
    for _ in range(args.repeat):
        for tie_break in ("item_desc", "expected"):
            rows.setdefault(f"receval {tie_break}", []).append(
                receval(predictions, truth, tie_break)
            )
        seconds, rss, out = timed([sys.executable, "-c", SKLEARN, str(predictions), str(truth)])
        rows.setdefault("sklearn", []).append((seconds, rss, float(out)))
    best = {name: min(runs) for name, runs in rows.items()}
    expected = best["receval expected"][2]
    assert abs(expected - best["sklearn"][2]) < 1e-12, (expected, best["sklearn"][2])
    shape = f"{args.users:,} users x 100 candidates, ties of ~10 items"
    print(f"{shape}; ndcg@10, best of {args.repeat}")
    for name, (seconds, rss, value) in best.items():
        ratio = seconds / best["sklearn"][0]
        print(f"{name:18} {seconds:7.2f} s  {rss:7.0f} MiB  {ratio:5.2f}x sklearn  {value!r}")


if __name__ == "__main__":
    main()
