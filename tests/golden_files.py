"""Reading the peer libraries' golden files and the shared data they were computed on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

GOLDEN = Path(__file__).parent / "golden"


def load(library: str, dataset: str) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame]:
    """The library's golden JSON for `dataset`, and that dataset's predictions and truth."""
    golden = json.loads((GOLDEN / library / f"{dataset}.json").read_text())
    predictions = pl.read_csv(
        GOLDEN / "data" / f"{dataset}_predictions.csv",
        schema={"user": pl.String, "item": pl.String, "score": pl.Float64},
    )
    truth = pl.read_csv(
        GOLDEN / "data" / f"{dataset}_truth.csv",
        schema={"user": pl.String, "item": pl.String, "relevance": pl.Int64},
    )
    return golden, predictions, truth
