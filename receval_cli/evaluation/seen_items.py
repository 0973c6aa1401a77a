"""The distinct recommended items of a run whose predictions the compiled core reads in
batches (evaluation/kernel_core.py `evaluate_batches`).

Each batch's items within depth are marked in one bit per id (`_kernel.c`'s `mark`), for
ids from 0 to SEEN_IDS: 12 MiB for a catalog of 100M items, whatever the number of batches,
read back once, ascending (`marked`). A batch with an id outside that range has its
distinct items kept as a table instead (`others`), made distinct with the rest at the end.
Keeping every batch's distinct items until the end and making them distinct then held
memory that grew with the catalog: 10M rows over 100M items peaked 130 MiB above the same
rows over 1M items.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import polars as pl

SEEN_IDS = 2**28  # ids below this are marked one bit each (32 MiB at most)


class SeenItems:
    """The distinct items of the batches added (`add`), read back sorted (`series`)."""

    def __init__(self, module: ModuleType) -> None:
        import numpy as np

        self.module = module
        self.bits: Any = np.zeros(0, np.uint64)
        self.others: list[Any] = []  # each a batch's distinct items (ids the bits cannot hold)

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

    def series(self) -> pl.Series:
        """The distinct items, ascending (flagged sorted where no batch had other ids)."""
        import numpy as np

        out = np.empty(int(np.bitwise_count(self.bits).sum()), np.int64)
        self.module.marked(self.bits, out)
        found = pl.Series("item", out)
        if not self.others:
            return found.set_sorted()
        parts = [found, *(pl.Series("item", part) for part in self.others)]
        return pl.concat(parts).unique().sort()
