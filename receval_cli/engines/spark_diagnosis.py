"""engine: spark: the polars engines' message for an input read through a URI.

A local input is checked by the polars readers before Spark starts, and read again by them
when the run fails (spark_inputs.input_failure): the message names the line or the page at
fault. An input given as a URI (`file:///...`, `hdfs://...`, `s3a://...`) is Spark's to
read, and what Spark says of a damaged file is Java's text, or a check of a one-row probe
of its schema (an empty file has no columns; a header without rows reads as text).

So when a run fails, each URI input is diagnosed as the local file would be: read by the
same polars readers as in RunPlan.local_inputs (inputs/readers.py and the others), then
read whole (failing_input). The file they read is
- for a `file:` URI, the local file it names: the message is the local file's, word for
  word;
- for another scheme, a copy of its bytes fetched through the session's Hadoop FileSystem
  (what Spark reads it with), when it is one file of at most FETCH_LIMIT bytes: the
  message names the URI.
A table, a folder Spark reads as CSV or JSON, a glob, a larger file: not diagnosed (the
Spark read's own error stands).
"""

from __future__ import annotations

import tempfile
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from receval_cli.analysis.segments import segments_input
from receval_cli.config.loading import LoadedConfig, is_remote
from receval_cli.config.model import PredictionsConfig
from receval_cli.errors import InputError
from receval_cli.inputs.optional import read_catalog, read_interactions
from receval_cli.inputs.readers import (
    Input,
    failing_input,
    format_of_name,
    read_ground_truth,
    read_predictions,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FETCH_LIMIT = 64 * 1024 * 1024  # bytes of a remote file copied to the driver to diagnose


@dataclass(frozen=True)
class UriInput:
    """An input given as a URI: where (as written), its role, its configured format, and
    the polars reader of its role (what reads it when it is a local file)."""

    location: str
    role: str
    given_format: str | None
    read: Callable[[Path], Input]


@dataclass(frozen=True)
class UriInputs:
    """The URI inputs of one run, and the session that reads them."""

    spark: SparkSession
    inputs: tuple[UriInput, ...]

    def failure(self) -> InputError | None:
        """The polars readers' error for the first URI input they cannot read (as a local
        file, or as a fetched copy of its bytes), else None."""
        for given in self.inputs:
            with readable_copy(self.spark, given) as path:
                if path is None:
                    continue
                found = diagnosed(given, path)
            if found is not None:
                return found
        return None


def uri_inputs(spark: SparkSession, loaded: LoadedConfig, file: PredictionsConfig) -> UriInputs:
    """The inputs of a run with predictions `file` that are URIs (not tables), in the order
    the local inputs are read (RunPlan.local_inputs)."""
    config = loaded.config
    found: list[UriInput] = []

    def add(path: str, role: str, given: str | None, read: Callable[[Path], Input]) -> None:
        if is_remote(path) and not path.startswith("table:"):
            found.append(UriInput(path, role, given, read))

    add(file.path, "predictions", file.format, lambda p: read_predictions(file, p))
    truth = config.ground_truth
    add(truth.path, "ground truth", truth.format, lambda p: read_ground_truth(truth, p))
    if config.catalog is not None:
        catalog = config.catalog
        add(catalog.path, "catalog", catalog.format, lambda p: read_catalog(catalog, p))
    if config.interactions is not None:
        log = config.interactions
        add(log.path, "interactions", log.format, lambda p: read_interactions(log, p))
    if config.baseline is not None:
        baseline = config.baseline
        add(
            baseline.path,
            "baseline",
            baseline.format,
            lambda p: read_predictions(baseline, p, role="baseline"),
        )
    if config.segment_by and config.segments is not None:
        segments, by = config.segments, list(config.segment_by)
        add(segments.path, "segments", segments.format, lambda p: segments_input(segments, p, by))
    return UriInputs(spark, tuple(found))


def diagnosed(given: UriInput, path: Path) -> InputError | None:
    """The polars readers' error for the file at `path` (read as a local `given`): a check
    of its schema (read_*), else a row that cannot be read (failing_input); None when they
    read it whole. A fetched copy's temporary path is replaced by the URI."""
    try:
        found = failing_input([given.read(path)])
    except InputError as error:
        found = error
    if found is None or local_path(given.location) is not None:
        return found
    return _naming(found, path, given.location)


def local_path(location: str) -> Path | None:
    """The local path a `file:` URI names (file:///x, file:/x, file://localhost/x; its
    %-escapes decoded, as Hadoop's Path does), else None."""
    parts = urllib.parse.urlsplit(location)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(urllib.parse.unquote(parts.path))


@contextmanager
def readable_copy(spark: SparkSession, given: UriInput) -> Iterator[Path | None]:
    """A local file the polars readers can read for `given`: the file a `file:` URI names,
    else a temporary copy of the URI's bytes; None when there is none to read (see the
    module's docstring)."""
    fmt = given.given_format or format_of_name(given.location.rstrip("/")) or "parquet"
    path = local_path(given.location)
    if path is not None:
        # a file, or a folder the polars readers read as Spark does (Parquet parts)
        readable = path.is_file() or (path.is_dir() and fmt == "parquet")
        yield path if readable else None
        return
    with tempfile.TemporaryDirectory(prefix="receval-uri-") as folder:
        yield fetched(spark, given.location, Path(folder))


def fetched(spark: SparkSession, location: str, folder: Path) -> Path | None:
    """The bytes of the file at `location`, read by the session's Hadoop FileSystem (the
    one Spark reads it with: its scheme's client and settings) and written into `folder`
    under the file's name; None for a folder or a glob, a file over FETCH_LIMIT bytes, or
    one that cannot be read (a Spark Connect session has no JVM on this side). (Spark's
    `binaryFile` source would leave out a file of 0 bytes.)"""
    name = location.rstrip("/").rsplit("/", 1)[-1]
    try:
        hadoop = spark._jvm.org.apache.hadoop.fs  # type: ignore[union-attr]
        where = hadoop.Path(location)
        files = where.getFileSystem(spark._jsc.hadoopConfiguration())
        status = files.getFileStatus(where)
        if not name or not status.isFile() or status.getLen() > FETCH_LIMIT:
            return None
        stream = files.open(where)
        try:
            data = bytes(stream.readAllBytes())
        finally:
            stream.close()
    except Exception:  # Py4J's errors, Java's, none on Spark Connect: no diagnosis
        return None
    path = folder / name
    path.write_bytes(data)
    return path


def _naming(error: InputError, copy: Path, location: str) -> InputError:
    """`error` with the fetched copy's path written as the URI (its folder as the URI's,
    for a path derived from it)."""
    parent = location.rstrip("/").rsplit("/", 1)[0]
    message = str(error).replace(str(copy), location).replace(str(copy.parent), parent)
    renamed = InputError(message)
    renamed.fields = {**error.fields, "path": location}
    return renamed
