"""The distinct recommended items of a run whose predictions the compiled core reads in
batches (evaluation/kernel_core.py `evaluate_batches`).

Each batch's items within depth are marked in one bit per id (`_kernel.c`'s `mark`), for
ids from 0 to SEEN_IDS: 12 MiB for a catalog of 100M items, whatever the number of batches,
read back once, ascending (`marked`). A batch with an id outside that range has its
distinct items kept as a table instead (`others`), made distinct with the rest at the end.
Keeping every batch's distinct items until the end and making them distinct then held
memory that grew with the catalog: 10M rows over 100M items peaked 130 MiB above the same
rows over 1M items. The unknown-items check is counted on the bits too (`missing_from`).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import polars as pl

from receval_cli.evaluation.unknown_items import EXAMPLES, unknown_row

SEEN_IDS = 2**28  # ids below this are marked one bit each (32 MiB at most)
_SLICE = 2**20  # ids looked up at once by missing_from
_FIRST_WINDOW = 2**12  # ids of the first window read for the examples (_smallest_outside)
_SPARE: list[Any] = []  # the bits of the set released last, cleared (SeenItems.release)


class SeenItems:
    """The distinct items of the batches added (`add`), read back sorted (`series`)."""

    def __init__(self, module: ModuleType) -> None:
        import numpy as np

        self.module = module
        try:  # the bits a set released, cleared (release)
            self.bits: Any = _SPARE.pop()
        except IndexError:
            self.bits = np.zeros(0, np.uint64)
        self.others: list[Any] = []  # each a batch's distinct items (ids the bits cannot hold)
        self.found: pl.Series | None = None  # `series`, once read

    def add(self, items: Any, in_top: Any, distinct: Callable[[], Any]) -> None:
        """Mark the `items` (int64) where `in_top` is set; `distinct()` gives the batch's
        distinct items where an id falls outside the bits' range."""
        import numpy as np

        status = self.module.mark(items, in_top, self.bits)
        while 0 < status <= SEEN_IDS:  # an id past the bits held: grow them, mark again
            words = min(max(status, 2 * 64 * len(self.bits)), SEEN_IDS) // 64 + 1
            grown = np.zeros(words, np.uint64)
            grown[: len(self.bits)] = self.bits
            self.bits = grown
            status = self.module.mark(items, in_top, self.bits)
        if status != 0:  # a negative id, or one of SEEN_IDS or more
            self.others.append(distinct())

    def held_bits(self) -> Any:
        """The bits (numpy uint64 words: bit i % 64 of word i // 64 for the id i) where
        they hold every item added; None where a batch had other ids."""
        return None if self.others else self.bits

    def release(self) -> None:
        """Hand the bits, cleared, to the next set made (`_SPARE`): ranges of users make one
        set each, one after the other, and a set of 100M ids would otherwise take 12 MiB
        of new pages each time, and mark its first batch twice as its bits grow (at 1B
        rows: 125 ranges, about 3 s). The set is empty afterwards."""
        import numpy as np

        self.bits.fill(0)
        _SPARE[:] = [self.bits]  # the last one released: the largest by then
        self.bits, self.found = np.zeros(0, np.uint64), None
        self.others = []

    def series(self) -> pl.Series:
        """The distinct items, ascending (flagged sorted where no batch had other ids),
        made once."""
        if self.found is None:
            self.found = self._series()
        return self.found

    def _series(self) -> pl.Series:
        import numpy as np

        out = np.empty(int(np.bitwise_count(self.bits).sum()), np.int64)
        self.module.marked(self.bits, out)
        found = pl.Series("item", out)
        if not self.others:
            return found.set_sorted()
        parts = [found, *(pl.Series("item", part) for part in self.others)]
        return pl.concat(parts).unique().sort()

    def missing_from(self, reference: pl.Series) -> pl.DataFrame | None:
        """unknown_items.unknown_query's row (the distinct items, those the distinct ids of
        `reference` lack, the smallest 5 of them), counted on the bits: each reference id
        looked up in them, no table of the items made and nothing the size of the bits.
        None where a batch had other ids, or the reference's ids are not integers: the
        query counts them."""
        import numpy as np

        if self.others or not reference.dtype.is_integer():
            return None
        ids = reference.drop_nulls().cast(pl.Int64).to_numpy()
        ids = ids[(ids >= 0) & (ids < 64 * len(self.bits))]  # others are not recommended
        recommended = int(np.bitwise_count(self.bits).sum())
        known = 0
        for start in range(0, len(ids), _SLICE):
            part = ids[start : start + _SLICE]
            known += int(
                np.count_nonzero((self.bits[part >> 6] >> (part & 63).astype(np.uint64)) & 1)
            )
        unknown = recommended - known
        examples = self._smallest_outside(ids, min(unknown, EXAMPLES))
        return unknown_row(recommended, unknown, pl.Series(examples))

    def _smallest_outside(self, ids: Any, count: int) -> Any:
        """The `count` smallest marked ids not among `ids`: windows of the bits from the
        start, each twice as wide as the last (from _FIRST_WINDOW ids), until that many
        are found, the window's own ids of `ids` marked in bits of their own (no sort of
        `ids`: a whole slice's marked ids looked up in them took 50 ms at 10M rows)."""
        import numpy as np

        found = np.zeros(0, np.int64)
        start, width, end = 0, _FIRST_WINDOW, 64 * len(self.bits)
        out = np.empty(0, np.int64)
        while len(found) < count and start < end:
            stop = min(start + width, end)  # both multiples of 64
            lacking = self.bits[start // 64 : stop // 64].copy()
            inside = ids[(ids >= start) & (ids < stop)] - start
            known = np.zeros_like(lacking)
            self.module.mark(inside, np.ones(len(inside), np.uint8), known)
            lacking &= ~known
            if len(out) < 64 * len(lacking):
                out = np.empty(64 * len(lacking), np.int64)
            marked = out[: self.module.marked(lacking, out)] + start
            found = np.concatenate([found, marked[: count - len(found)]])
            start, width = stop, 2 * width
        return found
