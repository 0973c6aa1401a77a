"""Write any supported predictions file as a TREC run (`user Q0 item rank score tag`),
and any ground-truth file as TREC qrels (`user 0 item grade`).

The run lists each user's items in receval's ranking order (the tie-break convention
decides equal scores). trec_eval ranks by the score column, then by the docno as text,
descending, so the scores written must reproduce that order: the original scores when
equal scores are broken as trec_eval breaks them (item_text_desc, or item_desc on text
ids), otherwise list length - rank + 1 (integer ids with item_desc: 9 after 10 in number
order, before it as text).
"""

from __future__ import annotations

import unicodedata
from typing import TextIO

import polars as pl

from receval_cli.errors import InputError, UsageError
from receval_cli.escaping import example
from receval_cli.inputs.checks import (
    check_exprs,
    duplicates_error,
    find_duplicates,
    intents_repeated_error,
    raise_for,
    raw_rows,
    totals,
)
from receval_cli.inputs.list_order import sorted_by_rank
from receval_cli.inputs.readers import Input

_CHECKS = "checks:"
_TAG = "--tag"  # the option that sets the run tag


def check_tag(tag: str) -> None:
    """The run tag is a TREC line's sixth field, checked as ids are: not empty, without
    white space (which would split the field, or the line) or control characters."""
    if not tag:
        fix = "Give one, e.g. --tag receval."
        raise UsageError(
            f"{_TAG} is empty, and a TREC run line needs a tag as its sixth field. {fix}",
            key=_TAG,
            found=tag,
            fix=fix,
        )
    bad = [c for c in tag if c.isspace() or unicodedata.category(c) == "Cc"]
    if not bad:
        return
    fixed = "".join("_" if c in bad else c for c in tag).strip("_")
    if not fixed or len(fixed) > 40 or not fixed.isprintable():
        fixed = "receval"
    if bad[0].isspace():
        found = f"white space ({bad[0]!r}): TREC fields are separated by white space, so the "
        found += "tag would not stay one field of one line"
    else:
        found = f"a control character ({bad[0]!r}), which a TREC run line cannot carry"
    fix = f"Give a tag without white space or control characters, e.g. {_TAG} {fixed}."
    raise UsageError(f"{_TAG} {example(tag)} holds {found}. {fix}", key=_TAG, found=tag, fix=fix)


def trec_run(source: Input, tie_break: str, tag: str) -> pl.DataFrame:
    """The run as a frame: user, Q0, item, rank, score, tag, in output order (the tag is
    checked first: check_tag)."""
    check_tag(tag)
    by = source.value_column
    text_ids = source.frame.collect_schema()["item"] == pl.String
    trec_order = tie_break == "item_text_desc" or (tie_break == "item_desc" and text_ids)
    keep_scores = by == "score" and trec_order
    columns = (
        sorted_by_rank(pl.col("item"), by, tie_break).alias("item"),
        sorted_by_rank(pl.col(by), by, tie_break).alias("value"),
    )
    grouped = _checked_lists(source, columns, by, "duplicates", "run")
    positions = pl.int_ranges(1, pl.col("item").list.len() + 1, dtype=pl.UInt32)
    exploded = (
        grouped.sort("user")
        .select("user", "item", "value", positions.alias("rank"), pl.col("rows"))
        .explode(["item", "value", "rank"])
    )
    score = pl.col("value") if keep_scores else (pl.col("rows") - pl.col("rank") + 1)
    return exploded.select(
        pl.col("user").cast(pl.String),
        pl.lit("Q0").alias("q0"),
        pl.col("item").cast(pl.String),
        "rank",
        score.cast(pl.Float64).alias("score"),
        pl.lit(tag).alias("tag"),
    )


def trec_qrels(source: Input) -> tuple[pl.DataFrame, list[str]]:
    """The ground truth as TREC qrels: user, 0, item, grade, sorted by user then item (read
    with an intent column, TREC diversity qrels: user, intent, item, grade, sorted by user,
    intent, item), a
    user's grades in the file's order otherwise (the frame); and what to tell the user
    (a grade trec_eval reads otherwise). Grades are written as integers where every one
    is whole, as written otherwise; the input checks run first (nulls, NaN, infinite
    grades, repeated pairs)."""
    intent = ["intent"] if "intent" in source.columns else []  # diversity qrels
    columns = (pl.col("item"), pl.col("rel"), *map(pl.col, intent))
    grouped = _checked_lists(source, columns, "rel", "truth_duplicates", "qrels")
    listed = ["item", "rel", *intent]
    qrels = grouped.select("user", *listed).explode(listed).sort("user", *intent, "item")
    grades = qrels.get_column("rel")
    whole = bool((grades == grades.floor()).all())
    notes = []
    if not whole:
        example = grades.filter(grades != grades.floor()).head(1).item()
        notes.append(
            f"the qrels hold fractional grades (e.g. {example!r}): trec_eval reads a grade as "
            "an integer (atol: 2.5 is 2), as receval's trec_eval preset does "
            "(fractional_grades: truncate)."
        )
    grade = pl.col("rel").cast(pl.Int64) if whole else pl.col("rel")
    frame = qrels.select(
        pl.col("user").cast(pl.String),
        (pl.col("intent") if intent else pl.lit("0")).alias("iteration"),
        pl.col("item").cast(pl.String),
        grade.alias("relevance"),
    )
    return frame, notes


def _checked_lists(
    source: Input, columns: tuple[pl.Expr, ...], value: str, policy: str, kind: str
) -> pl.DataFrame:
    """Each user's `columns` as lists, once the input checks pass: the file readable,
    rows, no null or NaN (nor an infinite grade), no repeated (user, item) (`policy`: the
    convention that would say which row counts), no id a TREC `kind` cannot carry."""
    intent = "intent" in source.columns  # key (user, intent, item): diversity qrels
    key = pl.struct("intent", "item") if intent else pl.col("item")
    checks = [pl.col("intent").null_count().alias(f"{_CHECKS}null:intent")] if intent else []
    lists = source.frame.group_by("user").agg(
        *columns,
        key.n_unique().alias("distinct"),
        pl.len().alias("rows"),
        *check_exprs(_CHECKS, value),
        *checks,
    )
    try:
        grouped, rows = pl.collect_all([lists, raw_rows(source)])
    except pl.exceptions.PolarsError as error:
        first = str(error).strip().splitlines()[0]
        raise InputError(
            f"{source.role} file {source.path} could not be read: {first}",
            path=source.path,
            found=first,
        ) from None
    raise_for(source, {**totals(grouped, _CHECKS), **rows.row(0, named=True)})
    if intent and (grouped["rows"] != grouped["distinct"]).any():
        repeated = int((grouped["rows"] - grouped["distinct"]).sum())
        raise intents_repeated_error(source, repeated)
    if (grouped["rows"] != grouped["distinct"]).any():
        raise duplicates_error(source, policy, find_duplicates(source.frame))
    _refuse_blanks(grouped, source, kind)
    return grouped


def _refuse_blanks(grouped: pl.DataFrame, source: Input, kind: str = "run") -> None:
    """TREC fields are separated by white space, so an id may not contain any."""
    for column in ("user", "item", *(["intent"] if "intent" in grouped.columns else [])):
        values = grouped.get_column(column)
        if values.dtype == pl.List:
            values = values.explode()
        blank = values.cast(pl.String).str.contains(r"\s|^$")
        if blank.any():
            example = values.filter(blank).head(1).item()
            fix = "Change those ids first."
            raise InputError(
                f"{source.role} file {source.path}: the {column} id {example!r} is empty or "
                f"holds white space, which a TREC {kind} cannot carry. {fix}",
                path=source.path,
                found={column: example},
                fix=fix,
            )


def write_trec_run(run: pl.DataFrame, handle: TextIO) -> None:
    run.write_csv(handle, separator=" ", include_header=False, quote_style="never")
