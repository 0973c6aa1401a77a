"""An input file found, its format told, and scanned lazily: the format from the config,
the extension or the content (TREC), the CSV separator, the checks that it is a readable
file with rows, and the scan (CSV ids read as integers only where every value is a
canonical integer). evaluation's readers (inputs/readers.py) map the scanned columns.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Literal

import polars as pl

from receval_cli.config.model import (
    FileFormat,
)
from receval_cli.errors import InputError
from receval_cli.inputs.diagnosis import (
    PARQUET_PARTS,
    READ_ERRORS,
    line_at_fault,
    parquet_parts,
    read_failure,
)
from receval_cli.inputs.parquet_pages import check_pages
from receval_cli.inputs.trec import looks_like_trec, scan_trec
from receval_cli.wording import folder_fix, missing_file_fix, regular_file_fix, setting

EXTENSIONS: dict[str, FileFormat] = {
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
# frames given in place of files (the Python API's receval.run): a config path
# "frame:NAME" is read from the frames in place (frames_given), not from disk
FRAME_PREFIX = "frame:"
_FRAMES: ContextVar[Mapping[str, pl.LazyFrame] | None] = ContextVar("receval_frames", default=None)
ReadFormat = FileFormat | Literal["frame"]


@contextlib.contextmanager
def frames_given(frames: Mapping[str, pl.LazyFrame]) -> Iterator[None]:
    """While inside: each "frame:NAME" path reads frames["frame:NAME"]."""
    token = _FRAMES.set(frames)
    try:
        yield
    finally:
        _FRAMES.reset(token)


def given_frame(path: Path) -> pl.LazyFrame | None:
    """The frame given for this path (frames_given), or None for a file."""
    frames = _FRAMES.get()
    if frames is None or not path.name.startswith(FRAME_PREFIX):
        return None
    return frames.get(path.name)


_CSV_SCHEMA_ROWS = 10_000


def detect_format(path: Path, given: FileFormat | None, role: str) -> ReadFormat:
    """The given format, else the extension's, else TREC when the content looks like it;
    a folder of Parquet files (as Spark writes them) is Parquet; a frame given in place
    of the file (frames_given) is "frame"."""
    if given_frame(path) is not None:
        return "frame"
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
    key = setting(config_key(role), "format")
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
    return EXTENSIONS.get(suffixes[-1]) if suffixes else None


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


def no_rows_error(role: str, path: Path) -> InputError:
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
    fix = fix_for(config_key(role))
    return InputError(
        f"{role} file {path} {what}. {fix}",
        key=setting(config_key(role), "path"),
        path=path,
        found=found,
        fix=fix,
    )


_CONFIG_KEYS = {"ground truth": "ground_truth"}


def config_key(role: str) -> str:
    """The config section of an input's role ("ground truth" -> ground_truth)."""
    return _CONFIG_KEYS.get(role, role)


def scan(
    path: Path,
    fmt: ReadFormat,
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
    frame = given_frame(path)
    if frame is not None:
        return frame
    _check_file(path, role)
    sep = csv_separator(fmt, separator)
    if fmt in ("csv", "tsv") and (len(sep.encode()) != 1 or sep in '\n\r"'):
        key = setting(config_key(role), "separator")
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


SEPARATORS = (";", "\t", "|", " ")
