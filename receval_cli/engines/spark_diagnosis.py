"""engine: spark: the polars engines' message for an input read through a URI.

A local input is checked by the polars readers before Spark starts, and read again by them
when the run fails (spark_inputs.input_failure): the message names the line or the page at
fault. An input given as a URI (`file:///...`, `hdfs://...`, `s3a://...`) is Spark's to
read, and what Spark says of a damaged file is Java's text, or a check of a one-row probe
of its schema (an empty file has no columns; a header without rows reads as text).

So when a run fails, the URI inputs are diagnosed as local files would be: the run plan
reads them as its local inputs (RunPlan.local_inputs: the same readers and checks), each
URI replaced by a local file, then each is read whole (failing_input). That file is
- for a `file:` URI, the local file it names: the message is the local file's, word for
  word;
- for another scheme, a copy of its bytes fetched through the session's Hadoop FileSystem
  (what Spark reads it with), when it is one file of at most FETCH_LIMIT bytes: the
  message names the URI.
A table, a folder Spark reads as CSV or JSON, a glob, a larger file: not diagnosed (the
Spark read's own error stands).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from receval_cli.config.loading import is_remote
from receval_cli.errors import InputError
from receval_cli.inputs.readers import Input, failing_input
from receval_cli.inputs.scanning import format_of_name

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from receval_cli.engines.run_plan import LocalInputs, RunPlan

FETCH_LIMIT = 64 * 1024 * 1024  # bytes of a remote file copied to the driver to diagnose
# the config's inputs (its key, the role the run plan reads it as)
_KEYS = {
    "ground_truth": "ground truth",
    "catalog": "catalog",
    "interactions": "interactions",
    "baseline": "baseline",
    "segments": "segments",
}


@dataclass(frozen=True)
class UriInputs:
    """The inputs of model `name` of a run plan given as URIs, and the session that reads
    them: `failure` diagnoses them once the run failed."""

    spark: SparkSession
    plan: RunPlan
    name: str

    def failure(self) -> InputError | None:
        """The polars readers' error for the first URI input they cannot read (as a local
        file, or as a fetched copy of its bytes), else None."""
        with tempfile.TemporaryDirectory(prefix="receval-uri-") as folder:
            copies: dict[str, tuple[Path, str]] = {}  # role: (local file, URI)
            updates: dict[str, Any] = {}
            file = self.plan.models[self.name]
            for key, role, given in self._uri_inputs():
                path = readable(self.spark, given.path, given.format, Path(folder, key))
                if path is not None:
                    copies[role] = (path, given.path)
                    updates[key] = given.model_copy(update={"path": str(path)})
            if not copies:
                return None
            loaded = self.plan.loaded
            config = loaded.config.model_copy(update=updates)
            local = dataclasses.replace(loaded, config=config)
            model = updates.get("predictions", file)
            planned = dataclasses.replace(self.plan, loaded=local, models={self.name: model})
            try:
                found = failing_input(_by_role(planned.local_inputs(self.name), copies))
            except InputError as error:
                found = error
            return None if found is None else _naming(found, copies)

    def _uri_inputs(self) -> Iterator[tuple[str, str, Any]]:
        """(config key, role, its config) of each input given as a URI (not a table)."""
        config = self.plan.loaded.config
        given: dict[str, Any] = {"predictions": self.plan.models[self.name]}
        given.update({key: getattr(config, key) for key in _KEYS})
        if not config.segment_by:
            del given["segments"]
        for key, section in given.items():
            uri = section is not None and is_remote(section.path)
            if uri and not section.path.startswith("table:"):
                yield key, _KEYS.get(key, key), section


def _by_role(read: LocalInputs, roles: dict[str, tuple[Path, str]]) -> list[Input]:
    """The inputs the run plan read of the `roles` given (in its order)."""
    found = [
        *read.checked.values(),
        read.sources.catalog,
        read.sources.interactions,
        read.sources.baseline,
        read.segments_file,
    ]
    return [source for source in found if source is not None and source.role in roles]


def local_path(location: str) -> Path | None:
    """The local path a `file:` URI names (file:///x, file:/x, file://localhost/x), else
    None. Written as Hadoop's Path reads it: a %-escape, a `?` or a `#` is part of the
    name (file:///a%20b.csv is the file `a%20b.csv`)."""
    scheme, _, rest = location.partition(":")
    if scheme.lower() != "file":
        return None
    if rest.startswith("//"):
        authority, _, path = rest[2:].partition("/")
        if authority not in ("", "localhost"):
            return None
        rest = f"/{path}"
    return Path(rest)


def readable(spark: SparkSession, location: str, given: str | None, folder: Path) -> Path | None:
    """A local file the polars readers can read for the input at `location`: the file a
    `file:` URI names, else a copy of the URI's bytes in `folder`; None when there is none
    to read (see the module's docstring)."""
    path = local_path(location)
    if path is None:
        folder.mkdir()
        return fetched(spark, location, folder)
    # a file, or a folder the polars readers read as Spark does (Parquet parts)
    fmt = given or format_of_name(location.rstrip("/")) or "parquet"
    return path if path.is_file() or (path.is_dir() and fmt == "parquet") else None


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


def _naming(error: InputError, copies: dict[str, tuple[Path, str]]) -> InputError:
    """`error` with a fetched copy's path written as its URI (the copy's folder as the
    URI's, for a path derived from it); a `file:` URI's local file keeps its path."""
    message, fields = str(error), dict(error.fields)
    for path, location in copies.values():
        if local_path(location) is not None or str(path) not in message:
            continue
        parent = location.rstrip("/").rsplit("/", 1)[0]
        message = message.replace(str(path), location).replace(str(path.parent), parent)
        fields["path"] = location
    renamed = InputError(message)
    renamed.fields = fields
    return renamed
