"""Input fingerprints: what a report records of each input, so that two reports can be
checked for measuring the same thing (`receval compare`, `--baseline-report`).

For every input: its resolved path, and for a local file its size and modification time;
its rows and users (the users block counts them). For the ground truth, a content hash of
its (user, item, relevance) rows as read: the same whatever the row order, the file
format or the id type (ids are hashed as text, grades as float64), computed in the one
assembly as two sums that add up across buckets, so every engine gives the same hash.
polars' hash is stable within a polars version only, so the hash names its method and
hashes are compared only when their methods agree.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import polars as pl

from receval_cli.inputs.parquet_pages import page_checksums
from receval_cli.inputs.readers import Input

HASH_METHOD = f"polars {pl.__version__} row hash, summed"
_HALF = 2**32
_SEED = 20261123


def truth_digest(truth: Input) -> pl.LazyFrame:
    """One row: the sums of the low and high 32 bits of each (user, item, relevance) row's
    hash (each below 2^64 for fewer than 2^32 rows, so nothing overflows); their total
    mod 2^64 is the content hash (digest_text)."""
    row = pl.struct(
        pl.col("user").cast(pl.String),
        pl.col("item").cast(pl.String),
        pl.col("rel").cast(pl.Float64) + 0.0,  # -0.0 as 0.0
    ).hash(_SEED)
    return truth.frame.select(
        digest_low=(row % _HALF).sum().cast(pl.UInt64),
        digest_high=(row // _HALF).sum().cast(pl.UInt64),
    )


def digest_text(counts: dict[str, int]) -> str | None:
    """The content hash from truth_digest's merged sums (None when not computed)."""
    if "digest_low" not in counts:
        return None
    total = (counts["digest_low"] + counts["digest_high"] * _HALF) % 2**64
    return f"{total:016x}"


def describe(source: Input, rows: int | None, users: int | None) -> dict[str, Any]:
    """The input's block of the report: how it was read (Input.describe), its resolved
    path, its size and modification time when it is a local file, its rows and users."""
    block: dict[str, Any] = {**source.describe()}
    facts = _file_facts(source.path) if source.format not in ("frame", "spark") else {}
    if facts:
        block["path"] = str(source.path.resolve())
    block.update(facts)
    if facts and source.format == "parquet":
        block["page_checksums"] = page_checksums(source.path)
    if rows is not None:
        block["rows"] = rows
    if users is not None:
        block["users"] = users
    return block


def _file_facts(path: Path) -> dict[str, Any]:
    """Size in bytes and modification time (UTC, ISO 8601) of a local file; {} otherwise
    (a folder of Parquet files: the sum of its files' sizes and the latest time)."""
    try:
        if path.is_dir():
            files = [p for p in path.rglob("*") if p.is_file()]
            stats = [p.stat() for p in files]
            size = sum(s.st_size for s in stats)
            modified = max((s.st_mtime for s in stats), default=path.stat().st_mtime)
        else:
            stat = path.stat()
            size, modified = stat.st_size, stat.st_mtime
    except OSError:
        return {}
    when = datetime.datetime.fromtimestamp(modified, tz=datetime.UTC)
    return {"size_bytes": size, "modified": when.isoformat(timespec="seconds")}


def truth_identity(inputs: dict[str, Any] | None) -> dict[str, Any] | None:
    """What identifies a report's ground truth (its `inputs.ground_truth` block): the
    content hash and its method, rows and users; None when the report holds no hash."""
    block = (inputs or {}).get("ground_truth")
    if not isinstance(block, dict) or not isinstance(block.get("content_hash"), str):
        return None
    keys = ("path", "content_hash", "hash_method", "rows", "users")
    return {key: block.get(key) for key in keys}
