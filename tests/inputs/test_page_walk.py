"""The two walks of a Parquet column chunk's pages (inputs/parquet_pages.py): the compiled
one, receval_cli/_pages.c's `walk`, finds what `python_walk` finds, page for page and field
for field, where it stops included, on every byte sequence: page headers made by hand and
fuzzed (hypothesis: every compact type, repeated and mistyped fields, varints of 10 and 11
bytes, nesting at the depth limit, sizes and checksums of any integer), then cut short or
overwritten; and pyarrow's files damaged in their headers, their pages or their length.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval_cli.inputs import parquet_pages
from receval_cli.inputs.parquet_pages import (
    ChunkWalk,
    compiled_walk,
    first_damaged_page,
    pages,
    python_walk,
)

pytestmark = pytest.mark.skipif(
    compiled_walk() is None, reason="the compiled page walk is not built here"
)


def compiled() -> ChunkWalk:
    walk = compiled_walk()
    assert walk is not None
    return walk


def both(data: bytes, start: int = 0, end: int | None = None) -> list[Any]:
    """Both walks of data[start:end]; the same pages, or the test fails."""
    view = memoryview(data)
    end = len(data) if end is None else end
    expected = python_walk(view, start, end)
    assert compiled()(view, start, end) == expected
    return expected


# --- the compact protocol, written ---------------------------------------------------------

STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY = range(9)
LIST, SET, MAP, STRUCT, UUID = 9, 10, 11, 12, 13


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        if not value:
            return bytes([*out, byte])
        out.append(byte | 0x80)


def zigzag(value: int) -> bytes:
    return varint(2 * value if value >= 0 else -2 * value - 1)


def field(previous: int, number: int, kind: int, short: bool = True) -> bytes:
    """A field's header: the short form (the id's delta in the high nibble) where asked
    and possible, else the type alone and the id as a zigzag varint."""
    if short and 0 < number - previous <= 15:
        return bytes([(number - previous) << 4 | kind])
    return bytes([kind]) + zigzag(number)


def page(kind: int, size: int, crc: int | None, body: bytes, extra: bytes = b"") -> bytes:
    """A PageHeader (type, a nested header struct, compressed_page_size, crc) and its body."""
    header = field(0, 1, I32) + zigzag(kind)
    header += field(1, 2, I32) + zigzag(size)  # uncompressed_page_size
    header += field(2, 3, I32) + zigzag(size)
    if crc is not None:
        header += field(3, 4, I32) + zigzag(crc - (1 << 32) if crc >= 1 << 31 else crc)
    header += field(4, 5, STRUCT) + extra + b"\x00"  # DataPageHeader: its fields skipped
    return header + b"\x00" + body


def test_pages_made_by_hand_are_found_by_both_walks() -> None:
    bodies = [b"dictionary", b"", b"x" * 300, bytes(range(256))]
    data = b"".join(
        page(2 if number == 0 else 0, len(body), zlib.crc32(body) if number % 2 else None, body)
        for number, body in enumerate(bodies)
    )
    found = both(data)
    assert [walked[0] for walked in found] == [0, 1, 2, 3]  # the dictionary page, then 1, 2, 3
    assert [walked[3] for walked in found] == [len(body) for body in bodies]
    crcs = [zlib.crc32(body) for body in bodies]
    assert [walked[4] for walked in found] == [None, crcs[1], None, crcs[3]]
    assert found[-1][2] + found[-1][3] == len(data)
    damaged = bytearray(data)
    damaged[found[3][2] + 5] ^= 1
    last = both(bytes(damaged))[3]
    assert last[4] != last[5]
    for end in range(len(data)):  # cut short anywhere: the pages before the cut
        assert both(data, 0, end) == [p for p in found if p[2] + p[3] <= end]


@pytest.mark.parametrize(
    ("header", "pages_found"),
    [
        (field(0, 3, I32) + zigzag(2) + b"\x00ab", 1),  # a header of the size alone
        (field(0, 3, I32) + zigzag(-1) + b"\x00", 0),  # a negative size
        (field(0, 3, I32) + zigzag(3) + b"\x00ab", 0),  # a size past the end
        (field(0, 3, I64) + zigzag(2**64) + b"\x00", 0),  # a size of 65 bits
        (field(0, 3, TRUE) + b"\x00", 0),  # a bool size
        (field(0, 3, BYTE) + b"\x02\x00ab", 0),  # a byte size (kept as bytes, not an integer)
        (field(0, 3, I32) + zigzag(2) + field(3, 3, BINARY, False) + b"\x00\x00ab", 0),
        (field(0, 3, BINARY) + b"\x00" + field(3, 3, I16, False) + zigzag(2) + b"\x00ab", 1),
        # the crc: of 64 bits and more, its low 32 bits kept; a crc of another type, none
        (field(0, 3, I32) + zigzag(1) + field(3, 4, I64) + zigzag(2**64 + 7) + b"\x00a", 1),
        (field(0, 3, I32) + zigzag(1) + field(3, 4, I64) + zigzag(-(2**69)) + b"\x00a", 1),
        (field(0, 3, I32) + zigzag(1) + field(3, 4, DOUBLE) + bytes(8) + b"\x00a", 1),
        # the type: 2 is the dictionary page's; 2 of 64 bits and more is not 2
        (field(0, 1, I64) + zigzag(2 + 2**64) + field(1, 3, I32) + zigzag(0) + b"\x00", 1),
        # the type 2, then again as bytes: the last value is no integer, a data page
        (field(0, 1, I32) + zigzag(2) + field(1, 1, BINARY, False) + b"\x00" + b"\x25\x00\x00", 1),
        # a field id in the long form, huge, then deltas: not field 3
        (field(0, 2**65, I32) + zigzag(5) + bytes([0x35]) + zigzag(0) + b"\x00", 0),
        (field(0, -(2**63), I32) + zigzag(5) + field(-(2**63), 3, I32, False) + b"\x00\x00", 1),
        (bytes([I32]) + varint(2**70) + zigzag(0) + b"\x00", 0),  # an 11-byte field id
        (b"\x10" + b"\x00", 0),  # STOP with a delta: the struct's end, and no size
    ],
)
def test_odd_headers_give_the_same_pages(header: bytes, pages_found: int) -> None:
    found = both(header)
    assert len(found) == pages_found
    assert all(walked[0] == 1 for walked in found)  # none of them is a dictionary page
    both(header + header)


def nested(levels: list[str], kind: int, value: bytes) -> tuple[int, bytes]:
    """A value of type `kind` inside structs, lists and maps, outermost first."""
    for level in reversed(levels):
        if level == "struct":
            inner = b"" if kind in (TRUE, FALSE) else value  # a bool field: the type only
            value, kind = field(0, 1, kind) + inner + b"\x00", STRUCT
        elif level == "list":
            value, kind = bytes([0x10 | kind]) + value, LIST
        else:
            value, kind = varint(1) + bytes([I32 << 4 | kind]) + zigzag(1) + value, MAP
    return kind, value


SHAPES = {
    "structs": ["struct"],
    "lists": ["list"],
    "maps": ["map"],
    "mixed": ["struct", "list", "map", "list"],
}


@pytest.mark.parametrize("depth", range(61, 68))
@pytest.mark.parametrize("shape", SHAPES)
def test_nesting_stops_both_walks_at_the_same_depth(depth: int, shape: str) -> None:
    """Values nested 64 deep are read, deeper ones are not (the Python reader's limit)."""
    levels = [SHAPES[shape][level % len(SHAPES[shape])] for level in range(depth)]
    innermost = ((I32, zigzag(7)), (STRUCT, b"\x00"), (TRUE, b"\x01"), (LIST, b"\x00"))
    for inner_kind, inner in innermost:
        kind, value = nested(levels, inner_kind, inner)
        header = field(0, 3, I32) + zigzag(1) + field(3, 5, kind) + value + b"\x00"
        found = both(header + b"x" + header + b"y")
        if inner_kind == I32:  # the integer at depth `depth`
            assert len(found) == (2 if depth <= 64 else 0)


# --- fuzzed headers ----------------------------------------------------------------------

INTEGERS = st.one_of(
    st.integers(-20, 300),
    st.integers(-(2**70), 2**70),
    st.sampled_from(
        [2**31, 2**32 - 1, 2**32, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1]
    ),
)
FIELD_IDS = st.one_of(st.sampled_from([1, 3, 4]), st.integers(-3, 20), INTEGERS)


def draw_value(draw: st.DrawFn, depth: int) -> tuple[int, bytes]:
    """A value's type and bytes: any compact type, some malformed (unknown types, lengths
    that do not match, list elements of other types)."""
    kinds = ["int", "fixed", "binary", "bool", "unknown"]
    kinds += ["list", "map", "struct"] if depth < 3 else []
    what = draw(st.sampled_from(kinds))
    if what == "int":
        return draw(st.sampled_from([I16, I32, I64])), zigzag(draw(INTEGERS))
    if what == "fixed":
        kind, size = draw(st.sampled_from([(BYTE, 1), (DOUBLE, 8), (UUID, 16)]))
        return kind, draw(st.binary(min_size=size, max_size=size))
    if what == "binary":
        data = draw(st.binary(max_size=12))
        return BINARY, varint(max(0, len(data) + draw(st.integers(-1, 1)))) + data
    if what == "bool":  # in a list or a map: a byte
        return draw(st.sampled_from([TRUE, FALSE])), bytes([draw(st.integers(0, 2))])
    if what == "unknown":
        return draw(st.sampled_from([STOP, 14, 15])), draw(st.binary(max_size=2))
    if what == "struct":
        return STRUCT, draw_struct(draw, depth + 1)
    count = draw(st.integers(0, 4))
    if what == "list":
        items = [draw_value(draw, depth + 1) for _ in range(count)]
        kind = items[0][0] if items else draw(st.integers(0, 15))
        header = bytes([count << 4 | kind])
        if draw(st.booleans()):  # the long form, where a size of 15 and more must be
            header = bytes([0xF0 | kind]) + varint(count + draw(st.integers(0, 1)))
        return draw(st.sampled_from([LIST, SET])), header + b"".join(v for _, v in items)
    if count == 0:
        return MAP, b"\x00"
    pairs = [(draw_value(draw, depth + 1), draw_value(draw, depth + 1)) for _ in range(count)]
    types = bytes([pairs[0][0][0] << 4 | pairs[0][1][0]])
    return MAP, varint(count) + types + b"".join(k + v for (_, k), (_, v) in pairs)


def draw_struct(
    draw: st.DrawFn, depth: int, first: tuple[tuple[int, int, bytes], ...] = ()
) -> bytes:
    """A struct's fields (`first`, then drawn ones, in a drawn order) and its STOP."""
    fields = list(first)
    for _ in range(draw(st.integers(0, 4 if depth == 0 else 3))):
        kind, value = draw_value(draw, depth)
        fields.append((draw(FIELD_IDS), kind, value))
    fields = draw(st.permutations(fields))
    out, previous = b"", 0
    for number, kind, value in fields:
        out += field(previous, number, kind, draw(st.booleans()))
        out += b"" if kind in (TRUE, FALSE) else value
        previous = number
    return out + b"\x00"


@st.composite
def chunks(draw: st.DrawFn) -> tuple[bytes, int, int]:
    """Pages (headers with a size, a type and a crc, mostly right, and other fields),
    then bytes overwritten, and the bounds of the walk."""
    data = b""
    for _ in range(draw(st.integers(1, 4))):
        body = draw(st.binary(max_size=24))
        kept = [(3, I32, zigzag(len(body) + draw(st.sampled_from([0, 0, 0, 1, -1]))))]
        if draw(st.booleans()):
            kept.append((1, I32, zigzag(draw(st.sampled_from([0, 2, 3])))))
        if draw(st.booleans()):
            crc = zlib.crc32(body) if draw(st.booleans()) else draw(INTEGERS)
            kept.append((4, draw(st.sampled_from([I32, I64])), zigzag(crc)))
        data += draw_struct(draw, 0, tuple(kept)) + body
    damaged = bytearray(data)
    for _ in range(draw(st.integers(0, 3))):
        damaged[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    start = draw(st.integers(0, min(len(data), 3)))
    end = draw(st.integers(start, len(data)))
    return bytes(damaged), start, end


@settings(max_examples=40)
@given(chunks())
def test_fuzzed_pages_are_found_alike_by_both_walks(chunk: tuple[bytes, int, int]) -> None:
    data, start, end = chunk
    both(data, start, end)


@pytest.mark.slow
@settings(max_examples=1500)
@given(chunks())
def test_many_fuzzed_pages_are_found_alike_by_both_walks(chunk: tuple[bytes, int, int]) -> None:
    data, start, end = chunk
    both(data, start, end)


@settings(max_examples=200)
@given(st.binary(max_size=64), st.integers(0, 8))
def test_random_bytes_are_walked_alike(data: bytes, start: int) -> None:
    both(data, min(start, len(data)))


def test_the_compiled_walk_refuses_bounds_outside_the_buffer() -> None:
    with pytest.raises(ValueError, match="within the buffer"):
        compiled()(memoryview(b"abc"), 0, 4)
    with pytest.raises(ValueError, match="within the buffer"):
        compiled()(memoryview(b"abc"), -1, 2)


def test_receval_core_polars_selects_the_python_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECEVAL_CORE", "polars")
    assert compiled_walk() is None
    monkeypatch.setenv("RECEVAL_CORE", "")
    assert compiled_walk() is not None


# --- pyarrow's files, damaged ------------------------------------------------------------


def walked_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """pages, first_damaged_page and page_checksums with each walk: the same."""
    seen = []
    for core in ("", "polars"):
        monkeypatch.setenv("RECEVAL_CORE", core)
        parquet_pages._walked.cache_clear()
        seen.append((pages(path), first_damaged_page(path), parquet_pages.page_checksums(path)))
    assert seen[0] == seen[1]
    return seen[0]


def test_damaged_files_are_walked_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = 6_000
    table = pa.table(
        {
            "user": [f"u{i % 300}" for i in range(rows)],
            "score": [i / 7 for i in range(rows)],
            "tags": [["a", "b"] if i % 3 else [] for i in range(rows)],
        }
    )
    clean_path = tmp_path / "clean.parquet"
    pq.write_table(
        table, clean_path, row_group_size=2_000, data_page_size=4096, write_page_checksum=True
    )
    found, _, _ = walked_both_ways(clean_path, monkeypatch)
    assert len(found) > 12
    clean = clean_path.read_bytes()
    damaged = tmp_path / "damaged.parquet"
    cases = 0
    for number, walked in enumerate(found[:: max(1, len(found) // 8)]):
        # a byte of a header, a byte of a page, a header cut short
        for offset in (walked.offset + number % (walked.body - walked.offset), walked.body):
            for new in (0x00, 0xFF, clean[offset] ^ 0x10):
                damaged.write_bytes(clean[:offset] + bytes([new]) + clean[offset + 1 :])
                walked_both_ways(damaged, monkeypatch)
                cases += 1
        footer = clean[-8 - struct.unpack("<I", clean[-8:-4])[0] :]
        damaged.write_bytes(clean[: walked.body - 1] + footer)  # the header's last byte on
        walked_both_ways(damaged, monkeypatch)
    assert cases > 30


# the process's own peak (VmHWM: ru_maxrss would count the forking parent's pages)
_RESIDENT = """
import sys
from pathlib import Path
import receval_cli.inputs.parquet_pages as pages
def peak():
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0])
if sys.argv[2] == "kept":
    pages._release = lambda start, end: None
before = peak()
found = pages.page_checksums(Path(sys.argv[1]))
print(found["pages"], (peak() - before) // 1024)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux's /proc")
def test_the_walk_gives_back_the_pages_it_maps(tmp_path: Path) -> None:
    """A walk reads every page header through a memory map, and the kernel maps in the
    pages around each: 64 MiB of Parquet would add about as much to the process's peak
    memory (5 GiB for a billion rows). Each column chunk's pages are given back once
    walked: the peak grows by a chunk, not the file."""
    import subprocess
    import sys

    import numpy as np
    import polars as pl

    rng = np.random.default_rng(5)
    path = tmp_path / "big.parquet"
    frame = pl.DataFrame({"a": rng.random(8_000_000), "b": rng.integers(0, 2**62, 8_000_000)})
    # pages of 16 KiB, as dense as the pages around each header the kernel maps in
    frame.write_parquet(
        path, compression="uncompressed", row_group_size=500_000, data_page_size=2**14
    )
    assert path.stat().st_size > 100 * 2**20
    grown = {}
    for mode in ("released", "kept"):
        out = subprocess.run(
            [sys.executable, "-c", _RESIDENT, str(path), mode],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert int(out[0]) > 100
        grown[mode] = int(out[1])
    assert grown["kept"] > 64, grown  # MiB: the test can fail
    assert grown["released"] < 24, grown
