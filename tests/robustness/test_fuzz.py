"""Fuzzing the readers and the config loader: receval evaluates, or raises its own error.

The property, for any bytes in an input file and any YAML document built from the config's
keys: evaluating the config returns a report, or raises a RecEvalError with exit code 2 (a
user error, one message) -- never another exception, and never exit code 3 (an internal
error). Most examples run through the Python API (load_config, then evaluate_config) for
speed; a few run through `receval run`, which must exit 0, 1 or 2 with no traceback and,
on 2, one `error: ` message. The examples are derandomized, so CI runs the same ones every
time; every crash the fuzzer found is pinned below as an @example.

Damaged Parquet bytes make polars panic, and a process where polars panicked is not reused
(tests/conftest.py): every test here runs in a pytest process of its own.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from cli_helpers import assert_no_traceback, invoke
from hypothesis import example, given, settings
from hypothesis import strategies as st
from message_words import assert_plain
from robustness_cases import HAND_PARQUET, build, damaged, panicking, parquet_bytes

from receval_cli.analysis.runs import evaluate_config
from receval_cli.config.loading import load_config
from receval_cli.errors import RecEvalError
from receval_cli.metrics import REGISTRY

pytestmark = [pytest.mark.own_process, pytest.mark.slow]

SETTINGS = settings(derandomize=True, database=None)

# the hand case as rows, per input: (columns, rows)
TABLES: dict[str, tuple[list[str], list[list[Any]]]] = {
    "predictions": (
        ["user", "item", "score"],
        [["u1", "a", 0.9], ["u1", "b", 0.8], ["u1", "c", 0.7], ["u2", "d", 0.9], ["u2", "e", 0.5]],
    ),
    "ground_truth": (
        ["user", "item", "relevance"],
        [["u1", "b", 1], ["u2", "d", 2], ["u2", "f", 1]],
    ),
    "catalog": (["item"], [[item] for item in "abcdefg"]),
    "interactions": (["user", "item"], [["u1", "a"], ["u2", "a"], ["u3", "d"], ["u3", "b"]]),
}
# the metric that reads each input (every case also computes precision@1 and ndcg@2)
READS = {
    "predictions": "map",
    "ground_truth": "recall@2",
    "catalog": "catalog_coverage@2",
    "interactions": "novelty@2",
}
FORMATS = ("csv", "jsonl", "parquet")
# values a cell may be replaced by: other types, empties, non-finite and huge numbers
ODD_VALUES: list[Any] = [
    None,
    "",
    "x",
    "NaN",
    "inf",
    float("nan"),
    float("inf"),
    float("-inf"),
    -1,
    0,
    1.5,
    2**70,
    True,
    'ü,\n"',
    "1",
    [1, 2],
]
# byte strings inserted into a file: separators, quotes, line ends, markers, odd tokens
TOKENS = [
    b",",
    b'"',
    b"\n",
    b"\r\n",
    b";",
    b"\t",
    b"\x00",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b"{",
    b"}",
    b"[",
    b":",
    b"NaN",
    b"-inf",
    b"1e400",
    b"null",
    b"PAR1",
    b"u1",
    b"99999999999999999999",
]


def serialize(columns: list[str], rows: list[list[Any]], fmt: str) -> bytes:
    """The table as a CSV, JSONL or Parquet file (odd values written as each format can)."""
    if fmt == "csv":
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([["" if v is None else v for v in row] for row in rows])
        return text.getvalue().encode()
    if fmt == "jsonl":
        lines = [json.dumps(dict(zip(columns, row, strict=True))) for row in rows]
        return ("\n".join(lines) + "\n").encode()
    data = {name: [row[i] for row in rows] for i, name in enumerate(columns)}
    return parquet_bytes(pl.DataFrame([_series(name, values) for name, values in data.items()]))


def _series(name: str, values: list[Any]) -> pl.Series:
    """A column of the values' own type when they share one polars holds, else text."""
    kinds = {type(v) for v in values if v is not None}
    if len(kinds) <= 1 and not kinds & {list, bool}:
        try:
            return pl.Series(name, values)
        except (TypeError, OverflowError, pl.exceptions.PolarsError):
            pass  # e.g. an integer beyond 64 bits
    return pl.Series(name, [None if v is None else str(v) for v in values])


DAMAGED_TEXT_SCORES = damaged(serialize(["user", "item", "score"], [["u1", "a", "x"]], "parquet"))


@st.composite
def tables(draw: st.DrawFn, role: str) -> tuple[list[str], list[list[Any]]]:
    """The role's hand table with a column maybe dropped and a few cells replaced."""
    columns, rows = TABLES[role]
    columns, rows = list(columns), [list(row) for row in rows]
    if draw(st.booleans()) and len(columns) > 1:
        drop = draw(st.integers(0, len(columns) - 1))
        columns.pop(drop)
        for row in rows:
            row.pop(drop)
    for _ in range(draw(st.integers(0, 2))):
        row = draw(st.sampled_from(rows))
        row[draw(st.integers(0, len(columns) - 1))] = draw(st.sampled_from(ODD_VALUES))
    return columns, rows


@st.composite
def mutations(draw: st.DrawFn, data: bytes) -> bytes:
    """The bytes after 0-3 edits: truncate, replace a byte, insert a token, delete a run."""
    for _ in range(draw(st.integers(0, 3))):
        size = len(data)
        kind = draw(st.sampled_from(["truncate", "replace", "insert", "delete"]))
        at = draw(st.integers(0, size))
        if kind == "truncate":
            data = data[:at]
        elif kind == "replace" and size:
            at = min(at, size - 1)
            data = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1 :]
        elif kind == "insert":
            token = draw(st.sampled_from(TOKENS) | st.binary(min_size=1, max_size=6))
            data = data[:at] + token + data[at:]
        else:
            data = data[:at] + data[at + draw(st.integers(1, 16)) :]
    return data


@st.composite
def input_files(draw: st.DrawFn) -> tuple[str, str, bytes]:
    """(role, format, the file's bytes): a hand table, changed, serialized, then mutated."""
    role = draw(st.sampled_from(list(TABLES)))
    fmt = draw(st.sampled_from(FORMATS))
    columns, rows = draw(tables(role))
    return role, fmt, draw(mutations(serialize(columns, rows, fmt)))


@contextmanager
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="receval-fuzz-") as name:
        yield Path(name)


def with_input(where: Path, role: str, fmt: str, data: bytes) -> Path:
    """A config whose `role` input is `data` (the other files: the hand case)."""
    name = f"{role}.{fmt}"
    config: dict[str, Any] = {"metrics": ["precision@1", "ndcg@2", READS[role]]}
    config[role] = {"path": name}
    return build(where, {name: data}, config)


def outcome(config: Path) -> RecEvalError | None:
    """Evaluate the config through the API: None for a report, else receval's error."""
    try:
        evaluate_config(load_config(config))
    except RecEvalError as error:
        return error
    return None


def evaluates_or_refuses(config: Path) -> None:
    """The property: a report, or a RecEvalError that is a user error with a message (any
    other exception propagates and fails the test)."""
    error = outcome(config)
    if error is not None:
        assert error.exit_code == 2, f"exit {error.exit_code}: {error}"
        assert str(error).strip(), "an empty message"
        assert_plain(str(error))


# --- (a) the readers -------------------------------------------------------------------


@settings(SETTINGS, max_examples=800)
@given(input_files())
# crashes the fuzzer found, each fixed in a reader: an infinite grade (exit 3, an internal
# error), a damaged Parquet page behind a text score column (a PolarsError escaped the
# type check), one byte of a page header changed (polars' reader panics: a BaseException)
@example(("ground_truth", "csv", b"user,item,relevance\nu1,b,1\nu2,d,inf\n"))
@example(("predictions", "parquet", DAMAGED_TEXT_SCORES))
@example(("predictions", "parquet", panicking(HAND_PARQUET)))
# inputs whose message was wrong or vague (the messages now: test_matrix.py): an unclosed
# quote ("has a header but no rows"), a ragged catalog (no file named), a JSONL file with
# a BOM (no line named)
@example(("predictions", "csv", b'user,item,score\nu1,"a,0.9\nu2,d,0.5\n'))
@example(("catalog", "csv", b"item\na\nb,c\n"))
@example(("predictions", "jsonl", b'\xef\xbb\xbf{"user": "u1", "item": "a", "score": 1}\n'))
def test_mutated_input_files(case: tuple[str, str, bytes]) -> None:
    role, fmt, data = case
    with folder() as where:
        evaluates_or_refuses(with_input(where, role, fmt, data))


@settings(SETTINGS, max_examples=150)
@given(st.sampled_from(list(TABLES)), st.sampled_from([*FORMATS, "tsv", "run"]), st.binary())
# zstd's magic number alone: polars' decompression raised an OSError ("incomplete frame")
@example("predictions", "csv", b"(\xb5/\xfd")
def test_random_bytes_as_an_input(role: str, fmt: str, data: bytes) -> None:
    if fmt == "run" and role == "ground_truth":
        fmt = "qrels"
    with folder() as where:
        evaluates_or_refuses(with_input(where, role, fmt, data))


# --- (b) the config --------------------------------------------------------------------

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 40)
    | st.sampled_from([0, -1, 2**63, 10**20])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)


def mostly(valid: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`valid` four times in five: a config with every key odd fails at its first."""
    return st.sampled_from([True, True, True, True, False]).flatmap(lambda ok: valid if ok else odd)


def nested(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Random lists and mappings of the leaves, a few levels deep."""
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=6,
    )


ODD = SCALARS | nested(SCALARS)
CONVENTION_CHOICES = {
    "tie_break": ("item_desc", "item_asc", "input_order"),
    "gain": ("linear", "exponential", "binary"),
    "duplicates": ("error", "first", "max_score"),
    "preset": ("trec_eval", "ranx", "jurity", "recommenders", "replay", "rectools"),
    "users_without_recommendations": ("zero", "skip"),
    "users_without_relevant": ("zero", "skip"),
    "ap_denominator": ("relevant", "min_k_relevant", "hits", "k"),
    "score_precision": ("float64", "float32"),
    "relevance_threshold": (0, 1, 2, 0.5, -1),
    "max_depth": (1, 2, 10**9),
}
CONVENTIONS = st.fixed_dictionaries(
    {}, optional={name: mostly(st.sampled_from(c), ODD) for name, c in CONVENTION_CHOICES.items()}
)
RANKING = ["precision", "recall", "ndcg", "map", "mrr", "hit_rate", "f1", "dcg", "r_precision"]
ODD_CUTOFFS = ["0", "-3", "ten", "1000000000", "99999999999999999999", "", "2.5"]


@st.composite
def metric_strings(draw: st.DrawFn) -> str:
    """name[@k][(param=value,...)] with real and made-up names, cutoffs and parameters."""
    name = draw(
        mostly(st.sampled_from(RANKING), st.sampled_from(sorted(REGISTRY)) | st.text(max_size=8))
    )
    text = name
    if draw(st.booleans()):
        k = draw(mostly(st.sampled_from(["1", "2", "5", "all"]), st.sampled_from(ODD_CUTOFFS)))
        text += f"@{k}"
    definition = REGISTRY.get(name)
    if definition is not None and definition.all_params() and draw(st.integers(0, 3)) == 0:
        param = draw(st.sampled_from(definition.all_params()))
        odd = st.sampled_from(["bogus=1", f"{param.name}=x", f"{param.name}=", "beta=-1"])
        valid = st.sampled_from([f"{param.name}={choice}" for choice in param.choices or ("1",)])
        text += f"({draw(mostly(valid, odd))})"
    return text


PATHS = st.sampled_from(["predictions.csv", "truth.csv", "catalog.csv", "missing.csv", "."])


def files_entry(path: str, columns: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """An input's mapping: mostly its own file, sometimes another, odd keys and values."""
    entry = st.fixed_dictionaries(
        {"path": mostly(st.just(path), PATHS | SCALARS)},
        optional={
            "format": mostly(st.just("csv"), st.sampled_from(["tsv", "parquet", "trec"]) | ODD),
            "separator": mostly(st.just(","), st.sampled_from([";", "\t", "", ",,", "é"]) | ODD),
            "columns": columns,
        },
    )
    return mostly(entry, ODD)


def columns(**names: str) -> st.SearchStrategy[Any]:
    """A columns mapping: the right names mostly, else another column or an odd value."""
    wrong = st.sampled_from(["user", "item", "score", "relevance", "x"]) | ODD
    optional = {key: mostly(st.just(name), wrong) for key, name in names.items()}
    return st.fixed_dictionaries({}, optional=optional)


GATES = st.dictionaries(
    mostly(st.sampled_from(["ndcg@2", "precision@1"]), metric_strings()),
    st.fixed_dictionaries(
        {}, optional={"min": mostly(st.floats(0, 1), ODD), "max": mostly(st.floats(0, 1), ODD)}
    ),
    max_size=2,
)
CONFIGS = st.fixed_dictionaries(
    {
        "predictions": files_entry(
            "predictions.csv", columns(user="user", item="item", score="score")
        ),
        "ground_truth": files_entry("truth.csv", columns(user="user", item="item")),
        "metrics": mostly(st.lists(metric_strings(), min_size=1, max_size=4), ODD),
    },
    optional={
        "cutoffs": mostly(st.lists(st.integers(1, 5), min_size=1, max_size=3), ODD),
        "conventions": mostly(CONVENTIONS, ODD),
        "gates": mostly(GATES, ODD),
        "catalog": files_entry("catalog.csv", columns(item="item", category="country")),
        "interactions": files_entry("log.csv", columns(user="user", item="item")),
        "segments": files_entry("segments.csv", columns(user="user")),
        "segment_by": mostly(st.lists(st.sampled_from(["country", "item"]), max_size=2), ODD),
        # spark and many partitions are slow on purpose; the values here stay quick
        "engine": mostly(st.sampled_from(["auto", "in_memory", "streaming"]), st.just("gpu")),
        "partitions": mostly(st.integers(1, 2), st.integers(-1, 0) | st.text(max_size=3)),
        "confidence": st.fixed_dictionaries(
            {},
            optional={"level": mostly(st.floats(0.5, 0.99), ODD), "resamples": st.integers(1, 9)},
        ),
    },
)
PLAIN = {
    "predictions": {"path": "predictions.csv"},
    "ground_truth": {"path": "truth.csv"},
    "metrics": ["ndcg@2"],
}
SIDE_FILES = {
    "catalog.csv": "item,country\na,DE\nb,FR\nc,DE\nd,FR\ne,DE\nf,FR\n",
    "log.csv": "user,item\nu1,a\nu2,a\nu3,d\n",
    "segments.csv": "user,country\nu1,DE\nu2,FR\n",
}


def dump(config: Any) -> str:
    """The config as YAML text (a value that appears twice is written as an anchor and an
    alias)."""
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


@settings(SETTINGS, max_examples=500)
@given(CONFIGS)
# crashes the fuzzer found: a separator polars refuses (ValueError), a preset that is a
# mapping (TypeError: unhashable)
@example({**PLAIN, "predictions": {"path": "predictions.csv", "separator": "é"}})
@example({**PLAIN, "conventions": {"preset": {"a": 1}}})
def test_random_configs(config: dict[str, Any]) -> None:
    with folder() as where:
        evaluates_or_refuses(build(where, SIDE_FILES, dump(config)))


VALID_CONFIG = (
    "predictions: &files {path: predictions.csv, format: csv}\n"
    "ground_truth:\n  <<: *files\n  path: truth.csv\n"
    "cutoffs: [1, 2]\nmetrics: [precision, ndcg@2, {name: map, k: 2}]\n"
    "conventions: {tie_break: item_asc}\ngates:\n  ndcg@2: {min: 0.1}\n"
)


@settings(SETTINGS, max_examples=300)
@given(mutations(VALID_CONFIG.encode()))
@example(VALID_CONFIG.encode() + b"\x00")  # a NUL byte: a ReaderError escaped
@example(VALID_CONFIG.encode() + b"? [a]\n: 1\n")  # a list as a key: TypeError escaped
@example(VALID_CONFIG.encode() + b"x: " + b"[" * 2000 + b"]" * 2000)  # RecursionError
def test_mutated_config_text(text: bytes) -> None:
    with folder() as where:
        evaluates_or_refuses(build(where, {"config.yaml": text}))


# --- a few through the command line ----------------------------------------------------


def cli_exits_cleanly(config: Path) -> None:
    """`receval run` exits 0 or 1 with the report, or 2 with one `error: ` line and none."""
    out = config.parent / "OUT.json"
    result = invoke("run", config, "--output", out)
    assert_no_traceback(result)
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.stderr)
    if result.exit_code == 2:
        starts = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert result.stderr.startswith("error: "), result.stderr
        assert len(starts) == 1, result.stderr
        assert_plain(result.stderr)
        assert not out.exists()
    else:
        specs = [str(spec) for spec in load_config(config).specs]
        assert (
            list(json.loads(out.read_text(encoding="utf-8"))["models"]["model"]["metrics"]) == specs
        )


@settings(SETTINGS, max_examples=15)
@given(input_files())
def test_mutated_input_files_through_the_command_line(case: tuple[str, str, bytes]) -> None:
    role, fmt, data = case
    with folder() as where:
        cli_exits_cleanly(with_input(where, role, fmt, data))


@settings(SETTINGS, max_examples=8)
@given(mutations(VALID_CONFIG.encode()))
def test_mutated_config_through_the_command_line(text: bytes) -> None:
    with folder() as where:
        cli_exits_cleanly(build(where, {"config.yaml": text}))
