"""Tables as text, for what crosses from Spark's executors to the driver inside JSON."""

from __future__ import annotations

import base64
import io

import polars as pl


def ipc_text(table: pl.DataFrame) -> str:
    """A table as base64 Arrow IPC."""
    buffer = io.BytesIO()
    table.write_ipc(buffer)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def from_ipc_text(text: str) -> pl.DataFrame:
    return pl.read_ipc(io.BytesIO(base64.b64decode(text)))
