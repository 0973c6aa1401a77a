"""Thrift's compact protocol, read: the values of the fields asked for, every other value
skipped, over a buffer (inputs/parquet_pages.py reads a Parquet file's footer and page
headers with it; receval_cli/_pages.c skips page headers as `Reader.struct` does).

Integers are zigzag varints of up to 10 bytes, read without a bound; a value nested deeper
than MAX_DEPTH, a length past the end of the bytes, an unknown type or a varint too long
raise Malformed.
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 64  # nesting of Thrift structs and lists: deeper is not a Parquet footer

# compact-protocol type codes
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY = 1, 2, 3, 4, 5, 6, 7, 8
_LIST, _SET, _MAP, _STRUCT, _UUID = 9, 10, 11, 12, 13
_INTEGERS = (_I16, _I32, _I64)
_FIXED = {_BYTE: 1, _DOUBLE: 8, _UUID: 16}

# The fields read, by struct: field id -> the spec of a struct (or list of structs) field,
# or None for a value kept as it is (an integer, bytes, a list of them). Others are skipped.
Spec = dict[int, "Spec | None"]


class Malformed(Exception):
    """Bytes that are not the Thrift the reader expected."""


class Reader:
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
        if depth > MAX_DEPTH:
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
