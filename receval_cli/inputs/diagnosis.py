"""Explain a file polars could not read: find the line at fault and say how to fix it.
Over 400 lines: one job, the line at fault in a file polars could not read, found for
each format (CSV, JSON lines, Parquet) and for the wide encodings.

polars' own messages rarely give a line number ("found more fields than defined in
'Schema'", "invalid utf-8 sequence"). Only after a read has failed, these functions scan
the file line by line with Python's csv and json modules, up to the first line that is
wrong, and name it. When they find nothing, polars' first line is the reason.

A text file in UTF-16 or UTF-32 reads as UTF-8 with a NUL byte beside every letter (or
fails to read): `encoding_failure` tells those encodings apart by the file's byte-order
mark, else by where the NUL bytes of its first bytes fall, and gives the conversion.
"""

from __future__ import annotations

import csv
import json
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from receval_cli.errors import InputError, OutOfMemory, says_out_of_memory

# what a read of a damaged file raises: polars' errors, and the panic of a reader that met
# bytes it did not expect (a BaseException, not an Exception)
READ_ERRORS = (pl.exceptions.PolarsError, pl.exceptions.PanicException)

_MAGIC = b"PAR1"
_COMPRESSED = (".gz", ".zst")
_BOM = "\ufeff"
_SHOWN = 40  # characters of a value quoted in a message
_RECORD_LINES = 10_000  # a CSV record spanning more lines is an unclosed quote
_HEAD = 512  # bytes read to tell UTF-16 and UTF-32 from UTF-8
# byte-order marks, UTF-32's before UTF-16's (FF FE starts both little-endian ones)
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32LE"),
    (b"\x00\x00\xfe\xff", "UTF-32BE"),
    (b"\xff\xfe", "UTF-16LE"),
    (b"\xfe\xff", "UTF-16BE"),
)
# without a mark, ASCII text in these encodings has NUL bytes at these offsets (modulo 4)
# and never at the others
_WIDE_NULS = (
    ("UTF-32LE", (1, 2, 3)),
    ("UTF-32BE", (0, 1, 2)),
    ("UTF-16LE", (1, 3)),
    ("UTF-16BE", (0, 2)),
)


class _Problem(Exception):
    """A line at fault: the reason and the fix, for the message; what was found there
    (the line number, the value...) and the column, for the error's fields."""

    def __init__(
        self, reason: str, fix: str, found: dict[str, object], column: str | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fix = fix
        self.found = found
        self.column = column


def read_failure(
    path: Path, fmt: str, separator: str | None, role: str, error: BaseException
) -> InputError:
    """The InputError for a file that could not be read as `fmt` (error: polars' own).
    Memory running out is not the file's fault: OutOfMemory (exit 4) is raised."""
    if says_out_of_memory(error):
        from receval_cli.errors import out_of_memory_message

        doing = f"while reading {role} file {path}"
        raise OutOfMemory(
            out_of_memory_message(doing), path=path, found=first_line(error)
        ) from None
    found = line_at_fault(path, fmt, separator, role, error)
    if found is not None:
        return found
    key = role.replace(" ", "_")
    reason = first_line(error)
    fix = f"Check that the file is complete and really {fmt} (or set {key}.format)."
    return InputError(
        f"{role} file {path} cannot be read as {fmt}: {reason}. {fix}",
        path=path,
        found=reason,
        fix=fix,
    )


PARQUET_PARTS = "*.parquet"


def parquet_parts(folder: Path) -> Iterator[Path]:
    """The Parquet files of a folder (at any depth, hive partitions included); Spark's
    _SUCCESS and hidden .crc files are not among them."""
    return (p for p in sorted(folder.rglob(PARQUET_PARTS)) if p.is_file())


def line_at_fault(
    path: Path, fmt: str, separator: str | None, role: str, error: BaseException | None = None
) -> InputError | None:
    """The InputError naming the first line (or part) of the file that is wrong, if any
    (or the encoding of a UTF-16 or UTF-32 text file). In a folder of Parquet files, the
    first part that cannot be read whole, named."""
    if fmt == "parquet" and path.is_dir():
        for part in parquet_parts(path):
            try:
                pl.read_parquet(part)
            except READ_ERRORS as part_error:
                return read_failure(part, fmt, separator, role, part_error)
        return None
    if fmt != "parquet" and not any(s.lower() in _COMPRESSED for s in path.suffixes):
        wide = encoding_failure(path, role)
        if wide is not None:
            return wide
    try:
        _find_problem(path, fmt, separator, role.replace(" ", "_"), error)
    except _Problem as problem:
        return InputError(
            f"{role} file {path} cannot be read as {fmt}: {problem}. {problem.fix}",
            path=path,
            column=problem.column,
            found=problem.found,
            fix=problem.fix,
        )
    except OSError as os_error:
        reason = os_error.strerror or str(os_error)
        return InputError(f"{role} file {path} cannot be read: {reason}.", path=path, found=reason)
    return None


def wide_encoding(path: Path) -> tuple[str, bool] | None:
    """(encoding, has a byte-order mark) of a UTF-16 or UTF-32 text file, told by its
    byte-order mark, else by its first bytes' NUL pattern; None for any other file (UTF-8,
    Latin-1, binary) and for one that cannot be opened."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD)
    except OSError:
        return None
    for bom, encoding in _WIDE_BOMS:
        if head.startswith(bom):
            return encoding, True
    head = head[: len(head) - len(head) % 4]
    if not head:
        return None
    share = [head[offset::4].count(0) / len(head[offset::4]) for offset in range(4)]
    for encoding, nuls in _WIDE_NULS:
        if all(share[o] >= 0.75 if o in nuls else share[o] <= 0.25 for o in range(4)):
            return encoding, False
    return None


def encoding_failure(path: Path, role: str) -> InputError | None:
    """The InputError for a text file in UTF-16 or UTF-32 (receval reads UTF-8): the
    encoding found and the command that converts the file; None for any other file.
    Only called once something is already wrong (a failed read, NUL bytes in a header)."""
    found = wide_encoding(path)
    if found is None:
        return None
    encoding, bom = found
    source = encoding[:-2] if bom else encoding  # iconv reads the mark and drops it
    converted = path.with_name(f"{path.stem}.utf8{path.suffix}")
    mark = "with" if bom else "without"
    fix = (
        f"Convert it, e.g. iconv -f {source} -t UTF-8 {shlex.quote(str(path))} "
        f"> {shlex.quote(str(converted))}, and use the converted file."
    )
    return InputError(
        f"{role} file {path} is {encoding} text ({mark} a byte-order mark); receval reads "
        f"UTF-8 only. {fix}",
        path=path,
        found={"encoding": encoding, "byte_order_mark": bom},
        fix=fix,
    )


def check_header_encoding(path: Path, role: str, names: list[str]) -> None:
    """Raise encoding_failure's InputError when the column names hold NUL bytes (a UTF-16
    or UTF-32 file read as UTF-8) and the file is in one of those encodings."""
    if any("\x00" in name for name in names) and path.is_file():
        found = encoding_failure(path, role)
        if found is not None:
            raise found


def first_line(error: BaseException) -> str:
    """polars' reason, for a message: the first line of its error."""
    if isinstance(error, pl.exceptions.PanicException):
        return "polars' reader panicked on it"
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _find_problem(
    path: Path, fmt: str, separator: str | None, key: str, error: BaseException | None
) -> None:
    """Raise a _Problem for the first thing wrong in the file, or return when none is seen."""
    message = "" if error is None else str(error)
    if fmt == "parquet":
        _parquet_problem(path, key, "" if error is None else first_line(error))
    elif any(s.lower() in _COMPRESSED for s in path.suffixes):
        return  # polars decompresses these; reading the raw bytes would tell nothing
    elif fmt in ("csv", "tsv"):
        _csv_problem(path, separator or ("\t" if fmt == "tsv" else ","), message)
    elif fmt == "jsonl":
        _jsonl_problem(path, message)
    elif fmt == "trec":
        for _ in _text_lines(path):
            pass


def _parquet_problem(path: Path, key: str, message: str) -> None:
    size = path.stat().st_size
    with path.open("rb") as handle:
        head = handle.read(4)
        handle.seek(max(size - 4, 0))
        tail = handle.read(4)
    if head != _MAGIC:
        raise _Problem(
            "it does not start with Parquet's marker 'PAR1', so it is not a Parquet file",
            f"Write it as Parquet (or set {key}.format).",
            {"first_bytes": head.hex()},
        )
    if size < 12 or tail != _MAGIC:
        raise _Problem(
            "it does not end with Parquet's marker 'PAR1': the file is cut short (truncated, "
            "or still being written)",
            "Write the file again, completely.",
            {"size": size, "last_bytes": tail.hex()},
        )
    if "out of specification" in message or "panic" in message:  # a page is damaged
        raise _Problem(
            f"the file is damaged ({message})", "Write the file again.", {"reason": message}
        )


def _text_lines(path: Path) -> Iterator[str]:
    """The file's lines as text (a UTF-8 BOM dropped); a line that is not UTF-8 raises."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                byte = f"0x{raw[error.start]:02x}"
                raise _Problem(
                    f"line {number} is not UTF-8 text (byte {byte} at column {error.start + 1})",
                    "Save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8).",
                    {"line": number, "byte": byte, "position": error.start + 1},
                ) from None
            yield line.removeprefix(_BOM) if number == 1 else line


_PARSE = re.compile(
    r"could not parse `(?P<value>.*?)` as dtype `(?P<dtype>\w+)` at column '(?P<column>[^']*)'",
    re.DOTALL,
)


def _csv_problem(path: Path, separator: str, message: str) -> None:
    if len(separator) != 1:
        return
    consumed: list[str] = []  # the lines of the record being read

    def lines() -> Iterator[str]:
        for text in _text_lines(path):
            if len(consumed) == _RECORD_LINES:  # do not read the rest of the file into memory
                raise _Problem(
                    f"the quote that opens a value on line {line} is not closed within "
                    f"{_RECORD_LINES:,} lines",
                    'Close it, or double a quote inside a quoted value ("").',
                    {"line": line, "lines_read": _RECORD_LINES},
                )
            consumed.append(text)
            yield text

    unparsed = _PARSE.search(message)
    limit = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        reader = csv.reader(lines(), delimiter=separator, strict=True)
        line, header = 1, None
        while True:
            consumed.clear()
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                raise _csv_error(line, error) from None
            if header is None:
                header = row or None
            elif row:
                _check_row(row, header, "".join(consumed), line, separator, unparsed)
            line += len(consumed)
    finally:
        csv.field_size_limit(limit)


def _csv_error(line: int, error: csv.Error) -> _Problem:
    if "unexpected end of data" in str(error):
        return _Problem(
            f"the quote that opens a value on line {line} is never closed",
            'Close it, or double a quote inside a quoted value ("").',
            {"line": line},
        )
    return _Problem(
        f"line {line} is not valid CSV ({error})",
        'Quote the whole value, doubling any quote inside it ("").',
        {"line": line, "reason": str(error)},
    )


def _check_row(
    row: list[str],
    header: list[str],
    raw: str,
    line: int,
    separator: str,
    unparsed: re.Match[str] | None,
) -> None:
    text = _line_text(raw)
    if len(row) > len(header):
        raise _Problem(
            f"line {line} has {len(row)} fields where the header has {len(header)}",
            f"Fix that line; a value that holds the separator {separator!r} must be quoted.",
            {"line": line, "text": text, "fields": len(row), "header_fields": len(header)},
        )
    for value in row:
        if '"' in value and '"' + value.replace('"', '""') + '"' not in raw:
            raise _Problem(
                f"line {line}: the value {_show(value)} holds a quote but is not quoted",
                'Quote the value and double the quote inside it ("a""b").',
                {"line": line, "text": text, "value": value},
            )
    if unparsed is None or unparsed["column"] not in header:
        return
    column = unparsed["column"]
    index = header.index(column)
    if index < len(row) and row[index] == unparsed["value"]:
        kind = _kind(unparsed["dtype"])
        digits = row[index].strip().lstrip("+-")
        if digits.isdigit() and len(digits) > 18:  # an integer, too long for 64 bits
            raise _Problem(
                f"line {line}: column '{column}' holds an integer of {len(digits):,} digits "
                f"({_show(row[index])}), beyond a 64-bit integer",
                "Fix the value (a score or a grade is a number of a few digits).",
                {"line": line, "value": _show(row[index]), "digits": len(digits)},
                column,
            )
        raise _Problem(
            f"line {line}: {_show(row[index])} in column '{column}' is not {kind}, as the "
            "rows before it are",
            "Fix the value, or point the config's columns at the right column.",
            {"line": line, "text": text, "value": row[index], "expected": kind},
            column,
        )


_TEXT = 200  # characters of a line's text given as found


def _line_text(raw: str) -> str:
    """A line (or a record's lines) as `found` gives it: without its line end, cut short."""
    text = raw.rstrip("\r\n")
    return text if len(text) <= _TEXT else text[:_TEXT] + "..."


def _kind(dtype: str) -> str:
    if dtype.startswith(("i", "u")):
        return "an integer"
    if dtype.startswith("f"):
        return "a number"
    return f"a {dtype} value"


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 4] + "...'"


_CONVERT = re.compile(r"cannot parse '(?P<value>.*?)' \((?P<found>\w+)\) as (?P<dtype>\w+)")


def _jsonl_problem(path: Path, message: str) -> None:
    unconverted = _CONVERT.search(message)
    rows = 0
    for line, text in enumerate(_raw_json_lines(path), start=1):
        if not text.strip():
            continue
        rows += 1
        value = _json_value(text, line)
        if not isinstance(value, dict):
            kind = _json_kind(value)
            raise _Problem(
                f"line {line} holds a JSON {kind}, not an object",
                'Write one JSON object per line, e.g. {"user": "u1", "item": "a", "score": 0.9}.',
                {"line": line, "text": _line_text(text), "type": kind},
            )
        if unconverted is not None:
            for key, found in value.items():
                if isinstance(found, str) and found == unconverted["value"]:
                    expected = _kind(_dtype(unconverted))
                    raise _Problem(
                        f"line {line}: {key!r} is {_show(found)}, not {expected}"
                        ", as in the rows before it",
                        "Fix the value, or point the config's columns at the right key.",
                        {"line": line, "value": found, "expected": expected},
                        key,
                    )
    if rows == 0:
        raise _Problem(
            "it holds only blank lines, no JSON object", "Write the data first.", {"objects": 0}
        )


def _dtype(match: re.Match[str]) -> str:
    return "f64" if match["dtype"].startswith("Float") else match["dtype"].lower()


def _raw_json_lines(path: Path) -> Iterator[str]:
    with path.open("rb") as handle:
        first = handle.read(3)
        if first == _BOM.encode():
            raise _Problem(
                "line 1 starts with a byte-order mark (BOM), which JSON Lines does not allow",
                "Save the file as UTF-8 without a BOM (e.g. sed -i '1s/^\\xEF\\xBB\\xBF//').",
                {"line": 1, "bytes": first.hex()},
            )
    yield from _text_lines(path)


def _json_value(text: str, line: int) -> object:
    def refuse(constant: str) -> object:
        raise _Problem(
            f"line {line} holds {constant}, which JSON does not allow",
            "Write null or a number (use CSV or Parquet for infinite scores).",
            {"line": line, "text": _line_text(text), "value": constant},
        )

    def parse_int(digits: str) -> int:
        if len(digits.lstrip("-")) <= 38:  # an Int128 (ids) holds up to 38 digits
            return int(digits)
        found = re.search(r'"((?:[^"\\]|\\.)*)"\s*:\s*' + re.escape(digits), text)
        key = None if found is None else json.loads(f'"{found.group(1)}"')
        where = "" if key is None else f"{key!r} is "
        raise _Problem(
            f"line {line}: {where}an integer of {len(digits.lstrip('-')):,} digits, beyond "
            "any number column",
            "Fix the value (an id, a score or a grade is a number of a few digits).",
            {"line": line, "digits": len(digits.lstrip("-"))},
            key,
        )

    try:
        return json.loads(text.rstrip("\r\n"), parse_constant=refuse, parse_int=parse_int)
    except json.JSONDecodeError as error:
        raise _Problem(
            f"line {line} is not valid JSON ({error.msg} at column {error.colno})",
            "Fix or remove that line: each line holds one JSON object.",
            {"line": line, "text": _line_text(text), "reason": error.msg, "position": error.colno},
        ) from None
    except RecursionError:
        raise _Problem(
            f"line {line} nests lists or objects too deeply to read",
            "Fix or remove that line: each line holds one flat JSON object.",
            {"line": line},
        ) from None


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "boolean" if isinstance(value, bool) else "number"
