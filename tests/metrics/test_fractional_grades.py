"""fractional_grades: truncate reads grades as trec_eval (atol) and ranx (an integer array)
do: 2.5 counts as 2, 0.5 as 0, -1.5 as -1 (the trec_eval and ranx
presets once gave 2.5 its full gain). Hand cases, and every engine alike."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
import reference
from cli_helpers import invoke, write, write_config

import receval_cli

PREDICTIONS = pl.DataFrame(
    {"user": [9, 9, 9, 10, 10], "item": [100, 10, 9, 9, 10], "score": [0.9, 0.8, 0.7, 0.6, 0.5]}
)
TRUTH = pl.DataFrame(
    {"user": [9, 9, 9, 10, 10], "item": [100, 10, 9, 9, 10], "rel": [2.5, 0.5, 1.0, -1.5, 1.9]}
)


def ndcg3(gains: list[float]) -> float:
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(gains, reverse=True)
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal) if g > 0)


def test_truncate_by_hand() -> None:
    """User 9 alone: gains 2.5, 0.5, 1 as read; 2, 0, 1 truncated (ideal: 2.5, 1, 0.5 and
    2, 1). precision@2 does not change: 0.5 was below the threshold already."""
    user9 = (PREDICTIONS.filter(pl.col("user") == 9), TRUTH.filter(pl.col("user") == 9))
    metrics = ["ndcg@3", "precision@2"]
    kept = receval_cli.evaluate(*user9, metrics, truth_columns={"relevance": "rel"})
    cut = receval_cli.evaluate(
        *user9,
        metrics,
        conventions={"fractional_grades": "truncate"},
        truth_columns={"relevance": "rel"},
    )
    assert kept.metrics["ndcg@3"] == pytest.approx(ndcg3([2.5, 0.5, 1.0]))
    assert cut.metrics["ndcg@3"] == pytest.approx(ndcg3([2.0, 0.0, 1.0]))
    assert kept.metrics["precision@2"] == cut.metrics["precision@2"] == 1 / 2


def test_truncate_agrees_with_the_naive_reference() -> None:
    """Negative grades too: -1.5 is -1, 1.9 is 1 (relevant at threshold 1 either way)."""
    metrics = ["ndcg@3", "ndcg", "map", "precision@1", "recall@2"]
    for choice in ("keep", "truncate"):
        report = receval_cli.evaluate(
            PREDICTIONS,
            TRUTH,
            metrics,
            conventions={"fractional_grades": choice},
            truth_columns={"relevance": "rel"},
        )
        naive = reference.evaluate(
            list(PREDICTIONS.iter_rows()),
            list(TRUTH.iter_rows()),
            metrics,
            {"fractional_grades": choice},
        )
        for metric in metrics:
            assert report.metrics[metric] == pytest.approx(naive.metrics[metric], abs=1e-12)


@pytest.mark.parametrize("preset", ["trec_eval", "ranx"])
def test_the_presets_truncate(preset: str) -> None:
    """2.5 under the preset is 2 read as it is."""
    common = {"metrics": ["ndcg@3", "ndcg"], "truth_columns": {"relevance": "rel"}}
    two = TRUTH.with_columns(rel=pl.Series([2.0, 0.0, 1.0, -1.0, 1.0]))
    a = receval_cli.evaluate(PREDICTIONS, TRUTH, conventions={"preset": preset}, **common)
    b = receval_cli.evaluate(PREDICTIONS, two, conventions={"preset": preset}, **common)
    assert a.metrics == b.metrics


def test_every_engine_truncates_alike(tmp_path: Path) -> None:
    PREDICTIONS.write_parquet(tmp_path / "p.parquet")
    write(tmp_path / "t.csv", TRUTH.write_csv())
    found = []
    for name, settings in {
        "memory": {"engine": "in_memory"},
        "streaming": {"engine": "streaming"},
        "partitions": {"partitions": 2},
    }.items():
        config = {
            "predictions": {"path": "p.parquet"},
            "ground_truth": {"path": "t.csv", "columns": {"relevance": "rel"}},
            "conventions": {"fractional_grades": "truncate"},
            "metrics": ["ndcg@3", "map", "mae"],
            "output": {"format": "json"},
            **settings,
        }
        result = invoke("run", write_config(tmp_path, config, f"{name}.yaml"))
        assert result.exit_code == 0, result.stderr
        found.append(json.loads(result.stdout)["models"]["model"]["metrics"])
    assert found[0] == found[1] == found[2]
    expected = receval_cli.evaluate(
        PREDICTIONS,
        TRUTH,
        ["ndcg@3", "map", "mae"],
        conventions={"fractional_grades": "truncate"},
        truth_columns={"relevance": "rel"},
    )
    assert found[0] == expected.metrics
