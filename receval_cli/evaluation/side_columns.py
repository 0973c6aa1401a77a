"""The `recs` table of the beyond-accuracy metrics: every recommended item with the side
columns the metrics ask for (see metrics/stats.py), aggregated per user.

    popularity  count (log rows of the item), holders (its distinct users), popular_rank
                (1 = most popular), joined on the item; log_rows, log_users (the log's
                totals) on every row
    known       the user has the item in the interactions log
    baseline    the item's rank in the user's baseline list (else its popular_rank)
    history_similarity  the item's mean co-occurrence similarity to the user's log items
    relevant    the item is relevant in the ground truth
    category, tags, embedding (as unit_0 .. unit_{d-1}): catalog features
    propensity  the catalog's propensity of the item (metrics/propensity.py)

The propensity metrics' ideal values come from the ground truth's relevant items with the
same side columns (evaluation/ideal_sums.py), one more per-user table.
"""

from __future__ import annotations

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.errors import InputError
from receval_cli.evaluation import ideal_sums, list_sums, list_walk
from receval_cli.evaluation.calibration_per_user import genre_calibration_table
from receval_cli.evaluation.cooccurrence import cooccurrence_pairs, history_similarity
from receval_cli.evaluation.item_popularity import item_popularity
from receval_cli.evaluation.prepare import (
    dedupe_predictions,
    rank_lists,
    ranked_items,
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
    "cooccurrence": "interactions",
    "history_similarity": "interactions",
    "history_genres": "interactions",
}


def missing_input(side: str, sources: Sources) -> str | None:
    """The input a side column needs, when it is not given (else None)."""
    if side == "relevant":
        return None
    if side == "propensity":  # a catalog column, not a feature the metrics compare by
        catalog = sources.catalog
        if "catalog" in sources.elsewhere or (catalog is not None and side in catalog.columns):
            return None
        return setting("catalog", "columns", side)
    if side in ("popularity", "known", "cooccurrence", "history_similarity", "history_genres"):
        return None if sources.names("interactions") else NEEDS[side]
    if side == "baseline":
        given = sources.names("baseline") or sources.names("interactions")
        return None if given else NEEDS[side]
    if "catalog" in sources.elsewhere:  # its columns are known once that engine reads it
        return None
    return None if side in sources.features() else setting("catalog", "columns", side)


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


def recs_aggregates(
    ranked: pl.LazyFrame,
    stats: Stats,
    sources: Sources,
    truth: pl.LazyFrame,
    conventions: Conventions,
    depth: int | None,
) -> pl.LazyFrame:
    """Per user: the aggregations the metrics asked of the recs table: the ranked rows
    (user, item, rank[, relevant]) to `depth` only (the deepest cutoff the recs metrics
    read: Stats.recs_depth)."""
    sides = stats.sides
    recs = ranked
    if depth is not None:
        recs = recs.filter(pl.col("rank") <= depth)
    # each row's place in the ranked rows (each user's together, in rank order): the walk
    # in list_sums puts the rows back in that order after the joins (which keep none)
    recs = recs.with_row_index(list_walk.WALK)
    catalog = sources.catalog
    log = sources.interactions
    # per-user tables from queries of their own, each on the ranked items and one feature
    tables = []
    pairs: dict[str, tuple[set[int | None], list_sums.PolarsPairs]] = {}
    for feature, cutoffs in sorted(stats.pair_cutoffs.items()):
        if feature == "cooccurrence":
            assert log is not None  # metric_exprs refuses the metric without it
            whole = log.frame if sources.cooccurrence_log is None else sources.cooccurrence_log
            tables.append(cooccurrence_pairs(recs, whole, cutoffs))
            continue
        assert catalog is not None  # metric_exprs refuses the metric without it
        pairs[feature] = (cutoffs, category_pairs if feature == "category" else tag_pairs)
    weighed: tuple[pl.LazyFrame | None, pl.LazyFrame | None] = (None, None)  # ideal_sums'
    if "popularity" in sides or ("baseline" in sides and sources.baseline is None):
        popular = sources.popularity
        if popular is None:
            assert log is not None
            popular = item_popularity(
                log.frame, conventions.tie_break, _reads_users(stats), _reads_ranks(stats)
            )
        items = popular if sources.popularity_rows else stats.items.with_rows(popular)
        # the log's totals on every row, items absent from the log included (one row
        # even for an empty log: an aggregation)
        totals = popular.select(pl.col("log_rows").max(), pl.col("log_users").max())
        if sources.log_totals is not None:  # a bucket may hold none of the log's items
            rows, users = sources.log_totals
            totals = pl.LazyFrame(
                {"log_rows": [rows], "log_users": [users]},
                schema={"log_rows": pl.Int64, "log_users": pl.Int64},
            )
        items = items.drop("log_rows", "log_users").rename({"count": "popularity"})
        recs = recs.join(items, on="item", how="left")
        recs = recs.join(totals, how="cross")
        weighed = (items, totals)
    if "known" in sides and "known" not in recs.collect_schema().names():
        # (the compiled core's ranked rows carry it where the walk looked it up)
        assert log is not None
        known = log.frame.select(_KEY).unique().with_columns(known=pl.lit(True))
        recs = recs.join(known, on=_KEY, how="left")
    if "baseline" in sides:
        if sources.baseline is not None:
            recs = recs.join(
                baseline_ranks(
                    sources.baseline, conventions, stats.baseline_depth(conventions.max_depth)
                ),
                on=_KEY,
                how="left",
            )
        else:
            recs = recs.with_columns(baseline=pl.col("popular_rank"))
    if "history_similarity" in sides:
        assert log is not None
        from_log = history_similarity(recs, log.frame, sources.cooccurrence_log)
        recs = recs.join(from_log, on=_KEY, how="left")
    if "relevant" in sides and "relevant" not in recs.collect_schema().names():
        # (the compiled core's ranked rows carry it already)
        recs = recs.join(truth.select(*_KEY, "relevant"), on=_KEY, how="left")
    if "category" in sides and catalog is not None and _reads(stats, "category"):
        # (intra-list diversity by category reads the catalog in its pairs table alone)
        recs = recs.join(catalog.frame.select("item", "category"), on="item", how="left")
    if "propensity" in sides and catalog is not None:
        recs = recs.join(catalog.frame.select("item", "propensity"), on="item", how="left")
    described = None if catalog is None else catalog.frame
    # the users' best sums: every user with a relevant item, listed or not (a full join)
    ideal = ideal_sums.ideal_table(truth, stats, *weighed, described) if stats.ideal_terms else None
    recs = stats.recs.with_rows(recs)
    # the sums in rank order and the catalog features' pairs: every user of the recs
    # table has a row, so they come first (or after the counts)
    units = None  # the unit vectors, read by item in the sums (the only ones to read them)
    if "embedding" in sides and catalog is not None:
        units = unit_vectors(catalog, stats.embedding_dims)
    tables[0:0] = list_sums.walked_tables(recs, stats, units, described, pairs)
    if stats.recs.aggregations:
        tables.insert(0, recs.group_by("user").agg(list(stats.recs.aggregations.values())))
    per_user: pl.LazyFrame | None = None
    for table in tables:
        per_user = table if per_user is None else per_user.join(table, on="user", how="left")
    if ideal is not None and per_user is not None:  # (a propensity metric reads both)
        per_user = per_user.join(ideal, on="user", how="full", coalesce=True)
    if stats.calibration:
        # every user of the bucket with a genre in the log, with a list or without one
        assert log is not None  # metric_exprs refuses the metric without it
        assert catalog is not None
        present = pl.concat([truth.select("user"), ranked.select("user")]).unique()
        table = genre_calibration_table(recs, log.frame, catalog.frame, present, stats.calibration)
        if per_user is None:
            return table
        return per_user.join(table, on="user", how="full", coalesce=True)
    assert per_user is not None  # plan reads the recs table only when a metric asks
    return per_user


def _reads_users(stats: Stats) -> bool:
    """Whether an expression of the recs table or of its items reads the log's users per
    item (holders) or in all (log_users)."""
    exprs = [*stats.items.rows.values(), *_recs_exprs(stats)]
    return any({"holders", "log_users"} & set(expr.meta.root_names()) for expr in exprs)


def _reads_ranks(stats: Stats) -> bool:
    """Whether the run reads the log's items' popular_rank: the popularity baseline (no
    baseline file), or an expression of the recs table, of its items or of the ideal sums."""
    if "baseline" in stats.sides:
        return True
    ideal = [term for term, _ in stats.ideal_terms.values()]
    exprs = [*stats.items.rows.values(), *_recs_exprs(stats), *ideal]
    return any("popular_rank" in expr.meta.root_names() for expr in exprs)


def _recs_exprs(stats: Stats) -> list[pl.Expr]:
    return [*stats.recs.rows.values(), *stats.recs.aggregations.values(), *stats.sums.values()]


def _reads(stats: Stats, column: str) -> bool:
    """Whether an expression of the recs table (a row, an aggregation, a sum) reads the
    column."""
    return any(column in expr.meta.root_names() for expr in _recs_exprs(stats))


def category_pairs(recs: pl.LazyFrame, cutoffs: set[int | None]) -> pl.LazyFrame:
    """(user, similar_pairs[category]@k for each cutoff): the pairs of items in the user's
    top k that share a category, the sum over its categories of n (n - 1) / 2 with n the
    category's items in the top k. Two group_bys, no pairs and no ordering."""
    labels = {k: cutoff_label(k) for k in cutoffs}
    rank = pl.col("rank")
    counts = recs.group_by("user", "category").agg(
        (rank <= depth(k)).sum().cast(pl.Int64).alias(label) for k, label in labels.items()
    )
    pairs = [
        (pl.col(label) * (pl.col(label) - 1) // 2).sum().alias(f"similar_pairs[category]@{label}")
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


def tag_pairs(recs: pl.LazyFrame, cutoffs: set[int | None]) -> pl.LazyFrame:
    """(user, similar_pairs[tags]@k for each cutoff): the sum over the pairs of items in
    the user's top k of the Jaccard similarity of their tag sets.

    Only pairs sharing a tag have a non-zero similarity, so they come from a join on
    (user, tag), and their shared tags from a count per pair. Their similarities are
    added in one running sum per user, in the order of the later item's rank, then the
    earlier's, read at the last pair within k (a plain group_by sum adds in whatever
    order the threads deliver, and the last bits would vary). Two empty sets count 1
    (Jaccard distance 0, as scipy): the pairs of empty sets in the top k, e (e - 1) / 2
    for e of them, are added as an integer.
    """
    labels = {k: cutoff_label(k) for k in cutoffs}
    rank = pl.col("rank")
    tags = pl.col("tags")
    if recs.collect_schema()["tags"] == pl.List(pl.String):  # joined as integers, not text
        tags = tags.cast(pl.List(pl.Categorical))
    tagged = recs.select("user", "rank", tags, pl.col("tags").list.len().alias("n_tags"))
    exploded = tagged.explode("tags").drop_nulls("tags")
    pairs = exploded.join(exploded, on=["user", "tags"], suffix="_earlier").filter(
        pl.col("rank_earlier") < rank
    )
    # a pair as one key that orders as (rank, rank_earlier): both are below 2^32
    pair = (rank.cast(pl.UInt64) * 2**32 + pl.col("rank_earlier")).alias("pair")
    shared = pairs.group_by("user", pair).agg(
        pl.len().alias("shared"), pl.col("n_tags").first(), pl.col("n_tags_earlier").first()
    )
    jaccard = pl.col("shared") / (pl.col("n_tags") + pl.col("n_tags_earlier") - pl.col("shared"))
    running = jaccard.cum_sum().over("user", order_by="pair")
    sums = (
        shared.select("user", "pair", running.alias("running"))
        .group_by("user")
        .agg(
            # the running sum never decreases: its value at the last pair within k is its max
            pl.col("running")
            .filter(pl.col("pair") < pl.lit((depth(k) + 1) * 2**32, pl.UInt64))
            .max()
            .alias(f"jaccard@{label}")
            for k, label in labels.items()
        )
    )
    empty = pl.col("n_tags") == 0
    empties = tagged.group_by("user").agg(
        (empty & (rank <= depth(k))).sum().cast(pl.Int64).alias(f"empty@{label}")
        for k, label in labels.items()
    )
    similar = [
        (
            pl.col(f"jaccard@{label}").fill_null(0.0)
            + (pl.col(f"empty@{label}") * (pl.col(f"empty@{label}") - 1) // 2).cast(pl.Float64)
        ).alias(f"similar_pairs[tags]@{label}")
        for label in labels.values()
    ]
    return empties.join(sums, on="user", how="left").select("user", *similar)
