"""Exact sums of the squares of float64 values: the same bits whatever the order or grouping.

The square of a float64 needs about twice its bits, so it is not a float64; its exact value
is an integer multiple of 2^-SQUARE_BITS. The values are taken in bands of binary exponents
(256 wide); within a band each value is scaled by a power of two near 1 (exactly), split in
two halves of 26 bits (Veltkamp's split), and its square is the sum of three float64
products that are exact: high^2, 2 high low and low^2, summed exactly per band by
metrics/exact_sum.py and shifted back by twice the scale, as an integer. Sums of parts add
up to the same integer in any order: the click metrics' variances and effective sample
sizes (evaluation/click_parts.py) are the same on every engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import polars as pl

from receval_cli.metrics.exact_sum import SCALE_BITS, exact_sums

# the smallest square's unit: 2^-(2 * 1074 + 256) covers the smallest band's shift
SQUARE_BITS = 3400
_BAND = 256
_SPLITTER = 134217729.0  # 2^27 + 1: Veltkamp's split of a float64 into two 26-bit halves


@dataclass(frozen=True)
class ExactSquares:
    """A sum of squares held exactly: `scaled / 2**SQUARE_BITS`; `special` when a value was
    NaN or infinite (the sum is then not a number)."""

    scaled: int = 0
    special: bool = False

    def __add__(self, other: ExactSquares) -> ExactSquares:
        return ExactSquares(self.scaled + other.scaled, self.special or other.special)

    def fraction(self) -> Fraction | None:
        """The exact sum as a fraction (None when a value was NaN or infinite)."""
        return None if self.special else Fraction(self.scaled, 1 << SQUARE_BITS)

    def to_json(self) -> list[object]:
        return [str(self.scaled), self.special]

    @classmethod
    def from_json(cls, data: list[object]) -> ExactSquares:
        scaled, special = data
        return cls(int(str(scaled)), bool(special))


def exact_squares(values: pl.Series) -> ExactSquares:
    """The exact sum of the squares of the values (nulls left out)."""
    import numpy as np

    array = values.drop_nulls().cast(pl.Float64).to_numpy()
    if array.size == 0:
        return ExactSquares()
    if not np.isfinite(array).all():
        return ExactSquares(special=True)
    _, exponent = np.frexp(array)
    band = np.floor_divide(exponent, _BAND)
    total = 0
    for found in np.unique(band):
        shift = int(found) * _BAND + _BAND // 2
        scaled = np.ldexp(array[band == found], -shift)  # exact: a power of two, kept normal
        split = scaled * _SPLITTER
        high = split - (split - scaled)
        low = scaled - high
        pieces = exact_sums([high * high, 2.0 * high * low, low * low])
        units = sum(piece.scaled for piece in pieces)  # the band's sum over 2^SCALE_BITS
        total += units << (2 * shift - SCALE_BITS + SQUARE_BITS)
    return ExactSquares(total)
