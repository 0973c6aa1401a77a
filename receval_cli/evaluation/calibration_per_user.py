"""The per-user table of the calibration metric (metrics/calibration.py): each user's
genre distribution in the interactions log joined with that of the top k of the list,
and Steck's miscalibration between them.

    p(g|u) = sum over i in H(u) of p(g|i) / |H(u)|          (the history, the log's items)
    q(g|u) = sum over i in L@k of w(r(i)) p(g|i) / sum over i in L@k of w(r(i))
    C_KL   = sum over g with p(g|u) > 0 of p(g|u) ln(p(g|u) / q~(g|u)),
             q~ = (1 - alpha) q + alpha p

p(g|i) is the item's genre distribution: 1/|tags(i)| for each of its tags, or 1 for its
category. Items without a genre (no tag, or absent from the catalog) carry no mass and are
left out of both sums, numerators and denominators (H(u) and L@k are then the items with
a genre). A user without such an item in the log has no p: no row here,
so no value. A user whose list holds none (an empty list) has q = 0 everywhere:
C_KL = ln(1 / alpha), the largest value (nothing of the user's interests is listed).

Every float sum is taken in a fixed order, so a user's value is the same bits on every
engine and in every bucket: a genre's history mass adds its items' shares in ascending
order, its list mass in rank order, the divergence its genres' terms in the genres' text
order (ordered_sum: a running sum's last value). Every division's divisor is made a
full column first (stats.row_constant): a table joined to a one-row table (a bucket with
one user) holds a broadcast column, which polars divides by as a product with its
reciprocal (3 / 10 = 0.30000000000000004), and the last bits would follow the bucket.
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.stats import (
    CalibrationRequest,
    calibration_column,
    cutoff_label,
    depth,
    ordered_sum,
    row_constant,
)

_rank = pl.col("rank")
_share = pl.col("share")


def item_genres(catalog: pl.LazyFrame, feature: str) -> pl.LazyFrame:
    """(item, genre, share): each genre of each item with p(g|i), its share of the item
    (1/|tags| for tags, 1 for a category); items without a genre have no row."""
    if feature == "category":
        named = catalog.select("item", pl.col("category").alias("genre"))
        return named.drop_nulls("genre").with_columns(share=pl.lit(1.0))
    tags = catalog.select(
        "item", pl.col("tags").alias("genre"), pl.col("tags").list.len().alias("n")
    )
    exploded = tags.explode("genre").drop_nulls("genre")
    # 1.0 / n: a literal divided by a column is a true division on every row
    return exploded.select("item", "genre", (1.0 / pl.col("n").cast(pl.Float64)).alias("share"))


def rank_weight(weights: str) -> pl.Expr:
    """w(r): uniform 1; reciprocal 1/r (MRR's, RADio's rank-aware calibration); log2
    1/log2(r + 1) (DCG's discount)."""
    position = _rank.cast(pl.Float64)
    if weights == "reciprocal":
        return 1.0 / position
    if weights == "log2":
        return 1.0 / (position + 1.0).log(2)
    return pl.lit(1.0)


def history_distribution(
    log: pl.LazyFrame, genres: pl.LazyFrame, users: pl.LazyFrame
) -> pl.LazyFrame:
    """(user, genre, p): the genre distribution of each user's distinct logged items with a
    genre, for the users of `users` (a bucket's) only."""
    logged = log.select("user", "item").unique().join(users, on="user", how="semi")
    rows = logged.join(genres, on="item", how="inner")
    sized = rows.group_by("user").agg(pl.col("item").n_unique().cast(pl.Float64).alias("held"))
    mass = rows.group_by("user", "genre").agg(ordered_sum(_share.sort()).alias("mass"))
    joined = mass.join(sized, on="user", how="inner")
    share = pl.col("mass") / row_constant(pl.col("held"), pl.col("mass"))
    return joined.select("user", "genre", share.alias("p"))


def _in_rank_order(values: pl.Expr, k: int | None) -> pl.Expr:
    """The sum of a group's `values` at ranks up to k, added in rank order (a group holds
    each rank once)."""
    return ordered_sum(values.sort_by(_rank).filter(_rank.sort() <= depth(k)))


def list_distribution(
    ranked: pl.LazyFrame, genres: pl.LazyFrame, weights: str, cutoffs: list[int | None]
) -> pl.LazyFrame:
    """(user, genre, q@k for each cutoff): the genre distribution of each list's top k,
    each item weighted by w(rank) (a genre absent from the top k: 0; a top k without a
    genre: null)."""
    rows = ranked.select("user", "item", "rank").join(genres, on="item", how="inner")
    rows = rows.with_columns(weight=rank_weight(weights))
    # the weights of the items with a genre, one row per item, summed in rank order
    items = rows.group_by("user", "rank").agg(pl.col("weight").first())
    totals = items.group_by("user").agg(
        _in_rank_order(pl.col("weight"), k).alias(f"total@{cutoff_label(k)}") for k in cutoffs
    )
    term = pl.col("weight") * _share
    mass = rows.group_by("user", "genre").agg(
        _in_rank_order(term, k).alias(f"mass@{cutoff_label(k)}") for k in cutoffs
    )
    joined = mass.join(totals, on="user", how="inner")
    shares = []
    for k in cutoffs:
        label = cutoff_label(k)
        total, listed = pl.col(f"total@{label}"), pl.col(f"mass@{label}")
        share = listed / row_constant(total, listed)
        shares.append(pl.when(total > 0).then(share).alias(f"q@{label}"))
    return joined.select("user", "genre", *shares)


def genre_calibration_table(
    ranked: pl.LazyFrame,
    log: pl.LazyFrame,
    catalog: pl.LazyFrame,
    users: pl.LazyFrame,
    requests: dict[CalibrationRequest, set[tuple[int | None, float]]],
) -> pl.LazyFrame:
    """(user, one column per request, cutoff and alpha: calibration_column): C_KL of each
    user of `users` with a genre in the log (the others have no row). `ranked`: the
    ranked lists' rows (user, item, rank)."""
    table: pl.LazyFrame | None = None
    for request, wanted in sorted(requests.items()):
        feature, weights = request
        genres = item_genres(catalog, feature).cache()
        cutoffs = sorted({k for k, _ in wanted}, key=depth)
        p = history_distribution(log, genres, users)
        q = list_distribution(ranked, genres, weights, cutoffs)
        both = p.join(q, on=["user", "genre"], how="left")
        sums = []
        for k, alpha in sorted(wanted, key=lambda pair: (depth(pair[0]), pair[1])):
            listed = pl.col(f"q@{cutoff_label(k)}").fill_null(0.0)
            p_g = pl.col("p")
            smoothed = (1.0 - alpha) * listed + alpha * p_g
            term = p_g * (p_g / row_constant(smoothed, p_g)).log()
            # the genres' terms in the genres' order; rounding can leave -1e-17 for equal
            # distributions, where the divergence is 0 (it is never below 0: Gibbs)
            total = ordered_sum(term.sort_by("genre")).clip(lower_bound=0.0)
            sums.append(total.alias(calibration_column(request, k, alpha)))
        per_user = both.group_by("user").agg(sums)
        table = (
            per_user
            if table is None
            else table.join(per_user, on="user", how="full", coalesce=True)
        )
    assert table is not None
    return table
