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

from receval_cli.config import (
    CatalogColumns,
    CatalogConfig,
    InteractionColumns,
    InteractionsConfig,
    PredictionColumns,
    TruthColumns,
)
from receval_cli.conventions import Conventions
from receval_cli.io import map_ground_truth, map_predictions
from receval_cli.metrics import MetricSpec, resolve
from receval_cli.pipeline import evaluate_inputs
from receval_cli.report import Report
from receval_cli.sources import Sources, map_catalog, map_interactions


def evaluate_frames(
    predictions: pl.DataFrame | pl.LazyFrame,
    ground_truth: pl.DataFrame | pl.LazyFrame,
    metrics: Iterable[str],
    *,
    conventions: Mapping[str, Any] | None = None,
    prediction_columns: Mapping[str, str] | None = None,
    truth_columns: Mapping[str, str] | None = None,
    list_separator: str = "|",
    catalog: pl.DataFrame | pl.LazyFrame | None = None,
    catalog_columns: Mapping[str, str] | None = None,
    interactions: pl.DataFrame | pl.LazyFrame | None = None,
    interaction_columns: Mapping[str, str] | None = None,
    baseline: pl.DataFrame | pl.LazyFrame | None = None,
    baseline_columns: Mapping[str, str] | None = None,
) -> Report:
    """Evaluate frames as `receval run` evaluates files (same checks, same conventions).

    `catalog`, `interactions` and `baseline` are the optional inputs of the
    beyond-accuracy metrics, with their column names as in the config.
    """
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
    sources = Sources()
    if catalog is not None:
        config = CatalogConfig(
            path="<catalog frame>",
            columns=CatalogColumns(**(catalog_columns or {})),
            list_separator=list_separator,
        )
        sources.catalog = map_catalog(catalog.lazy(), config, Path(config.path), "frame")
    if interactions is not None:
        log_config = InteractionsConfig(
            path="<interactions frame>", columns=InteractionColumns(**(interaction_columns or {}))
        )
        sources.interactions = map_interactions(
            interactions.lazy(), log_config, Path(log_config.path), "frame"
        )
    if baseline is not None:
        sources.baseline = map_predictions(
            baseline.lazy(),
            PredictionColumns(**(baseline_columns or {})),
            list_separator,
            Path("<baseline frame>"),
            "frame",
            role="baseline",
        )
    return evaluate_inputs(
        mapped_predictions,
        mapped_truth,
        specs,
        Conventions(**(conventions or {})),
        sources=sources,
    )
