"""Builders for the robustness tests: a case's files and config written into one folder.

Every case starts from the two-user hand case of `cli_helpers` (predictions.csv and
truth.csv, metrics precision@1 and ndcg@2) and changes one thing: a file's content, a
config key, or the whole YAML text.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import polars as pl
import reference
import yaml
from cli_helpers import PREDICTIONS_CSV, TRUTH_CSV, write

TMP = "{tmp}"  # stands for the case's folder in expected messages and YAML texts
BASE_CONFIG: dict[str, Any] = {
    "predictions": {"path": "predictions.csv"},
    "ground_truth": {"path": "truth.csv"},
    "metrics": ["precision@1", "ndcg@2"],
}


def build(
    folder: Path,
    files: dict[str, str | bytes] | None = None,
    config: dict[str, Any] | str | None = None,
    config_name: str = "config.yaml",
) -> Path:
    """Write the hand case, then `files` (name: content) over it, then the config: the base
    config with `config`'s top-level keys replaced, or `config` as raw YAML text (where
    {tmp} is the folder), unless `files` holds the config. Returns the config's path."""
    write(folder / "predictions.csv", PREDICTIONS_CSV)
    write(folder / "truth.csv", TRUTH_CSV)
    for name, content in (files or {}).items():
        write(folder / name, content)
    if config_name in (files or {}):
        return folder / config_name  # the case wrote the config's bytes itself
    if isinstance(config, str):
        text = config.replace(TMP, str(folder))
    else:
        text = yaml.safe_dump({**BASE_CONFIG, **(config or {})}, sort_keys=False)
    return write(folder / config_name, text)


def parquet_bytes(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    return buffer.getvalue()


def damaged(parquet: bytes) -> bytes:
    """Parquet bytes with 8 bytes of the first page header overwritten: the footer (and
    so the schema) still reads, the rows do not."""
    return parquet[:4] + b"\xff" * 8 + parquet[12:]


def panicking(parquet: bytes) -> bytes:
    """The hand predictions' Parquet bytes with the one byte (offset 215, in a page header)
    that makes polars' reader panic, a PanicException (no Exception), instead of failing.
    Found by the fuzzer with seed 11."""
    return parquet[:215] + b"\xd7" + parquet[216:]


HAND_PARQUET = parquet_bytes(pl.read_csv(PREDICTIONS_CSV.encode()))


def checksummed_parquet(
    frame: pl.DataFrame, checksums: bool = True, row_group_size: int | None = None
) -> bytes:
    """Parquet bytes written by pyarrow, uncompressed, with the CRC-32 of every page in its
    header (`write_page_checksum`) unless `checksums` is false. Only `user` and `item` are
    dictionary-encoded: a page of scores holds their plain 8-byte values, the last last."""
    import pyarrow.parquet as pq  # a dev dependency, not receval's: the callers skip without

    buffer = io.BytesIO()
    pq.write_table(
        frame.to_arrow(),
        buffer,
        compression="none",
        use_dictionary=["user", "item"],
        write_page_checksum=checksums,
        row_group_size=row_group_size,
    )
    return buffer.getvalue()


def overwritten_page(
    parquet: bytes, column: str, new: bytes, row_group: int = 0, dictionary: bool = False
) -> bytes:
    """Parquet bytes with the last len(new) bytes of a column chunk's (one) data page, or
    of its dictionary page, replaced by `new`: inside the page's bytes, after its header
    (the footer and the headers still read). The offsets are pyarrow's: a chunk's data
    page ends the chunk; its dictionary page ends where the data page begins."""
    import pyarrow.parquet as pq

    group = pq.ParquetFile(io.BytesIO(parquet)).metadata.row_group(row_group)
    chunks = (group.column(i) for i in range(group.num_columns))
    chunk = next(c for c in chunks if c.path_in_schema == column)
    if dictionary:
        end = chunk.data_page_offset
    else:
        first = chunk.dictionary_page_offset if chunk.has_dictionary_page else None
        end = (first or chunk.data_page_offset) + chunk.total_compressed_size
    return parquet[: end - len(new)] + new + parquet[end:]


def csv_rows(count: int) -> str:
    """`count` valid score rows, one user each (u0, u1, ...): to push a bad line past the
    rows a reader infers its schema from (polars reads the first 10,000)."""
    return "".join(f"x{i},i,0.5\n" for i in range(count))


def jsonl_rows(count: int) -> str:
    return "".join(f'{{"user": "x{i}", "item": "i", "score": 0.5}}\n' for i in range(count))


def alias_bomb(levels: int = 7) -> str:
    """A YAML value of a few hundred characters that expands to 10**(levels + 1) strings."""
    anchors = ["&l0 [x, x, x, x, x, x, x, x, x, x]"]
    anchors += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, levels + 1)]
    return "[" + ", ".join(anchors) + "]"


# --- independent references for the cases that work ------------------------------------
# (the naive reference of tests/support/reference.py, with the settings these cases use)


def ndcg_at(ranked: list[str], grades: dict[str, float], k: int) -> float:
    """Linear gain, log2 discount, the ideal list truncated at k; negative grades give 0."""
    params = {"gain": "linear", "below_threshold": "grade", "discount": "log2", "ideal": "at_k"}
    return reference.user_metric("ndcg", k, params, ranked, grades, threshold=1.0)


def average_precision(ranked: list[str], relevant: set[str]) -> float:
    """AP over the whole list: the precisions at the hits, summed, divided by |R|."""
    grades = dict.fromkeys(relevant, 1.0)
    params = {"denominator": "relevant"}
    return reference.user_metric("map", None, params, ranked, grades, threshold=1.0)
