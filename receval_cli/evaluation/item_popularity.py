"""The log's items by popularity: each item's rows and users, its rank by popularity, and
the log's totals (the side columns of novelty, arp, long_tail_share, the popularity
baseline and the HTML report's popularity bias).

Where no metric reads the users or the ranks and the item ids are integers over a range
the log's size bounds, the rows per item are counted with numpy's bincount over the log's
item column (a third of the CPU of polars' group_by over a log of a million items);
the counts are the same integers.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from receval_cli.inputs.diagnosis import READ_ERRORS
from receval_cli.inputs.list_order import tie_order

SPAN_PER_ROW = 4  # the item ids' range counted in one array: at most this many per log row


def item_popularity(
    log: pl.LazyFrame, tie_break: str, users: bool = True, ranks: bool = True
) -> pl.LazyFrame:
    """Per item of the log: its rows, its users, and its rank by popularity (rows
    descending, then the tie_break convention on the item), with the log's totals.
    `users` False: the users (holders, log_users: distinct counts, the costly part) left
    missing, for a run whose expressions read none (_reads_users); `ranks` False: no
    popular_rank column (the items' sort, with a log of many items a third of the cost),
    for a run that reads none (_reads_ranks)."""
    distinct = pl.col("user").n_unique().cast(pl.Int64)
    if not users:
        distinct = pl.lit(None, pl.Int64)
    counts = [pl.len().cast(pl.Int64).alias("count"), distinct.alias("holders")]
    totals = log.select(pl.len().cast(pl.Int64).alias("log_rows"), distinct.alias("log_users"))
    if not ranks:
        counted = None if users else _counted(log)
        if counted is not None:  # the log's rows: the counts' sum (no second read of it)
            rows = pl.col("count").sum().cast(pl.Int64).alias("log_rows")
            read = counted.select(rows, log_users=pl.lit(None, pl.Int64))
            return counted.lazy().join(read.lazy(), how="cross")
        return log.group_by("item").agg(counts).join(totals, how="cross")
    per_item = log.group_by("item").agg(*counts, pl.col("row").min().alias("first_row"))
    second, descending = tie_order(tie_break, row="first_row")
    ranked = per_item.sort([pl.col("count"), second], descending=[True, descending]).with_row_index(
        "popular_rank", offset=1
    )
    return ranked.drop("first_row").join(totals, how="cross")


def _counted(log: pl.LazyFrame) -> pl.DataFrame | None:
    """(item, count, holders: null) of a log of integer item ids, counted by bincount;
    None where the ids are not Int64, span too wide a range, or the log cannot be read
    here (the lazy query then reports it where the recs table reads the log)."""
    import numpy as np

    if log.collect_schema().get("item") != pl.Int64:
        return None
    try:
        items = log.select("item").collect().get_column("item")
    except READ_ERRORS:
        return None
    if items.len() == 0 or items.null_count():
        return None
    low, high = items.min(), items.max()
    assert isinstance(low, int)
    assert isinstance(high, int)
    if high - low >= SPAN_PER_ROW * items.len() + 1_000_000:
        return None
    found: Any = np.bincount(items.to_numpy() - low)
    kept = np.flatnonzero(found)
    counts = pl.DataFrame(
        {
            "item": pl.Series(kept + low, dtype=pl.Int64),
            "count": pl.Series(found[kept], dtype=pl.Int64),
        }
    )
    return counts.with_columns(holders=pl.lit(None, pl.Int64))
