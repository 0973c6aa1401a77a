"""The checks of an input's mapped columns: a column the config names is there, ids are
ids, numbers are numbers, and the file holds rows; each failure names the file, the
column, what was found and the fix.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from receval_cli.errors import InputError, did_you_mean
from receval_cli.inputs.diagnosis import (
    READ_ERRORS,
    check_header_encoding,
    first_line,
    read_failure,
)
from receval_cli.inputs.scanning import EXTENSIONS, SEPARATORS, config_key, no_rows_error
from receval_cli.wording import setting


def require_column(schema: pl.Schema, column: str, role: str, path: Path, key: str) -> None:
    if column in schema:
        return
    names = list(schema.names())
    check_header_encoding(path, role, names)  # UTF-16 or UTF-32: NUL bytes in the names
    named_by = setting(config_key(role), "columns", key)
    where = f"{role} file {path} has no column '{column}' (set by {named_by})."
    counts = {sep: names[0].count(sep) for sep in SEPARATORS} if len(names) == 1 else {}
    separator = max(counts, key=lambda sep: counts[sep]) if any(counts.values()) else None
    if separator is not None:
        shown = '"\\t"' if separator == "\t" else f"'{separator}'"
        fix = f"Set {setting(config_key(role), 'separator')}: {shown}."
        raise InputError(
            f"{where} The header was read as one column, {names[0]!r}: the file looks "
            f"separated by {shown}. {fix}",
            key=setting(config_key(role), "separator"),
            path=path,
            column=column,
            found=names[:50],
            fix=fix,
        )
    hint = ""
    if any("\ufffd" in name for name in names):
        hint = " The header holds bytes that are not UTF-8: save the file as UTF-8."
    fix = f"Set {named_by} to one of them.{hint}"
    raise InputError(
        f"{where}{did_you_mean(column, names)} Its columns are: {', '.join(names)}. {fix}",
        key=named_by,
        path=path,
        column=column,
        found=names[:50],
        fix=fix.strip(),
    )


def is_empty(frame: pl.LazyFrame, role: str, path: Path) -> bool:
    """The file has no row (its first rows are read; a failed read raises InputError)."""
    try:
        return frame.head(1).collect().height == 0
    except READ_ERRORS as error:
        if not path.is_file():  # a frame given in memory (the Python API): no file to scan
            reason = first_line(error)
            raise InputError(
                f"{role} {path} could not be read: {reason}.", path=path, found=reason
            ) from None
        fmt = EXTENSIONS.get(path.suffix.lower(), "csv")  # the likeliest; only for messages
        raise read_failure(path, fmt, None, role, error) from None


def check_id(frame: pl.LazyFrame, schema: pl.Schema, column: str, role: str, path: Path) -> None:
    dtype = schema[column]
    if dtype.is_integer() or dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum):
        return
    if is_empty(frame, role, path):
        raise no_rows_error(role, path)
    fix = "Fix the column (e.g. write ids as integers, not 1.0)."
    raise InputError(
        f"{role} file {path}: column '{column}' holds {dtype} values; ids must be integers "
        f"or strings. {fix}",
        path=path,
        column=column,
        found={"dtype": str(dtype)},
        fix=fix,
    )


def check_numeric(
    frame: pl.LazyFrame, schema: pl.Schema, column: str, role: str, path: Path, what: str
) -> None:
    dtype = schema[column]
    if dtype.is_numeric() or dtype == pl.Boolean:
        return
    if is_empty(frame, role, path):
        raise no_rows_error(role, path)
    found: dict[str, object] = {"dtype": str(dtype)}
    example = ""
    first = _not_a_number(frame, column, dtype)
    if first is not None:
        text, row = first
        shown = repr(text) if len(text) <= 40 else repr(text[:36]) + "..."
        example = f" (e.g. {shown}, data row {row})"
        found.update(value=text, data_row=row)
    fix = f"Fix the values, or point {setting(config_key(role), 'columns')} at the numeric column."
    raise InputError(
        f"{role} file {path}: column '{column}' ({what}) holds {dtype} values, not numbers"
        f"{example}. {fix}",
        path=path,
        column=column,
        found=found,
        fix=fix,
    )


_NUMBER = r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$|^\s*([+-]?inf|NaN)\s*$"


def _not_a_number(frame: pl.LazyFrame, column: str, dtype: pl.DataType) -> tuple[str, int] | None:
    """('high', 3): the first text value that is not a number and its data row, if any."""
    if dtype != pl.String:
        return None
    value = pl.col("value")  # renamed: the file's column may be called `position`
    try:
        found = (
            frame.select(
                pl.col(column).alias("value"), pl.int_range(1, pl.len() + 1).alias("position")
            )
            .filter(value.is_not_null() & ~value.str.contains(_NUMBER))
            .head(1)
            .collect()
        )
    except READ_ERRORS:
        return None  # the read itself fails; the evaluation reports it
    if found.height == 0:
        return None
    text, row = found.row(0)
    return str(text), int(row)


def id_expr(column: str, schema: pl.Schema) -> pl.Expr:
    dtype = schema[column]
    expr = pl.col(column)
    return expr.cast(pl.String) if dtype == pl.Categorical or isinstance(dtype, pl.Enum) else expr
