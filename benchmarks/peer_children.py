"""Peers that need an environment of their own, run by bench_scale.py with that
environment's Python (they cannot share one with polars 2 / pandas 3):

    /tmp/golden-replay/bin/python benchmarks/peer_children.py replay PRED TRUTH RESULT
    /tmp/golden-recommenders/bin/python benchmarks/peer_children.py recommenders PRED TRUTH RESULT

The venvs are the ones tests/peers/{replay,recommenders}/make.sh build. Each reads the
Parquet files (RePlay with its polars 1.x; Recommenders with pandas, through pyarrow when
there is one, else the CSV copies bench_scale.py writes), computes the metrics and writes
{"metrics": ..., "stages": ...} as JSON. No third-party import at module level.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

CUTOFFS = (1, 5, 10, 20, 50, 100)


def replay(predictions: Path, truth: Path) -> dict[str, object]:
    """RePlay 0.22 on polars: Precision, Recall, MAP, MRR, HitRate, NDCG at the 6 cutoffs;
    the ground truth is the rows with rating >= 1 (RePlay's metrics are binary)."""
    import polars as pl
    from replay.metrics import MAP, MRR, NDCG, HitRate, Precision, Recall

    started = time.perf_counter()
    recs = pl.read_parquet(predictions).select(
        pl.col("user_id").alias("user"), pl.col("item_id").alias("item"), "score"
    )
    truth_rows = (
        pl.read_parquet(truth)
        .filter(pl.col("rating") >= 1)
        .select(pl.col("user_id").alias("user"), pl.col("item_id").alias("item"))
    )
    read = time.perf_counter() - started
    columns = {"query_column": "user", "item_column": "item", "rating_column": "score"}
    metrics: dict[str, float] = {}
    for cls in (Precision, Recall, MAP, MRR, HitRate, NDCG):
        metrics |= {k: float(v) for k, v in cls(list(CUTOFFS), **columns)(recs, truth_rows).items()}
    return {
        "metrics": metrics,
        "stages": {"read": read, "metrics": time.perf_counter() - started - read},
    }


def recommenders(predictions: Path, truth: Path) -> dict[str, object]:
    """MS Recommenders 1.2.1: precision_at_k, recall_at_k, ndcg_at_k, map_at_k at k = 10
    (each call re-sorts and re-merges the frames, so the 6 cutoffs would take 6 times as
    long); rating_true is the rows with rating >= 1."""
    import pandas as pd
    from recommenders.evaluation import python_evaluation as ev

    started = time.perf_counter()
    try:
        recs = pd.read_parquet(predictions)
        true = pd.read_parquet(truth)
    except ImportError:  # no pyarrow here: the CSV copies
        recs = pd.read_csv(predictions.with_suffix(".csv"))
        true = pd.read_csv(truth.with_suffix(".csv"))
    true = true[true["rating"] >= 1]
    read = time.perf_counter() - started
    names = {"col_user": "user_id", "col_item": "item_id"}
    kwargs = {**names, "col_rating": "rating", "col_prediction": "score", "k": 10}
    metrics = {
        "precision@10": ev.precision_at_k(true, recs, **kwargs),
        "recall@10": ev.recall_at_k(true, recs, **kwargs),
        "ndcg@10": ev.ndcg_at_k(true, recs, **kwargs),
        "map@10": ev.map_at_k(true, recs, **kwargs),
    }
    spent = time.perf_counter() - started - read
    return {
        "metrics": {k: float(v) for k, v in metrics.items()},
        "stages": {"read": read, "metrics": spent},
    }


if __name__ == "__main__":
    tool, predictions, truth, result = sys.argv[1], *map(Path, sys.argv[2:5])
    output = {"replay": replay, "recommenders": recommenders}[tool](predictions, truth)
    result.write_text(json.dumps(output), encoding="utf-8")
