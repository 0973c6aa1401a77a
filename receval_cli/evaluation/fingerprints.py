"""Input fingerprints: what a report records of each input, so that two reports can be
checked for measuring the same thing (`receval compare`, `--baseline-report`).

For every input: its resolved path, and for a local file its size and modification time;
its rows and users (the users block counts them). For the ground truth, a content hash of
its (user, item, relevance) rows as read: the same whatever the row order, the file
format or the id type, computed in the one assembly as two sums that add up across
buckets, so every engine gives the same hash. An id is hashed as the integer it is (an
integer column's value, or a text id that is an int64's plain decimal text: "9", not
"09" or "+9"), else as its text; grades as float64. (Hashing every id as text cost 0.1 s
of a 10M-row run for its 2M truth rows, 4 times the integer hash.) polars' hash is stable
within a polars version only, so the hash names its method and hashes are compared only
when their methods agree.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any, cast

import polars as pl

from receval_cli.inputs.parquet_pages import page_checksums
from receval_cli.inputs.readers import Input
from receval_cli.results.blocks import InputBlock

HASH_METHOD = f"polars {pl.__version__} row hash (integer ids as integers), summed"
_HALF = 2**32
_SEED = 20261123
_INTEGER_SEED, _TEXT_SEED = 20261128, 20261129


def truth_digest(truth: Input) -> pl.LazyFrame:
    """One row: the sums of the low and high 32 bits of each (user, item, relevance) row's
    hash (each below 2^64 for fewer than 2^32 rows, so nothing overflows); their total
    mod 2^64 is the content hash (digest_text)."""
    schema = truth.frame.collect_schema()
    row = pl.struct(
        _id_hash("user", schema["user"]),
        _id_hash("item", schema["item"]),
        pl.col("rel").cast(pl.Float64) + 0.0,  # -0.0 as 0.0
    ).hash(_SEED)
    return truth.frame.select(
        digest_low=(row % _HALF).sum().cast(pl.UInt64),
        digest_high=(row // _HALF).sum().cast(pl.UInt64),
    )


def _id_hash(column: str, dtype: pl.DataType) -> pl.Expr:
    """An id's hash, the same for 9 and "9": the int64's hash where the id is one (an
    integer, or a text that is an int64's plain decimal text), else its text's hash."""
    value = pl.col(column)
    if dtype == pl.Int64:
        return value.hash(_INTEGER_SEED)  # the common case: no text at all
    if dtype.is_integer():
        number = value.cast(pl.Int64, strict=False)  # null beyond int64's range
    else:
        value = value.cast(pl.String)
        parsed = value.str.to_integer(strict=False)
        number = pl.when(parsed.cast(pl.String) == value).then(parsed)
    text = value.cast(pl.String).hash(_TEXT_SEED)
    return pl.when(number.is_not_null()).then(number.hash(_INTEGER_SEED)).otherwise(text)


def digest_text(counts: dict[str, int]) -> str | None:
    """The content hash from truth_digest's merged sums (None when not computed)."""
    if "digest_low" not in counts:
        return None
    total = (counts["digest_low"] + counts["digest_high"] * _HALF) % 2**64
    return f"{total:016x}"


def input_block(source: Input, rows: int | None, users: int | None) -> InputBlock:
    """The input's block of the report: how it was read (Input.describe), its resolved
    path, its size and modification time when it is a local file, its rows and users."""
    block = cast(InputBlock, {**source.describe()})
    facts = _file_facts(source.path) if source.format not in ("frame", "spark") else {}
    if facts:
        block["path"] = str(source.path.resolve())
    block.update(cast(InputBlock, facts))
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
