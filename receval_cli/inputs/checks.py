"""Data checks that need a pass over the rows: nulls, NaN, duplicates, row counts.

The counts are aggregations that ride along in the per-user aggregation the evaluation
runs anyway (summed over users afterwards), so checking costs no extra pass over the
data; `raise_for` then turns a failed check into an InputError. Duplicates are found the
same way (distinct items < rows); only then does `raise_duplicates` look for examples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from receval_cli.errors import InputError
from receval_cli.inputs.readers import Input
from receval_cli.wording import assigned, current_audience, setting

_EXAMPLES = 3


def check_exprs(prefix: str, value_column: str) -> list[pl.Expr]:
    """Null counts of user, item and the value column, and its NaN count; for a relevance
    column also its infinite values (a score of +-inf still orders a list; a grade of
    +-inf has no gain that any metric could average).

    Inside a group_by they count per group (the null user is a group of its own); the
    totals are the sums over groups, or the same expressions in a plain select.
    """
    exprs = [
        pl.col(column).null_count().alias(f"{prefix}null:{column}")
        for column in ("user", "item", value_column)
    ]
    exprs.append(pl.col(value_column).is_nan().sum().alias(f"{prefix}nan:{value_column}"))
    if value_column == "rel":
        exprs.append(pl.col("rel").is_infinite().sum().alias(f"{prefix}inf:rel"))
    return exprs


def totals(frame: pl.DataFrame, prefix: str) -> dict[str, object]:
    """Sum the check columns named with `prefix`, keyed without it."""
    columns = [c for c in frame.columns if c.startswith(prefix)]
    sums = frame.select(pl.col(columns).sum()).row(0, named=True)
    return {name.removeprefix(prefix): value for name, value in sums.items()}


def raw_rows(source: Input) -> pl.LazyFrame:
    """Rows in the file; for a list layout, also the distinct users (one row each)."""
    exprs = [pl.len().alias("raw_rows")]
    if source.layout == "items":
        exprs.append(pl.col(source.columns["user"]).n_unique().alias("raw_users"))
    return source.raw.select(exprs)


def raise_for(source: Input, result: dict[str, object]) -> None:
    """Raise an InputError for the first failed check of one input."""
    where = f"{source.role} file {source.path}"
    if result["raw_rows"] == 0:
        fix = "Write the data first."
        raise InputError(
            f"{where} has no rows. {fix}", path=source.path, found={"rows": 0}, fix=fix
        )
    users = result.get("raw_users")
    if users is not None and users != result["raw_rows"]:
        fix = "Merge each user's rows into one list."
        raise InputError(
            f"{where}: a list layout needs one row per user, but {result['raw_rows']} rows "
            f"hold {users} users. {fix}",
            path=source.path,
            found={"rows": result["raw_rows"], "users": users},
            fix=fix,
        )
    for name, value in result.items():
        kind, _, canonical = name.partition(":")
        if kind not in ("null", "nan", "inf") or not value:
            continue
        column = source.source_column(canonical)
        if kind == "null":
            found = f"{value} null value(s)"
            if canonical == "rel" and "relevances" in source.columns:
                found += " (text that is not a number, or a list of another length than the items)"
            elif source.format == "trec" and canonical in ("rel", "score"):
                found += " (a line with fewer fields, or text that is not a number)"
        elif kind == "inf":
            found = f"{value} infinite value(s); a grade must be a finite number"
        else:
            found = f"{value} NaN value(s), which cannot be ranked or compared"
        raise InputError(
            f"{where}: column '{column}' has {found}; {FILL_ROWS}",
            path=source.path,
            column=column,
            found=found,
            fix=FILL_ROWS,
        )


# the fix of a column with null, NaN or infinite values, as the message ends (after a ';')
FILL_ROWS = "drop or fill those rows."


@dataclass
class DuplicatesFound:
    """Repeated (user, item) pairs of an input: how many pairs repeat, and the worst
    examples as (user, item, copies), most copies first. Adds up across buckets of users."""

    pairs: int
    examples: list[tuple[Any, ...]]

    def __add__(self, other: DuplicatesFound) -> DuplicatesFound:
        examples = sorted([*self.examples, *other.examples], key=_worst_first)
        return DuplicatesFound(self.pairs + other.pairs, examples[:_EXAMPLES])


def _worst_first(example: tuple[Any, ...]) -> tuple[Any, ...]:
    user, item, copies = example
    return (-copies, user, item)


def find_duplicates(frame: pl.LazyFrame) -> DuplicatesFound:
    """The repeated (user, item) pairs of mapped rows, with the worst examples."""
    found = (
        frame.group_by("user", "item")
        .agg(pl.len().alias("copies"))
        .filter(pl.col("copies") > 1)
        .sort("copies", "user", "item", descending=[True, False, False])
        .collect()
    )
    examples = [tuple(row) for row in found.head(_EXAMPLES).iter_rows()]
    return DuplicatesFound(found.height, examples)


def duplicates_error(source: Input, policy_key: str, found: DuplicatesFound) -> InputError:
    """The InputError for repeated (user, item) pairs, with the worst examples."""
    shown = "; ".join(
        f"user {user!r}, item {item!r} ({copies} rows)" for user, item, copies in found.examples
    )
    fix = f"Remove the duplicates, or set conventions.{policy_key} to say which row counts."
    intent = _intent_like(source)
    if intent is not None:  # diversity qrels: each row grades the item for one intent
        given = assigned(intent, "ground_truth", "columns", "intent")
        fix = (
            f"If the rows grade each item per intent ('{intent}'), set {given}; else "
            f"{fix[0].lower()}{fix[1:]}"
        )
    return InputError(
        f"{source.role} file {source.path}: {found.pairs} (user, item) pair(s) appear more "
        f"than once, e.g. {shown}. {fix}",
        key=f"conventions.{policy_key}",
        path=source.path,
        found=[{"user": u, "item": i, "rows": n} for u, i, n in found.examples],
        fix=fix,
    )


_INTENT_NAMES = ("intent", "subtopic", "iteration", "aspect", "facet")


def _intent_like(source: Input) -> str | None:
    """A ground truth's column whose name says it holds intents (TREC qrels: iteration),
    where no intent column is set; else None."""
    if source.role != "ground truth" or "intent" in source.columns:
        return None
    if current_audience() == "convert":  # its options name no intent column
        return None
    names = source.raw.collect_schema().names()
    return next((n for n in names if n.lower() in _INTENT_NAMES), None)


def intents_repeated_error(truth: Input, count: int) -> InputError:
    """The error of a ground truth read with an intent column whose (user, intent, item)
    rows repeat (`count` rows repeat an earlier one)."""
    key = "conventions.truth_duplicates"
    fix = f"Remove the repeated rows, or set {key} to first or max."
    column = truth.source_column("intent")
    return InputError(
        f"{truth.role} file {truth.path}: {count} row(s) repeat a (user, {column}, item) "
        f"of an earlier row (with {setting('ground_truth', 'columns', 'intent')}, an item "
        f"is graded once per intent). {fix}",
        key=key,
        path=truth.path,
        column=column,
        found={"repeated_rows": count},
        fix=fix,
    )
