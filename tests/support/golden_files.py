"""Reading the peer libraries' golden files and the shared data they were computed on.

The data (tests/peers/make_data.py) come in four datasets: `tiefree` and `ties` with string
ids, `tiefree_int` and `ties_int` with the same rows and integer ids (read as pl.Int64, so
receval sees integer columns). Grades are numbers (0-4, 2.5 and -1 among them): pl.Float64.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

GOLDEN = Path(__file__).parents[1] / "peers"
DATASETS = ("tiefree", "ties", "tiefree_int", "ties_int")


def id_type(dataset: str) -> type[pl.DataType]:
    """pl.Int64 for the `_int` datasets, pl.String otherwise."""
    return pl.Int64 if dataset.endswith("_int") else pl.String


def frames(dataset: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The dataset's predictions (user, item, score) and truth (user, item, relevance)."""
    ids = id_type(dataset)
    predictions = pl.read_csv(
        GOLDEN / "data" / f"{dataset}_predictions.csv",
        schema={"user": ids, "item": ids, "score": pl.Float64},
    )
    truth = pl.read_csv(
        GOLDEN / "data" / f"{dataset}_truth.csv",
        schema={"user": ids, "item": ids, "relevance": pl.Float64},
    )
    return predictions, truth


def load(library: str, dataset: str) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame]:
    """The library's golden JSON for `dataset`, and that dataset's predictions and truth."""
    golden = json.loads((GOLDEN / library / f"{dataset}.json").read_text())
    return (golden, *frames(dataset))


def golden(library: str, name: str) -> dict[str, Any]:
    """A peer library's golden file: golden/<library>/<name>.json."""
    data: dict[str, Any] = json.loads((GOLDEN / library / f"{name}.json").read_text())
    return data


def per_user_by_text(report: Any, metric: str) -> dict[str, float]:
    """receval's per-user values by user id as text (the golden files' keys)."""
    assert report.per_user is not None
    return {str(u): v for u, v in report.per_user.select("user", metric).iter_rows()}


def users_averaged(report: Any, metric: str) -> int:
    """How many users receval's mean of `metric` is over."""
    users = report.users
    count: int = users.get("evaluated_per_metric", {}).get(metric, users["evaluated"])
    return count


def dataset_config(
    dataset: str, metrics: list[Any], predictions: str | None = None, /, **extra: Any
) -> dict[str, Any]:
    """A one-model config on a shared dataset's files: its predictions (or those of the
    dataset named by the third argument), its graded truth, the metrics, then `extra`'s keys
    (a `predictions` key among them replaces the predictions)."""
    data = GOLDEN / "data"
    return {
        "predictions": {"path": str(data / f"{predictions or dataset}_predictions.csv")},
        "ground_truth": {
            "path": str(data / f"{dataset}_truth.csv"),
            "columns": {"relevance": "relevance"},
        },
        "metrics": metrics,
        **extra,
    }


def two_models(metrics: list[str], **extra: Any) -> dict[str, Any]:
    """A config of two models on the shared integer-id data: `base` (ties_int, tied
    scores) and `other` (tiefree_int), against ties_int's graded truth."""
    data = GOLDEN / "data"
    return {
        "predictions": {
            "models": {
                "base": str(data / "ties_int_predictions.csv"),
                "other": str(data / "tiefree_int_predictions.csv"),
            }
        },
        "ground_truth": {
            "path": str(data / "ties_int_truth.csv"),
            "columns": {"relevance": "relevance"},
        },
        "metrics": metrics,
        **extra,
    }
