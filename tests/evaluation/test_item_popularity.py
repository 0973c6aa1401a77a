"""The log's items by popularity (evaluation/item_popularity.py): the rows per item
counted by bincount where the ids are integers over a range the log bounds, else by
polars' group_by; the same table either way."""

from __future__ import annotations

import polars as pl
import pytest

from receval_cli.evaluation import item_popularity as popularity
from receval_cli.evaluation.item_popularity import item_popularity


def _log(items: list[int]) -> pl.LazyFrame:
    return pl.LazyFrame({"user": list(range(len(items))), "item": items}).with_row_index("row")


def _grouped(log: pl.LazyFrame) -> pl.DataFrame:
    """The group_by's table (what the run computed before the bincount)."""
    counts = log.group_by("item").agg(
        pl.len().cast(pl.Int64).alias("count"), pl.lit(None, pl.Int64).alias("holders")
    )
    totals = log.select(
        pl.len().cast(pl.Int64).alias("log_rows"), pl.lit(None, pl.Int64).alias("log_users")
    )
    return counts.join(totals, how="cross").collect()


@pytest.mark.parametrize(
    "items",
    [
        [5, 5, 9, -3, 5, 9, 0],  # negative ids, repeated
        [7],
        [0, 10_000_000],  # a span too wide for one array: the group_by
    ],
)
def test_the_counts_are_the_group_by_s(items: list[int]) -> None:
    log = _log(items)
    found = item_popularity(log, "item_desc", users=False, ranks=False).collect()
    expected = _grouped(log)
    assert found.schema == expected.schema
    assert found.sort("item").equals(expected.sort("item"))


def test_bincount_counts_integer_ids_and_leaves_the_rest() -> None:
    """Integer ids in a narrow range are counted by bincount; text ids and a wide range
    go to the group_by (None)."""
    assert popularity._counted(_log([3, 1, 3])) is not None
    assert popularity._counted(_log([0, 10_000_000])) is None
    text = pl.LazyFrame({"user": [1, 2], "item": ["a", "b"]}).with_row_index("row")
    assert popularity._counted(text) is None
    found = item_popularity(text, "item_desc", users=False, ranks=False).collect()
    assert found.sort("item").get_column("count").to_list() == [1, 1]


def test_the_ranked_table_keeps_its_ranks() -> None:
    """With ranks (long_tail_share, the popularity baseline, the popularity bias): rows
    descending, ties by the tie-break (item_desc: the larger id first)."""
    found = item_popularity(_log([1, 2, 2, 3, 3]), "item_desc").collect()
    assert found.select("item", "popular_rank").rows() == [(3, 1), (2, 2), (1, 3)]
