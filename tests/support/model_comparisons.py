"""Configs with several models, for the comparison and gate tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from cli_helpers import invoke, write_config
from lazy_modules import lazy

stats = lazy("scipy.stats")  # loaded by the first test that reads it (lazy_modules.py)


xmlschema = lazy("xmlschema")


ROOT = Path(__file__).parents[2]


SAMPLE = ROOT / "sample_data"


SCHEMA = Path(__file__).parents[1] / "schemas" / "junit.xsd"


METRICS = ["ndcg@10", "precision@10", "recall@10", "mrr@10"]


def two_models(folder: Path, **extra: Any) -> Path:
    """The sample model and the most-popular baseline, against the sample ground truth."""
    config: dict[str, Any] = {
        "predictions": {
            "columns": {"user": "user_id", "item": "item_id", "score": "score"},
            "models": {
                "popular": str(SAMPLE / "popular_predictions.csv"),
                "model": str(SAMPLE / "predictions.csv"),
            },
        },
        "ground_truth": {
            "path": str(SAMPLE / "ground_truth.parquet"),
            "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
        },
        "metrics": METRICS,
        "conventions": {"relevance_threshold": 4},
        **extra,
    }
    return write_config(folder, config)


def single(folder: Path, predictions: str, name: str = "single.yaml", **extra: Any) -> Path:
    config: dict[str, Any] = {
        "predictions": {
            "path": str(SAMPLE / predictions),
            "columns": {"user": "user_id", "item": "item_id", "score": "score"},
        },
        "ground_truth": {
            "path": str(SAMPLE / "ground_truth.parquet"),
            "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
        },
        "metrics": METRICS,
        "conventions": {"relevance_threshold": 4},
        **extra,
    }
    return write_config(folder, config, name)


def per_user(folder: Path, config: Path, *args: str) -> pl.DataFrame:
    path = folder / "per_user.parquet"
    result = invoke("run", config, "--per-user", path, "--quiet", "-o", folder / "r.json", *args)
    assert result.exit_code in (0, 1), result.stderr
    return pl.read_parquet(path)


def paired(folder: Path, config: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per metric: the two models' values over the users both count."""
    frame = per_user(folder, config)
    out = {}
    for metric in METRICS:
        wide = (
            frame.select("model", "user", metric)
            .pivot(on="model", index="user", values=metric)
            .drop_nulls()
        )
        out[metric] = (wide["model"].to_numpy(), wide["popular"].to_numpy())
    return out


def holm_by_hand(p: list[float]) -> list[float]:
    order = sorted(range(len(p)), key=lambda i: p[i])
    adjusted = [0.0] * len(p)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return adjusted
