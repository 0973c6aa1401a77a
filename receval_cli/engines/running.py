"""The buckets' Partials added up as they come, in memory that does not grow with the
number of buckets (engines/partitions.py: hash partitions and ranges of users).

Each bucket's Partial holds tables with one entry per bucket: its distinct recommended
items, the items' exposure, the global metrics' states. Kept as they come, a billion rows
in 125 ranges would hold each range's distinct items (several million ids a range: GiBs).
So the recommended items go into a set as they come: integer ids from 0 to FLAG_IDS into
one byte each (a catalog of 100M items: 100 MB, whatever the number of buckets), any
others (text, negative or larger ids) into tables made distinct whenever they grow past
what the last made distinct held; the other tables are made compact (evaluation/partial.py
`compact`) on the same rule, and the global states after the 2nd, 4th, 8th, ... bucket.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.evaluation.partial import Partial, compact, merge
from receval_cli.evaluation.unknown_items import EXAMPLES, unknown_row
from receval_cli.metrics import MetricSpec

FLAG_IDS = 2**28  # integer ids below this are flagged one byte each (256 MiB at most)
# the id types flagged (numpy holds them; UInt64 and Int128 ids go to the tables)
_FLAGGED = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32)
COMPACT_FROM = 4_000_000  # table rows held before the first compaction
_SLICE_IDS = 2**24  # ids compared at once by ItemSet.missing_from


class ItemSet:
    """Distinct item ids, added table by table (`add`), read back as one table sorted by
    id (`table`)."""

    def __init__(self) -> None:
        self.flags: Any = None  # numpy uint8 over 0..len-1: 1 where the id was added
        self.dtype: Any = None
        self.others: list[pl.Series] = []  # ids the flags cannot hold
        self.others_rows = 0
        self.distinct_rows = COMPACT_FROM  # the others' rows when last made distinct

    def add(self, table: pl.DataFrame) -> None:
        import numpy as np

        items = table.get_column("item")
        if self.dtype is None:
            self.dtype = items.dtype
        if items.dtype not in _FLAGGED or items.null_count():
            self._other(items)
            return
        values = items.to_numpy()
        fits = (values >= 0) & (values < FLAG_IDS)
        if not fits.all():
            self._other(items.filter(pl.Series(~fits)))
            values = values[fits]
        if len(values) == 0:
            return
        top = int(values.max()) + 1
        if self.flags is None or top > len(self.flags):
            held = 0 if self.flags is None else len(self.flags)
            grown = np.zeros(min(max(top, 2 * held), FLAG_IDS), np.uint8)
            if self.flags is not None:
                grown[: len(self.flags)] = self.flags
            self.flags = grown
        self.flags[values] = 1

    def missing_from(self, reference: ItemSet) -> pl.DataFrame | None:
        """unknown_items.unknown_query's row (the distinct ids here, those `reference`
        lacks, the smallest 5 of them) where both sets are flags alone, of one id type;
        else None. Read a slice of the flags at a time: no copy of the whole set."""
        import numpy as np

        if self.flags is None or self.others or reference.others:
            return None
        if reference.dtype is not None and reference.dtype != self.dtype:
            return None
        known = reference.flags if reference.flags is not None else np.zeros(0, np.uint8)
        recommended, unknown, examples = 0, 0, np.zeros(0, np.int64)
        for start in range(0, len(self.flags), _SLICE_IDS):
            mine = self.flags[start : start + _SLICE_IDS] != 0
            theirs = known[start : start + _SLICE_IDS]
            recommended += int(np.count_nonzero(mine))
            shared = min(len(mine), len(theirs))  # either set's flags may end first
            mine[:shared] &= theirs[:shared] == 0
            lacking = int(np.count_nonzero(mine))
            if lacking and len(examples) < EXAMPLES:
                found = np.flatnonzero(mine)[: EXAMPLES - len(examples)] + start
                examples = np.concatenate([examples, found])
            unknown += lacking
        return unknown_row(recommended, unknown, pl.Series(examples).cast(self.dtype))

    def _other(self, items: pl.Series) -> None:
        self.others.append(items)
        self.others_rows += len(items)
        if self.others_rows > 2 * self.distinct_rows:
            found = pl.concat(self.others).unique()
            self.others, self.others_rows = [found], len(found)
            self.distinct_rows = max(len(found), COMPACT_FROM)

    def table(self) -> pl.DataFrame:
        import numpy as np

        parts = list(self.others)
        if self.flags is not None:
            flagged = pl.Series("item", np.flatnonzero(self.flags)).cast(self.dtype)
            if not parts:  # sorted and distinct already: said so, so none sorts it again
                return flagged.set_sorted().to_frame()
            parts.append(flagged)
        if not parts:
            return pl.DataFrame({"item": pl.Series([], dtype=self.dtype or pl.Int64)})
        return pl.concat(parts).unique().sort().alias("item").to_frame()


class Running:
    """The buckets' Partials added up as they come (see the module's docstring)."""

    def __init__(self, specs: tuple[MetricSpec, ...], conventions: Conventions) -> None:
        self.specs, self.conventions = specs, conventions
        self.total: Partial | None = None
        self.items: ItemSet | None = None
        self.count = 0
        self.compacted_rows = COMPACT_FROM  # the tables' rows after the last compaction

    def add(self, partial: Partial) -> None:
        if self.total is not None:  # the first bucket's items stay (a one-bucket run)
            self.items = self.items or _set_of(self.total)
            for table in partial.recommended:
                self.items.add(table)
            partial.recommended = []
        self.total = partial if self.total is None else merge([self.total, partial])
        self.count += 1
        rows = sum(table.height for table in self.total.exposure)
        power_of_two = self.count & (self.count - 1) == 0
        if self.count > 1 and (power_of_two or rows > 2 * self.compacted_rows):
            self.total = compact(self.total, self.specs, self.conventions)
            rows = sum(table.height for table in self.total.exposure)
            self.compacted_rows = max(rows, COMPACT_FROM)

    def merged(self) -> Partial:
        if self.total is None:
            raise ValueError("no bucket was evaluated")
        if self.items is not None:  # made where read (item_facts)
            self.total.recommended, self.total.recommended_later = [], self.items.table
        return self.total


def _set_of(first: Partial) -> ItemSet:
    """The item set that starts with the first bucket's recommended items (moved out of it)."""
    found = ItemSet()
    for table in first.recommended:
        found.add(table)
    first.recommended = []
    return found
