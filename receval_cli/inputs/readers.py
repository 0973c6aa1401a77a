"""Readers: scan an input file lazily, map its columns, check its schema.
Over 400 lines: still several jobs (issue #36 item 2: format detection and scanning,
column mapping and checks, id alignment), to be split.

Every reader returns a LazyFrame with receval's canonical column names:
predictions (user, item, score | rank[, row]) and ground truth (user, item, rel[, row]),
where `row` is the row's position in the file (for input_order ties and `first`). Only
the mapped columns are kept, renamed to their roles, before `row` or any other internal
column is added: a file's own column called `row`, `rank` or `list_length` never clashes.

Ids read from CSV or TSV keep their text unless every value of the column is a canonical
integer (see `canonical_integers`): `0042` stays "0042", so it matches "0042" in a Parquet
or JSON Lines file and is not the item `42`.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from receval_cli.config.model import (
    FileFormat,
    GroundTruthConfig,
    PredictionColumns,
    PredictionsConfig,
    TruthColumns,
)
from receval_cli.errors import InputError, did_you_mean
from receval_cli.inputs.diagnosis import (
    PARQUET_PARTS,
    READ_ERRORS,
    check_header_encoding,
    first_line,
    line_at_fault,
    parquet_parts,
    read_failure,
)
from receval_cli.inputs.parquet_pages import check_pages
from receval_cli.inputs.trec import looks_like_trec, scan_trec
from receval_cli.wording import folder_fix, missing_file_fix, regular_file_fix, setting

_EXTENSIONS: dict[str, FileFormat] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".run": "trec",
    ".qrels": "trec",
}
_COMPRESSION = (".gz", ".zst")
_CSV_SCHEMA_ROWS = 10_000


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


def detect_format(path: Path, given: FileFormat | None, role: str) -> FileFormat:
    """The given format, else the extension's, else TREC when the content looks like it;
    a folder of Parquet files (as Spark writes them) is Parquet."""
    _check_file(path, role)
    if path.is_dir():
        if given not in (None, "parquet"):
            raise _path_error(path, role, "is a folder", "a folder", folder_fix)
        return "parquet"
    if given is not None:
        return given
    by_name = format_of_name(path.name)
    if by_name is not None:
        return by_name
    if looks_like_trec(path, role):
        return "trec"
    key = setting(_key(role), "format")
    extension = "".join(path.suffixes)
    fix = f"Set {key} to one of csv, tsv, parquet, jsonl, trec."
    raise InputError(
        f"{role} file {path}: cannot tell the format from the extension "
        f"'{extension or '(none)'}' nor from the content. {fix}",
        key=key,
        path=path,
        found=extension,
        fix=fix,
    )


def format_of_name(name: str) -> FileFormat | None:
    """The format a file name's extension says (past .gz or .zst), or None."""
    suffixes = [s.lower() for s in Path(name).suffixes]
    while suffixes and suffixes[-1] in _COMPRESSION:
        suffixes.pop()
    return _EXTENSIONS.get(suffixes[-1]) if suffixes else None


def csv_separator(fmt: str, given: str | None) -> str:
    """The field separator of a CSV or TSV file: the configured one, else the format's."""
    return given or ("\t" if fmt == "tsv" else ",")


def not_a_file(path: Path) -> tuple[str, str] | None:
    """What `path` is when it is none of a regular file, a folder or a missing path: a
    symbolic link that loops, a named pipe, a device or a socket, as (the words, the
    `found` field); else None. (A loop makes `exists()` false; a FIFO or a device has no
    size: both would be misnamed as missing or empty.)"""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "is a symbolic link that loops (a link in its chain leads back)", "a link loop"
        return None
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO), not a file: an input is read more than once", "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return f"is a device ({os.path.realpath(path)}), not a file", "a device"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a file", "a socket"
    return None


def _check_file(path: Path, role: str) -> None:
    """A file, or a folder that holds Parquet files (read as one table)."""
    special = not_a_file(path)
    if special is not None:
        raise _path_error(path, role, *special, regular_file_fix)
    if not path.exists():
        raise _path_error(path, role, "does not exist", "no such file", missing_file_fix)
    if path.is_dir():
        if next(parquet_parts(path), None) is None:
            raise _path_error(path, role, "is a folder", "a folder", folder_fix)
        return
    if path.stat().st_size == 0:
        raise InputError(
            f"{role} file {path} is empty (0 bytes). {_WRITE_DATA}",
            path=path,
            found={"bytes": 0},
            fix=_WRITE_DATA,
        )


_WRITE_DATA = "Write the data first."


def _no_rows(role: str, path: Path) -> InputError:
    """A file with a header and no row."""
    return InputError(
        f"{role} file {path} has a header but no rows. {_WRITE_DATA}",
        path=path,
        found={"rows": 0},
        fix=_WRITE_DATA,
    )


def _path_error(
    path: Path, role: str, what: str, found: str, fix_for: Callable[[str], str]
) -> InputError:
    """An input's path that is not a file to read: what it is, and the fix."""
    fix = fix_for(_key(role))
    return InputError(
        f"{role} file {path} {what}. {fix}",
        key=setting(_key(role), "path"),
        path=path,
        found=found,
        fix=fix,
    )


_CONFIG_KEYS = {"ground truth": "ground_truth"}


def _key(role: str) -> str:
    """The config section of an input's role ("ground truth" -> ground_truth)."""
    return _CONFIG_KEYS.get(role, role)


def scan(
    path: Path,
    fmt: FileFormat,
    separator: str | None,
    role: str,
    text_columns: tuple[str | None, ...] = (),
    id_columns: tuple[str | None, ...] = (),
) -> pl.LazyFrame:
    """Open a file lazily; missing, empty and unreadable files raise InputError.

    `text_columns` (list columns) are read from CSV as text, whatever they look like: a
    list of one integer per row is still a list. `id_columns` are read from CSV as text
    unless every value is a canonical integer (`_scan_csv`). A CSV file whose first
    row cannot be parsed (an unclosed quote swallows the rest of the file) is refused
    here, naming the line; so is a Parquet page that fails the checksum its header
    records (every part of a folder is checked: `parquet_pages.check_pages`).
    """
    _check_file(path, role)
    sep = csv_separator(fmt, separator)
    if fmt in ("csv", "tsv") and (len(sep.encode()) != 1 or sep in '\n\r"'):
        key = setting(_key(role), "separator")
        raise InputError(
            f"{role} file {path}: {key} is {sep!r}; it must be "
            "one ASCII character other than a quote or a line end, e.g. ',' or ';' "
            '("\\t" for a tab).',
            key=key,
            path=path,
            found=sep,
        )
    try:
        if fmt == "trec":
            frame = scan_trec(path, role)
        elif fmt in ("csv", "tsv"):
            frame = _scan_csv(path, sep, text_columns, id_columns)
        elif fmt == "parquet":
            parts = path / "**" / PARQUET_PARTS if path.is_dir() else path  # a folder: its files
            frame = pl.scan_parquet(parts)
        else:
            frame = pl.scan_ndjson(path, infer_schema_length=_CSV_SCHEMA_ROWS)
        frame.collect_schema()
        if fmt in ("csv", "tsv") and frame.head(1).collect().height == 0:
            found = line_at_fault(path, fmt, sep, role)  # rows there, none parsed?
            if found is not None:
                raise found
    except READ_ERRORS as error:
        raise read_failure(path, fmt, sep, role, error) from None
    except OSError as error:  # polars' decompression: "incomplete frame" (a cut .zst)
        # ENOMEM is no fault of the file's: read_failure raises OutOfMemory (exit 4)
        raise read_failure(path, fmt, sep, role, error) from None
    if fmt == "parquet":  # its footer reads: a page that fails its checksum is damaged
        check_pages(path, role)
    return frame


def _csv(path: Path, separator: str, overrides: dict[str, pl.DataType]) -> pl.LazyFrame:
    return pl.scan_csv(
        path,
        separator=separator,
        infer_schema_length=_CSV_SCHEMA_ROWS,
        schema_overrides=overrides or None,
    )


def _scan_csv(
    path: Path,
    separator: str,
    text_columns: tuple[str | None, ...],
    id_columns: tuple[str | None, ...],
) -> pl.LazyFrame:
    """A CSV file, its list columns read as text, and each id column as Int64 when every
    value is a canonical integer (`canonical_integers`), else as text: `0042`, `-5`, `+5`
    and 2^63 keep the text the file writes."""
    frame = _csv(path, separator, {})
    inferred = frame.collect_schema()
    overrides: dict[str, pl.DataType] = {
        c: pl.String() for c in text_columns if c is not None and c in inferred
    }
    # only a column inferred (from the first rows) as integers can be all canonical
    # integers: one inferred as text stays text; one of floats is refused by check_id
    numbered = tuple(
        c
        for c in dict.fromkeys(id_columns)
        if c is not None and c not in overrides and c in inferred and inferred[c].is_integer()
    )
    if numbered:
        stat = path.stat()
        stamp = (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
        canonical = _canonical_columns(str(path), stamp, separator, numbered)
        overrides.update(
            {
                c: pl.Int64() if ok else pl.String()
                for c, ok in zip(numbered, canonical, strict=True)
            }
        )
    return _csv(path, separator, overrides) if overrides else frame


@functools.lru_cache(maxsize=64)
def _canonical_columns(
    path: str, stamp: tuple[int, ...], separator: str, columns: tuple[str, ...]
) -> tuple[bool, ...]:
    """Whether each id column of a CSV file holds only canonical integers: one pass that
    reads just these columns, as text, streamed (little memory). Remembered per file
    version (`stamp`): a model's segments and several models read the same ground truth
    again, and the answer is the same."""
    checks = [canonical_integers(pl.col(c)).alias(c) for c in columns]
    as_text: dict[str, pl.DataType] = {c: pl.String() for c in columns}
    found = _csv(Path(path), separator, as_text).select(checks).collect(engine="streaming")
    return tuple(bool(found.item(0, c)) for c in columns)


def canonical_integers(text: pl.Expr) -> pl.Expr:
    """True when every non-null value of a text column is a canonical integer: the text an
    Int64 column writes, so reading it as an integer loses nothing. That is ASCII digits,
    without a leading zero (but "0" itself), a space or a '+', with '-' only before a
    nonzero value (-5, not -0 or -05), from -2^63 to 2^63 - 1. (The parse, cheaper than a
    regular expression, refuses what is not digits after an optional sign, or out of
    range; the first characters do the rest.)"""
    parsed = text.cast(pl.Int64, strict=False).is_not_null()
    padded = text.str.starts_with("0") & (text != "0")
    written_otherwise = text.str.starts_with("+") | text.str.starts_with("-0") | padded
    return (text.is_null() | (parsed & ~written_otherwise)).all()


_SEPARATORS = (";", "\t", "|", " ")


def require_column(schema: pl.Schema, column: str, role: str, path: Path, key: str) -> None:
    if column in schema:
        return
    names = list(schema.names())
    check_header_encoding(path, role, names)  # UTF-16 or UTF-32: NUL bytes in the names
    named_by = setting(_key(role), "columns", key)
    where = f"{role} file {path} has no column '{column}' (set by {named_by})."
    counts = {sep: names[0].count(sep) for sep in _SEPARATORS} if len(names) == 1 else {}
    separator = max(counts, key=lambda sep: counts[sep]) if any(counts.values()) else None
    if separator is not None:
        shown = '"\\t"' if separator == "\t" else f"'{separator}'"
        fix = f"Set {setting(_key(role), 'separator')}: {shown}."
        raise InputError(
            f"{where} The header was read as one column, {names[0]!r}: the file looks "
            f"separated by {shown}. {fix}",
            key=setting(_key(role), "separator"),
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


def _is_empty(frame: pl.LazyFrame, role: str, path: Path) -> bool:
    """The file has no row (its first rows are read; a failed read raises InputError)."""
    try:
        return frame.head(1).collect().height == 0
    except READ_ERRORS as error:
        if not path.is_file():  # a frame given in memory (the Python API): no file to scan
            reason = first_line(error)
            raise InputError(
                f"{role} {path} could not be read: {reason}.", path=path, found=reason
            ) from None
        fmt = _EXTENSIONS.get(path.suffix.lower(), "csv")  # the likeliest; only for messages
        raise read_failure(path, fmt, None, role, error) from None


def check_id(frame: pl.LazyFrame, schema: pl.Schema, column: str, role: str, path: Path) -> None:
    dtype = schema[column]
    if dtype.is_integer() or dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum):
        return
    if _is_empty(frame, role, path):
        raise _no_rows(role, path)
    fix = "Fix the column (e.g. write ids as integers, not 1.0)."
    raise InputError(
        f"{role} file {path}: column '{column}' holds {dtype} values; ids must be integers "
        f"or strings. {fix}",
        path=path,
        column=column,
        found={"dtype": str(dtype)},
        fix=fix,
    )


def _check_numeric(
    frame: pl.LazyFrame, schema: pl.Schema, column: str, role: str, path: Path, what: str
) -> None:
    dtype = schema[column]
    if dtype.is_numeric() or dtype == pl.Boolean:
        return
    if _is_empty(frame, role, path):
        raise _no_rows(role, path)
    found: dict[str, object] = {"dtype": str(dtype)}
    example = ""
    first = _not_a_number(frame, column, dtype)
    if first is not None:
        text, row = first
        shown = repr(text) if len(text) <= 40 else repr(text[:36]) + "..."
        example = f" (e.g. {shown}, data row {row})"
        found.update(value=text, data_row=row)
    fix = f"Fix the values, or point {setting(_key(role), 'columns')} at the numeric column."
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
    if _is_empty(frame, role, path):
        raise _no_rows(role, path)
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
        _check_numeric(raw, schema, value_col, role, path, layout)
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
    fix = f"Set {setting(_key(role), 'columns', 'score')} (or .rank, or .items)."
    raise InputError(
        f"{role} file {path}: no score, rank or items column was named in "
        f"{setting(_key(role), 'columns')}, and none of those names is in the file (its "
        f"columns: {', '.join(names)}). {fix}",
        key=setting(_key(role), "columns"),
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
            _check_numeric(raw, schema, relevance, role, path, "relevance")
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
            _check_numeric(raw, schema, propensity, role, path, "propensity")
            columns["propensity"] = pl.col(propensity).cast(pl.Float64)
            mapping["propensity"] = propensity
        frame = with_row(raw, columns)
        layout = "graded" if relevance is not None else "binary"
    return Input(role, path, fmt, layout, mapping, frame, raw)


def _id_type(dtypes: list[pl.DataType]) -> pl.DataType:
    """The one type ids are compared in: Int64 for integers; UInt64 where every file holds
    UInt64 (ids of 2^63 and more fit nowhere else), Int128 where UInt64 meets a signed
    type; else text."""
    if not all(d.is_integer() for d in dtypes):
        return pl.String()
    if pl.UInt64() not in dtypes:
        return pl.Int64()
    return pl.UInt64() if all(d.is_unsigned_integer() for d in dtypes) else pl.Int128()


def align_ids(predictions: Input, truth: Input, *others: Input) -> None:
    """Give user and item ids one type in every file.

    Integers everywhere stay integers (Int64); otherwise all are compared as strings, so
    an integer 7 in one file matches the text "7" in another (but not "07"). A CSV id
    column is integers only when every value is a canonical integer (`_scan_csv`), so
    the text kept by the others (`0042`, `-5`) is compared as written. `others` are
    the optional inputs (catalog, interactions, baseline); a catalog has no user column.
    """
    inputs = (predictions, truth, *others)
    schemas = [source.frame.collect_schema() for source in inputs]
    for source, schema in zip(inputs, schemas, strict=True):
        for column in ("user", "item"):
            dtype = schema.get(column)
            if dtype is not None and not (dtype.is_integer() or dtype == pl.String):
                fix = f"Fix the column named by {setting(_key(source.role), 'columns')}."
                raise InputError(
                    f"{source.role} {source.path}: the {column} ids are {dtype} values; ids "
                    f"must be integers or strings. {fix}",
                    path=source.path,
                    found={"dtype": str(dtype)},
                    fix=fix,
                )
    for column in ("user", "item"):
        dtypes = [schema[column] for schema in schemas if column in schema]
        target = _id_type(dtypes)
        for source, schema in zip(inputs, schemas, strict=True):
            if column in schema:
                source.frame = source.frame.with_columns(pl.col(column).cast(target))
