"""Readers: scan an input file lazily (inputs/scanning.py), map its columns to their
roles, check them (inputs/column_checks.py); the ids are then given one type across the
inputs (inputs/id_alignment.py).

Every reader returns a LazyFrame with receval's canonical column names:
predictions (user, item, score | rank[, row]) and ground truth (user, item, rel[, row]),
where `row` is the row's position in the file (for input_order ties and `first`). Only
the mapped columns are kept, renamed to their roles, before `row` or any other internal
column is added: a file's own column called `row`, `rank` or `list_length` never clashes.

Ids read from CSV or TSV keep their text unless every value of the column is a canonical
integer (inputs/scanning.py's `canonical_integers`): `0042` stays "0042", so it matches
"0042" in a Parquet or JSON Lines file and is not the item `42`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import polars as pl

from receval_cli.config.model import (
    GroundTruthConfig,
    PredictionColumns,
    PredictionsConfig,
    TruthColumns,
)
from receval_cli.errors import InputError
from receval_cli.inputs.column_checks import (
    check_id,
    check_numeric,
    id_expr,
    is_empty,
    require_column,
)
from receval_cli.inputs.diagnosis import (
    READ_ERRORS,
    first_line,
    line_at_fault,
)
from receval_cli.inputs.scanning import config_key, detect_format, no_rows_error, scan
from receval_cli.wording import setting


@dataclass(frozen=True)
class PartOf:
    """A part of an input's rows: `frame` is `whole.filter(keep)`. A reader may read it as
    slices of `whole`, each filtered (evaluation/kernel_core.py `read_batches`): polars'
    streaming batches of the filtered scan decode the file ahead of the reader."""

    whole: pl.LazyFrame
    keep: pl.Expr
    frame: pl.LazyFrame

    @staticmethod
    def of(source: Input, keep: pl.Expr) -> Input:
        """`source` with only the rows `keep` selects, its whole frame kept beside."""
        frame = source.frame.filter(keep)
        return replace(source, frame=frame, part=PartOf(source.frame, keep, frame))


@dataclass
class Input:
    """A scanned input file in canonical columns, with what the report says about it."""

    role: str
    path: Path
    format: str
    layout: str
    columns: dict[str, str]
    frame: pl.LazyFrame
    raw: pl.LazyFrame = field(repr=False)
    separator: str | None = None  # the CSV separator the config gives, to explain failures
    location: str | None = None  # a Spark table or URI as written (Path collapses "//")
    # a hash partition's rows (engines/partitions.py): `frame` made as `whole.filter(keep)`
    part: PartOf | None = field(default=None, repr=False)

    def parted(self) -> tuple[pl.LazyFrame, pl.Expr] | None:
        """(the whole input, the filter that keeps this part's rows) where `frame` is still
        the partition's filtered frame (a frame replaced since is not); else None."""
        part = self.part
        return None if part is None or part.frame is not self.frame else (part.whole, part.keep)

    @property
    def value_column(self) -> str:
        """The canonical column that orders a predictions list: score or rank."""
        return "score" if self.layout == "score" else "rank"

    def source_column(self, canonical: str) -> str:
        """The file's column behind a canonical column (for messages)."""
        for key in {
            "rel": ("relevance", "relevances"),
            "item": ("item", "items"),
            "rank": ("rank", "items"),
        }.get(canonical, (canonical,)):
            if key in self.columns:
                return self.columns[key]
        return canonical

    def read_failure(self, error: BaseException) -> InputError:
        """The InputError for a read of this file that failed: the line at fault when the
        file shows one (a ragged row, bytes that are not UTF-8, a broken JSON line), else
        polars' reason."""
        found = line_at_fault(self.path, self.format, self.separator, self.role, error)
        if found is not None:
            return found
        reason = first_line(error)
        # polars names the canonical column (user): the message names the file's (user_id)
        named = re.search(r"in column '([^']*)'", reason)
        column = None if named is None else self.source_column(named.group(1))
        if named is not None and column != named.group(1):
            reason = f"{reason[: named.start(1)]}{column}{reason[named.end(1) :]}"
        wide = _WIDE_INTEGERS.search(reason)
        if wide is not None and column is not None:  # a JSON id of more than 64 bits
            return _wide_integers(self, column, wide)
        fix = "Check the file's contents and the columns named in the config."
        return InputError(
            f"{self.role} file {self.path} could not be read: {reason}. {fix}",
            path=self.path,
            column=column,
            found=reason,
            fix=fix,
        )

    def describe(self) -> dict[str, object]:
        return {
            "path": self.location or str(self.path),
            "format": self.format,
            "layout": self.layout,
            "columns": self.columns,
        }


# polars' reason for a JSON integer of more than 64 bits (read as Int128) in an id column
_WIDE_INTEGERS = re.compile(
    r"conversion from `i128` to `i64` failed in column '[^']*' for (?P<bad>\d+) out of "
    r"(?P<all>\d+) values: \[(?P<first>-?\d+)"
)


def _wide_integers(source: Input, column: str, found: re.Match[str]) -> InputError:
    """An id column holding integers beyond 64 bits, said so, with the fix: text ids."""
    first = found["first"]
    fix = f'Write the ids as text (JSON strings: "{first}").'
    return InputError(
        f"{source.role} file {source.path}: column '{column}' holds integers beyond 64 bits "
        f"({found['bad']} of {found['all']} values, e.g. {first}), which no id column holds. "
        f"{fix}",
        path=source.path,
        column=column,
        found={"values": int(found["bad"]), "example": first},
        fix=fix,
    )


def failing_input(inputs: Iterable[Input]) -> InputError | None:
    """After a query over several inputs failed: the first input that cannot be read on
    its own (each is read whole), with the line at fault when it shows one; None if none.
    Read by polars' in-memory engine: once a streaming query has failed, a new streaming
    query in the same process was seen to wait forever (once, in a test run)."""
    for source in inputs:
        try:
            source.frame.collect(engine="in-memory")
        except READ_ERRORS as error:
            return source.read_failure(error)
    return None


def list_items(
    frame: pl.LazyFrame,
    schema: pl.Schema,
    column: str,
    list_separator: str,
    role: str,
    path: Path,
) -> pl.Expr:
    dtype = schema[column]
    if isinstance(dtype, pl.List):
        return pl.col(column)
    if isinstance(dtype, pl.Array):  # fixed-size lists: what polars writes for a matrix
        return pl.col(column).arr.to_list()
    if dtype == pl.String:
        return pl.col(column).str.split(list_separator).list.eval(pl.element().str.strip_chars())
    if is_empty(frame, role, path):
        raise no_rows_error(role, path)
    raise InputError(
        f"{role} file {path}: column '{column}' holds {dtype} values; a list layout needs a "
        f"list column or an array column (Parquet, JSONL) or text separated by "
        f"'{list_separator}' (CSV).",
        path=path,
        column=column,
        found={"dtype": str(dtype)},
    )


def user_column(raw: pl.LazyFrame, column: str, role: str, path: Path) -> tuple[pl.Schema, pl.Expr]:
    """The schema and the checked user id column."""
    schema = raw.collect_schema()
    require_column(schema, column, role, path, "user")
    check_id(raw, schema, column, role, path)
    return schema, id_expr(column, schema).alias("user")


def with_row(raw: pl.LazyFrame, columns: dict[str, pl.Expr]) -> pl.LazyFrame:
    """The mapped `columns` (name: expression on the file's columns), then `row`, each
    row's position in the file. The file's columns are dropped before `row` is added, so
    one of them called `row` (or anything else receval names) cannot clash."""
    mapped = raw.select(expr.alias(name) for name, expr in columns.items())
    return mapped.with_row_index("row").select(*columns, "row")


def read_predictions(config: PredictionsConfig, path: Path, role: str = "predictions") -> Input:
    """Scan the predictions (or baseline) file into (user, item, score | rank, row)."""
    fmt = detect_format(path, config.format, role)
    cols = config.columns
    lists = (cols.items or "items",) if cols.score is None else ()
    ids = (cols.user, cols.item if cols.items is None else None)
    raw = scan(path, fmt, config.separator, role, lists, ids)
    source = map_predictions(raw, config.columns, config.list_separator, path, fmt, role)
    source.separator = config.separator
    return source


def map_predictions(
    raw: pl.LazyFrame,
    cols: PredictionColumns,
    list_separator: str,
    path: Path,
    fmt: str,
    role: str = "predictions",
) -> Input:
    """Map a predictions frame's columns to (user, item, score | rank, row), checking types.

    `role` is "baseline" for the baseline recommender's lists, which share the layouts.
    """
    schema, user = user_column(raw, cols.user, role, path)
    layout, value_col = _prediction_layout(cols, schema, path, role)
    if layout == "items":
        items = list_items(raw, schema, value_col, list_separator, role, path)
        frame = (
            raw.select(user, items.alias("item"))
            .filter(pl.col("item").list.len() > 0)
            .with_columns(rank=pl.int_ranges(1, pl.col("item").list.len() + 1))
            .explode(["item", "rank"])
            .with_row_index("row")  # one position per element, for `first`
            .with_columns(pl.col("rank").cast(pl.Float64))
        )
        mapping = {"user": cols.user, "items": value_col}
    else:
        require_column(schema, cols.item, role, path, "item")
        check_id(raw, schema, cols.item, role, path)
        check_numeric(raw, schema, value_col, role, path, layout)
        columns = {
            "user": user,
            "item": id_expr(cols.item, schema),
            layout: pl.col(value_col).cast(pl.Float64),
        }
        frame = with_row(raw, columns)
        mapping = {"user": cols.user, "item": cols.item, layout: value_col}
    return Input(role, path, fmt, layout, mapping, frame, raw)


def _prediction_layout(
    cols: PredictionColumns, schema: pl.Schema, path: Path, role: str
) -> tuple[str, str]:
    for layout, given in (("score", cols.score), ("rank", cols.rank), ("items", cols.items)):
        if given is not None:
            require_column(schema, given, role, path, layout)
            return layout, given
    for layout in ("score", "rank", "items"):
        if layout in schema:
            return layout, layout
    names = list(schema.names())
    fix = f"Set {setting(config_key(role), 'columns', 'score')} (or .rank, or .items)."
    raise InputError(
        f"{role} file {path}: no score, rank or items column was named in "
        f"{setting(config_key(role), 'columns')}, and none of those names is in the file (its "
        f"columns: {', '.join(names)}). {fix}",
        key=setting(config_key(role), "columns"),
        path=path,
        found=names[:50],
        fix=fix,
    )


def read_ground_truth(config: GroundTruthConfig, path: Path) -> Input:
    """Scan the ground-truth file into (user, item, rel, row)."""
    fmt = detect_format(path, config.format, "ground truth")
    cols = config.columns
    lists = (cols.items, cols.relevances)
    ids = (cols.user, cols.item if cols.items is None else None)
    raw = scan(path, fmt, config.separator, "ground truth", lists, ids)
    source = map_ground_truth(raw, config.columns, config.list_separator, path, fmt)
    source.separator = config.separator
    return source


def map_ground_truth(
    raw: pl.LazyFrame, cols: TruthColumns, list_separator: str, path: Path, fmt: str
) -> Input:
    """Map a ground-truth frame's columns to (user, item, rel, row), checking types."""
    role = "ground truth"
    schema, user = user_column(raw, cols.user, role, path)
    mapping = {"user": cols.user}
    if cols.items is not None and cols.intent is not None:
        key = setting("ground_truth", "columns", "intent")
        item_key = setting("ground_truth", "columns", "item")
        fix = f"Write one row per (user, intent, item) and set {item_key}."
        raise InputError(
            f"{role} file {path}: {key} needs one row per item, and "
            f"{setting('ground_truth', 'columns', 'items')} is a list layout. {fix}",
            key=key,
            path=path,
            found=cols.items,
            fix=fix,
        )
    if cols.items is not None:
        require_column(schema, cols.items, role, path, "items")
        items = list_items(raw, schema, cols.items, list_separator, role, path)
        mapping["items"] = cols.items
        if cols.relevances is not None:
            require_column(schema, cols.relevances, role, path, "relevances")
            rels = list_items(raw, schema, cols.relevances, list_separator, role, path)
            mapping["relevances"] = cols.relevances
            rels = rels.list.eval(pl.element().cast(pl.Float64, strict=False))
            # a grade list of another length than its items: null grades, which the
            # checks report (exploding unequal lists would fail without naming the file)
            nulls = items.list.eval(pl.lit(None, dtype=pl.Float64))
            rels = pl.when(rels.list.len() == items.list.len()).then(rels).otherwise(nulls)
        else:
            rels = items.list.eval(pl.lit(1.0))
        frame = (
            raw.select(user, items.alias("item"), rels.alias("rel"))
            .filter(pl.col("item").list.len() > 0)
            .explode(["item", "rel"])
            .with_row_index("row")  # one position per element, for `first`
        )
        layout = "items"
    else:
        if cols.relevances is not None:
            key = setting("ground_truth", "columns", "relevances")
            raise InputError(
                f"{role} file {path}: {key} goes "
                f"with {setting('ground_truth', 'columns', 'items')} (a list layout); for one "
                f"row per item set {setting('ground_truth', 'columns', 'relevance')} instead.",
                key=key,
                path=path,
                found=cols.relevances,
            )
        require_column(schema, cols.item, role, path, "item")
        check_id(raw, schema, cols.item, role, path)
        mapping["item"] = cols.item
        relevance = cols.relevance
        if relevance is None and "relevance" in schema:
            relevance = "relevance"
        if relevance is not None:
            require_column(schema, relevance, role, path, "relevance")
            check_numeric(raw, schema, relevance, role, path, "relevance")
            rel = pl.col(relevance).cast(pl.Float64)
            mapping["relevance"] = relevance
        else:
            rel = pl.lit(1.0, dtype=pl.Float64)
        columns = {"user": user, "item": id_expr(cols.item, schema), "rel": rel}
        propensity = cols.propensity
        if propensity is None and "propensity" in schema:
            propensity = "propensity"
        if propensity is not None:
            require_column(schema, propensity, role, path, "propensity")
            check_numeric(raw, schema, propensity, role, path, "propensity")
            columns["propensity"] = pl.col(propensity).cast(pl.Float64)
            mapping["propensity"] = propensity
        if cols.intent is not None:
            require_column(schema, cols.intent, role, path, "intent")
            columns["intent"] = pl.col(cols.intent).cast(pl.String)
            mapping["intent"] = cols.intent
        frame = with_row(raw, columns)
        layout = "graded" if relevance is not None else "binary"
    return Input(role, path, fmt, layout, mapping, frame, raw)
