"""The buckets' Partials added up as they come, in memory that does not grow with the
number of buckets (engines/partitions.py: hash partitions and ranges of users).

Each bucket's Partial holds tables with one entry per bucket: its distinct recommended
items, the items' exposure, the global metrics' states. Kept as they come, a billion rows
in 125 ranges would hold each range's distinct items (several million ids a range: GiBs).
So the recommended items go into a set as they come: integer ids from 0 to BIT_IDS into
one bit each (a catalog of 100M items: 12 MiB, whatever the number of buckets), any
others (text, negative or larger ids) into tables made distinct whenever they grow past
what the last made distinct held. A bucket whose compiled core kept its items as bits
hands them over as they are (`ItemSet.add_bits`, `BucketTask.items_into`): no table of
them is made. The other tables are made compact (evaluation/partial.py `compact`) on the
same rule, and the global states after the 2nd, 4th, 8th, ... bucket.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from receval_cli.compiled import extension
from receval_cli.config.conventions import Conventions
from receval_cli.evaluation.partial import Partial, compact, merge
from receval_cli.evaluation.unknown_items import EXAMPLES, unknown_row
from receval_cli.metrics import MetricSpec

BIT_IDS = 2**28  # integer ids below this are kept one bit each (32 MiB at most)
# the id types kept as bits (numpy holds them; UInt64 and Int128 ids go to the tables)
_BITS_HOLD = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32)
COMPACT_FROM = 4_000_000  # table rows held before the first compaction
_SLICE_WORDS = 2**15  # words of bits compared or read back at once (2**21 ids)


class ItemSet:
    """Distinct item ids, added table by table (`add`, nulls left out) or as bits
    (`add_bits`), read back as one table sorted by id (`table`)."""

    def __init__(self) -> None:
        # numpy uint64 words: bit i % 64 of word i // 64 is set where the id i was added
        self.bits: Any = None
        self.dtype: Any = None
        self.others: list[pl.Series] = []  # ids the bits cannot hold
        self.others_rows = 0
        self.distinct_rows = COMPACT_FROM  # the others' rows when last made distinct

    def held(self) -> bool:
        """Whether anything was added (an empty table or bits included)."""
        return self.bits is not None or bool(self.others)

    def bits_alone(self) -> bool:
        """Whether the set holds bits and nothing else (missing_from counts on them)."""
        return self.bits is not None and not self.others

    def add(self, table: pl.DataFrame) -> None:
        import numpy as np

        items = table.get_column("item")
        if self.dtype is None:
            self.dtype = items.dtype
        if items.null_count():  # no id: a reference's nulls match no recommended item
            items = items.drop_nulls()
        if items.dtype not in _BITS_HOLD:
            self._other(items)
            return
        values = items.to_numpy().astype(np.int64, copy=False)
        fits = (values >= 0) & (values < BIT_IDS)
        if not fits.all():
            self._other(items.filter(pl.Series(~fits)))
            values = values[fits]
        self._room(0 if len(values) == 0 else int(values.max()) // 64 + 1)
        module = extension()
        if module is not None:  # every value fits the bits: nothing left to grow
            module.mark(np.ascontiguousarray(values), np.ones(len(values), np.uint8), self.bits)
        else:
            shifts = (values & 63).astype(np.uint64)
            np.bitwise_or.at(self.bits, values >> 6, np.left_shift(np.uint64(1), shifts))

    def add_bits(self, bits: Any) -> None:
        """Add the ids whose bits are set in `bits` (numpy uint64 words, laid out as
        `self.bits`; the compiled core's, evaluation/seen_items.py), taken as Int64 ids."""
        if self.dtype is None:
            self.dtype = pl.Int64
        self._room(len(bits))
        self.bits[: len(bits)] |= bits

    def _room(self, words: int) -> None:
        """Bits of at least `words` words (doubled as they grow, up to BIT_IDS ids)."""
        import numpy as np

        held = 0 if self.bits is None else len(self.bits)
        if self.bits is not None and words <= held:
            return
        grown = np.zeros(min(max(words, 2 * held), BIT_IDS // 64 + 1), np.uint64)
        if self.bits is not None:
            grown[:held] = self.bits
        self.bits = grown

    def missing_from(self, reference: ItemSet) -> pl.DataFrame | None:
        """unknown_items.unknown_query's row (the distinct ids here, those `reference`
        lacks, the smallest 5 of them) where both sets are bits alone, of one id type;
        else None. Read a slice of the bits at a time: no copy of the whole set."""
        import numpy as np

        if self.bits is None or self.others or reference.others:
            return None
        if reference.dtype is not None and reference.dtype != self.dtype:
            return None
        known = reference.bits if reference.bits is not None else np.zeros(0, np.uint64)
        recommended, unknown, examples = 0, 0, np.zeros(0, np.int64)
        for start in range(0, len(self.bits), _SLICE_WORDS):
            lacking = self.bits[start : start + _SLICE_WORDS].copy()
            recommended += int(np.bitwise_count(lacking).sum())
            theirs = known[start : start + _SLICE_WORDS]
            shared = min(len(lacking), len(theirs))  # either set's bits may end first
            lacking[:shared] &= ~theirs[:shared]
            count = int(np.bitwise_count(lacking).sum())
            if count and len(examples) < EXAMPLES:  # from the first words that hold any
                words = np.flatnonzero(lacking)[: EXAMPLES - len(examples)]
                found = [set_bits(lacking[w : w + 1]) + 64 * (start + w) for w in words]
                examples = np.concatenate([examples, *found])[:EXAMPLES]
            unknown += count
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
        if self.bits is not None:
            ids = np.empty(int(np.bitwise_count(self.bits).sum()), np.int64)
            done = 0
            for start in range(0, len(self.bits), _SLICE_WORDS):
                found = set_bits(self.bits[start : start + _SLICE_WORDS])
                ids[done : done + len(found)] = found + 64 * start
                done += len(found)
            flagged = pl.Series("item", ids).cast(self.dtype)
            if not parts:  # sorted and distinct already: said so, so none sorts it again
                return flagged.set_sorted().to_frame()
            parts.append(flagged)
        if not parts:
            return pl.DataFrame({"item": pl.Series([], dtype=self.dtype or pl.Int64)})
        return pl.concat(parts).unique().sort().alias("item").to_frame()


def set_bits(words: Any) -> Any:
    """The numbers of the bits set in `words` (numpy uint64; bit i % 64 of word i // 64),
    ascending, as int64."""
    import numpy as np

    as_bytes = words.astype("<u8", copy=False).view(np.uint8)  # bit i at byte i // 8
    return np.flatnonzero(np.unpackbits(as_bytes, bitorder="little")).astype(np.int64)


class Running:
    """The buckets' Partials added up as they come (see the module's docstring)."""

    def __init__(self, specs: tuple[MetricSpec, ...], conventions: Conventions) -> None:
        self.specs, self.conventions = specs, conventions
        self.total: Partial | None = None
        # the buckets' recommended items; bits are handed straight in (BucketTask.items_into)
        self.items = ItemSet()
        self.count = 0
        self.compacted_rows = COMPACT_FROM  # the tables' rows after the last compaction

    def add(self, partial: Partial) -> None:
        if self.total is not None:  # the first bucket's items stay (a one-bucket run)
            if self.count == 1:
                self._move_items(self.total)
            self._move_items(partial)
        self.total = partial if self.total is None else merge([self.total, partial])
        self.count += 1
        rows = sum(table.height for table in self.total.exposure)
        power_of_two = self.count & (self.count - 1) == 0
        if self.count > 1 and (power_of_two or rows > 2 * self.compacted_rows):
            self.total = compact(self.total, self.specs, self.conventions)
            rows = sum(table.height for table in self.total.exposure)
            self.compacted_rows = max(rows, COMPACT_FROM)

    def _move_items(self, partial: Partial) -> None:
        for table in partial.recommended:
            self.items.add(table)
        partial.recommended = []

    def merged(self) -> Partial:
        if self.total is None:
            raise ValueError("no bucket was evaluated")
        if self.count > 1 or self.items.held():  # made where read (item_facts)
            self._move_items(self.total)
            self.total.recommended_later = self.items.table
        return self.total
