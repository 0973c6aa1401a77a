"""engine: spark: the same per-user metric code, run on Spark executors.
Over 400 lines: one flow, the Spark session, the co-grouped buckets and their Partials
merged as they arrive; its inputs, sources, segments, diagnosis and watch are apart
(spark_*.py).

Predictions and ground truth are read by Spark (local files, URIs, or `table:NAME` for a
Spark table) and mapped to receval's canonical columns as the polars engines map them
(engines/spark_inputs.py), then co-grouped by a hash bucket of the user id. Each bucket
is a pair of Arrow tables that the one assembly evaluates exactly as on one machine
(assembly.bucket_partial); the buckets' Partials come back to the driver as JSON, are
merged as they arrive and finished by the same code as a single pass, so the report is
the same bit for bit. Ranking breaks ties by a total order on (score, item), so the
numbers do not depend on the partitioning; the file-order conventions (tie_break
input_order, duplicates first) have no meaning on Spark and are refused.

Needs the `spark` extra (pyspark 4, pyarrow) and Java. Per-user, global, rating and click
metrics run on Spark (the click metrics' exact sums per bucket: evaluation/click_parts.py).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from receval_cli import console, signals
from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import LoadedConfig
from receval_cli.config.model import GroundTruthConfig, PredictionsConfig, SparkConfig
from receval_cli.engines.partitions import describe_only
from receval_cli.engines.run_plan import DEFAULT_SPARK_BUCKETS, LocalInputs
from receval_cli.engines.spark_diagnosis import UriInputs
from receval_cli.engines.spark_global_states import global_state_sources, with_global_states
from receval_cli.engines.spark_inputs import (
    canonical_predictions,
    canonical_truth,
    input_failure,
    map_input,
    read_mapped,
    refuse_unreadable,
)
from receval_cli.engines.spark_segments import (
    SEGMENT_USER,
    SparkSegments,
    column_of,
    read_spark_segments,
)
from receval_cli.engines.spark_sources import (
    POPULARITY,
    SparkSources,
    arrow_schema,
    checked_sources,
    common_id_types,
    partition_frame,
    popularity_rows,
    read_spark_sources,
    spark_item_popularity,
)
from receval_cli.engines.spark_watch import python_logs_off, restore_sigint, watched_jobs
from receval_cli.errors import UsageError
from receval_cli.evaluation.assembly import (
    BucketTask,
    FinishContext,
    PerUserSpool,
    bucket_partial,
    finish,
)
from receval_cli.evaluation.item_facts import item_facts
from receval_cli.evaluation.partial import Partial, compact, empty_partial, merge
from receval_cli.evaluation.plan import metric_exprs
from receval_cli.evaluation.segment_split import SegmentKeys
from receval_cli.evaluation.wire import from_ipc_text, ipc_text
from receval_cli.inputs.optional import Sources
from receval_cli.inputs.readers import Input
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.registry import Universe
from receval_cli.results.report import Report

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import Column, SparkSession
    from pyspark.sql import DataFrame as SparkFrame

    from receval_cli.engines.run_plan import RunPlan

# What the executors' Python needs besides receval's own code (a notebook ships that with
# addPyFile): what a bucket's evaluation imports, and pyarrow for Spark's Arrow exchange.
# docs/engines.md's notebook recipe lists them (checked), and
# tests/engines/test_spark_cluster.py runs that recipe with exactly these and their requirements.
EXECUTOR_PACKAGES = ("polars", "pyarrow", "numpy", "pydantic", "typer", "rich", "pyyaml")

_LOG4J = Path(__file__).with_name("spark_log4j2.properties")
_JAVA_OPTIONS = "spark.driver.extraJavaOptions"


def require_pyspark() -> None:
    """engine: spark without pyspark installed: refused (exit 2), naming the extra."""
    import importlib.util

    if importlib.util.find_spec("pyspark") is None:
        raise UsageError(
            "engine: spark needs pyspark: install receval's spark extra, `uv sync --extra "
            "spark` (or `pip install '.[spark]'`) in receval's folder (pyspark 4 and pyarrow; "
            "Spark also needs Java 17 or newer).",
            key="engine",
            found="spark",
        )


def spark_session(spark: SparkSession | None, settings: SparkConfig) -> SparkSession:
    """The session to run on: the one given (a notebook's), else the active one
    (spark-submit's, whose settings stay), else a new one with the config's master and
    settings (`spark:`, --spark-master, --spark-conf)."""
    require_pyspark()
    from pyspark.logger import PySparkLogger
    from pyspark.sql import SparkSession

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
    _python_for_workers(settings)
    sigint = signal.getsignal(signal.SIGINT)
    with python_logs_off():  # a stop while the JVM starts: receval's one line says it
        session = builder.getOrCreate()
    restore_sigint(sigint)  # pyspark's own handler replaced receval's
    return session


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


def _python_for_workers(settings: SparkConfig) -> None:
    """The executors' Python, when receval starts Spark's JVM itself (not under
    spark-submit, whose launcher does this). pyspark reads it from PYSPARK_PYTHON alone,
    so `spark.pyspark.python` (e.g. ./environment/bin/python beside spark.archives) is
    copied there, winning over the variable as it does under spark-submit; without it, on
    a local master, the workers run this Python (which has receval, polars and pyarrow),
    not the `python3` on the PATH, unless PYSPARK_PYTHON says."""
    if _under_spark_submit():
        return
    given = settings.conf.get("spark.pyspark.python")
    if given is not None:
        os.environ["PYSPARK_PYTHON"] = given
        return
    if settings.master is None or settings.master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def _under_spark_submit() -> bool:
    """spark-submit started the JVM (and this Python as its child)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


_SHUT_DOWN = ("SparkContext was shut down", "Cannot call methods on a stopped SparkContext")


def stopped_from_outside(error: BaseException) -> signals.Interrupted | None:
    """Under spark-submit the JVM is receval's parent, and a job runner stops spark-submit:
    on SIGTERM (SIGINT, SIGHUP) the JVM shuts the context down, and receval sees its jobs
    cancelled "because SparkContext was shut down". That is the stop, reported as one
    (`interrupted by SIGTERM`, exit 143; spark-submit exits 143 itself), not an error."""
    if _under_spark_submit() and any(text in str(error) for text in _SHUT_DOWN):
        return signals.interrupted(signal.SIGTERM)
    return None


_MISSING_MODULE = re.compile(r"No module named '([^']+)'")


def environment_failure(error: BaseException) -> UsageError | None:
    """A Python worker that cannot import receval's code or its libraries: what to ship
    (docs/engines.md, "Running on a cluster"); None for any other failure."""
    text = str(error)
    found = _MISSING_MODULE.search(text)
    if found is None or "Python worker" not in text:
        return None
    module = found.group(1)
    fix = (
        "Ship receval's environment to the executors: a packed environment "
        "(spark.archives and PYSPARK_PYTHON), receval installed on every node from its "
        "wheel, or addPyFile in a notebook (docs/engines.md, Running on a cluster)."
    )
    return UsageError(
        f"engine: spark: the executors' Python cannot import {module} (No module named "
        f"'{module}'). {fix}",
        key="engine",
        found=f"No module named '{module}'",
        fix=fix,
    )


def _source(
    spark: SparkSession,
    loaded: LoadedConfig,
    config: PredictionsConfig | GroundTruthConfig,
    checked: Input | None,
    role: str,
) -> tuple[SparkFrame, Input]:
    """The predictions or the ground truth read by Spark, and their mapping."""
    location = loaded.location(config.path)

    def mapping(probe: pl.LazyFrame, path: Path) -> Input:
        return map_input(probe, config, path, role)

    return read_mapped(spark, location, config.format, config.separator, checked, role, mapping)


def canonical_inputs(
    spark: SparkSession,
    loaded: LoadedConfig,
    file: PredictionsConfig,
    checked: dict[str, Input | None],
    sources: SparkSources,
) -> tuple[SparkFrame, str, SparkFrame, dict[str, str], tuple[SparkFrame, Input]]:
    """Predictions (user, item, value) and truth (user, item, rel), mapped as the polars
    engines map them (engines/spark_inputs.py), the predictions' layout and mapping, and
    the ground truth as read with its mapping. The ids of both take one type with those of
    the optional inputs read (`sources`: common_id_types)."""
    from pyspark.sql import functions as F

    raw, source = _source(spark, loaded, file, checked["predictions"], "predictions")
    predictions = canonical_predictions(raw, source, file.list_separator)
    layout = "rank" if source.layout == "items" else source.layout
    truth_config: GroundTruthConfig = loaded.config.ground_truth
    traw, tsource = _source(spark, loaded, truth_config, checked["ground truth"], "ground truth")
    truth = canonical_truth(traw, tsource, truth_config.list_separator)
    # one id type in every input: integers stay integers, anything else is compared as text
    for column, target in common_id_types([predictions, truth, *sources.frames()]).items():
        predictions = predictions.withColumn(column, F.col(column).cast(target))
        truth = truth.withColumn(column, F.col(column).cast(target))
    return predictions, layout, truth, source.columns, (traw, tsource)


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

    `truth` holds the bucket's ground truth (kind "truth") and, with the optional inputs
    (engines/spark_sources.py), its users' logged items (kind "known"), their baseline
    lists (kind "baseline", the score or rank in `value`), and the catalog rows and item
    popularity (kinds "catalog", "popularity") of the items the bucket recommends (and, for
    miscalibration, the catalog rows of its users' logged items); with
    segment_by, its users' segment values (kind "segment", engines/spark_segments.py).
    `shipped` says which of those the run has, with the catalog's columns and embedding
    length: a few small values."""
    shipped = shipped or {}
    kinds = truth.get_column("kind") if "kind" in truth.columns else None
    rows = truth if kinds is None else truth.filter(kinds == "truth")
    p = _input("predictions", layout, predictions)
    logged = ["propensity"] if shipped.get("log_propensity") else []  # a click log's
    intent = ["intent"] if shipped.get("truth_intent") else []  # the rows' intents
    t = _input("ground truth", "graded", rows.select("user", "item", "rel", *logged, *intent))
    if intent:  # read with an intent column (evaluation/intent_lists.py)
        t = dataclasses.replace(t, columns={"intent": "intent"})
    sources = Sources()
    if kinds is not None and shipped.get("interactions"):
        known = truth.filter(kinds == "known").select("user", "item")
        sources.interactions = _input("interactions", "log", known)
        added = {f"row_{i}": name for i, name in enumerate(shipped["popularity_columns"])}
        popular = truth.filter(kinds == "popularity").select("item", *POPULARITY, *added)
        popular = popular.rename(added)
        index = pl.get_index_type()
        sources.popularity = popular.with_columns(pl.col("popular_rank").cast(index)).lazy()
        sources.popularity_rows = True
        rows_total, users_total = shipped["log_totals"]
        sources.log_totals = (int(rows_total), int(users_total))
    if kinds is not None and shipped.get("baseline_layout"):
        value = shipped["baseline_layout"]
        lists = truth.filter(kinds == "baseline").select(
            "user", "item", pl.col("value").alias(value)
        )
        sources.baseline = _input("baseline", value, lists)
    if kinds is not None and shipped.get("catalog_columns"):
        columns = shipped["catalog_columns"]
        features = [
            c for c in ("category", "tags", "embedding", "title", "propensity") if c in columns
        ]
        catalog = truth.filter(kinds == "catalog").select("item", *features).lazy()
        sources.catalog = Input(
            "catalog", Path("spark:catalog"), "spark", "catalog", columns, catalog, catalog
        )
        sources.embedding_dims = int(shipped["embedding_dims"])
    keys = None
    if kinds is not None and shipped.get("segment_by"):
        by = tuple(shipped["segment_by"])
        values = truth.filter(kinds == "segment").select(
            pl.col(SEGMENT_USER).alias("user"),
            *(pl.col(column_of(i)).alias(a) for i, a in enumerate(by)),
        )
        keys = SegmentKeys(values, by)
    if kinds is not None:
        global_state_sources(truth, shipped, sources)
    check = bool(shipped.get("unknown_items", True))
    task = BucketTask("in-memory", check, "bucket", "rows" if keep_rows else "none", segments=keys)
    task = dataclasses.replace(task, log_items=shipped.get("log_items"))
    return bucket_partial(p, t, specs, conventions, sources, task)


def _bucket_of(buckets: int) -> Column:
    from pyspark.sql import functions as F

    return F.pmod(F.xxhash64("user"), F.lit(buckets)).cast("int").alias("bucket")


def _bucket_rows(
    predictions: SparkFrame,
    truth: SparkFrame,
    side: SparkSources,
    segments: SparkSegments | None,
    user_specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    buckets: int,
) -> tuple[SparkFrame, SparkFrame, dict[str, Any]]:
    """The two sides of the co-group, each with its bucket: the predictions; the ground
    truth with, from the optional inputs, the users' logged items and baseline lists (by
    the user's bucket) and the catalog rows and item popularity of the items each bucket
    recommends (joined on the bucket and the item). And what the buckets are told."""
    from pyspark.sql import functions as F

    id_types = {c: dict(truth.dtypes)[c] for c in ("user", "item")}
    left = predictions.select(_bucket_of(buckets), "*")
    value = F.lit(None).cast("double").alias("value")
    right = truth.select(_bucket_of(buckets), "*", F.lit("truth").alias("kind"), value)
    shipped: dict[str, Any] = {}
    recommended = left.select("bucket", "item").distinct()
    stats, _ = metric_exprs(user_specs, conventions, side.sources)
    if stats.ideal_terms:  # the propensity metrics' ideal values weigh the truth's items too
        truth_items = right.select("bucket", "item")
        recommended = recommended.unionByName(truth_items).distinct()
    described = recommended  # the items whose catalog rows a bucket receives
    parts = []
    if side.interactions is not None:
        shipped["interactions"] = True
        known = side.interactions.select("user", "item").distinct()
        parts.append(known.select(_bucket_of(buckets), "*", F.lit("known").alias("kind")))
        if stats.calibration:  # the genres of its users' logged items too (miscalibration)
            logged = known.select(_bucket_of(buckets), "item")
            described = described.unionByName(logged).distinct()
        id_type = pl.Int64() if id_types["item"] == "bigint" else pl.String()
        popularity, added = popularity_rows(
            spark_item_popularity(side.interactions, conventions),
            list(stats.items.rows.values()),
            id_type,
        )
        shipped["popularity_columns"] = added
        log_totals = side.interactions.agg(
            F.count(F.lit(1)).alias("rows"), F.countDistinct("user").alias("users")
        ).first()
        assert log_totals is not None  # an aggregation has one row
        shipped["log_totals"] = [int(log_totals["rows"]), int(log_totals["users"])]
        parts.append(
            recommended.join(popularity, on="item").withColumn("kind", F.lit("popularity"))
        )
    if side.baseline is not None:
        assert side.sources.baseline is not None  # read together (spark_sources)
        column = side.sources.baseline.value_column
        shipped["baseline_layout"] = column
        lists = side.baseline.select("user", "item", F.col(column).cast("double").alias("value"))
        parts.append(lists.select(_bucket_of(buckets), "*", F.lit("baseline").alias("kind")))
    if side.catalog is not None and side.sources.catalog is not None:
        shipped["catalog_columns"] = side.sources.catalog.columns
        shipped["embedding_dims"] = side.sources.embedding_dims
        parts.append(described.join(side.catalog, on="item").withColumn("kind", F.lit("catalog")))
    if segments is not None:
        shipped["segment_by"] = list(segments.by)
        rows = segments.rows.select(_bucket_of(buckets), "*", F.lit("segment").alias("kind"))
        parts.append(rows)
    for part in parts:
        right = right.unionByName(part, allowMissingColumns=True)
    return left, right, shipped


def evaluate_spark(
    loaded: LoadedConfig,
    spark: SparkSession | None = None,
    buckets: int = DEFAULT_SPARK_BUCKETS,
    per_user: bool = False,
    model: str | None = None,
) -> Report:
    """Evaluate one model of a config on Spark (a notebook's entry point: `spark`, its
    session): the Report a polars engine gives, bit for bit. `model`: which of several
    (default: the first); `per_user` keeps the per-user rows, streamed bucket by bucket to
    temporary files on the driver. Planned and refused as `receval run` does."""
    from receval_cli.engines.run_plan import EngineChoice, plan_run

    on_spark = loaded.config.model_copy(update={"engine": "spark"})
    plan = plan_run(dataclasses.replace(loaded, config=on_spark))
    plan.engine = EngineChoice("spark", buckets)
    return evaluate_planned(plan, model or next(iter(plan.models)), spark, per_user)


def preflight(plan: RunPlan, name: str) -> LocalInputs:
    """What a Spark run of model `name` refuses before Spark starts (`validate` calls it
    too): the local inputs' schemas (their rows are Spark's), a format Spark does not
    read as receval does, an input a metric needs (a table's or URI's contents: after),
    and pyspark missing."""
    loaded = plan.loaded
    user_specs = tuple(s for s in loaded.specs if lookup(s.name).scope == "user")
    locals_ = plan.local_inputs(name)
    for source in locals_.checked.values():
        if source is not None:
            refuse_unreadable(source.format, source.path, source.role)
    metric_exprs(user_specs, loaded.config.conventions, locals_.sources)
    require_pyspark()
    return locals_


def evaluate_planned(
    plan: RunPlan, name: str, spark: SparkSession | None = None, per_user: bool = False
) -> Report:
    """Model `name` of a run plan (engines/run_plan.py: its refusals already made) on
    Spark, in the plan's number of buckets."""
    config = plan.loaded.config
    locals_ = preflight(plan, name)
    file, checked, local_sources = locals_.file, locals_.checked, locals_.sources
    segments_file = locals_.segments_file
    with console.stage("start Spark"):
        session = spark_session(spark, config.spark)
    local = [s for s in (*checked.values(), *local_sources.given(), segments_file) if s is not None]
    buckets = plan.engine.partitions
    try:
        with watched_jobs(session, config.spark.stall_timeout, own=spark is None) as watch:
            try:
                return _evaluate(
                    session, plan, file, checked, local_sources, segments_file, buckets, per_user
                )
            except Exception:
                if watch.stalled is not None:  # the watch cancelled the jobs: that is why
                    raise watch.stall_error() from None
                raise
    except Exception as error:  # Py4JJavaError and pyspark's errors too: see input_failure
        stop = stopped_from_outside(error)
        if stop is not None:
            raise stop from None
        uris = UriInputs(session, plan, name)
        found = environment_failure(error) or input_failure(error, local, uris)
        if found is error:
            raise
        raise found from None


def _evaluate(
    session: SparkSession,
    plan: RunPlan,
    file: PredictionsConfig,
    checked: dict[str, Input | None],
    local_sources: Sources,
    segments_file: Input | None,
    buckets: int,
    per_user: bool,
) -> Report:
    loaded = plan.loaded
    config = loaded.config
    conventions = config.conventions
    specs = loaded.specs
    read = read_spark_sources(session, loaded, local_sources)
    predictions, layout, truth, mapping, read_truth = canonical_inputs(
        session, loaded, file, checked, read
    )
    tmapping = read_truth[1].columns
    id_types = {c: dict(truth.dtypes)[c] for c in ("user", "item")}
    side = checked_sources(read, id_types, conventions.duplicates)
    segments = read_spark_segments(session, loaded, read_truth, id_types["user"], segments_file)
    plan.check_segments([] if segments is None else segments.segments)
    user_specs = tuple(s for s in specs if lookup(s.name).scope == "user")
    metric_exprs(user_specs, conventions, side.sources)  # a missing input or feature
    items = ItemRows(
        side.universe,
        side.universe_source,
        None,
        "ground truth",
        id_types["item"],
        _described(side.sources),
        [] if segments is None else [s.name for s in segments.segments],
    )
    if config.unknown_items.check:
        items.reference, items.reference_name = side.universe, side.universe_source
        if side.universe is None:  # the ground truth's items
            items.reference = truth.select("item").where("item IS NOT NULL").distinct()
            items.reference_name = "ground truth"
    left, right, shipped = _bucket_rows(
        predictions, truth, side, segments, user_specs, conventions, buckets
    )
    right = with_global_states(left, right, side, specs, conventions, shipped)
    shipped["unknown_items"] = config.unknown_items.check
    # the click log's propensities (a catalog's, of kind "catalog", share the column)
    shipped["log_propensity"] = "propensity" in tmapping
    shipped["truth_intent"] = "intent" in tmapping
    if any(lookup(s.name).scope == "logged" for s in specs) and "propensity" not in tmapping:
        shipped["log_items"] = truth.select("item").distinct().count()  # 1 / it: the propensity
    spool = PerUserSpool() if per_user else None
    merged, received = _run_buckets(left, right, layout, specs, conventions, shipped, spool, items)
    # the report describes a local file as the polars engines do (its fingerprint too)
    p_input = checked["predictions"] or describe_only(
        "predictions", loaded.location(file.path), layout, mapping
    )
    t_input = checked["ground truth"] or describe_only(
        "ground truth", loaded.location(config.ground_truth.path), "graded", tmapping
    )
    run = FinishContext(
        p_input,
        t_input,
        specs,
        conventions,
        side.sources,
        None if items.reference is None else (items.reference_name, None),
        engine={
            "name": "spark",
            "buckets": buckets,
            "spark": session.version,
            "collected_bytes": received,
        },
        per_user_rows=None if spool is None else spool.scan(),
        spool=spool,
        segments=[] if segments is None else segments.segments,
    )
    return finish(merged, run)


def _run_buckets(
    left: SparkFrame,
    right: SparkFrame,
    layout: str,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    shipped: dict[str, Any],
    spool: PerUserSpool | None,
    items: ItemRows,
) -> tuple[Partial, int]:
    """Co-group both sides by their bucket; each bucket through the polars code, via
    Arrow. The buckets' Partials are merged on an executor (merge_partials), which also
    receives the universe's and the reference's items and finishes what depends on the
    items there, so the driver receives one Partial without item tables, whatever the
    number of buckets and items; with `spool`, each bucket's per-user rows (Arrow IPC)
    come to the driver one bucket at a time and go to a temporary file. Returns the
    merged Partial and its size as received (bytes of JSON)."""
    import pyarrow as pa  # type: ignore[import-untyped]

    spec_fields = [(s.name, s.k, s.params, s.label, s.tool) for s in specs]
    settings = conventions.to_wire()
    keep_rows = spool is not None

    def run(key: tuple[Any, ...], p: pa.Table, t: pa.Table) -> pa.Table:
        from receval_cli.metrics import resolve

        parsed = tuple(resolve(MetricSpec(*fields)) for fields in spec_fields)
        rules = Conventions.from_wire(settings)
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
        return pa.table({"kind": kinds, "payload": payloads})

    schema = "kind string, payload string"
    results = left.groupBy("bucket").cogroup(right.groupBy("bucket")).applyInArrow(run, schema)

    finishing = items.finishing()  # no Spark DataFrame in what the executor is sent

    def merge_all(batches: Iterator[Any]) -> Iterator[Any]:
        from receval_cli.metrics import resolve

        parsed = tuple(resolve(MetricSpec(*fields)) for fields in spec_fields)
        rules = Conventions.from_wire(settings)
        yield from merge_partials(batches, parsed, rules, finishing)

    for kind, frame in (("universe", items.universe), ("reference", items.reference)):
        if frame is not None:
            results = results.unionByName(_as_payloads(frame.select("item"), kind))
    merged = results.repartition(1).mapInArrow(merge_all, schema)
    partial, size = None, 0
    for row in merged.toLocalIterator():
        if row["kind"] == "users":
            assert spool is not None
            spool.add(from_ipc_text(row["payload"]))
        else:
            partial, size = Partial.from_json(json.loads(row["payload"])), len(row["payload"])
    assert partial is not None, "no merged Partial came back"
    return partial, size


@dataclass
class ItemRows:
    """What the merging executor finishes the items with: the universe's items (None: no
    catalog or log) and what they are, the unknown-items reference's items (None: the
    check is off) and its name, the items' type, the optional inputs as described to the
    buckets (no rows: for messages and the metrics' side columns), and the segments."""

    universe: SparkFrame | None
    universe_source: str
    reference: SparkFrame | None
    reference_name: str
    item_type: str
    sources: Sources
    segments: list[str]

    def finishing(self) -> Finishing:
        return Finishing(
            self.universe is not None,
            self.universe_source,
            self.reference is not None,
            pl.Int64() if self.item_type == "bigint" else pl.String(),
            self.sources,
            self.segments,
        )


@dataclass(frozen=True)
class Finishing:
    """ItemRows without its Spark DataFrames: what merge_partials is given."""

    universe: bool
    universe_source: str
    reference: bool
    item_type: pl.DataType
    sources: Sources
    segments: list[str]


def _described(sources: Sources) -> Sources:
    """The optional inputs' Inputs without their rows (what an executor is told of them)."""
    empty = pl.LazyFrame()
    found = Sources(embedding_dims=sources.embedding_dims)
    found.catalog, found.interactions, found.baseline = (
        None if source is None else dataclasses.replace(source, frame=empty, raw=empty)
        for source in (sources.catalog, sources.interactions, sources.baseline)
    )
    return found


def _as_payloads(frame: SparkFrame, kind: str) -> SparkFrame:
    """A table as (kind, payload) rows: each partition's rows as one Arrow IPC text."""
    import pyarrow as pa

    schema = arrow_schema(frame)

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        rows = partition_frame(batches, schema)
        if rows is not None:
            text = ipc_text(rows.collect())
            yield pa.RecordBatch.from_pydict({"kind": [kind], "payload": [text]})

    return frame.mapInArrow(run, "kind string, payload string")


def merge_partials(
    batches: Iterator[Any],
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    finishing: Finishing,
) -> Iterator[Any]:
    """On one executor: the buckets' Partials (JSON) merged into one as they arrive, its
    tables kept one per kind (partial.compact); the per-user rows passed on as they are.
    Then what depends on the items is finished here (item_facts, for the run and each
    segment, with the universe's and the reference's items that arrive among the rows)
    and the item tables are dropped: the Partial sent on is as small as the report."""
    import pyarrow as pa

    merged: Partial | None = None
    tables: dict[str, list[pl.DataFrame]] = {"universe": [], "reference": []}
    for batch in batches:
        rows = batch.to_pydict()
        users = []
        for kind, payload in zip(rows["kind"], rows["payload"], strict=True):
            if kind == "users":
                users.append(payload)
            elif kind in tables:
                tables[kind].append(from_ipc_text(payload))
            else:
                found = Partial.from_json(json.loads(payload))
                merged = compact(
                    found if merged is None else merge([merged, found]), specs, conventions
                )
        if users:
            yield pa.RecordBatch.from_pydict({"kind": ["users"] * len(users), "payload": users})
    if merged is None:
        return
    empty = pl.DataFrame(schema={"item": finishing.item_type})
    universe = Universe(None, "none")
    if finishing.universe:
        universe = Universe(pl.concat([empty, *tables["universe"]]), finishing.universe_source)
    reference = pl.concat([empty, *tables["reference"]]).lazy() if finishing.reference else None
    sources = finishing.sources
    merged.facts = item_facts(
        merged.item_tables(),
        specs,
        conventions,
        sources,
        universe,
        reference,
        with_popularity_bias=False,
    )
    for name in finishing.segments:
        segment = merged.segments.setdefault(name, empty_partial())
        segment.facts = item_facts(
            segment.item_tables(),
            specs,
            conventions,
            sources,
            universe,
            None,
            with_popularity_bias=False,
        )
    for part in (merged, *merged.segments.values()):
        part.recommended, part.exposure, part.states, part.unknown = [], [], {}, None
    text = json.dumps(merged.to_json())
    yield pa.RecordBatch.from_pydict({"kind": ["partial"], "payload": [text]})
