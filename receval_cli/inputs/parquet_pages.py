"""Check a Parquet file's pages against the CRC-32 checksums its writer recorded.

A Parquet file's page header may hold `crc` (field 4 of PageHeader, an i32): the CRC-32
(zlib's) of the page's bytes as written, after the header. Bytes overwritten inside a
page whose encoding still decodes give other values and no error; the checksum tells.
pyarrow writes it with `write_page_checksum=True`, parquet-mr (Spark) by default in its
recent versions; polars' own writer does not. A page without a checksum cannot be
checked here, and passes.

Only the footer and the page headers are decoded, by a small Thrift compact-protocol
reader (inputs/thrift_compact.py; the fields needed: FileMetaData.row_groups,
RowGroup.columns, ColumnChunk.meta_data, ColumnMetaData.path_in_schema,
total_compressed_size, data_page_offset and dictionary_page_offset; PageHeader.type,
compressed_page_size and crc; everything else is skipped). The pages' bytes are
checksummed in place in a memory map of the file. What cannot be decoded (an encrypted
footer, a column stored in another file, a header cut short) is left to polars' reader,
which names it as it reads.

The footer is decoded here; each column chunk's pages are walked by the compiled walk,
receval_cli/_pages.c (an optional extension; the Python walk spends tens of microseconds
on each page's header, a cost that grows with the file's rows, the C one under one), or
where it is not built or RECEVAL_CORE=polars by `python_walk`, which finds the same pages
and checksums (tests/inputs/test_page_walk.py compares them).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import mmap
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from receval_cli.errors import InputError
from receval_cli.inputs.diagnosis import parquet_parts
from receval_cli.inputs.thrift_compact import Malformed, Reader, Spec

_MAGIC = b"PAR1"
_DICTIONARY_PAGE = 2  # PageType.DICTIONARY_PAGE
_T = TypeVar("_T")

_COLUMN_META: Spec = {3: None, 7: None, 9: None, 11: None}
_COLUMN_CHUNK: Spec = {1: None, 3: _COLUMN_META, 8: None}
_FILE_META: Spec = {4: {1: _COLUMN_CHUNK}}
_PAGE_HEADER: Spec = {1: None, 3: None, 4: None}


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


def footer(data: memoryview, spec: Spec = _FILE_META) -> dict[int, Any] | None:
    """FileMetaData's fields read (those `spec` names), or None where the file has no plain
    footer."""
    size = len(data)
    if size < 12 or bytes(data[size - 4 :]) != _MAGIC:  # "PARE": an encrypted footer
        return None
    length = struct.unpack("<I", data[size - 8 : size - 4])[0]
    if length + 8 > size - 4:
        return None
    return Reader(data, size - 8 - length, size - 8).struct(spec, 0)


# A page as a walk of a column chunk gives it: Page's fields after the row group and the
# column (page, offset, body, size, recorded, computed).
Walked = tuple[int, int, int, int, int | None, int | None]
ChunkWalk = Callable[[memoryview, int, int], list[Walked]]


def compiled_walk() -> ChunkWalk | None:
    """receval_cli/_pages.c's walk of a column chunk (python_walk's pages, in C), or None:
    not built here, or RECEVAL_CORE=polars (python_walk runs)."""
    if os.environ.get("RECEVAL_CORE", "").strip().lower() == "polars":
        return None
    try:
        module = importlib.import_module("receval_cli._pages")
    except ImportError:
        return None
    walk: ChunkWalk = module.walk
    return walk


def python_walk(view: memoryview, start: int, end: int) -> list[Walked]:
    """The pages of the column chunk in view[start:end] (0 <= start, end <= len(view)):
    header after header, each followed by its compressed_page_size bytes, checksummed only
    where a checksum is recorded. Stops at bytes that are not a page header."""
    found: list[Walked] = []
    pos, number = start, 0
    while pos < end:
        reader = Reader(view, pos, end)
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
        found.append((0 if is_dictionary else number, pos, reader.pos, length, recorded, computed))
        pos = reader.pos + length
    return found


def pages(path: Path) -> list[Page]:
    """Every page of every column chunk whose headers decode, in file order of the footer
    (row groups, then columns), with its checksum recorded and computed. A column chunk
    whose bytes do not decode as pages ends where they stop; a file whose footer does not
    decode gives no page. (For the tests, and to see what `first_damaged_page` saw.)"""

    def read(view: memoryview) -> list[Page]:
        return [
            Page(group, column, *page)
            for group, _, column, walked in _chunks(view)
            for page in walked
        ]

    return _mapped(path, read) or []


def first_damaged_page(path: Path) -> DamagedPage | None:
    """The first page of the file whose bytes fail the checksum its header records, or
    None (every recorded checksum holds, or none is recorded, or the file is not one
    whose pages can be found: see the module's docstring)."""
    walked = _mapped(path, _damage)
    return None if walked is None else walked.damaged


def _mapped(path: Path, read: Callable[[memoryview], _T]) -> _T | None:
    """What `read` finds in a memory map of the file; None for a file under 12 bytes. The
    pages a walk maps in are counted in this process's resident memory (the kernel maps
    the pages around each header read, so a walk would map in most of the file: 5 GiB for
    a billion rows): each column chunk's are given back once walked (_release)."""
    with path.open("rb") as handle:
        if path.stat().st_size < 12:
            return None
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            view = memoryview(mapped)
            token = _RELEASE.set(mapped)
            try:
                return read(view)
            finally:
                _RELEASE.reset(token)
                view.release()


# the memory map a walk reads, whose pages _release gives back
_RELEASE: contextvars.ContextVar[mmap.mmap | None] = contextvars.ContextVar(
    "receval_pages_map", default=None
)


def _release(start: int, end: int) -> None:
    """Unmap bytes start..end of the walked file's map from this process (the page cache
    keeps them): MADV_DONTNEED, where the platform has it."""
    mapped = _RELEASE.get()
    advice = getattr(mmap, "MADV_DONTNEED", None)
    if mapped is None or advice is None or end <= start:
        return
    first = start - start % mmap.PAGESIZE
    with contextlib.suppress(OSError, ValueError):  # only memory is at stake
        mapped.madvise(advice, first, end - first)


@dataclass(frozen=True)
class _Walked:
    damaged: DamagedPage | None  # the first page that fails its checksum
    pages: int  # the pages walked (up to the damaged one)
    checked: int  # of them, those with a recorded checksum


def _damage(view: memoryview) -> _Walked:
    """The first page that fails its checksum, and the pages counted up to it."""
    total = checked = 0
    for group, groups, column, walked in _chunks(view):
        for number, _, _, _, recorded, computed in walked:
            total += 1
            if recorded is None or computed is None:
                continue
            checked += 1
            if recorded != computed:
                damaged = DamagedPage(group, groups, column, number, recorded, computed)
                return _Walked(damaged, total, checked)
    return _Walked(None, total, checked)


def _chunks(view: memoryview) -> Iterator[tuple[int, int, str, list[Walked]]]:
    """(row group from 1, row groups, column, its pages) for each column chunk stored in
    the file, plainly, in the footer's order; nothing where the footer does not decode.
    A chunk starts at its first page (the dictionary page's offset when there is one
    before the data's) and runs over total_compressed_size bytes."""
    try:
        meta = footer(view)
    except Malformed:
        return
    if meta is None:
        return
    walk = compiled_walk() or python_walk
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
            data_offset, size, dictionary = (
                _integer(column_meta.get(field)) for field in (9, 7, 11)
            )
            if data_offset is None or size is None:
                continue
            start = data_offset
            if dictionary is not None and 0 < dictionary < data_offset:  # some write 0
                start = dictionary
            end = min(start + size, len(view))
            walked = walk(view, start, end) if 0 <= start < end else []
            _release(start, end)
            yield group_number, len(row_groups), column, walked


def _structs(value: object) -> list[dict[int, Any]]:
    """A decoded list of structs; [] for anything else (a footer of other types)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def _integer(value: object) -> int | None:
    """A decoded integer field; None for anything else."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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


@functools.lru_cache(maxsize=64)
def _walked(path: str, stamp: tuple[int, ...]) -> _Walked:
    """first_damaged_page and the pages counted on the way, remembered per file version
    (`stamp`): a model's segments and several models read the same ground truth again. A
    file that cannot be mapped is left to polars' reader."""
    try:
        walked = _mapped(Path(path), _damage)
    except (OSError, ValueError):
        return _Walked(None, 0, 0)
    return _Walked(None, 0, 0) if walked is None else walked
