"""A Python API for notebooks and tests: evaluate in-memory polars frames.

>>> import polars as pl
>>> from receval_cli.api import evaluate_frames
>>> preds = pl.DataFrame({"user": [1, 1], "item": [10, 11], "score": [0.9, 0.8]})
>>> truth = pl.DataFrame({"user": [1], "item": [11]})
>>> evaluate_frames(preds, truth, ["precision@2", "mrr"]).metrics
{'precision@2': 0.5, 'mrr': 0.5}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from receval_cli.config import PredictionColumns, TruthColumns
from receval_cli.conventions import Conventions
from receval_cli.evaluate import evaluate_inputs
from receval_cli.io import map_ground_truth, map_predictions
from receval_cli.metrics import MetricSpec, resolve
from receval_cli.report import Report


def evaluate_frames(
    predictions: pl.DataFrame | pl.LazyFrame,
    ground_truth: pl.DataFrame | pl.LazyFrame,
    metrics: Iterable[str],
    *,
    conventions: Mapping[str, Any] | None = None,
    prediction_columns: Mapping[str, str] | None = None,
    truth_columns: Mapping[str, str] | None = None,
    list_separator: str = "|",
) -> Report:
    """Evaluate frames as `receval run` evaluates files (same checks, same conventions)."""
    specs = tuple(dict.fromkeys(resolve(MetricSpec.parse(m)) for m in metrics))
    mapped_predictions = map_predictions(
        predictions.lazy(),
        PredictionColumns(**(prediction_columns or {})),
        list_separator,
        Path("<predictions frame>"),
        "frame",
    )
    mapped_truth = map_ground_truth(
        ground_truth.lazy(),
        TruthColumns(**(truth_columns or {})),
        list_separator,
        Path("<ground truth frame>"),
        "frame",
    )
    return evaluate_inputs(
        mapped_predictions, mapped_truth, specs, Conventions(**(conventions or {}))
    )
