"""Exact sums of float64 values: the same bits whatever the order or the grouping.

Every finite float64 is an integer multiple of 2^-1074, so a sum of them is an exact
integer count of that unit; Python's integers hold it whatever its size. Sums of parts
(users in buckets, buckets on executors) add up to the same integer in any order, and a
mean is that integer divided by the count, rounded once (Python's int / int is correctly
rounded). So every engine reports a mean that is the exact mean rounded to the nearest
float64, bit for bit, however the users were split.

The summing is vectorised and exact: values are grouped by their binary exponent
(numpy.bincount), and within a group they are split (Veltkamp's split: a = high + low,
each half of 26 significant bits on the group's grid) so that every partial sum is an
integer multiple of the grid below 2^53 units: float64 adds them without rounding. Only the
few distinct exponents are then combined in Python integers. Subnormal, huge or
non-finite values take a slower integer path (mantissas in int64). Where the compiled
core is built (`_kernel.c`'s exact_sum), it adds each value's mantissa, shifted by its
exponent, into 32-bit lanes of an integer instead: the same integer, in one pass.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from types import ModuleType
from typing import TYPE_CHECKING, Any

import polars as pl

from receval_cli.compiled import extension

if TYPE_CHECKING:  # numpy is imported on first use (assembly.import_numpy_meanwhile)
    import numpy as np

SCALE_BITS = 1075  # a finite float64 is mantissa * 2^(exponent - 1075), exponent >= 1
_HALF = 26
_CHUNK = 2**25  # values per bincount: each half's sum stays below 2^53, so exact
_MANTISSA = (1 << 52) - 1


@dataclass(frozen=True)
class ExactSum:
    """A sum of float64 values held exactly: `scaled / 2**SCALE_BITS`, plus the non-finite
    values seen (NaN, +inf, -inf), which decide the result as IEEE addition would."""

    scaled: int = 0
    nan: bool = False
    pos_inf: bool = False
    neg_inf: bool = False

    def __add__(self, other: ExactSum) -> ExactSum:
        return ExactSum(
            self.scaled + other.scaled,
            self.nan or other.nan,
            self.pos_inf or other.pos_inf,
            self.neg_inf or other.neg_inf,
        )

    def _special(self) -> float | None:
        if self.nan or (self.pos_inf and self.neg_inf):
            return math.nan
        if self.pos_inf:
            return math.inf
        if self.neg_inf:
            return -math.inf
        return None

    def total(self) -> float:
        """The sum, correctly rounded to float64 (+-inf beyond its range)."""
        return self.mean(1)

    def mean(self, count: int) -> float:
        """The sum divided by `count` (> 0), correctly rounded to float64."""
        special = self._special()
        if special is not None:
            return special
        try:
            return self.scaled / (count << SCALE_BITS)
        except OverflowError:
            return math.inf if self.scaled > 0 else -math.inf

    def fraction(self) -> Fraction | None:
        """The exact sum as a fraction (None when a value was NaN or infinite)."""
        if self._special() is not None:
            return None
        return Fraction(self.scaled, 1 << SCALE_BITS)

    def to_json(self) -> list[object]:
        return [str(self.scaled), self.nan, self.pos_inf, self.neg_inf]

    @classmethod
    def from_json(cls, data: list[object]) -> ExactSum:
        scaled, nan, pos_inf, neg_inf = data
        return cls(int(str(scaled)), bool(nan), bool(pos_inf), bool(neg_inf))


def exact_sum(values: pl.Series | np.ndarray) -> ExactSum:
    """The exact sum of the values (nulls left out)."""
    return exact_sums([values])[0]


def exact_sums(columns: Sequence[pl.Series | np.ndarray]) -> list[ExactSum]:
    """The exact sum of each column (nulls left out), the columns shared among a thread
    per core where they are many values (numpy and the compiled core release the GIL)."""
    import numpy as np

    arrays = [_array(column) for column in columns]
    compiled = extension()
    least = _THREADED_FROM if compiled is None else _COMPILED_THREADED_FROM
    workers = max(1, min(len(arrays), os.cpu_count() or 1))
    if workers == 1 or sum(a.size for a in arrays) < least:
        return _sums(arrays, np, compiled)
    shares = [arrays[i::workers] for i in range(workers)]
    with ThreadPoolExecutor(workers) as pool:
        done = list(pool.map(lambda share: _sums(share, np, compiled), shares))
    found: list[ExactSum] = [ExactSum()] * len(arrays)
    for i, share in enumerate(done):
        found[i::workers] = share
    return found


_THREADED_FROM = 1_000_000  # values: below, one thread is as fast
# the compiled core: about 4 ns a value; 36 metrics of 100k users took 17 ms, 11 ms shared
_COMPILED_THREADED_FROM = 2_000_000


def _sums(arrays: list[np.ndarray], np: Any, compiled: ModuleType | None) -> list[ExactSum]:
    if compiled is not None:
        return [_compiled_sum(array, compiled) for array in arrays]
    size = max((a.size for a in arrays), default=0)
    buffers = (np.empty(size), np.empty(size), np.empty(size, dtype=np.int64))
    return [_sum(array, buffers) for array in arrays]


def _compiled_sum(array: np.ndarray, compiled: ModuleType) -> ExactSum:
    """The same integer as _sum's, from `_kernel.c`'s exact_sum: in one pass over the
    values, each mantissa shifted by its exponent and added into 32-bit lanes."""
    lanes, nan, pos_inf, neg_inf = compiled.exact_sum(array)
    scaled = sum(lane << (32 * i) for i, lane in enumerate(lanes) if lane)
    return ExactSum(scaled, bool(nan), bool(pos_inf), bool(neg_inf))


def _array(values: pl.Series | np.ndarray) -> np.ndarray:
    import numpy as np

    if isinstance(values, pl.Series):
        values = values.drop_nulls().cast(pl.Float64).to_numpy()
    return np.ascontiguousarray(values, dtype=np.float64)


def _sum(array: np.ndarray, buffers: tuple[np.ndarray, np.ndarray, np.ndarray]) -> ExactSum:
    import numpy as np

    if array.size == 0:
        return ExactSum()
    high, low, exponent = (b[: array.size] for b in buffers)
    np.right_shift(array.view(np.int64), 52, out=exponent)
    np.bitwise_and(exponent, 0x7FF, out=exponent)
    if int(exponent.max()) == 0x7FF:  # NaN or infinite values
        finite = np.isfinite(array)
        special = array[~finite]
        nan = bool(np.isnan(special).any())
        pos_inf, neg_inf = bool((special == np.inf).any()), bool((special == -np.inf).any())
        return ExactSum(_scaled(array[finite]), nan, pos_inf, neg_inf)
    subnormal = int(exponent.min()) == 0 and bool(((exponent == 0) & (array != 0)).any())
    if subnormal or int(exponent.max()) > _SPLIT_BELOW:
        return ExactSum(_scaled(array))
    return ExactSum(_split_sum(array, high, low, exponent))


_SPLIT_BELOW = 1023 + 960  # exponent fields from here would overflow the split
_SPLITTER = float(2**27 + 1)


def _split_sum(array: np.ndarray, high: np.ndarray, low: np.ndarray, exponent: np.ndarray) -> int:
    """The exact sum of normal finite values (exponent fields given), times 2^SCALE_BITS."""
    import numpy as np

    np.multiply(array, _SPLITTER, out=high)
    np.subtract(high, array, out=low)
    np.subtract(high, low, out=high)  # the upper 26 bits of each value
    np.subtract(array, high, out=low)  # the rest, exactly
    scaled = 0
    for start in range(0, array.size, _CHUNK):
        part = slice(start, start + _CHUNK)
        for halves in (high, low):
            sums = np.bincount(exponent[part], halves[part])
            for total in sums[np.flatnonzero(sums)].tolist():
                numerator, denominator = float(total).as_integer_ratio()
                scaled += numerator * ((1 << SCALE_BITS) // denominator)
    return scaled


def _scaled(array: np.ndarray) -> int:
    """The exact sum of finite values, times 2^SCALE_BITS."""
    import numpy as np

    scaled = 0
    for start in range(0, array.size, _CHUNK):
        bits = array[start : start + _CHUNK].view(np.int64)
        exponent = (bits >> 52) & 0x7FF
        mantissa = (bits & _MANTISSA) | ((exponent != 0).astype(np.int64) << 52)
        sign = bits >> 63  # -1 for a negative value: negate in two's complement
        mantissa = (mantissa ^ sign) - sign
        exponent = np.maximum(exponent, 1)  # subnormals: mantissa * 2^(1 - 1075)
        # per exponent, each half's sum is an integer below 2^53: float64 holds it exactly
        high = np.bincount(exponent, (mantissa >> _HALF).astype(np.float64))
        low = np.bincount(exponent, (mantissa & ((1 << _HALF) - 1)).astype(np.float64))
        for position in np.flatnonzero((high != 0) | (low != 0)).tolist():
            scaled += ((int(high[position]) << _HALF) + int(low[position])) << position
    return scaled


def grouped_exact_sums(values: np.ndarray, codes: np.ndarray, count: int) -> list[ExactSum]:
    """The exact sum of each group's values (`codes`: each value's group, 0..count-1), as
    exact_sum gives it for the group alone: the cells of one bincount are (group, binary
    exponent) instead of exponents, so many small groups cost one pass, not one each."""
    import numpy as np

    array = np.ascontiguousarray(values, dtype=np.float64)
    groups = np.ascontiguousarray(codes, dtype=np.int64)
    if array.size == 0:
        return [ExactSum()] * count
    exponent = (array.view(np.int64) >> 52) & 0x7FF
    top = int(exponent.max())
    subnormal = int(exponent.min()) == 0 and bool(((exponent == 0) & (array != 0)).any())
    if top == 0x7FF or subnormal or top > _SPLIT_BELOW:  # rare: each group on its own
        order = np.argsort(groups, kind="stable")
        bounds = np.searchsorted(groups[order], np.arange(count + 1))
        return [exact_sum(array[order[bounds[g] : bounds[g + 1]]]) for g in range(count)]
    high, low = np.empty_like(array), np.empty_like(array)
    np.multiply(array, _SPLITTER, out=high)
    np.subtract(high, array, out=low)
    np.subtract(high, low, out=high)  # the upper 26 bits of each value
    np.subtract(array, high, out=low)  # the rest, exactly
    cell_of = (groups << 11) | exponent
    scaled = [0] * count
    for start in range(0, array.size, _CHUNK):
        part = slice(start, start + _CHUNK)
        cells, inverse = np.unique(cell_of[part], return_inverse=True)
        for halves in (high, low):
            sums = np.bincount(inverse, halves[part], minlength=cells.size)
            for cell, total in zip(cells.tolist(), sums.tolist(), strict=True):
                if total:
                    numerator, denominator = float(total).as_integer_ratio()
                    scaled[cell >> 11] += numerator * ((1 << SCALE_BITS) // denominator)
    return [ExactSum(s) for s in scaled]
