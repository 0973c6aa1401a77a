"""The bad-input matrix: each case's files, config and the exact message it gives."""

from __future__ import annotations

import importlib.util
import math
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import (
    NDCG_2,
    PRECISION_1,
    PREDICTIONS_CSV,
    TRUTH_CSV,
    assert_no_traceback,
    invoke,
)
from message_words import assert_plain
from robustness_cases import (
    HAND_PARQUET,
    alias_bomb,
    average_precision,
    build,
    checksummed_parquet,
    csv_rows,
    damaged,
    jsonl_rows,
    ndcg_at,
    overwritten_page,
    panicking,
    parquet_bytes,
)

EARLIER = b"an earlier report: a failed run must leave it as it was\n"


VALID_YAML = (
    "predictions: {path: predictions.csv}\n"
    "ground_truth: {path: truth.csv}\n"
    "metrics: [precision@1, ndcg@2]\n"
)


ROWS = 10_001  # more rows than the readers infer a schema from: the bad line comes later


LATE = ROWS + 2  # the line number of a bad line after the header and ROWS rows


@dataclass(frozen=True)
class Bad:
    """A hostile input and the exact message it must give (after `error: `)."""

    id: str
    message: str
    files: dict[str, str | bytes] = field(default_factory=dict)
    config: dict[str, Any] | str | None = None
    run: str = "config.yaml"  # the config path given to `receval run`
    folders: tuple[str, ...] = ()  # folders to create first
    output: str = "OUT.json"
    earlier: bool = False  # an earlier OUT.json must survive
    never: str | None = None  # a file the input must not manage to create
    input_output: bool = False  # the output names an input: it must survive byte for byte
    links: dict[str, str] = field(default_factory=dict)  # symbolic links: name -> target
    fifos: tuple[str, ...] = ()  # named pipes to create

    def param(self, *, own_process: bool = True) -> Any:
        """The row as a test parameter. A bad input makes a polars query fail, after which
        a process is not safe to reuse (tests/support/process_isolation.py): each row runs in a
        process of its own; on Spark, the rows of POLARS_FAILS_ON_SPARK."""
        marks = (pytest.mark.own_process,) if own_process else ()
        return pytest.param(self, id=self.id, marks=marks)


def predictions(name: str, content: str | bytes, **columns: str) -> dict[str, Any]:
    """The files and config of a case whose predictions file is `name`."""
    entry: dict[str, Any] = {"path": name}
    if columns:
        entry["columns"] = columns
    return {"files": {name: content}, "config": {"predictions": entry}}


def truth(name: str, content: str | bytes, **columns: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": name}
    if columns:
        entry["columns"] = columns
    return {"files": {name: content}, "config": {"ground_truth": entry}}


def optional(
    key: str, name: str, content: str | bytes, metric: str, **extra: Any
) -> dict[str, Any]:
    """A case with an optional input (catalog, interactions, baseline, segments)."""
    config: dict[str, Any] = {key: {"path": name}, "metrics": [metric], **extra}
    return {"files": {name: content}, "config": config}


def whole_parquet() -> bytes:
    return parquet_bytes(pl.DataFrame({"user": ["u1", "u2"], "item": ["b", "d"]}))


def hand_parts() -> dict[str, str | bytes]:
    """The hand predictions as a folder of two Parquet parts (as Spark writes them), the
    second one damaged."""
    frame = pl.read_csv(PREDICTIONS_CSV.encode())
    first, second = frame.filter(pl.col("user") == "u1"), frame.filter(pl.col("user") != "u1")
    return {
        "preds/part-00000.parquet": parquet_bytes(first),
        "preds/part-00001.parquet": damaged(parquet_bytes(second)),
    }


P = "predictions file {tmp}/"


T = "ground truth file {tmp}/"


CONFIG = "{tmp}/config.yaml"


NO_ROWS = "has a header but no rows. Write the data first."


NOT_UTF8 = "Save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)."


RAGGED = "Fix that line; a value that holds the separator ',' must be quoted."


DROP = "drop or fill those rows."


BOMB_YAML = VALID_YAML.replace("[precision@1, ndcg@2]", "[{name: ndcg, k: 2, x: BOMB}]")


BAD = [
    # --- the config file and its YAML ------------------------------------------------------
    Bad(
        "config-missing",
        "{tmp}/nope.yaml: the config file does not exist. Check the path.",
        run="nope.yaml",
        earlier=True,
    ),
    Bad(
        "config-is-a-folder",
        "{tmp}/configs: is a folder, not a config file. Name the YAML file.",
        run="configs",
        folders=("configs",),
    ),
    Bad(
        "config-not-utf8",
        f"{CONFIG}: the config is not UTF-8 text (byte 0xe9 at line 4, column 6). Save it as "
        "UTF-8.",
        files={"config.yaml": VALID_YAML.encode() + b"# caf\xe9\n"},
    ),
    Bad(
        "yaml-tab-indentation",
        f"{CONFIG}: invalid YAML at line 2, column 1: found character '\\t' that cannot start "
        "any token. Check the indentation (spaces, not tabs) and the quoting.",
        config="predictions:\n\tpath: predictions.csv\n",
        earlier=True,
    ),
    Bad(
        "yaml-duplicate-key",
        f"{CONFIG}: line 4: the key 'metrics' appears twice in the same mapping; YAML would "
        "silently keep only the last. Remove one of them.",
        config=VALID_YAML + "metrics: [mrr]\n",
    ),
    Bad(
        "yaml-duplicate-nested-key",
        f"{CONFIG}: line 6: the key 'gain' appears twice in the same mapping; YAML would "
        "silently keep only the last. Remove one of them.",
        config=VALID_YAML + "conventions:\n  gain: linear\n  gain: exponential\n",
    ),
    Bad(
        "yaml-duplicate-key-beside-a-merge",
        f"{CONFIG}: line 5: the key 'path' appears twice in the same mapping; YAML would "
        "silently keep only the last. Remove one of them.",
        config="ground_truth: &files {path: truth.csv}\npredictions:\n  <<: *files\n"
        "  path: predictions.csv\n  path: other.csv\nmetrics: [ndcg@2]\n",
    ),
    Bad(
        "yaml-python-object-tag",
        f"{CONFIG}: invalid YAML at line 4, column 9: could not determine a constructor for "
        "the tag 'tag:yaml.org,2002:python/object/apply:os.system'. Tags that build Python "
        "objects are never loaded.",
        config=VALID_YAML + 'output: !!python/object/apply:os.system ["touch {tmp}/pwned"]\n',
        never="pwned",
        earlier=True,
    ),
    Bad(
        "yaml-python-name-tag",
        f"{CONFIG}: invalid YAML at line 4, column 9: could not determine a constructor for "
        "the tag 'tag:yaml.org,2002:python/name:os.system'. Tags that build Python objects "
        "are never loaded.",
        config=VALID_YAML + "output: !!python/name:os.system\n",
    ),
    Bad(
        "yaml-unknown-tag",
        f"{CONFIG}: invalid YAML at line 4, column 9: could not determine a constructor for "
        "the tag '!include'. Remove the tag: a config holds plain values.",
        config=VALID_YAML + "output: !include other.yaml\n",
    ),
    Bad(
        "yaml-undefined-alias",
        f"{CONFIG}: invalid YAML at line 4, column 8: found undefined alias 'defaults'. "
        "Define the anchor (&name) before its alias (*name).",
        config=VALID_YAML + "gates: *defaults\n",
    ),
    Bad(
        "yaml-recursive-alias",
        f"{CONFIG}: invalid YAML at line 3, column 10: found unconstructable recursive node. "
        "An alias cannot stand inside the value its anchor names.",
        config=VALID_YAML.replace("[precision@1, ndcg@2]", "&m [ndcg@2, *m]"),
    ),
    Bad(
        "yaml-alias-bomb",
        f"{CONFIG}: the YAML expands to more than 100,000 values once its aliases (*name) are "
        "repeated; a config is far smaller. Remove the aliases that repeat large values.",
        config=BOMB_YAML.replace("BOMB", alias_bomb()),
    ),
    Bad(
        "csv-that-is-a-cut-zstd-frame",
        P + "predictions.csv cannot be read as csv: line 1 is not UTF-8 text (byte 0xb5 at "
        "column 2). " + NOT_UTF8,
        files={"predictions.csv": b"(\xb5/\xfd"},
    ),
    Bad(
        "predictions-a-fifo",
        P
        + "pipe.csv is a named pipe (FIFO), not a file: an input is read more than once. "
        + "Give a regular file at predictions.path (save a pipe's or a device's data to a file "
        "first).",
        config={"predictions": {"path": "pipe.csv"}},
        fifos=("pipe.csv",),
    ),
    Bad(
        "truth-a-link-to-a-device",
        T
        + "zero.csv is a device (/dev/zero), not a file. "
        + "Give a regular file at ground_truth.path (save a pipe's or a device's data to a file "
        "first).",
        config={"ground_truth": {"path": "zero.csv"}},
        links={"zero.csv": "/dev/zero"},
    ),
    Bad(
        "predictions-a-link-loop",
        P
        + "loop.csv is a symbolic link that loops (a link in its chain leads back). "
        + "Give a regular file at predictions.path (save a pipe's or a device's data to a file "
        "first).",
        config={"predictions": {"path": "loop.csv"}},
        links={"loop.csv": "back.csv", "back.csv": "loop.csv"},
    ),
    Bad(
        "config-too-many-cutoffs",
        f"{CONFIG}: metrics: the config asks for more than 2,000 metric values (2 metrics x "
        "5,000 cutoffs); receval computes at most 2,000 per run. Ask for fewer cutoffs (e.g. "
        "[1, 5, 10, 20, 50, 100]) or split the metrics over several configs.",
        config=VALID_YAML.replace("[precision@1, ndcg@2]", "[precision, ndcg]")
        + f"cutoffs: {list(range(1, 5001))}\n",
    ),
    Bad(
        "config-too-many-metrics",
        f"{CONFIG}: metrics: the config asks for more than 2,000 metric values (10,000 "
        "metrics); receval computes at most 2,000 per run. Ask for fewer cutoffs (e.g. "
        "[1, 5, 10, 20, 50, 100]) or split the metrics over several configs.",
        config=VALID_YAML.replace(
            "[precision@1, ndcg@2]", str([f"ndcg@{k}" for k in range(1, 10_001)])
        ),
    ),
    Bad(
        "yaml-nested-too-deep",
        f"{CONFIG}: the YAML nests more than 100 levels deep; a config nests a few. Check the "
        "file.",
        config=VALID_YAML + "gates: " + "[" * 200 + "]" * 200 + "\n",
    ),
    Bad(
        "yaml-nul-character",
        f"{CONFIG}: invalid YAML at line 4, column 3: the character U+0000 is not allowed in "
        "YAML text. Remove it.",
        config=VALID_YAML + "# \x00\n",
    ),
    Bad(
        "yaml-list-as-key",
        f"{CONFIG}: line 4, column 3: a key is a list; config keys are plain names.",
        config=VALID_YAML + "? [a, b]\n: 1\n",
    ),
    Bad(
        "yaml-merge-of-a-scalar",
        f"{CONFIG}: invalid YAML at line 2, column 7: expected a mapping or list of mappings "
        "for merging, but found scalar. A merge key takes an anchored mapping, e.g. "
        "<<: *defaults.",
        config="predictions:\n  <<: 3\n  path: predictions.csv\n"
        "ground_truth: {path: truth.csv}\nmetrics: [ndcg@2]\n",
    ),
    Bad(
        "yaml-a-list-not-a-mapping",
        f"{CONFIG}: the config must be a mapping with at least predictions, ground_truth and "
        "metrics; found a list. Start from configs/quickstart.yaml.",
        config="- predictions\n- ground_truth\n",
    ),
    Bad(
        "yaml-empty",
        f"{CONFIG}: the config must be a mapping with at least predictions, ground_truth and "
        "metrics; found an empty file. Start from configs/quickstart.yaml.",
        config="# nothing but a comment\n",
    ),
    Bad(
        "yaml-unclosed-brace",
        f"{CONFIG}: invalid YAML at line 2, column 13: expected ',' or '}}', but got ':'. Check "
        "the indentation (spaces, not tabs) and the quoting.",
        config="predictions: {path: predictions.csv\nground_truth: {path: truth.csv}\n",
    ),
    Bad(
        "config-preset-a-list",
        f"{CONFIG}: the config is not valid:\n  conventions: unknown preset '['trec_eval']'; "
        "choose one of jurity, pytrec_eval, ranx, recommenders, rectools, replay, trec_eval. "
        "Did you mean "
        "'trec_eval'?",
        config={"conventions": {"preset": ["trec_eval"]}},
    ),
    Bad(
        "config-cutoff-zero",
        f"{CONFIG}: metrics[0]: the cutoff in 'ndcg@0' is '0'; it must be a positive integer "
        "(or 'all' for the whole list)",
        config={"metrics": ["ndcg@0"]},
    ),
    # --- the predictions ------------------------------------------------------------------
    Bad(
        "predictions-missing",
        P + "nope.csv does not exist. Fix predictions.path in the config (relative paths are "
        "read from the config file's folder).",
        config={"predictions": {"path": "nope.csv"}},
        earlier=True,
    ),
    Bad(
        "predictions-is-a-folder",
        P + "runs.csv is a folder. Point predictions.path at a file.",
        config={"predictions": {"path": "runs.csv"}},
        folders=("runs.csv",),
    ),
    Bad(
        "predictions-empty",
        P + "empty.csv is empty (0 bytes). Write the data first.",
        **predictions("empty.csv", ""),
    ),
    Bad(
        "predictions-header-only",
        P + "header.csv " + NO_ROWS,
        **predictions("header.csv", "user,item,score\n"),
    ),
    Bad(
        "csv-ragged-row",
        P + "p.csv cannot be read as csv: line 4 has 4 fields where the header has 3. " + RAGGED,
        **predictions("p.csv", "user,item,score\nu1,a,0.9\nu1,b,0.8\nu2,d,0.9,extra\n"),
    ),
    Bad(
        "csv-ragged-row-late",
        P
        + f"p.csv cannot be read as csv: line {LATE} has 4 fields where the header has 3. "
        + RAGGED,
        **predictions("p.csv", "user,item,score\n" + csv_rows(ROWS) + "u1,a,0.9,extra\n"),
        earlier=True,
    ),
    Bad(
        "csv-semicolons-read-as-commas",
        P + "p.csv has no column 'user' (set by predictions.columns.user). The header was read "
        "as one column, 'user;item;score': the file looks separated by ';'. Set "
        "predictions.separator: ';'.",
        **predictions("p.csv", PREDICTIONS_CSV.replace(",", ";")),
    ),
    Bad(
        "csv-tabs-read-as-commas",
        P + "p.csv has no column 'user' (set by predictions.columns.user). The header was read "
        "as one column, 'user\\titem\\tscore': the file looks separated by \"\\t\". Set "
        'predictions.separator: "\\t".',
        **predictions("p.csv", PREDICTIONS_CSV.replace(",", "\t")),
    ),
    Bad(
        "csv-unclosed-quote",
        P + "p.csv cannot be read as csv: the quote that opens a value on line 3 is never "
        'closed. Close it, or double a quote inside a quoted value ("").',
        **predictions("p.csv", 'user,item,score\nu1,a,0.9\nu1,"b,0.8\nu2,d,0.9\n'),
    ),
    Bad(
        "csv-unclosed-quote-in-a-long-file",
        P + "p.csv cannot be read as csv: the quote that opens a value on line 3 is not closed "
        'within 10,000 lines. Close it, or double a quote inside a quoted value ("").',
        **predictions("p.csv", 'user,item,score\nu1,a,0.9\nu1,"b,0.8\n' + csv_rows(ROWS)),
    ),
    Bad(
        "csv-quote-inside-an-unquoted-value",
        P + "p.csv cannot be read as csv: line 2: the value 'a\"b' holds a quote but is not "
        'quoted. Quote the value and double the quote inside it ("a""b").',
        **predictions("p.csv", 'user,item,score\nu1,a"b,0.9\nu2,d,0.9\n'),
    ),
    Bad(
        "csv-text-after-a-closing-quote",
        P + "p.csv cannot be read as csv: line 2 is not valid CSV (',' expected after '\"'). "
        'Quote the whole value, doubling any quote inside it ("").',
        **predictions("p.csv", 'user,item,score\nu1,"a"b,0.9\nu2,d,0.9\n'),
    ),
    Bad(
        "csv-not-utf8",
        P
        + "p.csv cannot be read as csv: line 3 is not UTF-8 text (byte 0xe9 at column 7). "
        + NOT_UTF8,
        **predictions("p.csv", b"user,item,score\nu1,a,0.9\nu1,caf\xe9,0.8\n"),
    ),
    Bad(
        "csv-not-utf8-late",
        P + f"p.csv cannot be read as csv: line {LATE} is not UTF-8 text (byte 0xe9 at column "
        "7). " + NOT_UTF8,
        **predictions(
            "p.csv", ("user,item,score\n" + csv_rows(ROWS)).encode() + b"u1,caf\xe9,0.8\n"
        ),
    ),
    Bad(
        "csv-text-scores",
        P + "p.csv: column 'score' (score) holds String values, not numbers (e.g. 'high', data "
        "row 2). Fix the values, or point predictions.columns at the numeric column.",
        **predictions("p.csv", "user,item,score\nu1,a,0.9\nu1,b,high\n"),
    ),
    Bad(
        "csv-text-score-late",
        P + f"p.csv cannot be read as csv: line {LATE}: 'high' in column 'score' is not a "
        "number, as the rows before it are. Fix the value, or point the config's columns at "
        "the right column.",
        **predictions("p.csv", "user,item,score\n" + csv_rows(ROWS) + "u1,a,high\n"),
    ),
    Bad(
        "csv-lowercase-nan-scores",
        P + "p.csv: column 'score' (score) holds String values, not numbers (e.g. 'nan', data "
        "row 1). Fix the values, or point predictions.columns at the numeric column.",
        **predictions("p.csv", "user,item,score\nu1,a,nan\nu1,b,0.5\n"),
    ),
    Bad(
        "csv-float-ids",
        P + "p.csv: column 'item' holds Float64 values; ids must be integers or strings. Fix "
        "the column (e.g. write ids as integers, not 1.0).",
        **predictions("p.csv", "user,item,score\nu1,1.0,0.9\nu2,2.5,0.8\n"),
    ),
    Bad(
        "csv-null-user-ids",
        P + "p.csv: column 'user' has 2 null value(s); " + DROP,
        **predictions("p.csv", "user,item,score\nu1,b,0.9\n,d,0.8\n,e,0.7\n"),
    ),
    Bad(
        "csv-null-scores",
        P + "p.csv: column 'score' has 1 null value(s); " + DROP,
        **predictions("p.csv", "user,item,score\nu1,b,\nu2,d,0.9\n"),
    ),
    Bad(
        "csv-nan-scores",
        P + "p.csv: column 'pred' has 1 NaN value(s), which cannot be ranked or compared; " + DROP,
        **predictions("p.csv", "user,item,pred\nu1,b,NaN\nu2,d,0.9\n", score="pred"),
    ),
    Bad(
        "csv-duplicate-rows",
        P + "p.csv: 1 (user, item) pair(s) appear more than once, e.g. user 'u1', item 'a' "
        "(2 rows). Remove the duplicates, or set conventions.duplicates to say which row "
        "counts.",
        **predictions("p.csv", "user,item,score\nu1,a,0.9\nu1,a,0.9\nu2,d,0.9\n"),
        earlier=True,
    ),
    Bad(
        "unknown-extension",
        P + "p.txt: cannot tell the format from the extension '.txt' nor from the content. Set "
        "predictions.format to one of csv, tsv, parquet, jsonl, trec.",
        **predictions("p.txt", PREDICTIONS_CSV),
    ),
    Bad(
        "parquet-truncated",
        P + "p.parquet cannot be read as parquet: it does not end with Parquet's marker 'PAR1': "
        "the file is cut short (truncated, or still being written). Write the file again, "
        "completely.",
        **predictions("p.parquet", whole_parquet()[:-30]),
        earlier=True,
    ),
    Bad(
        "parquet-that-is-text",
        P + "p.parquet cannot be read as parquet: it does not start with Parquet's marker "
        "'PAR1', so it is not a Parquet file. Write it as Parquet (or set predictions.format).",
        **predictions("p.parquet", PREDICTIONS_CSV),
    ),
    Bad(
        "parquet-damaged-page",
        P + "p.parquet cannot be read as parquet: the file is damaged (parquet: File out of "
        "specification: Invalid thrift: bad data). Write the file again.",
        **predictions("p.parquet", damaged(HAND_PARQUET)),
        earlier=True,
    ),
    Bad(
        "parquet-folder-with-a-damaged-part",
        P + "preds/part-00001.parquet cannot be read as parquet: the file is damaged (parquet: "
        "File out of specification: Invalid thrift: bad data). Write the file again.",
        files=hand_parts(),
        config={"predictions": {"path": "preds"}},
    ),
    Bad(
        "parquet-damaged-ground-truth-in-partitions",
        T + "t.parquet cannot be read as parquet: the file is damaged (parquet: File out of "
        "specification: Invalid thrift: bad data). Write the file again.",
        files={"t.parquet": damaged(HAND_PARQUET)},
        config={"ground_truth": {"path": "t.parquet"}, "partitions": 2},
        earlier=True,
    ),
    Bad(
        "cutoff-beyond-32-bits",
        "{tmp}/config.yaml: metrics[0]: cutoff 99999999999999999999 is larger than any list "
        "receval can hold (4,294,967,295); leave the cutoff out to use whole lists",
        config={"metrics": ["ndcg@99999999999999999999"]},
    ),
    Bad(
        "partitions-beyond-the-limit",
        "{tmp}/config.yaml: the config is not valid:\n  partitions: Input should be less than "
        "or equal to 4096 (found 1000000000).",
        config={"partitions": 1_000_000_000},
    ),
    Bad(
        "parquet-page-that-panics-the-reader",
        P + "p.parquet cannot be read as parquet: the file is damaged (polars' reader panicked "
        "on it). Write the file again.",
        **predictions("p.parquet", panicking(HAND_PARQUET)),
    ),
    Bad(
        "csv-separator-of-two-bytes",
        P + "p.csv: predictions.separator is 'é'; it must be one ASCII character other than a "
        "quote or a line end, e.g. ',' or ';' (\"\\t\" for a tab).",
        files={"p.csv": PREDICTIONS_CSV},
        config={"predictions": {"path": "p.csv", "separator": "é"}},
    ),
    Bad(
        "parquet-text-scores",
        P + "p.parquet: column 'score' (score) holds String values, not numbers (e.g. 'top', "
        "data row 1). Fix the values, or point predictions.columns at the numeric column.",
        **predictions(
            "p.parquet",
            parquet_bytes(pl.DataFrame({"user": ["u1"], "item": ["b"], "score": ["top"]})),
        ),
    ),
    Bad(
        "jsonl-broken-line",
        P + "p.jsonl cannot be read as jsonl: line 2 is not valid JSON (Expecting ',' delimiter "
        "at column 36). Fix or remove that line: each line holds one JSON object.",
        **predictions(
            "p.jsonl",
            '{"user":"u1","item":"a","score":0.9}\n{"user":"u1","item":"b","score":0.8\n'
            '{"user":"u2","item":"d","score":0.9}\n',
        ),
    ),
    Bad(
        "jsonl-broken-line-late",
        P + f"p.jsonl cannot be read as jsonl: line {ROWS + 1} is not valid JSON (Expecting "
        "property name enclosed in double quotes at column 14). Fix or remove that line: each "
        "line holds one JSON object.",
        **predictions("p.jsonl", jsonl_rows(ROWS) + '{"user":"u1",\n'),
    ),
    Bad(
        "jsonl-line-nested-too-deeply",
        P + "p.jsonl cannot be read as jsonl: line 2 nests lists or objects too deeply to read. "
        "Fix or remove that line: each line holds one flat JSON object.",
        **predictions("p.jsonl", jsonl_rows(1) + "[" * 100_000 + "\n"),
    ),
    Bad(
        "jsonl-not-an-object",
        P + "p.jsonl cannot be read as jsonl: line 1 holds a JSON list, not an object. Write "
        'one JSON object per line, e.g. {"user": "u1", "item": "a", "score": 0.9}.',
        **predictions("p.jsonl", '["u1", "a", 0.9]\n'),
    ),
    Bad(
        "jsonl-only-blank-lines",
        P + "p.jsonl cannot be read as jsonl: it holds only blank lines, no JSON object. Write "
        "the data first.",
        **predictions("p.jsonl", "\n  \n\n"),
    ),
    Bad(
        "jsonl-nan-literal",
        P + "p.jsonl cannot be read as jsonl: line 1 holds NaN, which JSON does not allow. "
        "Write null or a number (use CSV or Parquet for infinite scores).",
        **predictions("p.jsonl", '{"user": "u1", "item": "a", "score": NaN}\n'),
    ),
    Bad(
        "jsonl-bom",
        P + "p.jsonl cannot be read as jsonl: line 1 starts with a byte-order mark (BOM), which "
        "JSON Lines does not allow. Save the file as UTF-8 without a BOM (e.g. sed -i "
        "'1s/^\\xEF\\xBB\\xBF//').",
        **predictions("p.jsonl", '\ufeff{"user": "u1", "item": "a", "score": 0.9}\n'),
    ),
    Bad(
        "jsonl-text-score-late",
        P + f"p.jsonl cannot be read as jsonl: line {ROWS + 1}: 'score' is 'high', not a "
        "number, as in the rows before it. Fix the value, or point the config's columns at "
        "the right key.",
        **predictions(
            "p.jsonl", jsonl_rows(ROWS) + '{"user": "u1", "item": "a", "score": "high"}\n'
        ),
    ),
    Bad(
        "trec-run-short-line",
        P + "p.run: column 'score' has 1 null value(s) (a line with fewer fields, or text that "
        "is not a number); " + DROP,
        **predictions("p.run", "u1 Q0 a 1 0.9 tag\nu1 Q0 b 2\nu2 Q0 d 1 0.9 tag\n"),
    ),
    # --- the ground truth -----------------------------------------------------------------
    Bad(
        "truth-missing",
        T + "nope.parquet does not exist. Fix ground_truth.path in the config (relative paths "
        "are read from the config file's folder).",
        config={"ground_truth": {"path": "nope.parquet"}},
    ),
    Bad(
        "truth-is-a-folder",
        T + "judged.csv is a folder. Point ground_truth.path at a file.",
        config={"ground_truth": {"path": "judged.csv"}},
        folders=("judged.csv",),
    ),
    Bad(
        "truth-header-only",
        T + "t.csv " + NO_ROWS,
        **truth("t.csv", "user,item,rating\n", relevance="rating"),
    ),
    Bad(
        "truth-text-relevance",
        T + "t.csv: column 'rating' (relevance) holds String values, not numbers (e.g. 'good', "
        "data row 1). Fix the values, or point ground_truth.columns at the numeric column.",
        **truth("t.csv", "user,item,rating\nu1,b,good\nu2,d,4\n", relevance="rating"),
    ),
    Bad(
        "truth-null-relevance",
        T + "t.csv: column 'rating' has 1 null value(s); " + DROP,
        **truth("t.csv", "user,item,rating\nu1,b,5\nu2,d,\n", relevance="rating"),
    ),
    Bad(
        "truth-nan-relevance",
        T
        + "t.csv: column 'rating' has 1 NaN value(s), which cannot be ranked or compared; "
        + DROP,
        **truth("t.csv", "user,item,rating\nu1,b,NaN\nu2,d,4\n", relevance="rating"),
    ),
    Bad(
        "truth-infinite-relevance",
        T
        + "t.csv: column 'rating' has 2 infinite value(s); a grade must be a finite number; "
        + DROP,
        **truth("t.csv", "user,item,rating\nu1,b,inf\nu2,d,-inf\nu2,f,1\n", relevance="rating"),
    ),
    Bad(
        "truth-duplicate-rows",
        T + "t.csv: 1 (user, item) pair(s) appear more than once, e.g. user 'u1', item 'b' "
        "(2 rows). Remove the duplicates, or set conventions.truth_duplicates to say which "
        "row counts.",
        **truth("t.csv", "user,item\nu1,b\nu1,b\nu2,d\n"),
    ),
    Bad(
        "qrels-text-relevance",
        T + "t.qrels: column 'relevance' has 1 null value(s) (a line with fewer fields, or text "
        "that is not a number); " + DROP,
        **truth("t.qrels", "u1 0 b 1\nu2 0 d high\n"),
    ),
    Bad(
        "qrels-not-utf8",
        T
        + "t.qrels cannot be read as trec: line 2 is not UTF-8 text (byte 0xe9 at column 9). "
        + NOT_UTF8,
        **truth("t.qrels", b"u1 0 b 1\nu2 0 caf\xe9 1\n"),
    ),
    Bad(
        "truth-grade-lists-of-another-length",
        T + "t.jsonl: column 'grades' has 2 null value(s) (text that is not a number, or a "
        "list of another length than the items); " + DROP,
        **truth(
            "t.jsonl",
            '{"user": "u1", "items": ["b", "c"], "grades": [3]}\n',
            items="items",
            relevances="grades",
        ),
    ),
    Bad(
        "truth-parquet-float-ids",
        T + "t.parquet: column 'user' holds Float64 values; ids must be integers or strings. "
        "Fix the column (e.g. write ids as integers, not 1.0).",
        **truth("t.parquet", parquet_bytes(pl.DataFrame({"user": [1.0, 2.0], "item": [1, 2]}))),
    ),
    Bad(
        "ids-integer-against-zero-padded-text",
        "no user appears in both {tmp}/p.csv (users e.g. '1', '2') and {tmp}/truth.jsonl "
        "(users e.g. '001', '002'). Check predictions.columns.user and "
        "ground_truth.columns.user, and that both files use the same ids.",
        files={
            "p.csv": "user,item,score\n1,10,0.9\n2,20,0.8\n",
            "truth.jsonl": '{"user": "001", "item": "10"}\n{"user": "002", "item": "20"}\n',
        },
        config={"predictions": {"path": "p.csv"}, "ground_truth": {"path": "truth.jsonl"}},
    ),
    # --- the optional inputs --------------------------------------------------------------
    Bad(
        "catalog-missing",
        "catalog file {tmp}/nope.csv does not exist. Fix catalog.path in the config (relative "
        "paths are read from the config file's folder).",
        config={"catalog": {"path": "nope.csv"}, "metrics": ["catalog_coverage@2"]},
    ),
    Bad(
        "catalog-is-a-folder",
        "catalog file {tmp}/items is a folder. Point catalog.path at a file.",
        config={"catalog": {"path": "items"}, "metrics": ["catalog_coverage@2"]},
        folders=("items",),
    ),
    Bad(
        "catalog-repeated-item",
        "catalog file {tmp}/c.csv: 1 row(s) repeat an item already listed (e.g. 'a'). List "
        "each item once.",
        **optional("catalog", "c.csv", "item\na\na\nb\n", "catalog_coverage@2"),
    ),
    Bad(
        "catalog-ragged-row",
        "catalog file {tmp}/c.csv cannot be read as csv: line 3 has 2 fields where the header "
        "has 1. " + RAGGED,
        **optional("catalog", "c.csv", "item\na\nb,c\n", "catalog_coverage@2"),
    ),
    Bad(
        "catalog-header-only",
        "catalog file {tmp}/c.csv has no rows. Write the data first.",
        **optional("catalog", "c.csv", "item\n", "catalog_coverage@2"),
    ),
    Bad(
        "interactions-missing",
        "interactions file {tmp}/log.csv does not exist. Fix interactions.path in the config "
        "(relative paths are read from the config file's folder).",
        config={"interactions": {"path": "log.csv"}, "metrics": ["novelty@2"]},
    ),
    Bad(
        "interactions-null-user",
        "interactions file {tmp}/log.csv: column 'user' has 1 null value(s); " + DROP,
        **optional("interactions", "log.csv", "user,item\nu1,a\n,b\n", "novelty@2"),
    ),
    Bad(
        "interactions-column-missing",
        "interactions file {tmp}/log.csv has no column 'user' (set by interactions.columns."
        "user). Its columns are: uid, item. Set interactions.columns.user to one of them.",
        **optional("interactions", "log.csv", "uid,item\nu1,a\n", "novelty@2"),
    ),
    Bad(
        "interactions-not-utf8",
        "interactions file {tmp}/log.csv cannot be read as csv: line 3 is not UTF-8 text (byte "
        "0xe9 at column 4). " + NOT_UTF8,
        **optional("interactions", "log.csv", b"user,item\nu1,a\nu2,\xe9\n", "novelty@2"),
    ),
    Bad(
        "baseline-missing",
        "baseline file {tmp}/b.csv does not exist. Fix baseline.path in the config (relative "
        "paths are read from the config file's folder).",
        config={"baseline": {"path": "b.csv"}, "metrics": ["unexpectedness@2"]},
    ),
    Bad(
        "baseline-text-scores",
        "baseline file {tmp}/b.csv: column 'score' (score) holds String values, not numbers "
        "(e.g. 'n/a', data row 1). Fix the values, or point baseline.columns at the numeric "
        "column.",
        **optional("baseline", "b.csv", "user,item,score\nu1,a,n/a\n", "unexpectedness@2"),
    ),
    Bad(
        "baseline-duplicate-rows",
        "baseline file {tmp}/b.csv: 1 (user, item) pair(s) appear more than once, e.g. user "
        "'u1', item 'a' (2 rows). Remove the duplicates, or set conventions.duplicates to say "
        "which row counts.",
        **optional("baseline", "b.csv", "user,item,score\nu1,a,1\nu1,a,2\n", "unexpectedness@2"),
    ),
    Bad(
        "segments-missing",
        "segments file {tmp}/nope.csv does not exist. Fix segments.path in the config "
        "(relative paths are read from the config file's folder).",
        config={"segments": {"path": "nope.csv"}, "segment_by": ["country"]},
    ),
    Bad(
        "segments-is-a-folder",
        "segments file {tmp}/users is a folder. Point segments.path at a file.",
        config={"segments": {"path": "users"}, "segment_by": ["country"]},
        folders=("users",),
    ),
    Bad(
        "segments-ragged-row",
        "segments file {tmp}/s.csv cannot be read as csv: line 3 has 3 fields where the header "
        "has 2. " + RAGGED,
        **optional(
            "segments", "s.csv", "user,country\nu1,DE\nu2,FR,x\n", "ndcg@2", segment_by=["country"]
        ),
    ),
    Bad(
        "segments-repeated-user",
        "segments file {tmp}/s.csv: 1 row(s) repeat a user already listed; give each user one row.",
        **optional(
            "segments", "s.csv", "user,country\nu1,DE\nu1,FR\n", "ndcg@2", segment_by=["country"]
        ),
    ),
    Bad(
        "segments-truncated-parquet",
        "segments file {tmp}/s.parquet cannot be read as parquet: it does not end with "
        "Parquet's marker 'PAR1': the file is cut short (truncated, or still being written). "
        "Write the file again, completely.",
        **optional("segments", "s.parquet", whole_parquet()[:-8], "ndcg@2", segment_by=["item"]),
    ),
    # --- the output -----------------------------------------------------------------------
    Bad(
        "output-is-a-folder",
        "output {tmp}/OUT.json is a folder; name a file, e.g. {tmp}/OUT.json/report.json.",
        folders=("OUT.json",),
    ),
    Bad(
        "output-folder-missing",
        "output {tmp}/missing/OUT.json: the folder {tmp}/missing does not exist. Create it "
        "first (mkdir -p {tmp}/missing).",
        output="missing/OUT.json",
    ),
    # --- outputs over inputs, gates that name nothing, booleans as numbers -----------
    Bad(
        "output-is-the-predictions",
        "output {tmp}/predictions.csv would overwrite an input: it is the predictions file "
        "({tmp}/predictions.csv). Nothing was read or written; write the output to another "
        "path.",
        output="predictions.csv",
        input_output=True,
    ),
    Bad(
        "output-is-the-config",
        "output {tmp}/config.yaml would overwrite an input: it is the config file "
        "({tmp}/config.yaml). Nothing was read or written; write the output to another path.",
        output="config.yaml",
        input_output=True,
    ),
    Bad(
        "gate-names-no-model",
        f"{CONFIG}: gates.ndcg@2.model 'modle' is not a model of this config; the models "
        "are: model. Did you mean 'model'?",
        config={"gates": {"ndcg@2": {"min": 0.5, "model": "modle"}}},
    ),
    Bad(
        "gate-min-above-max",
        f"{CONFIG}: the config is not valid:\n  gates.ndcg@2: min 0.5 is above max 0.1, so no "
        "value could pass; swap them or drop one.",
        config={"gates": {"ndcg@2": {"min": 0.5, "max": 0.1}}},
    ),
    Bad(
        "gate-min-a-boolean",
        f"{CONFIG}: the config is not valid:\n  gates.ndcg@2.min: Input should be a valid "
        "number (found True).",
        config={"gates": {"ndcg@2": {"min": True}}},
    ),
    Bad(
        "cutoff-a-boolean",
        f"{CONFIG}: the config is not valid:\n  cutoffs[0]: Input should be a valid integer "
        "(found True).",
        config={"metrics": ["ndcg"], "cutoffs": [True]},
    ),
    Bad(
        "threshold-a-boolean",
        f"{CONFIG}: the config is not valid:\n  conventions.relevance_threshold: Input should "
        "be a valid number (found True).",
        config={"conventions": {"relevance_threshold": True}},
    ),
    # --- values that used to end in a traceback -------------------------------------
    Bad(
        "gate-max-infinite",
        f"{CONFIG}: the config is not valid:\n  gates.ndcg@2.max: Input should be a finite "
        "number (found inf).",
        config={"gates": {"ndcg@2": {"max": math.inf}}},
    ),
    Bad(
        "gate-min-nan",
        f"{CONFIG}: the config is not valid:\n  gates.ndcg@2.min: Input should be a finite "
        "number (found nan).",
        config={"gates": {"ndcg@2": {"min": math.nan}}},
    ),
    Bad(
        "default-rating-nan",
        f"{CONFIG}: the config is not valid:\n  conventions.default_rating: Input should be a "
        "finite number (found nan).",
        config={"conventions": {"default_rating": math.nan}},
    ),
    Bad(
        "resamples-a-billion",
        f"{CONFIG}: the config is not valid:\n  confidence.resamples: Input should be less "
        "than or equal to 1000000 (found 1000000000).",
        config={"confidence": {"resamples": 1_000_000_000}},
    ),
    Bad(
        "config-never-ends",
        "/dev/zero: the config is larger than 10 MB (or never ends, as a device does); a "
        "config is a few kB. Name the YAML file.",
        run="/dev/zero",
    ),
    Bad(
        "output-name-too-long",
        "output {tmp}/" + "a" * 40 + "... (305 characters): File name too long. Choose "
        "another name for the output.",
        output="a" * 300 + ".json",
    ),
    Bad(
        "rmse-overflows",
        "rmse is inf: its sums overflow 64-bit floats, so the inputs hold values too large to "
        "square or add (about 1e154 or more, or a huge gain). Scale the scores or grades "
        "down, then run again.",
        files={
            "predictions.csv": "user,item,score\nu1,a,1e-200\nu2,d,3\n",
            "truth.csv": "user,item,rating\nu1,a,1e200\nu2,d,3\n",
        },
        config={
            "ground_truth": {"path": "truth.csv", "columns": {"relevance": "rating"}},
            "metrics": ["rmse"],
        },
    ),
    # --- numeric overflow is the input's, not a bug ---------------------------
    Bad(
        "exponential-gain-overflows",
        "ndcg@2 is nan: with gain=exponential a grade g gains 2^g - 1, which overflows 64-bit "
        "floats for a grade above 1023. Keep the grades at most 1023, or use gain=linear.",
        files={"truth.csv": "user,item,rating\nu1,b,1100\nu2,d,3\n"},
        config={
            "ground_truth": {"path": "truth.csv", "columns": {"relevance": "rating"}},
            "metrics": ["ndcg@2"],
            "conventions": {"gain": "exponential"},
        },
    ),
    Bad(
        "fbeta-beta-overflows",
        f"{CONFIG}: metrics[0]: parameter 'beta' of 'fbeta@2(beta=1e+200)' is '1e+200'; it "
        "must be at most 1e+100 (larger values overflow 64-bit floats)",
        config={"metrics": ["fbeta@2(beta=1e200)"]},
    ),
    Bad(
        "max-depth-beyond-64-bits",
        f"{CONFIG}: the config is not valid:\n  conventions.max_depth: Input should be less "
        "than or equal to 4294967295 (found 1180591620717411303424).",
        config={"conventions": {"max_depth": 2**70}},
    ),
    # --- every parameter that expands work counts toward the bounds ----------
    Bad(
        "iprec-avg-a-million-levels",
        f"{CONFIG}: metrics[0]: 'iprec_avg(levels=1000000)' asks for 1,000,000 recall levels, "
        "and each counts as a metric value; receval computes at most 2,000 per run. Ask for "
        "fewer recall levels (each is computed on its own).",
        config={"metrics": ["iprec_avg(levels=1000000)"]},
    ),
    Bad(
        "iprec-avg-levels-add-up",
        f"{CONFIG}: metrics: the config asks for more than 2,000 metric values (2 metrics, "
        "with their recall levels counted one each); receval computes at most 2,000 per run. "
        "Ask for fewer cutoffs (e.g. [1, 5, 10, 20, 50, 100]) or split the metrics over "
        "several configs.",
        config={"metrics": ["iprec_avg(levels=1000)", "iprec_avg(levels=1001)"]},
    ),
    Bad(
        "segment-attributes-multiply-the-values",
        f"{CONFIG}: segment_by: 700 metric values for all users and again for each of 2 "
        "attributes make 2,100; receval computes at most 2,000 per run. Split the segments or "
        "the metrics over several configs.",
        config={"metrics": ["iprec_avg(levels=700)"], "segment_by": ["country", "device"]},
    ),
    Bad(
        "bootstrap-resamples-multiply-the-values",
        f"{CONFIG}: confidence.resamples: 1,000,000 resamples of 100 metric values make "
        "100,000,000 resampled values; receval computes at most 20,000,000 per run. Lower "
        "confidence.resamples (1,000 to 10,000 are usual) or ask for fewer metrics.",
        config={"metrics": ["iprec_avg(levels=100)"], "confidence": {"resamples": 1_000_000}},
    ),
    Bad(
        "yaml-alias-of-a-long-text-repeated",
        # the scalars' bytes: 79 of VALID_YAML, 12 of the keys notes and repeats, and the
        # 100,000-byte text 121 times
        f"{CONFIG}: the YAML's text expands to 12,100,091 bytes once its aliases (*name) are "
        "repeated, more than 10 MB; a config is a few kB. Remove the aliases that repeat "
        "large values.",
        config=VALID_YAML
        + "notes: &big "
        + "x" * 100_000
        + "\nrepeats: ["
        + ", ".join(["*big"] * 120)
        + "]\n",
    ),
    # --- messages: numbers too long for any setting or column ----------------------
    Bad(
        "csv-score-of-5000-digits",
        "predictions file {tmp}/predictions.csv cannot be read as csv: line 2: column 'score' "
        f"holds an integer of 5,000 digits ('{'9' * 35}...'), beyond a 64-bit integer. Fix the "
        "value (a score or a grade is a number of a few digits).",
        **predictions(
            "predictions.csv", f"user,item,score\nu1,a,{'9' * 5000}\nu2,d,{'8' * 5000}\n"
        ),
    ),
    Bad(
        "csv-relevance-of-5000-digits",
        "ground truth file {tmp}/truth.csv cannot be read as csv: line 2: column 'relevance' "
        f"holds an integer of 5,000 digits ('{'9' * 35}...'), beyond a 64-bit integer. Fix the "
        "value (a score or a grade is a number of a few digits).",
        files={"truth.csv": f"user,item,relevance\nu1,b,{'9' * 5000}\nu2,d,1\n"},
    ),
    Bad(
        "jsonl-score-of-5000-digits",
        "predictions file {tmp}/p.jsonl cannot be read as jsonl: line 1: 'score' is an integer "
        "of 5,000 digits, beyond any number column. Fix the value (an id, a score or a grade is "
        "a number of a few digits).",
        **predictions("p.jsonl", '{"user": "u1", "item": "a", "score": ' + "9" * 5000 + "}\n"),
    ),
    # --- messages: a suggestion that looks identical to what was found ---------------
    Bad(
        "header-in-nfd-suggests-with-code-points",
        "predictions file {tmp}/p.csv has no column 'usu\u00e1rio' (set by "
        "predictions.columns.user). Did you mean 'usua\u0301rio'? They look alike but are "
        "written with different code points: 'usu\\u00e1rio' vs 'usua\\u0301rio' (normalize "
        "the text to NFC). Its columns are: usua\u0301rio, item, score. Set "
        "predictions.columns.user to one of them.",
        **predictions("p.csv", "usua\u0301rio,item,score\nu1,a,0.9\n", user="usu\u00e1rio"),
    ),
    Bad(
        "header-with-a-zero-width-space-says-so",
        "predictions file {tmp}/p.csv has no column 'usu\u00e1rio' (set by "
        "predictions.columns.user). Did you mean 'usu\u200b\u00e1rio'? They look alike: "
        "'usu\\u200b\\u00e1rio' holds an invisible zero width space U+200B at character 4. "
        "Its columns are: usu\u200b\u00e1rio, item, score. Set predictions.columns.user to one "
        "of them.",
        **predictions("p.csv", "usu\u200b\u00e1rio,item,score\nu1,a,0.9\n", user="usu\u00e1rio"),
    ),
    Bad(
        "jsonl-ids-of-2-to-the-70-name-the-file-s-column",
        "ground truth file {tmp}/t.jsonl: column 'user_id' holds integers beyond 64 bits (1 "
        "of 2 values, e.g. 1180591620717411303424), which no id column holds. Write the ids "
        'as text (JSON strings: "1180591620717411303424").',
        files={
            # the id in one file only: in both, which file failed first (and so the
            # message) depended on the threads' timing
            "p.jsonl": '{"user_id": 1, "item": "a", "score": 0.5}\n',
            "t.jsonl": '{"user_id": 1180591620717411303424, "item": "a", "relevance": 1}\n'
            '{"user_id": 1, "item": "b", "relevance": 1}\n',
        },
        config={
            "predictions": {"path": "p.jsonl", "columns": {"user": "user_id"}},
            "ground_truth": {"path": "t.jsonl", "columns": {"user": "user_id"}},
        },
    ),
    Bad(
        "config-integer-of-5000-digits",
        f"{CONFIG}: gates.ndcg@2.min (line 5) is an integer of 5,000 digits, longer than any "
        "setting takes. Write a number a config can hold (a threshold, a count), e.g. 0.5 or "
        "1e300.",
        config=VALID_YAML + "gates:\n  ndcg@2: {min: " + "9" * 5000 + "}\n",
    ),
]


# --- Parquet pages that fail the CRC-32 their headers record (files written by pyarrow,
# a dev dependency: without it these rows are left out, and the test below is skipped)
HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None


DAMAGED = "fails its checksum: the file is damaged. Write the file again from its source."


HAND_FRAME = pl.read_csv(PREDICTIONS_CSV.encode())


# u2's last score, 0.5, overwritten by 2.0 (8 bytes); d and e in the item dictionary
# overwritten by x and y (the 8 bytes that end the dictionary page): without the
# checksums, both read as valid files with other values
SCORE_TWO = struct.pack("<d", 2.0)


ITEMS_X_Y = b"\x00\x00x\x01\x00\x00\x00y"


def checksum_rows() -> list[Bad]:
    checksummed = checksummed_parquet(HAND_FRAME)
    truth = pl.read_csv(TRUTH_CSV.encode())
    truth_parts = {
        "truth/part-00000.parquet": checksummed_parquet(truth.filter(pl.col("user") == "u1")),
        "truth/part-00001.parquet": overwritten_page(
            checksummed_parquet(truth.filter(pl.col("user") == "u2"), row_group_size=1),
            "item",
            b"\xff" * 4,
            row_group=1,
        ),
    }
    return [
        Bad(
            "parquet-page-fails-its-checksum",
            P + "p.parquet: page 1 of column 'score' in row group 1 of 1 " + DAMAGED,
            **predictions("p.parquet", overwritten_page(checksummed, "score", SCORE_TWO)),
            earlier=True,
        ),
        Bad(
            "parquet-dictionary-page-fails-its-checksum",
            P + "p.parquet: the dictionary page of column 'item' in row group 1 of 1 " + DAMAGED,
            **predictions(
                "p.parquet", overwritten_page(checksummed, "item", ITEMS_X_Y, dictionary=True)
            ),
        ),
        Bad(
            "parquet-folder-part-fails-its-checksum",
            T + "truth/part-00001.parquet: page 1 of column 'item' in row group 2 of 2 " + DAMAGED,
            files=truth_parts,
            config={"ground_truth": {"path": "truth"}},
        ),
    ]


# rows whose data reaches the engine: each also runs on the other polars engines, where the
# same message must come out (every engine goes through one assembly); every row runs on
# Spark below
ENGINES = {"streaming": {"engine": "streaming"}, "partitions": {"partitions": 2}}


ON_ENGINES = (
    *(("parquet-page-fails-its-checksum",) if HAS_PYARROW else ()),
    "rmse-overflows",
    "csv-duplicate-rows",
    "truth-duplicate-rows",
    "exponential-gain-overflows",
    "output-is-the-predictions",
)


BAD += checksum_rows() if HAS_PYARROW else []


ROWS = {case.id: case for case in BAD}


# engine: spark refuses these inputs before the JVM starts: TREC files (Spark reads CSV,
# TSV, Parquet and JSONL) and segments (a Spark run keeps no per-user values)
NOT_TREC = (
    "engine: spark reads CSV, TSV, Parquet and JSONL, not trec. Convert it first (receval "
    "convert writes Parquet), or use another engine."
)


SPARK_REFUSES = {
    "trec-run-short-line": P + "p.run: " + NOT_TREC,
    "qrels-text-relevance": T + "t.qrels: " + NOT_TREC,
    "qrels-not-utf8": T + "t.qrels: " + NOT_TREC,
}


# rows Spark reads without fault: its JSON reader takes an integer beyond 64 bits as an
# exact decimal, so a 2^70 id is an id there (polars refuses it, naming the column)
SPARK_READS = {"jsonl-ids-of-2-to-the-70-name-the-file-s-column"}


# rows whose file polars reads on Spark too, and fails on (receval names the line at fault
# with polars after Spark's read failed, or checks the file before Spark reads it): each
# runs in a process of its own there too (a fresh pytest, which starts its own Spark)
POLARS_FAILS_ON_SPARK = {
    "csv-ragged-row",
    "csv-ragged-row-late",
    "csv-unclosed-quote",
    "csv-unclosed-quote-in-a-long-file",
    "csv-text-after-a-closing-quote",
    "csv-not-utf8",
    "csv-not-utf8-late",
    "csv-text-score-late",
    "csv-score-of-5000-digits",
    "csv-relevance-of-5000-digits",
    "parquet-damaged-page",
    "parquet-folder-with-a-damaged-part",
    "parquet-damaged-ground-truth-in-partitions",
    "parquet-page-that-panics-the-reader",
    "jsonl-broken-line-late",
    "jsonl-text-score-late",
    "catalog-ragged-row",
    "interactions-not-utf8",
    "segments-ragged-row",
}


ON_SPARK = [
    case
    for case in BAD
    if (case.config is None or isinstance(case.config, dict)) and case.id not in SPARK_READS
]


def bad_case(tmp_path: Path, case: Bad, engine: dict[str, Any] | None = None) -> Path:
    """The row's files, folders, links and pipes written; the config path given."""
    given = case.config
    if engine is not None:
        assert given is None or isinstance(given, dict), "an engine row needs a config dict"
        given = {**(given or {}), **engine}
    config = build(tmp_path, case.files, given)
    for folder in case.folders:
        (tmp_path / folder).mkdir()
    for name, target in case.links.items():
        (tmp_path / name).symlink_to(target)
    for name in case.fifos:
        os.mkfifo(tmp_path / name)
    return config.parent / case.run


def check_bad(tmp_path: Path, case: Bad, engine: dict[str, Any] | None = None) -> None:
    """Run the row as `receval run CONFIG --output OUT` and check all the row promises."""
    config = bad_case(tmp_path, case, engine)
    out = tmp_path / case.output
    if case.earlier:
        out.write_bytes(EARLIER)
    kept = out.read_bytes() if case.input_output else None
    before = sorted(p.name for p in tmp_path.iterdir())
    result = invoke("run", config, "--output", out)
    assert_no_traceback(result)
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.replace(str(tmp_path), "{tmp}") == f"error: {case.message}\n"
    assert_plain(result.stderr)
    if case.earlier:
        assert out.read_bytes() == EARLIER
    elif kept is not None:
        assert out.read_bytes() == kept
    elif len(out.name) > 255:  # a name no file system takes: nothing can exist there
        assert not any(len(p.name) > 255 for p in tmp_path.iterdir())
    elif out.is_dir():
        assert list(out.iterdir()) == []
    else:
        assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no temporary file left
    if case.never is not None:
        assert not (tmp_path / case.never).exists()


# The rows `receval validate` does not refuse, each with what only `run` has: every other
# row `validate` refuses with run's message (validate is run without the evaluation).
OUTPUT_OPTION = "run's --output option (validate checks the config's output.path)"


VALUES = "a metric's value computed from the rows (validate computes no metric)"


RUN_ONLY: dict[str, str] = {
    "output-is-a-folder": OUTPUT_OPTION,
    "output-folder-missing": OUTPUT_OPTION,
    "output-is-the-predictions": OUTPUT_OPTION,
    "output-is-the-config": OUTPUT_OPTION,
    "output-name-too-long": OUTPUT_OPTION,
    "rmse-overflows": VALUES,
    "exponential-gain-overflows": VALUES,
}


INV_LOG2_3 = 1 / math.log2(3)


HAND = {"precision@1": PRECISION_1, "ndcg@2": NDCG_2}  # the hand case's values


@dataclass(frozen=True)
class Works:
    """A valid input and the metric values it must give, computed independently."""

    id: str
    expected: dict[str, float]
    files: dict[str, str | bytes] = field(default_factory=dict)
    config: dict[str, Any] | str | None = None


def renamed(text: str, names: dict[str, str]) -> str:
    """The hand case's CSV text with its ids replaced (u1 -> names['u1'], ...)."""
    lines = []
    for line in text.splitlines():
        fields = line.split(",")
        lines.append(",".join(names.get(f, f) for f in fields))
    return "\n".join(lines) + "\n"


UNICODE = {
    "u1": "ユーザー1",
    "u2": "🙂",
    "a": "\u03b1",  # Greek alpha
    "b": "\u03b2,\u03b2",  # Greek beta, a comma, beta: quoted in the CSV
    "c": "ç",
    "d": "日本",
    "e": "ë",
    "f": "\ufb00",  # the ligature ff
}


UNICODE_QUOTED = {k: f'"{v}"' if "," in v else v for k, v in UNICODE.items()}


INTEGERS = {"u1": "1", "u2": "2", "a": "10", "b": "11", "c": "12", "d": "13", "e": "14", "f": "15"}


# +-inf scores order the lists: u1 is a (+inf), c (0.7), b (-inf); u2 is e (+inf), d (-inf)
INF_SCORES = "user,item,score\nu1,a,inf\nu1,b,-inf\nu1,c,0.7\nu2,d,-inf\nu2,e,+inf\n"


INF_LISTS = {"u1": ["a", "c", "b"], "u2": ["e", "d"]}


# grades below 0, between 0 and 1 and fractional above the threshold (1)
GRADES = {"u1": {"b": 2.5, "a": -1.0, "c": 0.5}, "u2": {"d": 1.0, "f": -2.0}}


GRADED_TRUTH = "user,item,grade\n" + "".join(
    f"{user},{item},{grade}\n" for user, grades in GRADES.items() for item, grade in grades.items()
)


HAND_LISTS = {"u1": ["a", "b", "c"], "u2": ["d", "e"]}


def exponential(grades: dict[str, float]) -> dict[str, float]:
    """2^g - 1 for a positive grade, 0 for the others (no gain)."""
    return {item: 2**g - 1 if g > 0 else 0.0 for item, g in grades.items()}


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


# one user with 100,000 predictions: item i<n> scored 100000 - n; five relevant items, one
# of them never recommended
LONG = 100_000


LONG_RELEVANT = {"i0", "i7", "i500", f"i{LONG - 1}", "never"}


LONG_PREDICTIONS = "user,item,score\n" + "".join(f"u1,i{n},{LONG - n}\n" for n in range(LONG))


LONG_TRUTH = "user,item\n" + "".join(f"u1,{item}\n" for item in sorted(LONG_RELEVANT))


LONG_LIST = [f"i{n}" for n in range(LONG)]


def long_expected() -> dict[str, float]:
    """The naive references over the one 100,000-item list."""
    grades = dict.fromkeys(LONG_RELEVANT, 1.0)
    first = min(n for n, item in enumerate(LONG_LIST, start=1) if item in LONG_RELEVANT)
    return {
        f"ndcg@{LONG}": ndcg_at(LONG_LIST, grades, LONG),
        "ndcg@10": ndcg_at(LONG_LIST, grades, 10),
        "map": average_precision(LONG_LIST, LONG_RELEVANT),
        "recall@50000": len(LONG_RELEVANT & set(LONG_LIST[:50_000])) / len(LONG_RELEVANT),
        "precision@1000": len(LONG_RELEVANT & set(LONG_LIST[:1000])) / 1000,
        "mrr": 1 / first,
    }


ANCHORS_YAML = """\
predictions: &defaults
  path: predictions.csv
  format: csv
  separator: ","
ground_truth:
  <<: *defaults
  path: truth.csv
metrics: &metrics [precision@1, ndcg@2]
gates:
  ndcg@2: &bar {min: 0.1}
  precision@1: *bar
"""


def unsigned_case(names: dict[str, int], truth_signed: bool = False) -> dict[str, bytes]:
    """The hand case with integer ids (name -> id) in UInt64 Parquet columns (the truth's
    in Int64 when `truth_signed`)."""
    predictions = pl.read_csv(PREDICTIONS_CSV.encode())
    truth = pl.read_csv(TRUTH_CSV.encode())
    ids = pl.col("user", "item").replace_strict(names, return_dtype=pl.UInt64)
    truth_ids = ids.cast(pl.Int64) if truth_signed else ids
    return {
        "predictions.parquet": parquet_bytes(predictions.with_columns(ids)),
        "truth.parquet": parquet_bytes(truth.with_columns(truth_ids)),
    }


PARQUET_PAIR = {
    "predictions": {"path": "predictions.parquet"},
    "ground_truth": {"path": "truth.parquet"},
}


BEYOND_INT64 = {
    "u1": 2**63 + 5,
    "u2": 9,
    "a": 2**64 - 1,
    "b": 10,
    "c": 9,
    "d": 100,
    "e": 2**63,
    "f": 11,
}


SIGNED_TRUTH = {"u1": 9, "u2": 10, "a": 100, "b": 9, "c": 10, "d": 2, "e": 2**63 + 1, "f": 1}


WORKS = [
    *(
        [
            Works(
                "parquet-with-page-checksums",
                HAND,
                files={
                    "p.parquet": checksummed_parquet(HAND_FRAME, row_group_size=2),
                    "t.parquet": checksummed_parquet(pl.read_csv(TRUTH_CSV.encode())),
                },
                config={
                    "predictions": {"path": "p.parquet"},
                    "ground_truth": {"path": "t.parquet"},
                },
            )
        ]
        if HAS_PYARROW
        else []
    ),
    Works("uint64-ids-beyond-int64", HAND, files=unsigned_case(BEYOND_INT64), config=PARQUET_PAIR),
    Works(
        "uint64-ids-with-int64-truth",
        HAND,
        files=unsigned_case(SIGNED_TRUTH, truth_signed=True),
        config=PARQUET_PAIR,
    ),
    Works(
        "uint64-ids-with-csv-truth",
        HAND,
        files={
            **unsigned_case(BEYOND_INT64),
            "truth.csv": renamed(TRUTH_CSV, {k: str(v) for k, v in BEYOND_INT64.items()}),
        },
        config={"predictions": {"path": "predictions.parquet"}},
    ),
    Works(
        "csv-with-a-bom",
        HAND,
        files={
            "predictions.csv": "\ufeff" + PREDICTIONS_CSV,
            "truth.csv": ("\ufeff" + TRUTH_CSV).encode(),
        },
    ),
    Works(
        "tsv-with-a-bom",
        HAND,
        files={"t.tsv": "\ufeff" + TRUTH_CSV.replace(",", "\t")},
        config={"ground_truth": {"path": "t.tsv"}},
    ),
    Works(
        "csv-with-a-bom-and-a-quoted-header",
        HAND,
        files={
            "predictions.csv": '\ufeff"user","item","score"\n' + PREDICTIONS_CSV.split("\n", 1)[1]
        },
    ),
    Works(
        "qrels-with-a-bom",
        HAND,
        files={"t.qrels": "\ufeffu1 0 b 1\nu2 0 d 1\nu2 0 f 1\n"},
        config={"ground_truth": {"path": "t.qrels"}},
    ),
    Works(
        "csv-crlf-line-ends",
        HAND,
        files={
            "predictions.csv": PREDICTIONS_CSV.replace("\n", "\r\n"),
            "truth.csv": TRUTH_CSV.replace("\n", "\r\n"),
        },
    ),
    Works(
        # u1's items are "b,y" (0.9) and "a<newline>x" (0.8), and "a<newline>x" is relevant
        "csv-quoted-newlines-and-separators",
        {"precision@1": 0.5, "ndcg@2": (INV_LOG2_3 + 1 / (1 + INV_LOG2_3)) / 2},
        files={
            "predictions.csv": 'user,item,score\nu1,"b,y",0.9\nu1,"a\nx",0.8\nu2,d,0.9\n'
            'u2,"say ""hi""",0.5\n',
            "truth.csv": 'user,item\nu1,"a\nx"\nu2,d\nu2,f\n',
        },
    ),
    Works(
        "jsonl-with-blank-lines",
        HAND,
        files={
            "p.jsonl": "\n".join(
                f'{{"user": "{u}", "item": "{i}", "score": {s}}}\n'
                for u, i, s in (line.split(",") for line in PREDICTIONS_CSV.splitlines()[1:])
            )
        },
        config={"predictions": {"path": "p.jsonl"}},
    ),
    Works("yaml-anchors-aliases-and-merge-keys", HAND, config=ANCHORS_YAML),
    Works(
        "unicode-ids",
        HAND,
        files={
            "predictions.csv": renamed(PREDICTIONS_CSV, UNICODE_QUOTED),
            "truth.csv": renamed(TRUTH_CSV, UNICODE_QUOTED),
        },
    ),
    Works(
        # integers in the predictions, the same numbers as text in the ground truth: both
        # sides are compared as text, so 1 matches "1"
        "integer-ids-against-text-ids",
        HAND,
        files={
            "predictions.csv": renamed(PREDICTIONS_CSV, INTEGERS),
            "t.jsonl": "".join(
                f'{{"user": "{INTEGERS[u]}", "item": "{INTEGERS[i]}"}}\n'
                for u, i in (line.split(",") for line in TRUTH_CSV.splitlines()[1:])
            ),
        },
        config={"ground_truth": {"path": "t.jsonl"}},
    ),
    Works(
        "infinite-scores",
        {
            "precision@1": 0.0,
            "ndcg@2": mean([0.0, INV_LOG2_3 / (1 + INV_LOG2_3)]),
            "ndcg@3": mean([0.5, INV_LOG2_3 / (1 + INV_LOG2_3)]),
        },
        files={"predictions.csv": INF_SCORES},
        config={"metrics": ["precision@1", "ndcg@2", "ndcg@3"]},
    ),
    Works(
        # relevant (>= 1): u1's b (2.5) and u2's d (1); negative grades give no gain
        "negative-and-fractional-grades",
        {
            "precision@1": 0.5,
            "recall@3": 1.0,
            "ndcg@3": mean([ndcg_at(HAND_LISTS[u], GRADES[u], 3) for u in GRADES]),
            "ndcg@3(gain=exponential)": mean(
                [ndcg_at(HAND_LISTS[u], exponential(GRADES[u]), 3) for u in GRADES]
            ),
        },
        files={"truth.csv": GRADED_TRUTH},
        config={
            "ground_truth": {"path": "truth.csv", "columns": {"relevance": "grade"}},
            "metrics": ["precision@1", "recall@3", "ndcg@3", "ndcg@3(gain=exponential)"],
        },
    ),
    Works(
        # u1: b at 2 of {b}; u2: d at 1 of {d, f}; a billion is far beyond every list
        "a-cutoff-of-a-billion",
        {
            "ndcg@1000000000": NDCG_2,
            "precision@1000000000": 1e-9,
            "recall@1000000000": 0.75,
            "map@1000000000": 0.5,
        },
        config={
            "metrics": [
                "ndcg@1000000000",
                "precision@1000000000",
                "recall@1000000000",
                "map@1000000000",
            ]
        },
    ),
    Works(
        "a-cutoff-beyond-every-list",
        {"precision@10": 0.1, "ndcg@10": NDCG_2, "recall@10": 0.75, "hit_rate@10": 1.0},
        config={"metrics": ["precision@10", "ndcg@10", "recall@10", "hit_rate@10"]},
    ),
    Works(
        "one-user-with-100000-predictions",
        long_expected(),
        files={"predictions.csv": LONG_PREDICTIONS, "truth.csv": LONG_TRUTH},
        config={"metrics": list(long_expected())},
    ),
]


UINT64_ROWS = [case for case in WORKS if case.id.startswith("uint64")]
