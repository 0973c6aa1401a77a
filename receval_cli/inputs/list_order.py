"""The order of a user's list: by score (descending) or rank (ascending), then the
tie_break convention. Shared by the evaluation's ranking (evaluation/prepare.py) and
`receval convert` (inputs/convert.py)."""

from __future__ import annotations

import polars as pl


def tie_order(tie_break: str, row: str = "row") -> tuple[pl.Expr, bool]:
    """The tie_break convention's sort key for equal scores (or ranks), and whether it
    descends: the item id in its own order (item_desc, item_asc: numbers as numbers), the
    id as text whatever its type (item_text_desc, trec_eval's rule: "9" before "10" before
    "100"; item_text_asc), or the file's order (input_order: the `row` column). expected
    averages the metrics over every order of the tied items (metrics/tie_expectation.py);
    its lists are kept in item_asc order, the same on every engine."""
    if tie_break == "input_order":
        return pl.col(row), False
    item = pl.col("item")
    if tie_break.startswith("item_text_"):
        item = item.cast(pl.String)
    return item, tie_break.endswith("_desc")  # expected: ascending, as item_asc


def sorted_by_rank(values: pl.Expr, by: str, tie_break: str) -> pl.Expr:
    """`values` of one user in rank order: `by` (score descending, or rank ascending),
    then the tie-break (tie_order)."""
    second, second_descending = tie_order(tie_break)
    return values.sort_by([pl.col(by), second], descending=[by == "score", second_descending])
