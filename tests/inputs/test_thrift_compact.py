"""inputs/thrift_compact.py: Thrift's compact protocol read byte by byte, the fields asked
for kept and every other value skipped. The bytes are written out by hand from the compact
protocol's specification.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest

from receval_cli.inputs.thrift_compact import Malformed, Reader


def read(data: bytes, spec: dict[int, Any]) -> tuple[dict[int, Any], int]:
    reader = Reader(memoryview(data), 0, len(data))
    return reader.struct(spec, 0), reader.pos


def test_every_compact_type_is_skipped_and_the_wanted_fields_read() -> None:
    # field header: (delta << 4) | type; integers are zigzag varints (1 -> 2, -1 -> 1)
    data = bytes(
        [
            0x11,  # field 1: bool true
            0x12,  # field 2: bool false
            0x13, 0x7F,  # field 3: byte
            0x14, 0x03,  # field 4: i16 -2
            0x15, 0xAC, 0x02,  # field 5: i32 150
            0x16, 0x01,  # field 6: i64 -1
            0x17, *struct.pack("<d", 1.5),  # field 7: double
            0x18, 0x03, *b"abc",  # field 8: binary
            0x19, 0x25, 0x02, 0x04,  # field 9: list<i32> [1, 2]
            0x1A, 0x18, 0x01, *b"z",  # field 10: set<binary> {"z"}
            0x1B, 0x01, 0x58, 0x02, 0x02, *b"kk",  # field 11: map<i32, binary> {1: "kk"}
            0x1B, 0x00,  # field 12: an empty map
            0x1C, 0x15, 0x0E, 0x00,  # field 13: struct {1: i32 7}
            0x1D, *range(16),  # field 14: uuid
            0x19, 0xF5, 0x10, *[0x02] * 16,  # field 15: list<i32> of 16 (long form)
            0x19, 0x21, 0x01, 0x02,  # field 16: list<bool> [true, false]
            0x0C, 0xC8, 0x01, 0x16, 0x54, 0x00,  # field 100 (long form): struct {1: i64 42}
            0x11,  # field 101: bool true
            0x00,  # stop
        ]
    )  # fmt: skip
    everything: dict[int, Any] = dict.fromkeys(range(1, 102))
    found, end = read(data, {**everything, 13: {1: None}, 100: {1: None}})
    assert end == len(data)
    assert found == {
        1: True,
        2: False,
        3: b"\x7f",
        4: -2,
        5: 150,
        6: -1,
        7: struct.pack("<d", 1.5),
        8: b"abc",
        9: [1, 2],
        10: [b"z"],
        11: {},  # maps are skipped
        12: {},
        13: {1: 7},
        14: bytes(range(16)),
        15: [1] * 16,
        16: [True, False],
        100: {1: 42},
        101: True,
    }
    only, end = read(data, {5: None, 100: {}})
    assert end == len(data)
    assert only == {5: 150, 100: {}}


@pytest.mark.parametrize(
    "data",
    [
        b"\x15",  # a field header, no value
        b"\x15\xac",  # a varint cut short
        b"\x18\x05ab",  # binary longer than its bytes
        b"\x19\xf5\xff\xff\xff\x0f",  # a list longer than its bytes
        b"\x1c" * 200,  # structs nested 200 deep
        b"\x1f\x00",  # type 15: no such type
        b"\x15\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01\x00",  # an 11-byte varint
    ],
)
def test_malformed_thrift_raises_malformed(data: bytes) -> None:
    with pytest.raises(Malformed):
        read(data, {})
