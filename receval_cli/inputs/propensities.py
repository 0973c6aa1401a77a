"""The catalog's propensity column (catalog.columns.propensity): each item's propensity
p in (0, 1], the chance that a relevant item is observed, read by the propensity-scored
metrics (metrics/propensity.py). A value outside (0, 1], below LEAST (about 5.56e-309:
its weight 1/p would be infinite), missing or not a number is an error naming the file,
the column and a bad value."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import polars as pl

from receval_cli.errors import InputError
from receval_cli.inputs.readers import Input

_value = pl.col("propensity")


def _least_propensity() -> float:
    """The least p whose weight 1/p is a finite 64-bit float (about 5.56e-309)."""
    p = 1.0 / sys.float_info.max
    while math.isinf(1.0 / p):
        p = math.nextafter(p, 1.0)
    return p


# below it, an item's weight 1/p is infinite (1/1e-310); 1e-308 still weighs 1e308
LEAST = _least_propensity()
FIX = (
    "Give every item a propensity p with 0 < p <= 1 (the chance it is observed), or leave "
    "the item out of the catalog (it then counts p = 1)."
)


def propensity_column(schema: pl.Schema, column: str, path: Path) -> pl.Expr:
    """The column as 64-bit floats; a column of another type than numbers is an error."""
    dtype = schema[column]
    if not dtype.is_numeric():
        raise InputError(
            f"catalog file {path}: column '{column}' (catalog.columns.propensity) holds "
            f"{dtype} values, not numbers. {FIX}",
            path=path,
            column=column,
            found=str(dtype),
            fix=FIX,
        )
    return pl.col(column).cast(pl.Float64)


def propensity_checks() -> list[pl.Expr]:
    """check_query's counts: the missing or non-finite values, those outside (0, 1], those
    in it whose weight 1/p overflows (below LEAST), and the lowest and highest finite values
    (named by the error)."""
    finite = _value.filter(_value.is_finite())
    return [
        (_value.is_null() | ~_value.is_finite()).sum().alias("propensity_missing"),
        (_value.is_finite() & ((_value <= 0) | (_value > 1))).sum().alias("propensity_outside"),
        ((_value > 0) & (_value < LEAST)).sum().alias("propensity_tiny"),
        finite.min().alias("propensity_lowest"),
        finite.max().alias("propensity_highest"),
    ]


def raise_for_propensities(source: Input, found: dict[str, Any]) -> None:
    """The error for the first failed check of the propensity column."""
    column = source.columns["propensity"]
    where = f"catalog file {source.path}: column '{column}' (catalog.columns.propensity)"
    outside = found.get("propensity_outside") or 0
    if outside:
        lowest, highest = found["propensity_lowest"], found["propensity_highest"]
        bad = lowest if lowest is not None and lowest <= 0 else highest
        raise InputError(
            f"{where} has {outside} value(s) outside (0, 1], e.g. {bad!r}. {FIX}",
            path=source.path,
            column=column,
            found={"outside": outside, "example": bad},
            fix=FIX,
        )
    tiny = found.get("propensity_tiny") or 0
    if tiny:
        fix = f"Give every item a propensity of at least {LEAST!r} (or leave it out: p = 1)."
        raise InputError(
            f"{where} has {tiny} value(s) below {LEAST!r}, e.g. {found['propensity_lowest']!r}: "
            f"an item's weight 1/p is then beyond 64-bit floats. {fix}",
            path=source.path,
            column=column,
            found={"tiny": tiny, "example": found["propensity_lowest"]},
            fix=fix,
        )
    missing = found.get("propensity_missing") or 0
    if missing:
        raise InputError(
            f"{where} has {missing} missing, NaN or infinite value(s). {FIX}",
            path=source.path,
            column=column,
            found={"missing": missing},
            fix=FIX,
        )
