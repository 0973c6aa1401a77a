"""The best sums over each user's relevant ground-truth items (Stats.ideal_sum): the
propensity-scored metrics' ideal values (metrics/propensity.py).

Per user, the relevant items' weights (an expression of their side columns: the log's
popularity, the catalog's propensity, joined as the recs table joins them) are sorted
descending, each multiplied by its position's discount, and added one after the other in
that order, to each cutoff: the same values in the same order as a list holding those
items in that order would add in the recs table (Stats.rec_sum), so a best list scores its
ideal exactly. Equal weights are equal values: their order does not change the sum.
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.stats import Stats, cutoff_label, depth, discount, ordered_sum


def ideal_table(
    truth: pl.LazyFrame,
    stats: Stats,
    popularity: pl.LazyFrame | None,
    totals: pl.LazyFrame | None,
    catalog: pl.LazyFrame | None,
) -> pl.LazyFrame:
    """(user, ideal[name]@k for every Stats.ideal_sum): `truth` the indexed ground truth
    (user, item, rel, relevant); `popularity` the items' (item, holders, ...) and
    `totals` the log's (log_rows, log_users), where a weight reads the log; `catalog`
    (item, propensity, ...) where a weight reads the catalog's propensity."""
    rows = truth.filter(pl.col("relevant")).select("user", "item")
    if popularity is not None and totals is not None:
        rows = rows.join(popularity.select("item", "holders"), on="item", how="left")
        rows = rows.join(totals, how="cross")
    if catalog is not None and "propensity" in stats.sides:
        rows = rows.join(catalog.select("item", "propensity"), on="item", how="left")
    sums = []
    for name, (weight, discount_kind) in sorted(stats.ideal_terms.items()):
        ordered = weight.sort(descending=True)
        if discount_kind is not None:
            positions = pl.int_range(1, pl.len() + 1, dtype=pl.UInt32)
            ordered = ordered * discount(positions, discount_kind)
        for k in sorted(stats.ideal_cutoffs[name], key=depth):
            column = f"ideal[{name}]@{cutoff_label(k)}"
            sums.append(ordered_sum(ordered.head(depth(k))).alias(column))
    return rows.group_by("user").agg(sums)
