"""engine: spark runs the metrics that read the whole interactions log or catalog, with the
in-memory numbers bit for bit (engines/spark_global_states.py): rsp, reo and
exposure_disparity over the log's popularity split and the catalog's category, the item
co-occurrences (intra_list_diversity by co-occurrence, serendipity against the history) and
the catalog's number of items (accuracy, mcc).

The data: integer ids whose text and number orders differ (9, 10, 100) with tied
popularity in the log, so the tie_break decides where the short head ends; tied scores;
users only in the predictions, only in the ground truth, absent from the log, and log users
in neither (whose interactions still count in the co-occurrences and the split).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import report_metrics, run_report, write
from engine_parity import comparable

CONFIGS = Path(__file__).resolve().parents[2] / "configs"

METRICS = [
    "rsp@3",
    "reo@3(pop_ratio=0.5)",
    "exposure_disparity@3(pop_ratio=0.3)",
    "rsp@5(groups=category)",
    "reo@5(groups=category)",
    "exposure_disparity(groups=category)",
    "intra_list_diversity@3(feature=cooccurrence)",
    "intra_list_diversity(feature=cooccurrence)",
    "serendipity@5(unexpected=history)",
    "serendipity@3(unexpected=history,relevance=ignored,denominator=list_length)",
    "accuracy@3",
    "mcc@5",
    "ndcg@5",
]


def write_data(folder: Path) -> dict[str, Any]:
    """The inputs, and a config of METRICS over them (segment_by a band)."""
    # 9, 10 and 100 are each held by two users of the log: their order is the tie_break's
    write(
        folder / "log.csv",
        "user,item\n"
        + "".join(
            f"{u},{i}\n"
            for u, i in [
                (9, 9), (9, 10), (9, 10), (10, 100), (10, 9), (100, 10), (100, 100),
                (9, 1000), (10, 1000), (100, 1000), (500, 1000), (500, 7),  # 500: log only
                (501, 7), (501, 3), (10, 3),
            ]
        ),
    )  # fmt: skip
    write(
        folder / "predictions.csv",
        "user,item,score\n"
        + "".join(
            f"{u},{i},{s}\n"
            for u, i, s in [
                (9, 100, 0.9), (9, 10, 0.9), (9, 9, 0.9), (9, 3, 0.5), (9, 42, 0.1),
                (10, 9, 0.8), (10, 100, 0.8), (10, 7, 0.8), (10, 1000, 0.2),
                (100, 1000, 1.0), (100, 3, 0.7), (100, 42, 0.7), (100, 9, 0.3), (100, 10, 0.3),
                (11, 10, 0.4), (11, 9, 0.4),  # 11: not in the log
                (12, 100, 0.6), (12, 7, 0.6), (12, 3, 0.6),  # 12: no ground truth
            ]
        ),
    )  # fmt: skip
    write(
        folder / "truth.csv",
        "user,item,rel,band\n"
        + "".join(
            f"{u},{i},{r},{b}\n"
            for u, i, r, b in [
                (9, 10, 2, "a"), (9, 42, 1, "a"), (9, 1000, 3, "a"),
                (10, 7, 1, "b"), (10, 100, 0, "b"),
                (100, 42, 2, "a"), (100, 10, 1, "a"), (100, 5, 3, "a"),
                (11, 9, 1, "b"),
                (55, 9, 2, "b"),  # 55: no predictions
            ]
        ),
    )  # fmt: skip
    # 42 and 5 are not in the log; 3 is not in the catalog
    genres = {9: "x", 10: "y", 100: "x", 1000: "z", 7: "y", 42: "y", 5: "z"}
    write(folder / "catalog.csv", "item,genre\n" + "".join(f"{i},{g}\n" for i, g in genres.items()))
    return {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {
            "path": "truth.csv",
            "columns": {"user": "user", "item": "item", "relevance": "rel"},
        },
        "catalog": {"path": "catalog.csv", "columns": {"item": "item", "category": "genre"}},
        "interactions": {"path": "log.csv"},
        "segment_by": ["band"],
        "metrics": METRICS,
        "unknown_items": {"check": False},
    }


@pytest.mark.spark
@pytest.mark.slow
def test_fairness_config_on_spark_gives_the_in_memory_report(spark: Any, tmp_path: Path) -> None:
    """configs/fairness.yaml (rsp over the log's split, rsp, reo and exposure_disparity
    over the catalog's genres, compared between countries): the same JSON on Spark."""
    config = CONFIGS / "fairness.yaml"
    expected = comparable(run_report(tmp_path, config, "memory"))
    got = comparable(run_report(tmp_path, config, "spark", "--engine", "spark"))
    metrics = expected["models"]["model"]["metrics"]
    assert all(metrics[m] is not None for m in metrics if m.startswith(("rsp", "reo", "exp")))
    assert got == expected


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize(("tie_break", "buckets"), [("item_text_desc", 3), ("item_asc", 16)])
def test_whole_log_and_catalog_metrics_on_spark(
    spark: Any, tmp_path: Path, tie_break: str, buckets: int
) -> None:
    """The item groups, co-occurrences and catalog size over tied ids and users on one
    side only: the in-memory report and per-user file, in 3 buckets and in 16 (most of
    them empty or of one user)."""
    config = write_data(tmp_path)
    config["conventions"] = {"tie_break": tie_break, "relevance_threshold": 1}
    per_user = ("--per-user", str(tmp_path / "memory.csv"))
    expected = comparable(run_report(tmp_path, config, "memory", *per_user))
    values = expected["models"]["model"]["metrics"]
    assert len(values) == len(METRICS)
    assert None not in values.values(), values
    spark_config = {**config, "engine": "spark", "partitions": buckets}
    per_user = ("--per-user", str(tmp_path / "spark.csv"))
    got = comparable(run_report(tmp_path, spark_config, "spark", *per_user))
    assert got == expected
    assert (tmp_path / "spark.csv").read_text() == (tmp_path / "memory.csv").read_text()


@pytest.mark.slow
def test_the_tie_break_decides_the_popularity_split(tmp_path: Path) -> None:
    """The data above has items tied in the log's popularity (9, 10, 100): the two
    tie_breaks split the log differently, so the Spark test checks the tie order."""
    config = write_data(tmp_path)
    config["metrics"] = ["rsp@3(pop_ratio=0.5)"]
    found = []
    for tie_break in ("item_text_desc", "item_asc"):
        config["conventions"] = {"tie_break": tie_break, "relevance_threshold": 1}
        found.append(report_metrics(run_report(tmp_path, config, tie_break)))
    assert found[0] != found[1]
