"""The `recs` table of the beyond-accuracy metrics: every recommended item with the side
columns the metrics ask for (see metrics/stats.py), aggregated per user.

    popularity  count (log rows of the item), holders (its distinct users), log_rows,
                log_users, popular_rank (1 = most popular), joined on the item
    known       the user has the item in the interactions log
    baseline    the item's rank in the user's baseline list (else its popular_rank)
    relevant    the item is relevant in the ground truth
    category, tags, embedding (as unit_0 .. unit_{d-1}): catalog features
"""

from __future__ import annotations

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.errors import InputError
from receval_cli.evaluation.prepare import (
    dedupe_predictions,
    rank_lists,
    ranked_items,
    tie_order,
    with_score_precision,
)
from receval_cli.inputs.optional import Sources
from receval_cli.inputs.readers import Input
from receval_cli.metrics.stats import Stats, cutoff_label, depth
from receval_cli.wording import setting

_KEY = ["user", "item"]

# which optional input each side column comes from, for the error when it is missing
NEEDS = {
    "popularity": "interactions",
    "known": "interactions",
    "baseline": "baseline or interactions",
}


def missing_input(side: str, sources: Sources) -> str | None:
    """The input a side column needs, when it is not given (else None)."""
    if side == "relevant":
        return None
    if side in ("popularity", "known"):
        return None if sources.interactions is not None else NEEDS[side]
    if side == "baseline":
        given = sources.baseline is not None or sources.interactions is not None
        return None if given else NEEDS[side]
    return None if side in sources.features() else setting("catalog", "columns", side)


def item_popularity(log: pl.LazyFrame, tie_break: str) -> pl.LazyFrame:
    """Per item of the log: its rows, its users, and its rank by popularity (rows
    descending, then the tie_break convention on the item), with the log's totals."""
    per_item = log.group_by("item").agg(
        pl.len().cast(pl.Int64).alias("count"),
        pl.col("user").n_unique().cast(pl.Int64).alias("holders"),
        pl.col("row").min().alias("first_row"),
    )
    second, descending = tie_order(tie_break, row="first_row")
    ranked = per_item.sort([pl.col("count"), second], descending=[True, descending]).with_row_index(
        "popular_rank", offset=1
    )
    totals = log.select(
        pl.len().cast(pl.Int64).alias("log_rows"),
        pl.col("user").n_unique().cast(pl.Int64).alias("log_users"),
    )
    return ranked.drop("first_row").join(totals, how="cross")


def baseline_ranks(baseline: Input, conventions: Conventions, depth: int | None) -> pl.LazyFrame:
    """(user, item, baseline): the baseline's lists ranked like the predictions."""
    by = baseline.value_column
    scored = with_score_precision(baseline.frame, by, conventions.score_precision)
    deduped = dedupe_predictions(scored, by, conventions.duplicates)  # `error`: checked
    lists = rank_lists(deduped, by, conventions.tie_break, depth, [])
    return ranked_items(lists).rename({"rank": "baseline"})


def unit_vectors(catalog: Input, dims: int) -> pl.LazyFrame:
    """(item, unit_0 .. unit_{dims-1}): each embedding divided by its length (a zero
    vector stays zero, so its cosine similarity to every item is 0)."""
    vector = pl.col("embedding")
    norm = vector.list.eval(pl.element() * pl.element()).list.sum().sqrt()
    scale = pl.when(norm > 0).then(1.0 / norm).otherwise(0.0)
    return catalog.frame.select(
        "item", *(vector.list.get(d).mul(scale).alias(f"unit_{d}") for d in range(dims))
    )


def tag_similarity(recs: pl.LazyFrame) -> pl.LazyFrame:
    """(user, rank, tag_similarity_earlier): for each recommended item, the sum of the
    Jaccard similarities of its tag set to those of the items ranked above it.

    Only pairs sharing a tag have a non-zero similarity, so pairs come from a join on
    (user, tag); two empty sets count 1 (Jaccard distance 0, as scipy).
    """
    tagged = recs.select("user", "rank", "tags", pl.col("tags").list.len().alias("n_tags"))
    exploded = tagged.explode("tags").drop_nulls("tags")
    pairs = exploded.join(exploded, on=["user", "tags"], suffix="_earlier").filter(
        pl.col("rank_earlier") < pl.col("rank")
    )
    shared = pairs.group_by("user", "rank", "rank_earlier").agg(
        pl.len().alias("shared"), pl.col("n_tags").first(), pl.col("n_tags_earlier").first()
    )
    jaccard = pl.col("shared") / (pl.col("n_tags") + pl.col("n_tags_earlier") - pl.col("shared"))
    # summed in rank order (a running sum read at the last earlier item): a plain group_by
    # sum adds in whatever order the threads deliver, and the last bits would vary
    item = ["user", "rank"]
    per_item = shared.select(
        *item,
        jaccard.cum_sum().over(item, order_by="rank_earlier").alias("shared_tags"),
        (pl.col("rank_earlier") == pl.col("rank_earlier").max().over(item)).alias("last"),
    ).filter("last")
    empty = pl.col("n_tags") == 0
    earlier_empty = empty.cast(pl.UInt32).cum_sum().over("user", order_by="rank") - 1
    return tagged.join(per_item.drop("last"), on=item, how="left").select(
        "user",
        "rank",
        (
            pl.col("shared_tags").fill_null(0.0)
            + pl.when(empty).then(earlier_empty).otherwise(0).cast(pl.Float64)
        ).alias("tag_similarity_earlier"),
    )


def recs_aggregates(
    lists: pl.LazyFrame,
    stats: Stats,
    sources: Sources,
    truth: pl.LazyFrame,
    conventions: Conventions,
    depth: int | None,
) -> pl.LazyFrame:
    """Per user: the aggregations the metrics asked of the recs table, which holds each
    list to `depth` only (the deepest cutoff the recs metrics read: Stats.recs_depth)."""
    sides = stats.sides
    recs = ranked_items(lists)
    if depth is not None:
        recs = recs.filter(pl.col("rank") <= depth)
    catalog = sources.catalog
    tables = []  # per-user tables from queries of their own, built on `ranked` alone
    ranked = recs
    if stats.category_cutoffs and catalog is not None:
        categorized = ranked.join(catalog.frame.select("item", "category"), on="item", how="left")
        tables.append(category_pairs(categorized, stats.category_cutoffs))
    if "tags" in sides and catalog is not None:
        # first: the pairs are built from this frame, which should carry no other side
        # column (the query above it runs again for them)
        recs = recs.join(catalog.frame.select("item", "tags"), on="item", how="left")
        recs = recs.join(tag_similarity(recs), on=["user", "rank"], how="left")
    log = sources.interactions
    if "popularity" in sides or ("baseline" in sides and sources.baseline is None):
        popular = sources.popularity
        if popular is None:
            assert log is not None
            popular = item_popularity(log.frame, conventions.tie_break)
        items = popular if sources.popularity_rows else stats.items.with_rows(popular)
        recs = recs.join(items.rename({"count": "popularity"}), on="item", how="left")
    if "known" in sides:
        assert log is not None
        known = log.frame.select(_KEY).unique().with_columns(known=pl.lit(True))
        recs = recs.join(known, on=_KEY, how="left")
    if "baseline" in sides:
        if sources.baseline is not None:
            recs = recs.join(
                baseline_ranks(sources.baseline, conventions, depth), on=_KEY, how="left"
            )
        else:
            recs = recs.with_columns(baseline=pl.col("popular_rank"))
    if "relevant" in sides:
        recs = recs.join(truth.select(*_KEY, "relevant"), on=_KEY, how="left")
    if "embedding" in sides and catalog is not None:
        recs = recs.join(unit_vectors(catalog, stats.embedding_dims), on="item", how="left")
    recs = stats.recs.with_rows(recs)
    if stats.recs.aggregations:
        tables.insert(0, recs.group_by("user").agg(list(stats.recs.aggregations.values())))
    per_user = tables[0]
    for table in tables[1:]:
        per_user = per_user.join(table, on="user", how="left")
    return per_user


def category_pairs(recs: pl.LazyFrame, cutoffs: set[int | None]) -> pl.LazyFrame:
    """(user, same_category_pairs@k for each cutoff): the pairs of items in the user's top
    k that share a category, the sum over its categories of n (n - 1) / 2 with n the
    category's items in the top k. Two group_bys, no pairs and no ordering."""
    labels = {k: cutoff_label(k) for k in cutoffs}
    rank = pl.col("rank")
    counts = recs.group_by("user", "category").agg(
        (rank <= depth(k)).sum().cast(pl.Int64).alias(label) for k, label in labels.items()
    )
    pairs = [
        (pl.col(label) * (pl.col(label) - 1) // 2).sum().alias(f"same_category_pairs@{label}")
        for label in labels.values()
    ]
    return counts.group_by("user").agg(pairs)


def raise_unknown_features(unknown: pl.DataFrame, catalog: Input, features: set[str]) -> None:
    """Intra-list diversity cannot compare an item the catalog does not describe."""
    if unknown.height == 0:
        return
    examples = unknown.get_column("item").sort().head(3).to_list()
    shown = ", ".join(repr(i) for i in examples)
    fix = "Add them to the catalog, or check that the item ids match."
    raise InputError(
        f"catalog file {catalog.path}: {unknown.height} recommended item(s) are not in the "
        f"catalog (e.g. {shown}), so intra-list diversity ({', '.join(sorted(features))}) "
        f"cannot compare them. {fix}",
        path=catalog.path,
        found=examples,
        fix=fix,
    )
