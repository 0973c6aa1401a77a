"""A pandas DataFrame given to the Python API, as a polars frame, or receval's own error.

polars refuses two columns of one name with a bare ValueError, and pyarrow an object
column that mixes types (1 and 'u2') with ArrowInvalid: each becomes an InputError with
the CLI's fields (path: the frame, key: the argument, column, found, fix). A frame whose
columns need pyarrow to convert (pandas' text, categories, nullable numbers), where it is
not installed, is an ImportError that says to install it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import polars as pl

from receval_cli.errors import InputError


def from_pandas(data: Any, role: str) -> pl.LazyFrame:
    """The pandas frame given as `role` (evaluate()'s argument) as a LazyFrame."""
    where = f"<{role.replace('_', ' ')} frame>"
    names = [str(c) for c in data.columns]
    repeated = [name for name, count in Counter(names).items() if count > 1]
    if repeated:
        fix = "Give each column its own name (rename or drop the copies) before passing it."
        raise InputError(
            f"{role}: the pandas frame has {Counter(names)[repeated[0]]} columns named "
            f"'{repeated[0]}'; a column is found by its name. {fix}",
            key=role,
            path=where,
            column=repeated[0],
            found=names[:50],
            fix=fix,
        )
    try:
        return pl.from_pandas(data).lazy()
    except ImportError:  # polars converts a column that is not plain numpy with pyarrow
        fix = "Install pyarrow (pip install pyarrow), or give a polars DataFrame."
        raise ImportError(
            f"{role}: the pandas frame has columns that are not plain numpy ones (text, "
            f"categories, nullable numbers), which polars converts with pyarrow, not "
            f"installed. {fix}"
        ) from None
    # pyarrow raises ArrowInvalid (a ValueError), ArrowTypeError, ArrowNotImplementedError
    except (ValueError, TypeError, NotImplementedError, OverflowError) as error:
        raise _unconvertible(data, role, where, error) from None


def _unconvertible(data: Any, role: str, where: str, error: Exception) -> InputError:
    """The first column polars cannot convert: one that mixes Python types (1 and 'u2'),
    or one whose values it cannot hold (the converter's reason, cut short)."""
    for position, column in enumerate(data.columns):
        try:
            pl.from_pandas(data.iloc[:, [position]])
        except (ValueError, TypeError, NotImplementedError, OverflowError) as found:
            error = found
        else:
            continue
        values = data.iloc[:, position]
        kinds = sorted({type(v).__name__ for v in values.dropna()})
        fix = (
            f"Give the column one plain type (numbers or text), e.g. frame[{column!r}].astype(str)."
        )
        reason = (
            f"mixes values of types {', '.join(kinds)}; a column holds one type"
            if len(kinds) > 1
            else f"cannot be converted ({bounded_reason(error)})"
        )
        return InputError(
            f"{role}: column '{column}' of the pandas frame {reason}. {fix}",
            key=role,
            path=where,
            column=str(column),
            found=kinds if len(kinds) > 1 else bounded_reason(error),
            fix=fix,
        )
    fix = "Convert the frame's columns to plain types (numbers or text) before passing it."
    return InputError(
        f"{role}: the pandas frame cannot be converted to a table ({bounded_reason(error)}). {fix}",
        key=role,
        path=where,
        found=bounded_reason(error),
        fix=fix,
    )


def bounded_reason(error: Exception, limit: int = 200) -> str:
    """The converter's message, cut after `limit` characters (it quotes a value)."""
    text = str(error)
    return text if len(text) <= limit else text[:limit] + "..."
