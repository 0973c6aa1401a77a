"""Each beyond-accuracy metric works on its own top k: the recs table (every
recommended item joined to its features, popularity, ...) holds each list only as deep as
the deepest cutoff a beyond-accuracy metric reads, not as deep as the ranking metrics
look. An intra_list_diversity@10 beside an ndcg@100 compared 100-item lists' pairs."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import receval_cli
from receval_cli.config.conventions import Conventions
from receval_cli.config.model import InteractionsConfig
from receval_cli.evaluation.plan import metric_exprs
from receval_cli.inputs.optional import Sources, map_interactions
from receval_cli.metrics import MetricSpec


def log_sources() -> Sources:
    """An interactions log, for the metrics that read item popularity."""
    raw = pl.DataFrame({"user": [1], "item": [1]}).lazy()
    log = map_interactions(raw, InteractionsConfig(path="log.csv"), Path("log.csv"), "csv")
    return Sources(interactions=log)


@pytest.mark.parametrize(
    ("names", "limit", "expected"),
    [
        (("ndcg@100", "novelty@10", "unexpectedness@5"), None, 10),
        (("ndcg@100", "arp@3"), None, 3),
        (("ndcg", "novelty@10", "arp"), None, None),  # arp over the whole list
        (("ndcg@100", "novelty@10"), 4, 4),  # never past max_depth
    ],
)
def test_the_recs_table_is_as_deep_as_its_metrics(
    names: tuple[str, ...], limit: int | None, expected: int | None
) -> None:
    specs = tuple(MetricSpec.parse(name) for name in names)
    stats, _ = metric_exprs(specs, Conventions(), log_sources())
    assert stats.recs_depth(limit) == expected


def test_values_do_not_depend_on_the_ranking_metrics_beside() -> None:
    """The same beyond-accuracy values alone and beside a deep ranking metric (lists of 30
    items with tags, popularity from a log, the popularity baseline)."""
    items = list(range(1, 41))
    predictions = pl.DataFrame(
        {
            "user": [u for u in range(1, 9) for _ in range(30)],
            "item": [items[(u * 7 + i) % 40] for u in range(1, 9) for i in range(30)],
            "score": [1.0 - i / 30 for _ in range(1, 9) for i in range(30)],
        }
    )
    truth = pl.DataFrame({"user": list(range(1, 9)), "item": [3, 5, 8, 13, 21, 34, 2, 1]})
    catalog = pl.DataFrame({"item": items, "tags": [[f"t{i % 5}", f"t{i % 7}"] for i in items]})
    log = pl.DataFrame({"user": [9, 9, 10, 10, 11], "item": [1, 2, 1, 3, 1]})
    beyond = [
        "intra_list_diversity@5(feature=tags)",
        "novelty@4",
        "arp@6",
        "unexpectedness@3",
        "serendipity@5",
        "long_tail_share@5",
    ]
    common = {
        "catalog": catalog,
        "catalog_columns": {"tags": "tags"},
        "interactions": log,
    }
    alone = receval_cli.evaluate(predictions, truth, beyond, **common)
    beside = receval_cli.evaluate(predictions, truth, ["ndcg@30", *beyond], **common)
    for name, value in alone.metrics.items():
        assert beside.metrics[name] == value, name
