"""The compiled walk's side of the list sums (evaluation/list_sums.py): the recs rows put
back in rank order (WALK), each row's item found by its place in the catalog, and the
calls into receval_cli/_list_sums.c, which read the rows through that order (no copy in
rank order is made). Each function answers None where the rows are not what the walk
reads; list_sums then runs the polars form.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import polars as pl

from receval_cli.metrics.stats import EMBEDDING_SIMILARITY, depth

# the recs rows' place in the ranked rows (side_columns.recs_aggregates numbers them): each
# user's rows together, in rank order; the walk puts the rows back in that order
WALK = "walk"


class Places:
    """Each row's place among a catalog's items (_places), computed once for the tables
    that read the same items (the units, the tags, the categories: each a selection of the
    catalog)."""

    def __init__(self, module: ModuleType, rows: pl.DataFrame) -> None:
        self.module, self.rows = module, rows
        self.items: pl.Series | None = None
        self.index: Any = None

    def among(self, catalog: pl.DataFrame) -> Any:
        items = catalog.get_column("item")
        if self.items is None or not items.equals(self.items):
            self.items, self.index = items, _places(self.module, self.rows, catalog)
        return self.index


def _places(module: ModuleType, rows: pl.DataFrame, catalog: pl.DataFrame) -> Any:
    """Each row's item as its place among the catalog's rows (in the rows' order); None
    where an item is not in the catalog, or the catalog holds one twice. Integer ids by a
    table over their range (_list_sums.c's places), others (or a range too wide) by a join
    (which keeps no order: each place is put back at its row's position)."""
    import numpy as np

    items, known = rows.get_column("item"), catalog.get_column("item")
    whole = not (items.null_count() or known.null_count())
    if whole and items.dtype.is_integer() and known.dtype.is_integer():
        index = np.empty(rows.height, dtype=np.int64)
        found = module.places(_int64_bits(items), _int64_bits(known), index)
        if found >= 0:
            return index if found else None
    if known.is_duplicated().any():
        return None
    places = catalog.select("item").with_row_index("place")
    found = rows.select("item").with_row_index("at").join(places, on="item", how="left")
    if found.get_column("place").null_count():
        return None
    index = np.empty(rows.height, dtype=np.int64)
    index[found.get_column("at").to_numpy()] = found.get_column("place").to_numpy()
    return index


def _int64_bits(column: pl.Series) -> Any:
    """An integer column's values (none missing) as int64 (UInt64 by its bits: equal ids,
    equal bits)."""
    import numpy as np

    values = column.to_numpy()
    if values.dtype == np.uint64:
        return np.ascontiguousarray(values).view(np.int64)
    return np.ascontiguousarray(values, dtype=np.int64)


Grouped = tuple[Any, Any, pl.Series]  # (order, offsets, users): see grouped


def grouped(module: ModuleType, rows: pl.DataFrame) -> Grouped | None:
    """The order that puts the rows back in the ranked rows' order (by WALK: each user's
    together, in rank order), as positions into `rows`; the users' offsets in that order;
    and the users. None where that order is not what the walk reads: WALK not numbering
    the rows 0, 1, 2, ..., or a user's ranks not running 1, 2, 3, ... (the polars form
    reads them as they are)."""
    import numpy as np

    n = rows.height
    walk, rank = _uint32(rows.get_column(WALK)), _uint32(rows.get_column("rank"))
    if walk is None or rank is None:
        return None
    order = np.empty(n, dtype=np.int64)
    offsets = np.empty(n + 1, dtype=np.int64)
    count = module.walk_order(walk, rank, order, offsets)  # a scatter: no sort
    if count < 0:
        return None
    offsets = offsets[: count + 1]
    # every row of a user holds its id, and the user's rows are all together
    column = rows.get_column("user")
    if column.dtype.is_integer() and not column.null_count():
        ids = np.empty(count, dtype=np.int64)
        if not module.users_at(_int64_bits(column), order, offsets, ids):
            return None
        if column.dtype == pl.UInt64:
            users = pl.Series(column.name, ids.view(np.uint64))
        else:
            users = pl.Series(column.name, ids).cast(column.dtype)
    else:
        ordered = column.gather(order)
        changes = ordered.ne_missing(ordered.shift(1)).arg_true().to_numpy()[1:]
        if not np.array_equal(changes, offsets[1:-1]):
            return None
        users = ordered.gather(offsets[:-1])
    if users.n_unique() != count:
        return None
    return order, offsets, users


def _uint32(column: pl.Series) -> Any:
    """A column of row numbers or ranks as a uint32 array (None: a missing one, or one
    outside 0 .. 2^32 - 1)."""
    import numpy as np

    if column.null_count():
        return None
    if column.dtype != pl.UInt32:
        wide = column.cast(pl.Int64, strict=False)
        low, high = wide.min(), wide.max()
        if wide.null_count() or (len(wide) and (low < 0 or high >= 2**32)):  # type: ignore[operator]
            return None
        column = wide.cast(pl.UInt32)
    return np.ascontiguousarray(column.to_numpy())


def _cutoff_array(ks: list[int | None]) -> Any:
    import numpy as np

    return np.array([depth(k) for k in ks], dtype=np.int64)


def walk_sums(
    module: ModuleType,
    rows: pl.DataFrame,
    grouped: Grouped | None,
    places: Places,
    plain: list[str],
    units: pl.DataFrame | None,
    outputs: dict[str, list[tuple[int | None, str]]],
    names: list[str],
    threads: int,
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
        values = np.ascontiguousarray(term.fill_null(0.0).to_numpy())
        valid = np.ascontiguousarray(term.is_not_null().to_numpy()).view(np.uint8)
        columns |= _read_sums(module, offsets, order, values, valid, outputs[name], threads)
    if units is not None:
        vectors = units.drop("item")
        if any(vectors.null_count().row(0)):
            return None
        index = places.among(units)  # each row's vector by its place among the units
        if index is None:
            return None
        matrix = np.ascontiguousarray(vectors.to_numpy().astype(np.float64, copy=False))
        similarity = np.empty(rows.height, dtype=np.float64)
        module.similar_earlier(offsets, order, matrix, index, vectors.width, threads, similarity)
        valid = np.ones(rows.height, dtype=np.uint8)
        in_walk = np.empty(0, dtype=np.int64)  # the similarities are in the walk's order
        wanted = outputs[EMBEDDING_SIMILARITY]
        columns |= _read_sums(module, offsets, in_walk, similarity, valid, wanted, threads)
    order = ["user", *(column for name in names for _, column in outputs[name])]
    return pl.DataFrame(columns).select(order)


def _read_sums(
    module: ModuleType,
    offsets: Any,
    order: Any,
    values: Any,
    valid: Any,
    wanted: list[tuple[int | None, str]],
    threads: int,
) -> dict[str, Any]:
    import numpy as np

    users = len(offsets) - 1
    out = np.empty((len(wanted), users), dtype=np.float64)
    present = np.empty((len(wanted), users), dtype=np.uint8)
    cutoffs = _cutoff_array([k for k, _ in wanted])
    module.ordered_sums(offsets, order, cutoffs, values, valid, threads, out, present)
    return {
        column: pl.select(pl.when(pl.lit(present[c] > 0)).then(pl.lit(out[c]))).to_series()
        for c, (_, column) in enumerate(wanted)
    }


def walk_tags(
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
    codes = dense_codes(flat.cast(pl.String)) - 1
    walk = (rows, grouped, places, catalog, wanted)
    return _walk_pairs(module, 0, *walk, cat_offsets, codes, np.float64, threads)


def walk_categories(
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
    codes = dense_codes(catalog.get_column("category"))
    unread = np.zeros(catalog.height + 1, dtype=np.int64)  # one code per item: no slices
    walk = (rows, grouped, places, catalog, wanted)
    return _walk_pairs(module, 1, *walk, unread, codes, np.int64, threads)


def dense_codes(values: pl.Series) -> Any:
    """Each value's code (int64, numpy): 1, 2, ... in the order of the distinct values, 0
    for a missing one: rank("dense"), from the few distinct values sorted, not every
    value (a catalog of 1M items in 20 categories: a fifth of the time)."""
    distinct = values.drop_nulls().unique().sort()
    codes = pl.int_range(1, distinct.len() + 1, dtype=pl.Int64, eager=True)
    found = values.replace_strict(distinct, codes, default=0, return_dtype=pl.Int64)
    return found.to_numpy()


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
        order,
        _cutoff_array([k for k, _ in wanted]),
        index,
        cat_offsets,
        np.ascontiguousarray(codes),
        int(codes.max()) + 1 if len(codes) else 1,
        threads,
        out,
    )
    return pl.DataFrame({"user": users, **{c: out[i] for i, (_, c) in enumerate(wanted)}})


def known_flags(
    module: ModuleType, ranked: pl.DataFrame, log: pl.DataFrame, threads: int
) -> pl.Series | None:
    """Each ranked row's `known` (the compiled core's rows, each user's together): True
    where the log holds its (user, item), else missing, as side_columns' join with the
    log's pairs gives it; _list_sums.c's known. None where it does not read them: ids
    that are not integers of one type on both sides, a missing one, users too far apart
    for a table, or a user's rows in two places (the join then runs)."""
    import numpy as np

    columns = [ranked.get_column(c) for c in ("user", "item")]
    columns += [log.get_column(c) for c in ("user", "item")]
    if any(c.null_count() or not c.dtype.is_integer() for c in columns):
        return None
    if columns[0].dtype != columns[2].dtype or columns[1].dtype != columns[3].dtype:
        return None
    flags = np.empty(ranked.height, dtype=np.uint8)
    if module.known(*(_int64_bits(c) for c in columns), threads, flags) != 1:
        return None
    found = pl.Series("known", flags.view(np.bool_))
    return pl.select(pl.when(found).then(True).alias("known")).to_series()
