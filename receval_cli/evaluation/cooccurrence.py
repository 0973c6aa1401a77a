"""The item co-occurrences of the interactions log that intra_list_diversity
(feature=cooccurrence) and serendipity(unexpected=history) read: the cosine of two items'
binary user vectors, summed over the pairs of a list or averaged over a user's history.

The counts are over the log given, which must hold every row of the items compared: the
whole log on one machine and in `partitions: N`; on Spark, the log's (user, item) pairs of
the items the bucket needs (engines/spark_global_states.py, Sources.cooccurrence_log).
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.stats import cutoff_label, depth, ordered_sum


def cooccurrence_pairs(
    recs: pl.LazyFrame, log: pl.LazyFrame, cutoffs: set[int | None]
) -> pl.LazyFrame:
    """(user, similar_pairs[cooccurrence]@k for each cutoff): the sum over the pairs of
    items in the user's top k of their co-occurrence similarity in the interactions log,
    c(i, j) / (sqrt(h(i)) sqrt(h(j))): c the log's users who have both items, h an item's
    users (Zhang et al.'s Auralist; MS Recommenders' item_cooccurrence_count, which counts
    rows: the same when the log repeats no (user, item)). An item absent from the log, or a
    pair no user has both of, has similarity 0.

    The pairs of each list are listed (n (n - 1) / 2 per user); the co-occurrence counts
    are computed for the distinct pairs only, through the log's users of the first item.
    The similarities are added in one running sum per user, in the order of the later
    item's rank, then the earlier's, read at the last pair within k (as tag_pairs).
    """
    labels = {k: cutoff_label(k) for k in cutoffs}
    rank = pl.col("rank")
    ranked = recs.select("user", "item", "rank")
    pairs = ranked.join(ranked, on="user", suffix="_earlier").filter(pl.col("rank_earlier") < rank)
    wanted = pairs.select(pl.col("item").alias("a"), pl.col("item_earlier").alias("b")).unique()
    similar = cooccurrence_similarity(wanted, log)
    scored = pairs.join(similar, left_on=["item", "item_earlier"], right_on=["a", "b"], how="left")
    pair = (rank.cast(pl.UInt64) * 2**32 + pl.col("rank_earlier")).alias("pair")
    running = pl.col("sim").fill_null(0.0).cum_sum().over("user", order_by="pair")
    sums = (
        scored.with_columns(pair)
        .select("user", "pair", running.alias("running"))
        .group_by("user")
        .agg(
            # the running sum never decreases: its value at the last pair within k is its max
            pl.col("running")
            .filter(pl.col("pair") < pl.lit((depth(k) + 1) * 2**32, pl.UInt64))
            .max()
            .fill_null(0.0)
            .alias(f"similar_pairs[cooccurrence]@{label}")
            for k, label in labels.items()
        )
    )
    return sums


def cooccurrence_similarity(wanted: pl.LazyFrame, log: pl.LazyFrame) -> pl.LazyFrame:
    """(a, b, sim) for the item pairs (a, b) of `wanted` that some user of the log has
    both of: c(a, b) / (sqrt(h(a)) sqrt(h(b))), c the log's users with both items and h an
    item's users (the cosine of the two items' binary user vectors). Pairs left out have
    similarity 0. The counts come through the log's users of a."""
    held = log.select("user", "item").unique()
    holders = held.group_by("item").agg(pl.len().cast(pl.Float64).sqrt().alias("root"))
    both = wanted.join(held.rename({"user": "holder", "item": "a"}), on="a").join(
        held.rename({"user": "holder", "item": "b"}), on=["holder", "b"]
    )
    counts = both.group_by("a", "b").agg(pl.len().cast(pl.Float64).alias("both"))
    return (
        counts.join(holders.rename({"item": "a", "root": "root_a"}), on="a")
        .join(holders.rename({"item": "b", "root": "root_b"}), on="b")
        .select("a", "b", (pl.col("both") / (pl.col("root_a") * pl.col("root_b"))).alias("sim"))
    )


def history_similarity(
    recs: pl.LazyFrame, log: pl.LazyFrame, whole: pl.LazyFrame | None = None
) -> pl.LazyFrame:
    """(user, item, history_similarity): for each recommended item, its mean co-occurrence
    similarity (cooccurrence_similarity) to the items the user has in the log; users
    absent from the log have no row. The similarities of one item are added in ascending
    order, so the sum is the same on every run. `whole`: the log the similarities are
    counted over, where `log` holds the users' own rows only (a Spark bucket's)."""
    held = log.select("user", "item").unique()
    history = held.group_by("user").agg(pl.len().cast(pl.Float64).alias("history"))
    pairs = recs.select("user", "item").join(held.rename({"item": "known"}), on="user")
    wanted = pairs.select(pl.col("item").alias("a"), pl.col("known").alias("b")).unique()
    similar = cooccurrence_similarity(wanted, log if whole is None else whole)
    scored = pairs.join(similar, left_on=["item", "known"], right_on=["a", "b"], how="left")
    sums = scored.group_by("user", "item").agg(
        ordered_sum(pl.col("sim").fill_null(0.0).sort()).alias("similarity_sum")
    )
    share = pl.col("similarity_sum") / pl.col("history")
    return sums.join(history, on="user").select("user", "item", share.alias("history_similarity"))
