"""The beyond-accuracy metrics' sums over each user's list, in rank order (#35 item 5).

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
place (Places), and adds the same values in the same order with the same roundings, so
both give the same bits (tests/test_list_sums.py compares them). It runs inside the lazy
plan (`map_batches`), one walk per recs table; where it is not built, or
RECEVAL_CORE=polars, or the rows are not what it reads (an item outside the catalog, a
missing unit vector or tag, ranks with a gap), the polars forms run instead.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import polars as pl

from receval_cli.evaluation import kernel_core
from receval_cli.metrics.beyond import similarity_to_earlier
from receval_cli.metrics.stats import EMBEDDING_SIMILARITY, Stats, cutoff_label, depth

_rank = pl.col("rank")
# the recs rows' place in the ranked rows (side_columns.recs_aggregates numbers them): each
# user's rows together, in rank order; the walk puts the rows back in that order
WALK = "walk"


def extension() -> ModuleType | None:
    """The compiled walk, or None (not built here, or RECEVAL_CORE=polars)."""
    return kernel_core.extension("receval_cli._list_sums")


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

    module = extension()
    pool = pl.thread_pool_size()  # read here: inside the UDF polars answers 1
    if module is None:
        tables = [polars_sums(frame, units)] if names else []
        if catalog is not None:
            tables += [polars_pairs(frame, feature, catalog) for feature in features]
        return tables

    def walked(rows: pl.DataFrame) -> pl.DataFrame:
        grouped = _grouped(rows)
        places = Places(rows)
        threads = kernel_core.threads(rows.height, pool)
        parts: list[pl.DataFrame] = []
        if names:
            vectors = units.collect() if units is not None and embedded else None
            found = _walk_sums(module, rows, grouped, places, plain, vectors, outputs, names)
            if found is None:
                lazy_units = None if vectors is None else vectors.lazy()
                found = polars_sums(rows.lazy(), lazy_units).collect()
            parts.append(found)
        # the catalog's features, read once for every pairs table
        read = None if catalog is None else catalog.select("item", *features).collect()
        for feature, wanted in features.items():
            assert read is not None
            described = read.select("item", feature)
            walk = _walk_tags if feature == "tags" else _walk_categories
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


class Places:
    """Each row's place among a catalog's items (_places), computed once for the tables
    that read the same items (the units, the tags, the categories: each a selection of the
    catalog)."""

    def __init__(self, rows: pl.DataFrame) -> None:
        self.rows = rows
        self.items: pl.Series | None = None
        self.index: Any = None

    def among(self, catalog: pl.DataFrame) -> Any:
        items = catalog.get_column("item")
        if self.items is None or not items.equals(self.items):
            self.items, self.index = items, _places(self.rows, catalog)
        return self.index


def _places(rows: pl.DataFrame, catalog: pl.DataFrame) -> Any:
    """Each row's item as its place among the catalog's rows (a join keeps no order: each
    place is put back at its row's position); None where an item is not in the catalog,
    or the catalog holds one twice."""
    import numpy as np

    if catalog.get_column("item").is_duplicated().any():
        return None
    places = catalog.select("item").with_row_index("place")
    found = rows.select("item").with_row_index("at").join(places, on="item", how="left")
    if found.get_column("place").null_count():
        return None
    index = np.empty(rows.height, dtype=np.int64)
    index[found.get_column("at").to_numpy()] = found.get_column("place").to_numpy()
    return index


Grouped = tuple[Any, Any, pl.Series]  # (order, offsets, users): see _grouped


def _grouped(rows: pl.DataFrame) -> Grouped | None:
    """The order that puts the rows back in the ranked rows' order (by WALK: each user's
    together, in rank order), as positions into `rows`; the users' offsets in that order;
    and the users. None where that order is not what the walk reads: WALK not numbering
    the rows 0, 1, 2, ..., or a user's ranks not running 1, 2, 3, ... (the polars form
    reads them as they are)."""
    import numpy as np

    n = rows.height
    walk = rows.get_column(WALK).cast(pl.Int64).to_numpy()
    if n and (walk.min() < 0 or walk.max() != n - 1):
        return None
    order = np.full(n, -1, dtype=np.int64)
    order[walk] = np.arange(n, dtype=np.int64)  # a scatter: no sort
    if n and (order < 0).any():  # a place held twice
        return None
    # each user's rows start at rank 1, where the user changes, and run 1, 2, 3, ...
    ranks = rows.get_column("rank").cast(pl.Int64).to_numpy()[order]
    starts = np.flatnonzero(ranks == 1)
    offsets = np.append(starts, np.int64(n))
    position = np.arange(n, dtype=np.int64) - np.repeat(starts, np.diff(offsets))
    if not np.array_equal(ranks, position + 1):
        return None
    column = rows.get_column("user")
    if column.dtype.is_integer() and not column.null_count():  # in numpy: faster
        ids = column.to_numpy()[order]
        changes = np.flatnonzero(ids[1:] != ids[:-1]) + 1
        users = pl.Series(column.name, ids[starts], dtype=column.dtype)
    else:
        ordered = column.gather(order)
        changes = ordered.ne_missing(ordered.shift(1)).arg_true().to_numpy()[1:]
        users = ordered.gather(starts)
    if not np.array_equal(changes, starts[1:]) or users.n_unique() != len(starts):
        return None
    return order, offsets, users


def _cutoff_array(ks: list[int | None]) -> Any:
    import numpy as np

    return np.array([depth(k) for k in ks], dtype=np.int64)


def _walk_sums(
    module: ModuleType,
    rows: pl.DataFrame,
    grouped: Grouped | None,
    places: Places,
    plain: list[str],
    units: pl.DataFrame | None,
    outputs: dict[str, list[tuple[int | None, str]]],
    names: list[str],
) -> pl.DataFrame | None:
    """The sums table by the compiled walk (None: rows it does not read: a rank gap, an
    item without a whole unit vector)."""
    import numpy as np

    if grouped is None:
        return None
    order, offsets, users = grouped
    columns: dict[str, Any] = {"user": users}
    for i, name in enumerate(plain):
        term = rows.get_column(f"term{i}").cast(pl.Float64)
        values = np.ascontiguousarray(term.fill_null(0.0).to_numpy()[order])
        valid = np.ascontiguousarray(term.is_not_null().to_numpy().astype(np.uint8)[order])
        columns |= _read_sums(module, offsets, values, valid, outputs[name])
    if units is not None:
        vectors = units.drop("item")
        if any(vectors.null_count().row(0)):
            return None
        index = places.among(units)  # each row's vector by its place among the units
        if index is None:
            return None
        matrix = np.ascontiguousarray(vectors.to_numpy().astype(np.float64, copy=False))
        similarity = np.empty(rows.height, dtype=np.float64)
        module.similar_earlier(offsets, matrix, index[order], vectors.width, similarity)
        valid = np.ones(rows.height, dtype=np.uint8)
        columns |= _read_sums(module, offsets, similarity, valid, outputs[EMBEDDING_SIMILARITY])
    order = ["user", *(column for name in names for _, column in outputs[name])]
    return pl.DataFrame(columns).select(order)


def _read_sums(
    module: ModuleType, offsets: Any, values: Any, valid: Any, wanted: list[tuple[int | None, str]]
) -> dict[str, Any]:
    import numpy as np

    users = len(offsets) - 1
    out = np.empty((len(wanted), users), dtype=np.float64)
    present = np.empty((len(wanted), users), dtype=np.uint8)
    module.ordered_sums(offsets, _cutoff_array([k for k, _ in wanted]), values, valid, out, present)
    return {
        column: pl.select(pl.when(pl.lit(present[c] > 0)).then(pl.lit(out[c]))).to_series()
        for c, (_, column) in enumerate(wanted)
    }


def _walk_tags(
    module: ModuleType,
    rows: pl.DataFrame,
    grouped: Grouped | None,
    places: Places,
    catalog: pl.DataFrame,
    wanted: list[tuple[int | None, str]],
    threads: int,
) -> pl.DataFrame | None:
    """The tag pairs' sums by the compiled walk (None: rows it does not read: an item
    outside the catalog, a missing tag set or tag)."""
    import numpy as np

    tags = catalog.get_column("tags")
    flat = tags.explode(empty_as_null=False)
    if tags.null_count() or flat.null_count():
        return None
    counts = tags.list.len().cast(pl.Int64).to_numpy()
    cat_offsets = np.zeros(catalog.height + 1, dtype=np.int64)
    np.cumsum(counts, out=cat_offsets[1:])
    # each distinct tag a code, 0 .. distinct - 1 (the walk takes up to 256 as bit sets)
    codes = flat.cast(pl.String).rank("dense").cast(pl.Int64).to_numpy() - 1
    walk = (rows, grouped, places, catalog, wanted)
    return _walk_pairs(module, 0, *walk, cat_offsets, codes, np.float64, threads)


def _walk_categories(
    module: ModuleType,
    rows: pl.DataFrame,
    grouped: Grouped | None,
    places: Places,
    catalog: pl.DataFrame,
    wanted: list[tuple[int | None, str]],
    threads: int,
) -> pl.DataFrame | None:
    """The pairs sharing a category by the compiled walk (None: an item outside the
    catalog). A missing category is a category of its own, as polars groups it."""
    import numpy as np

    # equal categories, equal codes: 0 for a missing one, 1, 2, ... for the others
    codes = catalog.get_column("category").rank("dense").fill_null(0).cast(pl.Int64).to_numpy()
    unread = np.zeros(catalog.height + 1, dtype=np.int64)  # one code per item: no slices
    walk = (rows, grouped, places, catalog, wanted)
    return _walk_pairs(module, 1, *walk, unread, codes, np.int64, threads)


def _walk_pairs(
    module: ModuleType,
    kind: int,
    rows: pl.DataFrame,
    grouped: Grouped | None,
    places: Places,
    catalog: pl.DataFrame,
    wanted: list[tuple[int | None, str]],
    cat_offsets: Any,
    codes: Any,
    dtype: Any,
    threads: int,
) -> pl.DataFrame | None:
    """_list_sums.c's pairs of this kind (0 tags, 1 category) for the rows in the walk's
    order, each read by its item's place in the catalog (None: an item outside it)."""
    import numpy as np

    index = places.among(catalog)
    if grouped is None or index is None:
        return None
    order, offsets, users = grouped
    out = np.empty((len(wanted), len(offsets) - 1), dtype=dtype)
    module.pairs(
        kind,
        offsets,
        _cutoff_array([k for k, _ in wanted]),
        np.ascontiguousarray(index[order]),
        cat_offsets,
        np.ascontiguousarray(codes),
        int(codes.max()) + 1 if len(codes) else 1,
        threads,
        out,
    )
    return pl.DataFrame({"user": users, **{c: out[i] for i, (_, c) in enumerate(wanted)}})
