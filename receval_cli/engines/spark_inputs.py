"""engine: spark reads the predictions and the ground truth exactly as the polars engines
map them: one decision of layout and columns (inputs/readers.py's map_predictions and
map_ground_truth), one set of checks and messages.

A local file is first opened by the polars readers (a lazy scan and its schema checks:
a missing file, a column that is not there, float ids, a score that is not a number),
so a bad input is refused before the JVM starts. A Spark table (`table:NAME`) or a URI
with a scheme (`s3a://`, `hdfs://`, `file:///`, `dbfs:/`) is read by Spark and its schema
goes through the same mapping (a one-row probe of its column types). Spark then selects
the canonical columns by that mapping: score, rank or items layouts, list truth with or
without grades, lists as arrays or as separated text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from receval_cli.config.model import GroundTruthConfig, PredictionsConfig
from receval_cli.engines.spark_diagnosis import UriInputs
from receval_cli.errors import InputError, RecEvalError
from receval_cli.inputs.readers import Input, failing_input, map_ground_truth, map_predictions
from receval_cli.inputs.scanning import csv_separator, format_of_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import SparkSession

_READABLE = ("csv", "tsv", "parquet", "jsonl")
# a malformed CSV or JSON line stops the read (Spark's default turns it into nulls)
STRICT = "FAILFAST"


def csv_options(separator: str) -> dict[str, Any]:
    """Spark's CSV reader set to read a file as polars does: a header, and a quote inside a
    quoted field written twice (RFC 4180; Spark's default escape is a backslash, which
    read the field for "q" as three quotes each side)."""
    return {"header": True, "sep": separator, "quote": '"', "escape": '"', "mode": STRICT}


def refuse_unreadable(fmt: str, path: Path | str, role: str) -> None:
    """Formats Spark does not read as receval does: TREC files, zstd-compressed text."""
    if fmt not in _READABLE:
        fix = "Convert it first (receval convert writes Parquet), or use another engine."
        raise InputError(
            f"{role} file {path}: engine: spark reads CSV, TSV, Parquet and JSONL, not {fmt}. "
            f"{fix}",
            path=path,
            found=fmt,
            fix=fix,
        )
    if str(path).endswith(".zst"):
        fix = "Compress it with gzip (.gz), or write Parquet."
        raise InputError(
            f"{role} file {path}: engine: spark does not read zstd-compressed text. {fix}",
            path=path,
            found=".zst",
            fix=fix,
        )


def source_format(location: str, given: str | None) -> str:
    """A table's or URI's format: the given one, else its name's extension (as a local
    file's: inputs/scanning.format_of_name), else Parquet (a folder of Parquet files, a
    table)."""
    if given is not None:
        return given
    name = location.rstrip("/").rsplit("/", 1)[-1]
    return format_of_name(name) or "parquet"


def read_frame(
    spark: SparkSession, location: str, fmt: str, separator: str | None, role: str
) -> SparkFrame:
    """A file, folder, URI or table as a Spark DataFrame; a read Spark refuses (no such
    path or table, a damaged file) is an InputError naming the input."""
    from pyspark.errors import AnalysisException

    try:
        if location.startswith("table:"):
            return spark.table(location.removeprefix("table:"))
        if fmt in ("csv", "tsv"):
            sep = csv_separator(fmt, separator)
            return spark.read.csv(location, inferSchema=True, **csv_options(sep))
        if fmt == "jsonl":
            return spark.read.json(location, mode=STRICT)
        return spark.read.parquet(location)
    except AnalysisException as error:
        reason = str(error).splitlines()[0].rstrip().removesuffix(".")  # the message's period
        what = "table" if location.startswith("table:") else "file"
        fix = "Check the path (or the table's name) and that the Spark session can reach it."
        if what == "table" and "TABLE_OR_VIEW_NOT_FOUND" in str(error):
            fix = table_fix(spark)
        raise InputError(
            f"{role} {what} {location} could not be read by Spark: {reason}. {fix}",
            path=location,
            found=reason,
            fix=fix,
        ) from None


def table_fix(spark: SparkSession) -> str:
    """What to do about a `table:NAME` the session's catalog does not hold: a session
    receval starts has Spark's in-memory catalog, not a Hive metastore's tables."""
    catalog = spark.conf.get("spark.sql.catalogImplementation", "in-memory")
    if catalog == "hive":
        return (
            "Check the table's name (database.table) and that the session's Hive metastore "
            "holds it."
        )
    return (
        f"The session's catalog is Spark's {catalog} one, which holds only the tables made "
        "in this session. For a Hive metastore's table, start the session with "
        "--spark-conf spark.sql.catalogImplementation=hive (and the metastore's settings: "
        "hive-site.xml in SPARK_CONF_DIR, or spark.hadoop.hive.metastore.uris), or run "
        "receval under spark-submit on a cluster configured for Hive."
    )


def _polars_type(spark_type: Any) -> pl.DataType:
    """The polars type the polars readers would see for a Spark column type."""
    from pyspark.sql import types as T

    if isinstance(spark_type, T.IntegralType):
        return pl.Int64()
    if isinstance(spark_type, T.FractionalType):
        return pl.Float64()
    if isinstance(spark_type, T.StringType):
        return pl.String()
    if isinstance(spark_type, T.BooleanType):
        return pl.Boolean()
    if isinstance(spark_type, T.ArrayType):
        return pl.List(_polars_type(spark_type.elementType))
    if isinstance(spark_type, T.TimestampType):
        return pl.Datetime()
    if isinstance(spark_type, T.DateType):
        return pl.Date()
    return pl.Binary()


def probe_of(frame: SparkFrame) -> pl.LazyFrame:
    """A one-row frame of nulls typed as the Spark schema: what a check that looks at the
    first row of a polars scan finds there."""
    return pl.DataFrame(
        [pl.Series(f.name, [None], dtype=_polars_type(f.dataType)) for f in frame.schema.fields]
    ).lazy()


def map_input(
    probe: pl.LazyFrame, config: PredictionsConfig | GroundTruthConfig, path: Path, role: str
) -> Input:
    """The polars engines' mapping of the predictions' or the ground truth's columns,
    decided on a probe of a Spark schema: the same choices and the same errors."""
    if isinstance(config, GroundTruthConfig):
        return map_ground_truth(probe, config.columns, config.list_separator, path, "spark")
    return map_predictions(probe, config.columns, config.list_separator, path, "spark", role)


def read_mapped(
    spark: SparkSession,
    location: str,
    given_format: str | None,
    separator: str | None,
    checked: Input | None,
    role: str,
    mapping: Callable[[pl.LazyFrame, Path], Input],
) -> tuple[SparkFrame, Input]:
    """An input read by Spark, and its mapping: the polars readers' (`checked`, a local
    file, whose schema they checked) or `mapping` of a one-row probe of the Spark schema (a
    table or URI). A CSV's integer ids keep the text they were written as unless every
    one is a canonical integer (ids_as_written)."""
    fmt = checked.format if checked is not None else source_format(location, given_format)
    if checked is None:
        refuse_unreadable(fmt, location, role)
    frame = read_frame(spark, location, fmt, separator, role)
    source = checked if checked is not None else mapping(probe_of(frame), Path(location))
    if fmt in ("csv", "tsv"):
        ids = tuple(source.columns[c] for c in ("user", "item") if c in source.columns)
        frame = ids_as_written(spark, location, csv_separator(fmt, separator), frame, ids)
    return frame, source


def ids_as_written(
    spark: SparkSession, path: str, sep: str, inferred: SparkFrame, ids: tuple[str, ...]
) -> SparkFrame:
    """Read the CSV again with its integer-typed id columns as text, and cast each back
    to bigint only when every value is a canonical integer (one aggregation)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegralType, StringType, StructField, StructType

    fields = inferred.schema.fields
    integral = [f.name for f in fields if f.name in ids and isinstance(f.dataType, IntegralType)]
    if not integral:
        return inferred
    schema = StructType(
        [StructField(f.name, StringType(), True) if f.name in integral else f for f in fields]
    )
    text = spark.read.csv(path, schema=schema, **csv_options(sep))
    canonical = r"^(0|-?[1-9][0-9]{0,18})$"
    checks = [
        F.min(
            F.when(F.col(c).isNull(), True).otherwise(
                F.col(c).rlike(canonical) & F.col(c).cast("bigint").isNotNull()
            )
        ).alias(c)
        for c in integral
    ]
    verdict = text.select(*checks).first()
    for column in integral:
        if verdict is None or verdict[column] is not False:
            text = text.withColumn(column, F.col(column).cast("bigint"))
    return text


def listed(frame: SparkFrame, column: str, separator: str) -> Any:
    """A list column as an array: as it is, or text split at `separator` and trimmed (as
    inputs/readers.list_items does for CSV)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(frame.schema[column].dataType, T.ArrayType):
        return F.col(column)
    parts = F.split(F.col(column), re.escape(separator))
    return F.transform(parts, lambda part: F.trim(part))


def canonical_predictions(frame: SparkFrame, source: Input, separator: str) -> SparkFrame:
    """(user, item, score | rank) by the mapping of `source` (polars' map_predictions)."""
    from pyspark.sql import functions as F

    cols = source.columns
    if source.layout == "items":
        lists = frame.select(
            F.col(cols["user"]).alias("user"), listed(frame, cols["items"], separator).alias("l")
        )
        exploded = lists.select("user", F.posexplode("l"))
        return exploded.select(
            "user", F.col("col").alias("item"), (F.col("pos") + 1).cast("double").alias("rank")
        )
    value = source.layout
    return frame.select(
        F.col(cols["user"]).alias("user"),
        F.col(cols["item"]).alias("item"),
        F.col(cols[value]).cast("double").alias(value),
    )


def canonical_truth(frame: SparkFrame, source: Input, separator: str) -> SparkFrame:
    """(user, item, rel[, propensity][, intent]) by the mapping of `source` (polars'
    map_ground_truth): one row per item, or lists of items with or without their grades."""
    from pyspark.sql import functions as F

    cols = source.columns
    user = F.col(cols["user"]).alias("user")
    if source.layout == "items":
        items = listed(frame, cols["items"], separator)
        if "relevances" in cols:
            grades = F.transform(
                listed(frame, cols["relevances"], separator), lambda g: g.cast("double")
            )
            nulls = F.transform(items, lambda _: F.lit(None).cast("double"))
            # a grade list of another length: null grades, which the checks report
            grades = F.when(F.size(grades) == F.size(items), grades).otherwise(nulls)
        else:
            grades = F.transform(items, lambda _: F.lit(1.0))
        zipped = frame.select(user, F.arrays_zip(items.alias("i"), grades.alias("g")).alias("z"))
        pairs = zipped.select("user", F.explode("z").alias("p"))
        return pairs.select(
            "user", F.col("p.i").alias("item"), F.col("p.g").cast("double").alias("rel")
        )
    relevance = cols.get("relevance")
    rel = F.col(relevance).cast("double") if relevance else F.lit(1.0)
    # a click log's propensities (the click metrics)
    logged = (
        [F.col(cols["propensity"]).cast("double").alias("propensity")]
        if "propensity" in cols
        else []
    )
    # the intent each row grades the item for (the intent-aware metrics)
    if "intent" in cols:
        logged.append(F.col(cols["intent"]).cast("string").alias("intent"))
    return frame.select(user, F.col(cols["item"]).alias("item"), rel.alias("rel"), *logged)


def input_failure(error: Exception, local: list[Input], uris: UriInputs | None = None) -> Exception:
    """What a failed Spark run says: the error of the first local input the polars readers
    cannot read whole (the message the polars engines give: a malformed line, a damaged
    page, text among numbers), else that of the first input given as a URI that they
    cannot read (`uris`: engines/spark_diagnosis.py; an empty file, a header without
    rows, a malformed line, a truncated file), else a Spark read failure naming the file,
    else `error` itself. Only on failure are the inputs read again; a usage or internal
    error of receval's own is passed on as it is."""
    if isinstance(error, RecEvalError) and not isinstance(error, InputError):
        return error
    found = failing_input(local)
    if found is None and uris is not None:
        found = uris.failure()
    if found is not None:
        return found
    failed = read_failure_of(error)
    return failed if failed is not None else error


_FAILED_FILE = re.compile(r"error while reading file (\S+?)\.?\s")
# "org.apache.spark.SparkException: " before the reason
_JAVA_CLASS = re.compile(r"^(?:[a-z_][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error): ")


def read_failure_of(error: BaseException) -> InputError | None:
    """The InputError for a Spark job that failed reading an input file (a damaged or
    vanished Parquet part, found while the buckets ran), naming the file; None for any
    other failure."""
    text = str(error)
    if "FAILED_READ_FILE" not in text and "PATH_NOT_FOUND" not in text:
        return None
    found = _FAILED_FILE.search(text)
    where = found.group(1) if found is not None else "an input file"
    cause = next((line.strip() for line in text.splitlines() if "Caused by:" in line), "")
    reason = cause.removeprefix("Caused by:").strip() or text.splitlines()[0][:200]
    reason = _JAVA_CLASS.sub("", reason).rstrip(".")  # Java's class name, not the user's
    fix = "Check that file (rewrite it, or remove it from the folder), then run again."
    return InputError(
        f"Spark could not read {where} while evaluating: {reason}. {fix}",
        path=where,
        found=reason,
        fix=fix,
    )
