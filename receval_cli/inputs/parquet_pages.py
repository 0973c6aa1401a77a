"""Check a Parquet file's pages against the CRC-32 checksums its writer recorded.

A Parquet file's page header may hold `crc` (field 4 of PageHeader, an i32): the CRC-32
(zlib's) of the page's bytes as written, after the header. Bytes overwritten inside a
page whose encoding still decodes give other values and no error; the checksum tells.
pyarrow writes it with `write_page_checksum=True`, parquet-mr (Spark) by default in its
recent versions; polars' own writer does not. A page without a checksum cannot be
checked here, and passes.

Only the footer and the page headers are decoded, by the small Thrift compact-protocol
reader below (the fields needed: FileMetaData.row_groups, RowGroup.columns,
ColumnChunk.meta_data, ColumnMetaData.path_in_schema, total_compressed_size,
data_page_offset and dictionary_page_offset; PageHeader.type, compressed_page_size and
crc; everything else is skipped). The pages' bytes are checksummed in place in a memory
map of the file. What cannot be decoded (an encrypted footer, a column stored in another
file, a header cut short) is left to polars' reader, which names it as it reads.
"""

from __future__ import annotations

import functools
import mmap
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from receval_cli.errors import InputError
from receval_cli.inputs.diagnosis import parquet_parts

_MAGIC = b"PAR1"
_DICTIONARY_PAGE = 2  # PageType.DICTIONARY_PAGE
_MAX_DEPTH = 64  # nesting of Thrift structs and lists: deeper is not a Parquet footer

# compact-protocol type codes
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY = 1, 2, 3, 4, 5, 6, 7, 8
_LIST, _SET, _MAP, _STRUCT, _UUID = 9, 10, 11, 12, 13
_INTEGERS = (_I16, _I32, _I64)
_FIXED = {_BYTE: 1, _DOUBLE: 8, _UUID: 16}

# The fields read, by struct: field id -> the spec of a struct (or list of structs) field,
# or None for a value kept as it is (an integer, bytes, a list of them). Others are skipped.
Spec = dict[int, "Spec | None"]
_COLUMN_META: Spec = {3: None, 7: None, 9: None, 11: None}
_COLUMN_CHUNK: Spec = {1: None, 3: _COLUMN_META, 8: None}
_FILE_META: Spec = {4: {1: _COLUMN_CHUNK}}
_PAGE_HEADER: Spec = {1: None, 3: None, 4: None}


class Malformed(Exception):
    """Bytes that are not the Thrift the reader expected."""


@dataclass(frozen=True)
class DamagedPage:
    """A page whose bytes do not give the CRC-32 its header records."""

    row_group: int  # from 1
    row_groups: int
    column: str  # the column's path in the schema, dotted
    page: int  # the data page's number in its column chunk, from 1; 0: the dictionary page
    recorded: int  # the checksum in the header (unsigned)
    computed: int  # the checksum of the bytes found

    def describe(self) -> str:
        """E.g. "page 2 of column 'score' in row group 1 of 3"."""
        page = "the dictionary page" if self.page == 0 else f"page {self.page}"
        return (
            f"{page} of column '{self.column}' in row group {self.row_group} of {self.row_groups}"
        )


@dataclass(frozen=True)
class Page:
    """A page found in a column chunk, with its checksum (None: the header has none)."""

    row_group: int  # from 1
    column: str
    page: int  # as in DamagedPage
    offset: int  # of the page's header in the file
    body: int  # of the page's bytes (after the header) in the file
    size: int  # compressed_page_size: the page's bytes
    recorded: int | None
    computed: int | None  # None where nothing was recorded (the bytes are not read)


class _Reader:
    """Thrift compact protocol over a buffer, from `pos` up to `end` (exclusive)."""

    def __init__(self, data: memoryview, pos: int, end: int) -> None:
        self.data = data
        self.pos = pos
        self.end = end

    def byte(self) -> int:
        if self.pos >= self.end:
            raise Malformed("the bytes end inside a value")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def take(self, count: int) -> memoryview:
        if count < 0 or self.pos + count > self.end:
            raise Malformed("a value runs past the end of its bytes")
        start, self.pos = self.pos, self.pos + count
        return self.data[start : self.pos]

    def varint(self) -> int:
        value, shift = 0, 0
        while True:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
            if shift > 63:
                raise Malformed("a varint longer than 10 bytes")

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def value(self, kind: int, spec: Spec | None, depth: int) -> Any:
        """A value of compact type `kind`: structs by `spec` (a dict of the fields read)."""
        if depth > _MAX_DEPTH:
            raise Malformed("values nested too deep")
        if kind in (_TRUE, _FALSE):  # a bool in a list: one byte (1 true, else false)
            return self.byte() == _TRUE
        if kind in _INTEGERS:
            return self.zigzag()
        if kind in _FIXED:
            return bytes(self.take(_FIXED[kind]))
        if kind == _BINARY:
            return bytes(self.take(self.varint()))
        if kind in (_LIST, _SET):
            return self.collection(spec, depth)
        if kind == _MAP:
            size = self.varint()
            if size == 0:
                return {}
            types = self.byte()
            self.count(size, 2)
            for _ in range(size):
                self.value(types >> 4, None, depth + 1)
                self.value(types & 0x0F, None, depth + 1)
            return {}  # no map is read: skipped
        if kind == _STRUCT:
            return self.struct(spec or {}, depth + 1)
        raise Malformed(f"unknown compact type {kind}")

    def collection(self, spec: Spec | None, depth: int) -> list[Any]:
        header = self.byte()
        size = header >> 4
        if size == 15:
            size = self.varint()
        kind = header & 0x0F
        self.count(size, 1)  # every element takes a byte at least
        return [self.value(kind, spec, depth + 1) for _ in range(size)]

    def count(self, size: int, least: int) -> None:
        """Refuse a collection of more elements than bytes left could hold."""
        if size * least > self.end - self.pos:
            raise Malformed("a list longer than its bytes")

    def struct(self, spec: Spec, depth: int) -> dict[int, Any]:
        """The fields of `spec` found in the struct; the others are skipped."""
        found: dict[int, Any] = {}
        field = 0
        while True:
            header = self.byte()
            kind = header & 0x0F
            if kind == 0:  # STOP
                return found
            delta = header >> 4
            field = field + delta if delta else self.zigzag()
            if kind in (_TRUE, _FALSE):  # a bool field: the type is the value
                value: Any = kind == _TRUE
            else:
                value = self.value(kind, spec.get(field), depth)
            if field in spec:
                found[field] = value


def _footer(data: memoryview) -> dict[int, Any] | None:
    """FileMetaData's fields read, or None where the file has no plain footer."""
    size = len(data)
    if size < 12 or bytes(data[size - 4 :]) != _MAGIC:  # "PARE": an encrypted footer
        return None
    length = struct.unpack("<I", data[size - 8 : size - 4])[0]
    if length + 8 > size - 4:
        return None
    return _Reader(data, size - 8 - length, size - 8).struct(_FILE_META, 0)


def pages(path: Path) -> list[Page]:
    """Every page of every column chunk whose headers decode, in file order of the footer
    (row groups, then columns), with its checksum recorded and computed. A column chunk
    whose bytes do not decode as pages ends where they stop; a file whose footer does not
    decode gives no page. (For the tests, and to see what `first_damaged_page` saw.)"""
    found: list[Page] = []
    _walk(path, found.append, stop_at_damage=False)
    return found


def first_damaged_page(path: Path) -> DamagedPage | None:
    """The first page of the file whose bytes fail the checksum its header records, or
    None (every recorded checksum holds, or none is recorded, or the file is not one
    whose pages can be found: see the module's docstring)."""
    return _walk(path, lambda page: None, stop_at_damage=True)


def _walk(path: Path, seen: Callable[[Page], None], stop_at_damage: bool) -> DamagedPage | None:
    with path.open("rb") as handle:
        if path.stat().st_size < 12:
            return None
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            view = memoryview(mapped)
            try:
                return _walk_view(view, seen, stop_at_damage)
            finally:
                view.release()


def _walk_view(
    view: memoryview, seen: Callable[[Page], None], stop_at_damage: bool
) -> DamagedPage | None:
    try:
        meta = _footer(view)
    except Malformed:
        return None
    if meta is None:
        return None
    row_groups = _structs(meta.get(4))
    for group_number, group in enumerate(row_groups, start=1):
        for chunk in _structs(group.get(1)):
            column_meta = chunk.get(3)
            if not isinstance(column_meta, dict) or 1 in chunk or 8 in chunk:
                continue  # stored elsewhere, or encrypted: not checked
            names = column_meta.get(3)
            names = names if isinstance(names, list) else []
            column = ".".join(
                name.decode("utf-8", "replace") for name in names if isinstance(name, bytes)
            )
            for page in _chunk_pages(view, column_meta, group_number, column):
                seen(page)
                recorded, computed = page.recorded, page.computed
                if stop_at_damage and recorded is not None and computed is not None:
                    if recorded == computed:
                        continue
                    return DamagedPage(
                        group_number,
                        len(row_groups),
                        column,
                        page.page,
                        recorded,
                        computed,
                    )
    return None


def _structs(value: object) -> list[dict[int, Any]]:
    """A decoded list of structs; [] for anything else (a footer of other types)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def _integer(value: object) -> int | None:
    """A decoded integer field; None for anything else."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _chunk_pages(view: memoryview, meta: dict[int, Any], group: int, column: str) -> list[Page]:
    """The pages of one column chunk, from its first page (the dictionary page's offset
    when there is one before the data's) over total_compressed_size bytes; checksums are
    computed only where recorded. Stops at bytes that are not a page header."""
    data_offset, size, dictionary = (_integer(meta.get(field)) for field in (9, 7, 11))
    if data_offset is None or size is None:
        return []
    start = data_offset
    if dictionary is not None and 0 < dictionary < data_offset:  # some writers write 0
        start = dictionary
    end = min(start + size, len(view))
    found: list[Page] = []
    pos, number = start, 0
    while 0 <= pos < end:
        reader = _Reader(view, pos, end)
        try:
            header = reader.struct(_PAGE_HEADER, 0)
        except Malformed:
            break
        length = _integer(header.get(3))
        if length is None or length < 0 or reader.pos + length > end:
            break
        is_dictionary = header.get(1) == _DICTIONARY_PAGE
        number += 0 if is_dictionary else 1
        recorded = _integer(header.get(4))
        computed = None
        if recorded is not None:
            recorded &= 0xFFFFFFFF  # an i32 on the wire: the CRC's bits
            computed = zlib.crc32(view[reader.pos : reader.pos + length])
        found.append(
            Page(
                group,
                column,
                0 if is_dictionary else number,
                pos,
                reader.pos,
                length,
                recorded,
                computed,
            )
        )
        pos = reader.pos + length
    return found


def check_pages(path: Path, role: str) -> None:
    """Raise an InputError naming the first page of a Parquet file (or of any part of a
    folder of them) that fails its checksum: the file is damaged. Files and pages without
    checksums pass."""
    parts = parquet_parts(path) if path.is_dir() else iter((path,))
    for part in parts:
        found = _walked(str(part), _stamp(part)).damaged
        if found is None:
            continue
        fix = "Write the file again from its source."
        raise InputError(
            f"{role} file {part}: {found.describe()} fails its checksum: the file is "
            f"damaged. {fix}",
            path=part,
            column=found.column,
            found={
                "row_group": found.row_group,
                "page": "dictionary" if found.page == 0 else found.page,
                "checksum_recorded": f"{found.recorded:08x}",
                "checksum_computed": f"{found.computed:08x}",
            },
            fix=fix,
        )


def _stamp(path: Path) -> tuple[int, ...]:
    stat = path.stat()
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def page_checksums(path: Path) -> dict[str, int]:
    """How many of a Parquet file's pages (all parts of a folder) record a checksum, which
    check_pages verified: {"pages": N, "checked": M}. M < N says that damage inside the
    other pages cannot be seen (a report carries this for each Parquet input)."""
    parts = parquet_parts(path) if path.is_dir() else iter((path,))
    pages = checked = 0
    for part in parts:
        walked = _walked(str(part), _stamp(part))
        pages, checked = pages + walked.pages, checked + walked.checked
    return {"pages": pages, "checked": checked}


@dataclass(frozen=True)
class _Walked:
    damaged: DamagedPage | None  # the first page that fails its checksum
    pages: int  # the pages walked (up to the damaged one)
    checked: int  # of them, those with a recorded checksum


@functools.lru_cache(maxsize=64)
def _walked(path: str, stamp: tuple[int, ...]) -> _Walked:
    """first_damaged_page and the pages counted on the way, remembered per file version
    (`stamp`): a model's segments and several models read the same ground truth again. A
    file that cannot be mapped is left to polars' reader."""
    counts = [0, 0]

    def count(page: Page) -> None:
        counts[0] += 1
        counts[1] += page.recorded is not None

    try:
        damaged = _walk(Path(path), count, stop_at_damage=True)
    except (OSError, ValueError):
        return _Walked(None, 0, 0)
    return _Walked(damaged, counts[0], counts[1])
