"""engine: spark: the same per-user metric code, run on Spark executors.

Predictions and ground truth are read by Spark (Parquet or CSV paths, or `table:NAME` for
a Spark table), mapped to receval's canonical columns with an explicit schema, and
co-grouped by a hash bucket of the user id. Each bucket is a pair of Arrow tables that the
polars code evaluates exactly as on one machine (`per_user_frame`, the global metrics'
states); a bucket returns mergeable partial results: per metric the sum of its per-user
values and the users counted, the users' tally, the input checks, and the global states.
The driver adds them up and finishes, so no metric is written twice. Ranking breaks ties
by a total order on (score, item), so the numbers do not depend on the partitioning; the
file-order conventions (tie_break input_order, duplicates first) have no meaning on Spark
and are refused.

Needs the `spark` extra (pyspark 4, pyarrow) and Java. Only per-user and global metrics
run on Spark; rating (pairs) and click (logged) metrics do not yet.
"""

from __future__ import annotations

import base64
import io
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from receval_cli.checks import raise_for, totals
from receval_cli.config import GroundTruthConfig, LoadedConfig, PredictionsConfig
from receval_cli.conventions import Conventions
from receval_cli.errors import InputError, UsageError
from receval_cli.evaluate import (
    PREDICTION_CHECKS,
    TRUTH_CHECKS,
    _counted,
    metric_exprs,
    metric_users,
    per_user_frame,
    resolved_config,
    user_tally,
    users_block,
)
from receval_cli.gates import check_gates
from receval_cli.global_eval import global_values, require_universe, state_queries, universe_of
from receval_cli.io import Input
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.registry import State, StateInputs, merge_states
from receval_cli.report import Report
from receval_cli.sources import Sources, read_sources

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import SparkSession

DEFAULT_BUCKETS = 64


def _spark_session(spark: SparkSession | None) -> SparkSession:
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError(
            "engine: spark needs pyspark: install the extra, pip install 'receval[spark]' "
            "(pyspark 4 and pyarrow; Spark also needs Java 17 or newer)."
        ) from None
    return spark or SparkSession.builder.appName("receval").getOrCreate()


def _refuse_file_order(conventions: Conventions) -> None:
    for key, value in (
        ("tie_break", conventions.tie_break),
        ("duplicates", conventions.duplicates),
        ("truth_duplicates", conventions.truth_duplicates),
    ):
        if value in ("input_order", "first"):
            raise UsageError(
                f"engine: spark has no file order, so conventions.{key}: {value} is not "
                "defined there. Use tie_break item_desc/item_asc and duplicates error/"
                "max_score (truth_duplicates error/max), or another engine."
            )


def _read(spark: SparkSession, path: str, fmt: str | None, separator: str | None) -> SparkFrame:
    if path.startswith("table:"):
        return spark.table(path.removeprefix("table:"))
    if (fmt or Path(path).suffix.lstrip(".")) in ("csv", "tsv"):
        sep = separator or ("\t" if fmt == "tsv" or path.endswith(".tsv") else ",")
        return spark.read.csv(path, header=True, inferSchema=True, sep=sep)
    return spark.read.parquet(path)


def _canonical(
    spark: SparkSession, loaded: LoadedConfig, file: PredictionsConfig
) -> tuple[SparkFrame, str, SparkFrame, dict[str, str], dict[str, str]]:
    """Predictions (user, item, value) and truth (user, item, rel), with their layouts."""
    from pyspark.sql import functions as F

    cols = file.columns
    raw = _read(spark, str(loaded.resolve_path(file.path)), file.format, file.separator)
    layout = "score" if cols.score is not None or "score" in raw.columns else "rank"
    if cols.items is not None:
        exploded = raw.select(F.col(cols.user).alias("user"), F.posexplode(cols.items))
        predictions = exploded.select(
            "user", F.col("col").alias("item"), (F.col("pos") + 1).cast("double").alias("rank")
        )
        layout, mapping = "rank", {"user": cols.user, "items": cols.items}
    else:
        value = cols.score if layout == "score" else (cols.rank or "rank")
        value = value or "score"
        predictions = raw.select(
            F.col(cols.user).alias("user"),
            F.col(cols.item).alias("item"),
            F.col(value).cast("double").alias(layout),
        )
        mapping = {"user": cols.user, "item": cols.item, layout: value}
    truth_config: GroundTruthConfig = loaded.config.ground_truth
    tcols = truth_config.columns
    traw = _read(
        spark,
        str(loaded.resolve_path(truth_config.path)),
        truth_config.format,
        truth_config.separator,
    )
    relevance = tcols.relevance or ("relevance" if "relevance" in traw.columns else None)
    rel = F.col(relevance).cast("double") if relevance else F.lit(1.0)
    truth = traw.select(
        F.col(tcols.user).alias("user"), F.col(tcols.item).alias("item"), rel.alias("rel")
    )
    tmapping = {"user": tcols.user, "item": tcols.item}
    if relevance:
        tmapping["relevance"] = relevance
    # one id type on both sides: integers stay integers, anything else is compared as text
    for column in ("user", "item"):
        types = {dict(predictions.dtypes)[column], dict(truth.dtypes)[column]}
        target = "bigint" if types <= {"int", "bigint", "smallint", "tinyint"} else "string"
        predictions = predictions.withColumn(column, F.col(column).cast(target))
        truth = truth.withColumn(column, F.col(column).cast(target))
    return predictions, layout, truth, mapping, tmapping


def _input(
    role: str, path: str, layout: str, columns: dict[str, str], frame: pl.DataFrame
) -> Input:
    lazy = frame.lazy().with_row_index("row")
    return Input(role, Path(path), "spark", layout, columns, lazy, frame.lazy())


def _ipc(table: pl.DataFrame) -> str:
    buffer = io.BytesIO()
    table.write_ipc(buffer)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _from_ipc(text: str) -> pl.DataFrame:
    return pl.read_ipc(io.BytesIO(base64.b64decode(text)))


def evaluate_bucket(
    predictions: pl.DataFrame,
    truth: pl.DataFrame,
    layout: str,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
) -> dict[str, Any]:
    """One bucket's mergeable partial results (the function the executors run)."""
    user_specs = tuple(s for s in specs if lookup(s.name).scope == "user")
    global_specs = tuple(s for s in specs if lookup(s.name).scope == "global")
    p = _input("predictions", "spark:predictions", layout, {}, predictions)
    t = _input("ground truth", "spark:ground_truth", "graded", {}, truth)
    plan = per_user_frame(p, t, user_specs, conventions, Sources(), global_specs)
    states = state_queries(
        global_specs, conventions, StateInputs(plan.lists, plan.items, plan.frame)
    )
    per_user, *tables = pl.collect_all([plan.frame, *(q for _, q in states.values())])
    apart = dict(
        zip(plan.check_queries, pl.collect_all(list(plan.check_queries.values())), strict=True)
    )
    checks = {
        "predictions": totals(apart.get(PREDICTION_CHECKS, per_user), PREDICTION_CHECKS),
        "truth": totals(apart.get(TRUTH_CHECKS, per_user), TRUTH_CHECKS),
    }
    duplicates = {
        key: bool(distinct in per_user.columns and (per_user[length] != per_user[distinct]).any())
        for key, length, distinct in (
            ("duplicates", "list_rows", "list_distinct"),
            ("truth_duplicates", "truth_items", "truth_distinct"),
        )
    }
    sums = {}
    for spec in user_specs:
        name = str(spec)
        kept = _counted(spec, conventions)
        users = metric_users(conventions.metric_params(spec))
        row = per_user.select(
            pl.col(name).filter(kept).sum().alias("sum"),
            kept.sum().alias("counted"),
            users.sum().alias("users"),
        ).row(0)
        sums[name] = [float(row[0] or 0.0), int(row[1]), int(row[2])]
    return {
        "rows": {"predictions": predictions.height, "truth": truth.height},
        "checks": checks,
        "duplicates": duplicates,
        "tally": user_tally(per_user),
        "sums": sums,
        "states": {name: _ipc(table) for name, table in zip(states, tables, strict=True)},
    }


def _merge(partials: list[dict[str, Any]]) -> dict[str, Any]:
    """Add up the buckets' partial results (the states stay a list per state)."""
    merged: dict[str, Any] = {
        "rows": {"predictions": 0, "truth": 0},
        "checks": {"predictions": {}, "truth": {}},
        "duplicates": {"duplicates": False, "truth_duplicates": False},
        "tally": {},
        "sums": {},
        "states": {},
    }
    for part in partials:
        for key in ("predictions", "truth"):
            merged["rows"][key] += part["rows"][key]
            for name, value in part["checks"][key].items():
                merged["checks"][key][name] = merged["checks"][key].get(name, 0) + (value or 0)
        for key, found in part["duplicates"].items():
            merged["duplicates"][key] |= found
        for key, value in part["tally"].items():
            merged["tally"][key] = merged["tally"].get(key, 0) + value
        for name, (total, counted, users) in part["sums"].items():
            old = merged["sums"].get(name, [0.0, 0, 0])
            merged["sums"][name] = [old[0] + total, old[1] + counted, old[2] + users]
        for name, text in part["states"].items():
            merged["states"].setdefault(name, []).append(_from_ipc(text))
    return merged


def evaluate_spark(
    loaded: LoadedConfig, spark: SparkSession | None = None, buckets: int = DEFAULT_BUCKETS
) -> Report:
    """Evaluate a one-model config on Spark; the Report a polars engine would give, but for
    per-user values (`per_user` is None) and float sums added in another order."""
    started = time.perf_counter()
    config = loaded.config
    conventions = config.conventions
    _refuse_file_order(conventions)
    specs = loaded.specs
    unsupported = [str(s) for s in specs if lookup(s.name).scope not in ("user", "global")]
    if unsupported:
        raise UsageError(
            f"engine: spark runs the per-user and global metrics; {', '.join(unsupported)} "
            "(rating or click metrics) do not run there yet. Use another engine for them."
        )
    if config.several_models:
        raise UsageError("engine: spark evaluates one predictions file; list one model.")
    user_specs = tuple(s for s in specs if lookup(s.name).scope == "user")
    try:
        metric_exprs(user_specs, conventions, Sources())
    except InputError:
        raise UsageError(
            "engine: spark does not yet run the per-user metrics that read the catalog, the "
            "interactions or the baseline (novelty, serendipity, intra_list_diversity, ...); "
            "the global ones (coverage, inter_list_diversity, gini, entropy) do run. Use "
            "another engine for those."
        ) from None
    session = _spark_session(spark)
    (file,) = config.model_files().values()
    predictions, layout, truth, mapping, tmapping = _canonical(session, loaded, file)
    partials = _run_buckets(session, predictions, truth, layout, specs, conventions, buckets)
    merged = _merge(partials)
    p_input = _input(
        "predictions", str(loaded.resolve_path(file.path)), layout, mapping, pl.DataFrame()
    )
    t_input = _input(
        "ground truth",
        str(loaded.resolve_path(config.ground_truth.path)),
        "graded",
        tmapping,
        pl.DataFrame(),
    )
    for source, key in ((p_input, "predictions"), (t_input, "truth")):
        raise_for(source, {"raw_rows": merged["rows"][key], **merged["checks"][key]})
    for key, found in merged["duplicates"].items():
        if found:
            raise InputError(
                f"{'predictions' if key == 'duplicates' else 'ground truth'}: some (user, item) "
                f"pairs appear more than once. Remove the duplicates, or set "
                f"conventions.{key} to say which row counts."
            )
    global_specs = tuple(s for s in specs if lookup(s.name).scope == "global")
    users = users_block(
        merged["tally"],
        t_input,
        conventions.relevance_threshold,
        bool(user_specs),
        f"no user appears in both {p_input.path} and {t_input.path}. Check the user columns "
        "and that both use the same ids.",
    )
    metrics: dict[str, float] = {}
    for spec in user_specs:
        total, counted, evaluated = merged["sums"][str(spec)]
        if evaluated == 0 or counted == 0:
            raise InputError(f"no user is left to average {spec} over (see its user rules).")
        summed = lookup(spec.name).aggregate == "sum"
        metrics[str(spec)] = total if summed else total / counted
    sources = read_sources(loaded)
    universe = universe_of(sources)
    require_universe(global_specs, universe)
    states: dict[str, tuple[State, pl.DataFrame]] = {}
    for spec in global_specs:
        partial = lookup(spec.name).partial
        assert partial is not None
        state = partial.state(spec.k, conventions.metric_params(spec))
        states[state.name] = (state, merge_states(merged["states"][state.name], state.keys))
    metrics.update(global_values(global_specs, conventions, states, universe))
    metrics = {str(s): metrics[str(s)] for s in specs}
    return Report(
        metrics=metrics,
        config=resolved_config(loaded),
        conventions=conventions.model_dump(),
        inputs={
            "predictions": {**p_input.describe(), "rows": merged["rows"]["predictions"]},
            "ground_truth": {**t_input.describe(), "rows": merged["rows"]["truth"]},
            "engine": {"name": "spark", "buckets": buckets, "spark": session.version},
        },
        users=users,
        gates=check_gates(loaded.gates, metrics),
        elapsed_seconds=time.perf_counter() - started,
    )


def _run_buckets(
    spark: SparkSession,
    predictions: SparkFrame,
    truth: SparkFrame,
    layout: str,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    buckets: int,
) -> list[dict[str, Any]]:
    """Co-group both inputs by a hash bucket of the user; each bucket through the polars
    code, via Arrow; the partial results back to the driver as JSON."""
    import pyarrow as pa  # type: ignore[import-untyped]
    from pyspark.sql import functions as F

    bucket = F.pmod(F.xxhash64("user"), F.lit(buckets)).cast("int").alias("bucket")
    left = predictions.select(bucket, "*").groupBy("bucket")
    right = truth.select(bucket, "*").groupBy("bucket")
    spec_texts = [str(s) for s in specs]
    settings = conventions.model_dump(mode="json")

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
        )
        return pa.table({"bucket": [key[0]], "payload": [json.dumps(found)]})

    rows = left.cogroup(right).applyInArrow(run, schema="bucket int, payload string").collect()
    return [json.loads(row["payload"]) for row in rows]
