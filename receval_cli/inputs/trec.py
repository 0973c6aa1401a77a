"""TREC files: runs (`query Q0 docno rank score tag`) and qrels (`query iter docno rel`).

Fields are separated by any run of spaces or tabs; anything after a run line's sixth field
is ignored, as trec_eval ignores it; a UTF-8 byte-order mark at the start is dropped. Every
id is read as text, as trec_eval does; the run's rank column is kept but, like trec_eval,
receval ranks by score.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

RUN_FIELDS = ("user", "q0", "item", "rank", "score", "tag")
QRELS_FIELDS = ("user", "iteration", "item", "relevance")
_SNIFF_LINES = 5
RUN_ROLES = ("predictions", "baseline")  # inputs read as runs; the others as qrels


def scan_trec(path: Path, role: str) -> pl.LazyFrame:
    """A run (predictions) or qrels (ground truth) file as named columns.

    A line with too few fields leaves nulls, which the input checks report.
    """
    fields = RUN_FIELDS if role in RUN_ROLES else QRELS_FIELDS
    lines = pl.scan_csv(
        path,
        has_header=False,
        separator="\x1f",
        quote_char=None,
        new_columns=["line"],
        schema_overrides={"line": pl.String},
    )
    # a UTF-8 byte-order mark would otherwise stick to the first line's query id
    tokens = pl.col("line").str.strip_chars_start("\ufeff").str.extract_all(r"\S+")
    columns = [tokens.list.get(i, null_on_oob=True).alias(f) for i, f in enumerate(fields)]
    frame = lines.filter(tokens.list.len() > 0).select(columns)
    if role in RUN_ROLES:
        return frame.with_columns(
            pl.col("rank").cast(pl.Int64, strict=False),
            pl.col("score").cast(pl.Float64, strict=False),
        )
    return frame.with_columns(pl.col("relevance").cast(pl.Float64, strict=False))


def looks_like_trec(path: Path, role: str) -> bool:
    """True when the first lines have the shape of a TREC run (predictions) or qrels."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            lines = [line.split() for line in handle.readlines(64 * 1024) if line.strip()]
    except OSError:
        return False
    sample = lines[:_SNIFF_LINES]
    shaped = _is_run if role in RUN_ROLES else _is_qrels
    return bool(sample) and all(shaped(tokens) for tokens in sample)


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_run(tokens: list[str]) -> bool:
    return len(tokens) >= 6 and tokens[3].lstrip("-").isdigit() and _number(tokens[4])


def _is_qrels(tokens: list[str]) -> bool:
    return len(tokens) == 4 and _number(tokens[3]) and tokens[1].lstrip("-").isdigit()
