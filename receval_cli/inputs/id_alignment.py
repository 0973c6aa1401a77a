"""The user and item ids given one type in every input (inputs/readers.py reads them):
integers where every file holds integers, else text.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from receval_cli.errors import InputError
from receval_cli.inputs.readers import Input
from receval_cli.inputs.scanning import config_key
from receval_cli.wording import setting


def _id_type(dtypes: list[pl.DataType]) -> pl.DataType:
    """The one type ids are compared in: Int64 for integers; UInt64 where every file holds
    UInt64 (ids of 2^63 and more fit nowhere else), Int128 where UInt64 meets a signed
    type; else text."""
    if not all(d.is_integer() for d in dtypes):
        return pl.String()
    if pl.UInt64() not in dtypes:
        return pl.Int64()
    return pl.UInt64() if all(d.is_unsigned_integer() for d in dtypes) else pl.Int128()


def align_ids(
    predictions: Input, truth: Input, *others: Input, user_types: Sequence[pl.DataType] = ()
) -> None:
    """Give user and item ids one type in every file.

    Integers everywhere stay integers (Int64); otherwise all are compared as strings, so
    an integer 7 in one file matches the text "7" in another (but not "07"). A CSV id
    column is integers only when every value is a canonical integer (`_scan_csv`), so
    the text kept by the others (`0042`, `-5`) is compared as written. `others` are
    the optional inputs (catalog, interactions, baseline); a catalog has no user column.
    `user_types`: the user id types of the run's other models' predictions, so that
    every model's users get one type (their per-user values are joined user by user);
    the item ids, which the tie-breaks order, are each model's own.
    """
    inputs = (predictions, truth, *others)
    schemas = [source.frame.collect_schema() for source in inputs]
    for source, schema in zip(inputs, schemas, strict=True):
        for column in ("user", "item"):
            dtype = schema.get(column)
            if dtype is not None and not (dtype.is_integer() or dtype == pl.String):
                fix = f"Fix the column named by {setting(config_key(source.role), 'columns')}."
                raise InputError(
                    f"{source.role} {source.path}: the {column} ids are {dtype} values; ids "
                    f"must be integers or strings. {fix}",
                    path=source.path,
                    found={"dtype": str(dtype)},
                    fix=fix,
                )
    for column in ("user", "item"):
        dtypes = [schema[column] for schema in schemas if column in schema]
        target = _id_type(dtypes + (list(user_types) if column == "user" else []))
        for source, schema in zip(inputs, schemas, strict=True):
            if column in schema:
                source.frame = source.frame.with_columns(pl.col(column).cast(target))
