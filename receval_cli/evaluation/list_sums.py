"""The beyond-accuracy metrics' sums over each user's list, in rank order, in C.

Per user, each added one value after the other in rank order, so that every value is the
same to the last bit on every run and engine (a plain group_by sum adds in whatever order
the threads deliver):

    Stats.rec_sum     a per-row term (novelty's self-information, serendipity's
                      unexpectedness), read at each cutoff;
    EMBEDDING_SIMILARITY  each item's embedding similarity to the items ranked above it,
                      from running sums of its unit vector's dimensions;
    pairs             intra-list diversity's pairs of items sharing a tag (their Jaccard
                      similarities) or a category (a count): side_columns.tag_pairs and
                      category_pairs define them.

In polars these are running sums over windows ordered by rank (one per term and per
embedding dimension) and joins of the items on their features. The compiled walk
(`receval_cli/_list_sums.c`) puts the recs rows back in rank order once (each row carries
its place, WALK: a scatter, no sort), reads each item's features from the catalog by its
place (evaluation/list_walk.py reads the rows for it), and adds the same values in the
same order with the same roundings, so
both give the same bits (tests/evaluation/test_list_sums.py compares them). It runs inside the lazy
plan (`map_batches`), one walk per recs table; where it is not built, or
RECEVAL_CORE=polars, or the rows are not what it reads (an item outside the catalog, a
missing unit vector or tag, ranks with a gap), the polars forms run instead.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import polars as pl

from receval_cli.compiled import extension
from receval_cli.evaluation import kernel_core, list_walk
from receval_cli.evaluation.list_walk import WALK
from receval_cli.metrics.beyond import similarity_to_earlier
from receval_cli.metrics.stats import EMBEDDING_SIMILARITY, Stats, cutoff_label, depth

_rank = pl.col("rank")


def compiled_list_walk() -> ModuleType | None:
    """The compiled walk, or None (not built here, or RECEVAL_CORE=polars)."""
    return extension("receval_cli._list_sums")


def _columns(name: str, cutoffs: set[int | None]) -> list[tuple[int | None, str]]:
    return [(k, f"sum[{name}]@{cutoff_label(k)}") for k in sorted(cutoffs, key=depth)]


PolarsPairs = Callable[[pl.LazyFrame, set[int | None]], pl.LazyFrame]


def walked_tables(
    recs: pl.LazyFrame,
    stats: Stats,
    units: pl.LazyFrame | None,
    catalog: pl.LazyFrame | None,
    pairs: dict[str, tuple[set[int | None], PolarsPairs]],
) -> list[pl.LazyFrame]:
    """Per-user tables (user, ...) of the sums in rank order: every Stats.rec_sum at its
    cutoffs (sum[name]@k, read as rec_sum describes), and for each catalog feature of
    `pairs` (category, tags) its similar_pairs[feature]@k (category: the pairs sharing it,
    an integer; tags: the sum of their Jaccard similarities). By the compiled walk where it
    runs: one table, the rows put in rank order once; else by the polars forms, one table
    each: the running sums here, and the feature's function in `pairs`
    (side_columns.category_pairs, tag_pairs: which define them) on the rows joined with the
    feature. `units`: the catalog's (item, unit_0 ..) where the embedding's similarity is
    asked. The walk reads each row's item by its place among the catalog's (or the units')
    rows, the feature's values as integer codes given per catalog item (fewer than the
    recommended rows)."""
    names = sorted(stats.sums)
    plain = [name for name in names if name != EMBEDDING_SIMILARITY]
    embedded = len(plain) < len(names)
    assert units is not None or not embedded  # metric_exprs refuses it without a catalog
    assert catalog is not None or not pairs
    outputs = {name: _columns(name, stats.sum_cutoffs[name]) for name in names}
    features = {
        feature: [(k, f"similar_pairs[{feature}]@{cutoff_label(k)}") for k in sorted(ks, key=depth)]
        for feature, (ks, _) in sorted(pairs.items())
    }
    frame = recs.select(
        "user",
        "rank",
        WALK,
        *(["item"] if embedded or pairs else []),
        *(stats.sums[name].alias(f"term{i}") for i, name in enumerate(plain)),
    )

    def polars_sums(rows: pl.LazyFrame, units: pl.LazyFrame | None) -> pl.LazyFrame:
        terms = {name: pl.col(f"term{i}") for i, name in enumerate(plain)}
        if units is not None and embedded:
            rows = rows.join(units, on="item", how="left")
            terms[EMBEDDING_SIMILARITY] = similarity_to_earlier(stats.embedding_dims)
        last = {k: pl.min_horizontal(_rank.max(), depth(k)) for n in names for k, _ in outputs[n]}
        running = {
            name: term.cum_sum().over("user", order_by=_rank) for name, term in terms.items()
        }
        return (
            rows.with_columns(running[name].alias(f"running{i}") for i, name in enumerate(names))
            .group_by("user")
            .agg(
                pl.col(f"running{i}").filter(_rank == last[k]).first().alias(column)
                for i, name in enumerate(names)
                for k, column in outputs[name]
            )
        )

    def polars_pairs(rows: pl.LazyFrame, feature: str, described: pl.LazyFrame) -> pl.LazyFrame:
        featured = rows.join(described.select("item", feature), on="item", how="left")
        cutoffs, by_feature = pairs[feature]
        return by_feature(featured, cutoffs)

    module = compiled_list_walk()
    pool = pl.thread_pool_size()  # read here: inside the UDF polars answers 1
    if module is None:
        tables = [polars_sums(frame, units)] if names else []
        if catalog is not None:
            tables += [polars_pairs(frame, feature, catalog) for feature in features]
        return tables

    def walked(rows: pl.DataFrame) -> pl.DataFrame:
        grouped = list_walk.grouped(module, rows)
        places = list_walk.Places(module, rows)
        threads = kernel_core.threads(rows.height, pool)
        parts: list[pl.DataFrame] = []
        if names:
            vectors = units.collect() if units is not None and embedded else None
            found = list_walk.walk_sums(
                module, rows, grouped, places, plain, vectors, outputs, names, threads
            )
            if found is None:
                lazy_units = None if vectors is None else vectors.lazy()
                found = polars_sums(rows.lazy(), lazy_units).collect()
            parts.append(found)
        # the catalog's features, read once for every pairs table
        read = None if catalog is None else catalog.select("item", *features).collect()
        for feature, wanted in features.items():
            assert read is not None
            described = read.select("item", feature)
            walk = list_walk.walk_tags if feature == "tags" else list_walk.walk_categories
            found = walk(module, rows, grouped, places, described, wanted, threads)
            if found is None:
                found = polars_pairs(rows.lazy(), feature, described.lazy()).collect()
            parts.append(found)
        table = parts[0]
        for part in parts[1:]:  # every part has a row for every user of the rows
            table = table.join(part, on="user", how="left")
        return table.select(columns)

    columns = ["user", *(c for n in names for _, c in outputs[n])]
    columns += [c for wanted in features.values() for _, c in wanted]
    schema: dict[str, pl.DataType] = {"user": frame.collect_schema()["user"]}
    for column in columns[1:]:
        schema[column] = (
            pl.Int64() if column.startswith("similar_pairs[category]") else pl.Float64()
        )
    if len(columns) == 1:
        return []
    return [frame.map_batches(walked, schema=schema, streamable=False)]
