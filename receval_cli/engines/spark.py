"""engine: spark: the same per-user metric code, run on Spark executors.

Predictions and ground truth are read by Spark (local files, URIs, or `table:NAME` for a
Spark table) and mapped to receval's canonical columns as the polars engines map them
(engines/spark_inputs.py), then co-grouped by a hash bucket of the user id. Each bucket
is a pair of Arrow tables that the one assembly evaluates exactly as on one machine
(assembly.bucket_partial); the buckets' Partials come back to the driver as JSON, are
merged as they arrive and finished by the same code as a single pass, so the report is
the same bit for bit. Ranking breaks ties by a total order on (score, item), so the
numbers do not depend on the partitioning; the file-order conventions (tie_break
input_order, duplicates first) have no meaning on Spark and are refused.

Needs the `spark` extra (pyspark 4, pyarrow) and Java. Per-user, global and rating
metrics run on Spark; click (logged) metrics do not yet.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from receval_cli import console
from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import LoadedConfig
from receval_cli.config.model import GroundTruthConfig, PredictionsConfig, SparkConfig
from receval_cli.engines.partitions import check_partitionable, describe_only
from receval_cli.engines.spark_inputs import (
    STRICT,
    canonical_predictions,
    canonical_truth,
    checked_locals,
    format_of,
    input_failure,
    mapped,
    read_frame,
    refuse_unreadable,
)
from receval_cli.errors import UsageError
from receval_cli.evaluation import unknown_items
from receval_cli.evaluation.assembly import (
    Partial,
    PerUserSpool,
    Run,
    bucket_partial,
    finish,
    merge,
)
from receval_cli.evaluation.plan import metric_exprs
from receval_cli.evaluation.wire import from_ipc_text, ipc_text
from receval_cli.inputs.optional import Sources, check_sources, read_sources
from receval_cli.inputs.readers import Input, csv_separator
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.side_columns import item_popularity
from receval_cli.report.data import Report

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import SparkSession

DEFAULT_BUCKETS = 64
_LOG4J = Path(__file__).with_name("spark_log4j2.properties")
_JAVA_OPTIONS = "spark.driver.extraJavaOptions"


def _spark_session(spark: SparkSession | None, settings: SparkConfig) -> SparkSession:
    """The session to run on: the one given (a notebook's), else the active one
    (spark-submit's, whose settings stay), else a new one with the config's master and
    settings (`spark:`, --spark-master, --spark-conf)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError(
            "engine: spark needs pyspark: install the extra, pip install 'receval[spark]' "
            "(pyspark 4 and pyarrow; Spark also needs Java 17 or newer).",
            key="engine",
            found="spark",
        ) from None
    from pyspark.logger import PySparkLogger

    # a failed query's context is logged as JSON on stderr; receval reports the error
    for name in ("DataFrameQueryContextLogger", "SQLQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True
    if spark is not None:
        return spark
    builder = SparkSession.builder.appName("receval")
    if settings.master is not None:
        builder = builder.master(settings.master)
    for key, value in session_conf(settings).items():
        builder = builder.config(key, value)
    _python_for_local_workers(settings)
    return builder.getOrCreate()


def session_conf(settings: SparkConfig) -> dict[str, str]:
    """The settings of a session receval starts: the user's (`spark.conf`), over receval's
    defaults: the JVM logs fatal errors only (a task that fails comes back to receval,
    which reports it as one `error:` line; a later -Dlog4j2.configurationFile in the
    user's own Java options wins), and no console progress bar."""
    conf = {"spark.ui.showConsoleProgress": "false", **settings.conf}
    quiet = f"-Dlog4j2.configurationFile={_LOG4J.as_uri()}"
    given = conf.get(_JAVA_OPTIONS)
    conf[_JAVA_OPTIONS] = quiet if given is None else f"{quiet} {given}"
    return conf


def _python_for_local_workers(settings: SparkConfig) -> None:
    """When receval starts Spark's JVM itself (not under spark-submit) on a local master,
    Spark's Python workers run this Python (which has receval, polars and pyarrow), not
    the `python3` on the PATH, unless PYSPARK_PYTHON or spark.pyspark.python says."""
    local = settings.master is None or settings.master.startswith("local")
    launched = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit started the JVM
    if local and not launched and "spark.pyspark.python" not in settings.conf:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


_MISSING_MODULE = re.compile(r"No module named '([^']+)'")


def environment_failure(error: BaseException) -> UsageError | None:
    """A Python worker that cannot import receval's code or its libraries: what to ship
    (README, "Running on a cluster"); None for any other failure."""
    text = str(error)
    found = _MISSING_MODULE.search(text)
    if found is None or "Python worker" not in text:
        return None
    module = found.group(1)
    fix = (
        "Ship receval's environment to the executors: a packed environment "
        "(spark.archives and PYSPARK_PYTHON), receval installed on every node from its "
        "wheel, or addPyFile in a notebook (README, Running on a cluster)."
    )
    return UsageError(
        f"engine: spark: the executors' Python cannot import {module} (No module named "
        f"'{module}'). {fix}",
        key="engine",
        found=f"No module named '{module}'",
        fix=fix,
    )


def refuse_file_order(conventions: Conventions) -> None:
    for key, value in (
        ("tie_break", conventions.tie_break),
        ("duplicates", conventions.duplicates),
        ("truth_duplicates", conventions.truth_duplicates),
    ):
        if value in ("input_order", "first"):
            fix = (
                "Use tie_break item_desc/item_asc and duplicates error/max_score "
                "(truth_duplicates error/max), or another engine."
            )
            raise UsageError(
                f"engine: spark has no file order, so conventions.{key}: {value} is not "
                f"defined there. {fix}",
                key=f"conventions.{key}",
                found=value,
                fix=fix,
            )


def _ids_as_written(
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
    text = spark.read.csv(path, header=True, schema=schema, sep=sep, mode=STRICT)
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


def _source(
    spark: SparkSession,
    loaded: LoadedConfig,
    config: PredictionsConfig | GroundTruthConfig,
    checked: Input | None,
    role: str,
) -> tuple[SparkFrame, Input]:
    """One input read by Spark, and its mapping: the polars readers' (`checked`, a local
    file) or the same mapping decided on the Spark schema (a table or URI)."""
    location = loaded.location(config.path)
    fmt = checked.format if checked is not None else format_of(location, config.format)
    if checked is None:
        refuse_unreadable(fmt, location, role)
    frame = read_frame(spark, location, fmt, config.separator, role)
    source = checked if checked is not None else mapped(frame, config, location, role)
    if fmt in ("csv", "tsv"):
        ids = tuple(source.columns[c] for c in ("user", "item") if c in source.columns)
        frame = _ids_as_written(spark, location, csv_separator(fmt, config.separator), frame, ids)
    return frame, source


def _canonical(
    spark: SparkSession,
    loaded: LoadedConfig,
    file: PredictionsConfig,
    checked: dict[str, Input | None],
) -> tuple[SparkFrame, str, SparkFrame, dict[str, str], dict[str, str]]:
    """Predictions (user, item, value) and truth (user, item, rel), with their layouts,
    mapped as the polars engines map them (engines/spark_inputs.py)."""
    from pyspark.sql import functions as F

    raw, source = _source(spark, loaded, file, checked["predictions"], "predictions")
    predictions = canonical_predictions(raw, source, file.list_separator)
    layout = "rank" if source.layout == "items" else source.layout
    truth_config: GroundTruthConfig = loaded.config.ground_truth
    traw, tsource = _source(spark, loaded, truth_config, checked["ground truth"], "ground truth")
    truth = canonical_truth(traw, tsource, truth_config.list_separator)
    # one id type on both sides: integers stay integers, anything else is compared as text
    for column in ("user", "item"):
        types = {dict(predictions.dtypes)[column], dict(truth.dtypes)[column]}
        target = "bigint" if types <= {"int", "bigint", "smallint", "tinyint"} else "string"
        predictions = predictions.withColumn(column, F.col(column).cast(target))
        truth = truth.withColumn(column, F.col(column).cast(target))
    return predictions, layout, truth, source.columns, tsource.columns


def _input(role: str, layout: str, frame: pl.DataFrame) -> Input:
    """A bucket's Arrow rows as an Input (row: the position within the bucket)."""
    lazy = frame.lazy().with_row_index("row")
    return Input(role, Path(f"spark:{role}"), "spark", layout, {}, lazy, frame.lazy())


def evaluate_bucket(
    predictions: pl.DataFrame,
    truth: pl.DataFrame,
    layout: str,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    shipped: dict[str, Any] | None = None,
    keep_rows: bool = False,
) -> Partial:
    """One bucket's Partial (the function the executors run); `keep_rows` keeps its
    per-user rows.

    `truth` holds the bucket's ground truth (kind "truth") and, with the optional inputs,
    its users' logged items (kind "known") and baseline lists (kind "baseline", the
    score or rank in `value`); `shipped` carries the item-level tables every bucket needs
    whole (the catalog, the log's item popularity)."""
    shipped = shipped or {}
    kinds = truth.get_column("kind") if "kind" in truth.columns else None
    rows = truth if kinds is None else truth.filter(kinds == "truth")
    p = _input("predictions", layout, predictions)
    t = _input("ground truth", "graded", rows.select("user", "item", "rel"))
    sources = Sources()
    if kinds is not None and shipped.get("interactions"):
        known = truth.filter(kinds == "known").select("user", "item")
        sources.interactions = _input("interactions", "log", known)
    if kinds is not None and shipped.get("baseline_layout"):
        value = shipped["baseline_layout"]
        listed = truth.filter(kinds == "baseline").select(
            "user", "item", pl.col("value").alias(value)
        )
        sources.baseline = _input("baseline", value, listed)
    if shipped.get("catalog"):
        catalog = from_ipc_text(shipped["catalog"]).lazy()
        columns = shipped["catalog_columns"]
        sources.catalog = Input(
            "catalog", Path("spark:catalog"), "spark", "catalog", columns, catalog, catalog
        )
        sources.embedding_dims = int(shipped["embedding_dims"])
    if shipped.get("popularity"):
        sources.popularity = from_ipc_text(shipped["popularity"]).lazy()
    check = bool(shipped.get("unknown_items", True))
    keep = "rows" if keep_rows else "none"
    return bucket_partial(p, t, specs, conventions, sources, "in-memory", check, "bucket", keep)


def _side_inputs(
    spark: SparkSession, loaded: LoadedConfig, id_types: dict[str, str], sources: Sources
) -> tuple[SparkFrame | None, dict[str, Any]]:
    """The optional inputs for the buckets: per-user rows to co-group with the truth
    (logged items, baseline lists) and the item-level tables shipped to every bucket.
    They are read on the driver by polars (they must fit there); their ids are cast to
    the Spark inputs' id types in place."""
    if not sources.given():
        return None, {}
    conventions = loaded.config.conventions
    casts = {
        c: pl.col(c).cast(pl.Int64 if id_types[c] == "bigint" else pl.String)
        for c in ("user", "item")
    }
    for source in sources.given():
        names = source.frame.collect_schema().names()
        source.frame = source.frame.with_columns(casts[c] for c in ("user", "item") if c in names)
    shipped: dict[str, Any] = {}
    parts = []
    schema = "user {u}, item {i}, rel double, kind string, value double".format(
        u=id_types["user"], i=id_types["item"]
    )
    if sources.catalog is not None:
        shipped["catalog"] = ipc_text(sources.catalog.frame.collect())
        shipped["catalog_columns"] = sources.catalog.columns
        shipped["embedding_dims"] = sources.embedding_dims
    if sources.interactions is not None:
        log = sources.interactions.frame
        shipped["interactions"] = True
        shipped["popularity"] = ipc_text(item_popularity(log, conventions.tie_break).collect())
        known = log.select("user", "item").unique().collect()
        parts.append(known.with_columns(rel=None, kind=pl.lit("known"), value=None))
    if sources.baseline is not None:
        column = sources.baseline.value_column
        shipped["baseline_layout"] = column
        listed = sources.baseline.frame.select("user", "item", pl.col(column).alias("value"))
        parts.append(
            listed.collect().select(
                "user", "item", rel=None, kind=pl.lit("baseline"), value="value"
            )
        )
    if not parts:
        return None, shipped
    rows = pl.concat(
        [
            p.select(
                "user",
                "item",
                pl.col("rel").cast(pl.Float64),
                "kind",
                pl.col("value").cast(pl.Float64),
            )
            for p in parts
        ]
    )
    return spark.createDataFrame(rows.to_pandas(), schema=schema), shipped


def evaluate_spark(
    loaded: LoadedConfig,
    spark: SparkSession | None = None,
    buckets: int = DEFAULT_BUCKETS,
    per_user: bool = False,
) -> Report:
    """Evaluate a one-model config on Spark: the Report a polars engine gives, bit for bit
    (`per_user` keeps the per-user rows, streamed bucket by bucket to temporary files on
    the driver; the raw per-user values of intervals and comparisons are not kept)."""
    config = loaded.config
    conventions = config.conventions
    refuse_file_order(conventions)
    check_partitionable(loaded, "engine: spark", side_inputs=True)
    specs = loaded.specs
    user_specs = tuple(s for s in specs if lookup(s.name).scope == "user")
    (file,) = config.model_files().values()
    checked = checked_locals(loaded, file)  # local inputs: refused before Spark starts
    driver_sources = read_sources(loaded)
    check_sources(driver_sources, conventions.duplicates)
    metric_exprs(user_specs, conventions, driver_sources)  # a missing input: an error
    with console.stage("start Spark"):
        session = _spark_session(spark, config.spark)
    local = [s for s in (*checked.values(), *driver_sources.given()) if s is not None]
    try:
        return _evaluate(session, loaded, file, checked, driver_sources, buckets, per_user)
    except Exception as error:  # Py4JJavaError and pyspark's errors too: see input_failure
        found = environment_failure(error) or input_failure(error, local)
        if found is error:
            raise
        raise found from None


def _evaluate(
    session: SparkSession,
    loaded: LoadedConfig,
    file: PredictionsConfig,
    checked: dict[str, Input | None],
    driver_sources: Sources,
    buckets: int,
    per_user: bool,
) -> Report:
    config = loaded.config
    conventions = config.conventions
    specs = loaded.specs
    predictions, layout, truth, mapping, tmapping = _canonical(session, loaded, file, checked)
    id_types = {c: dict(truth.dtypes)[c] for c in ("user", "item")}
    side_rows, shipped = _side_inputs(session, loaded, id_types, driver_sources)
    reference = (
        unknown_items.reference_of_spark(truth, driver_sources)
        if config.unknown_items.check
        else None
    )
    shipped["unknown_items"] = config.unknown_items.check
    if side_rows is not None:
        from pyspark.sql import functions as F

        labelled = truth.select(
            "user",
            "item",
            "rel",
            F.lit("truth").alias("kind"),
            F.lit(None).cast("double").alias("value"),
        )
        truth = labelled.unionByName(side_rows)
    spool = PerUserSpool() if per_user else None
    merged = _run_buckets(
        session, predictions, truth, layout, specs, conventions, buckets, shipped, spool
    )
    # the report describes a local file as the polars engines do (its fingerprint too)
    p_input = checked["predictions"] or describe_only(
        "predictions", loaded.location(file.path), layout, mapping
    )
    t_input = checked["ground truth"] or describe_only(
        "ground truth", loaded.location(config.ground_truth.path), "graded", tmapping
    )
    run = Run(
        p_input,
        t_input,
        specs,
        conventions,
        driver_sources,
        reference,
        engine={"name": "spark", "buckets": buckets, "spark": session.version},
        per_user_rows=None if spool is None else spool.scan(),
        spool=spool,
    )
    return finish(merged, run)


def _run_buckets(
    spark: SparkSession,
    predictions: SparkFrame,
    truth: SparkFrame,
    layout: str,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    buckets: int,
    shipped: dict[str, Any],
    spool: PerUserSpool | None,
) -> Partial:
    """Co-group both inputs by a hash bucket of the user; each bucket through the polars
    code, via Arrow. The Partials come back to the driver as JSON, one executor partition
    at a time, and are merged as they come; with `spool`, each bucket's per-user rows
    (Arrow IPC) go to a temporary file."""
    import pyarrow as pa  # type: ignore[import-untyped]
    from pyspark.sql import functions as F

    bucket = F.pmod(F.xxhash64("user"), F.lit(buckets)).cast("int").alias("bucket")
    left = predictions.select(bucket, "*").groupBy("bucket")
    right = truth.select(bucket, "*").groupBy("bucket")
    spec_texts = [str(s) for s in specs]
    settings = conventions.model_dump(mode="json")
    keep_rows = spool is not None

    def run(key: tuple[Any, ...], p: pa.Table, t: pa.Table) -> pa.Table:
        from receval_cli.metrics import resolve

        parsed = tuple(resolve(MetricSpec.parse(text)) for text in spec_texts)
        rules = Conventions.model_validate(settings)
        found = evaluate_bucket(
            pl.from_arrow(p).drop("bucket"),  # type: ignore[union-attr]
            pl.from_arrow(t).drop("bucket"),  # type: ignore[union-attr]
            layout,
            parsed,
            rules,
            shipped,
            keep_rows,
        )
        kinds, payloads = ["partial"], [json.dumps(found.to_json())]
        if found.per_user is not None:
            kinds.append("users")
            payloads.append(ipc_text(found.per_user))
        return pa.table({"bucket": [key[0]] * len(kinds), "kind": kinds, "payload": payloads})

    schema = "bucket int, kind string, payload string"
    results = left.cogroup(right).applyInArrow(run, schema=schema)
    partials = []
    for row in results.toLocalIterator():
        if row["kind"] == "users":
            assert spool is not None
            spool.add(from_ipc_text(row["payload"]))
        else:
            partials.append(Partial.from_json(json.loads(row["payload"])))
            if len(partials) > 1:
                partials = [merge(partials)]
    return merge(partials)
