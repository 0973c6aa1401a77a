"""engine: spark gives an input read through a URI the polars engines' message:
an empty file, a header without rows, a malformed CSV line and a truncated Parquet file
given as a `file://` URI get the `error:` line the in-memory engine gives for the same
file as a local path (the line at fault where there is one), exit 2, no Java text, no
report written. They said "Its columns are: ." (an empty file), "holds String values"
(a header without rows: Spark reads every column as text) or Java's exception text.

What is compared: the whole line, once the path is written alike. A `file:` URI is
diagnosed on the local file it names, so the message is the local one word for word; a
message of Spark's own checks names the URI as Spark's Path writes it (`file:/tmp/...`),
and one diagnosed on a copy fetched through Spark (the route of `hdfs://`, `s3a://`: run
here on the `file:` URI) names the URI as written. Both forms are mapped back to the
local path before comparing. A damaged file too large to fetch keeps Spark's reason,
naming the file, without Java's class names.

Each case runs both roles (predictions, ground truth) in one test: the two whose reads
fail in polars run in a process of their own (and so start Spark once each), the others
share the session of the `spark` fixture.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import invoke, write, write_config

from receval_cli.engines import spark_diagnosis

PREDICTIONS = "user,item,score\n1,10,0.9\n1,11,0.5\n2,10,0.3\n3,12,0.2\n"
TRUTH = "user,item\n1,10\n2,10\n3,11\n"


def header_only(good: str) -> bytes:
    return good.splitlines(keepends=True)[0].encode()


def malformed(good: str) -> bytes:
    """A last row with one field too many (the first rows parse: the polars scan of the
    schema reads them; Spark's FAILFAST read stops at it)."""
    last = good.splitlines()[-1]
    return f"{good}{last},extra\n".encode()


def truncated(good: str) -> bytes:
    """A Parquet file of the CSV's rows cut in half: its footer is gone."""
    whole = io.BytesIO()
    pl.read_csv(good.encode()).write_parquet(whole)
    data = whole.getvalue()
    return data[: len(data) // 2]


CASES = {
    "empty": (".csv", lambda good: b""),
    "header only": (".csv", header_only),
    "malformed line": (".csv", malformed),
    "truncated parquet": (".parquet", truncated),
}
ROLES = {"predictions": ("predictions", PREDICTIONS), "ground truth": ("ground_truth", TRUTH)}


def outcome(config: Path, output: Path) -> tuple[int, list[str]]:
    """`receval run` (in this process: Spark's session is the fixture's): its exit code
    and stderr lines; no traceback, no Java text, no report written."""
    result = invoke("run", config, "--output", output)
    assert "Traceback" not in result.stderr
    assert "org.apache" not in result.stderr, result.stderr
    assert "java." not in result.stderr, result.stderr
    assert not output.exists()
    return result.exit_code, result.stderr.splitlines()


def written_alike(line: str, uri: str, local: Path) -> str:
    """The line with the URI (as written, or as Spark's Path writes it) as the path."""
    collapsed = "file:" + uri.removeprefix("file://")
    return line.replace(uri, str(local)).replace(collapsed, str(local))


def check_case(folder: Path, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    suffix, broken = CASES[case]
    for role, (key, good) in ROLES.items():
        where = folder / key
        write(where / "predictions.csv", PREDICTIONS)
        write(where / "ground_truth.csv", TRUTH)
        bad = write(where / f"broken{suffix}", broken(good))
        uri = bad.resolve().as_uri()
        config: dict[str, Any] = {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "ground_truth.csv"},
            "metrics": ["ndcg@2", "recall@3"],
        }
        config[key] = {"path": bad.name}
        memory = outcome(write_config(where, config, "memory.yaml"), where / "memory.json")
        config[key] = {"path": uri}
        spark = write_config(where, {**config, "engine": "spark"}, "spark.yaml")
        on_spark = outcome(spark, where / "spark.json")
        with monkeypatch.context() as patched:  # as for hdfs:// or s3a://: bytes fetched
            patched.setattr(spark_diagnosis, "local_path", lambda location: None)
            fetched = outcome(spark, where / "fetched.json")
        assert memory[0] == on_spark[0] == fetched[0] == 2, (role, memory, on_spark, fetched)
        assert len(memory[1]) == 1, memory
        assert memory[1][0].startswith("error: "), memory
        assert f"{role} file {bad.resolve()}" in memory[1][0]
        for lines in (on_spark[1], fetched[1]):
            assert len(lines) == 1, (role, lines)
            assert written_alike(lines[0], uri, bad.resolve()) == memory[1][0], role
        if case in ("malformed line", "truncated parquet"):  # names what it found, where
            assert "cannot be read as" in memory[1][0]
            with monkeypatch.context() as patched:  # too large to fetch: Spark's reason
                patched.setattr(spark_diagnosis, "local_path", lambda location: None)
                patched.setattr(spark_diagnosis, "FETCH_LIMIT", 0)
                code, lines = outcome(spark, where / "large.json")
            assert code == 2
            assert len(lines) == 1, lines
            assert lines[0].startswith("error: Spark could not read file:"), lines
            assert "Check that file" in lines[0]
        if case == "malformed line":
            assert f"line {len(good.splitlines()) + 1} has" in memory[1][0]


@pytest.mark.parametrize("case", ["empty", "header only"])
def test_an_unreadable_file_through_a_uri(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    check_case(tmp_path, case, monkeypatch)


@pytest.mark.own_process  # the polars readers fail on the file (tests/support/process_isolation.py)
@pytest.mark.parametrize("case", ["malformed line", "truncated parquet"])
def test_a_damaged_file_through_a_uri(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    check_case(tmp_path, case, monkeypatch)


def test_a_file_uri_names_the_file_hadoop_reads() -> None:
    """As Hadoop's Path reads a `file:` URI: a %-escape is part of the name (Spark reads
    file:///a%20b.csv as the file `a%20b.csv`); another host's file is fetched."""
    local_path = spark_diagnosis.local_path
    assert local_path("file:///tmp/a%20b.csv") == Path("/tmp/a%20b.csv")
    assert local_path("file:/tmp/p.csv") == Path("/tmp/p.csv")
    assert local_path("file://localhost/tmp/p.csv") == Path("/tmp/p.csv")
    for other in ("file://host/tmp/p.csv", "hdfs://nn/p.csv", "s3a://b/p.csv", "table:t"):
        assert local_path(other) is None, other
