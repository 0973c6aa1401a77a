"""engine: spark: `comparison.lists` on the executors.

Each model's predictions and the baseline model's are read by Spark and mapped as the model
evaluations map them (spark.canonical_inputs: ids cast as each model's evaluation casts
them), then co-grouped by a hash bucket of the user id (as text where the two models' user
ids differ in type). Each bucket ranks its users' two lists with the polars code of the
other engines (evaluation/list_pairs.py: the score, then the tie_break) and returns each
list measure's exact sum and users, one small row per measure; the driver adds them up. A
user's value depends on its two lists only and the sums are exact, so the means are the
polars engines' bits whatever the number of buckets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.engines.spark import (
    canonical_inputs,
    environment_failure,
    spark_session,
    stopped_from_outside,
)
from receval_cli.engines.spark_sources import read_spark_sources
from receval_cli.engines.spark_watch import watched_jobs
from receval_cli.evaluation.list_pairs import ListSum, list_sums
from receval_cli.inputs.readers import Input
from receval_cli.metrics.list_similarity import ListMeasure, list_measure

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import SparkSession

    from receval_cli.engines.run_plan import RunPlan


def spark_list_sums(
    plan: RunPlan, models: list[str], measures: list[ListMeasure], depth: int | None
) -> dict[str, list[ListSum]]:
    """Each of `models` against the plan's baseline model, on Spark in the plan's buckets:
    per model, each measure's ListSum over the users with a list in both."""
    settings = plan.loaded.config.spark
    session = spark_session(None, settings)
    try:
        with watched_jobs(session, settings.stall_timeout, own=True) as watch:
            try:
                return _sums(session, plan, models, measures, depth)
            except Exception:
                if watch.stalled is not None:  # the watch cancelled the jobs: that is why
                    raise watch.stall_error() from None
                raise
    except Exception as error:  # the inputs were read by the models' runs just before
        stop = stopped_from_outside(error)
        if stop is not None:
            raise stop from None
        found = environment_failure(error)
        if found is None:
            raise
        raise found from None


def _sums(
    session: SparkSession,
    plan: RunPlan,
    models: list[str],
    measures: list[ListMeasure],
    depth: int | None,
) -> dict[str, list[ListSum]]:
    assert plan.baseline is not None  # the planner refuses comparison.lists without one

    base = plan.local_inputs(plan.baseline)
    # the optional inputs are the run's, not a model's: read once, for their id types
    sources = read_spark_sources(session, plan.loaded, base.sources)

    def predictions(name: str) -> tuple[SparkFrame, str]:
        checked = (base if name == plan.baseline else plan.local_inputs(name)).checked
        found = canonical_inputs(session, plan.loaded, plan.models[name], checked, sources)
        return found[0], found[1]

    baseline = predictions(plan.baseline)
    texts = [str(m) for m in measures]
    wire = plan.loaded.config.conventions.to_wire()
    return {
        name: _pair_sums(predictions(name), baseline, texts, wire, depth, plan.engine.partitions)
        for name in models
    }


def _pair_sums(
    model: tuple[SparkFrame, str],
    baseline: tuple[SparkFrame, str],
    texts: list[str],
    wire: dict[str, Any],
    depth: int | None,
    buckets: int,
) -> list[ListSum]:
    """One model against the baseline: the buckets' sums, added up on the driver."""
    import pyarrow as pa  # type: ignore[import-untyped]
    from pyspark.sql import functions as F

    (mine, layout), (theirs, their_layout) = model, baseline
    if dict(mine.dtypes)["user"] != dict(theirs.dtypes)["user"]:  # compared as text
        mine, theirs = (f.withColumn("user", F.col("user").cast("string")) for f in (mine, theirs))
    bucket = F.pmod(F.xxhash64("user"), F.lit(buckets)).cast("int").alias("bucket")
    left, right = mine.select(bucket, "*"), theirs.select(bucket, "*")

    def run(key: tuple[Any, ...], a: pa.Table, b: pa.Table) -> pa.Table:
        found = bucket_sums(
            pl.from_arrow(a),  # type: ignore[arg-type]
            layout,
            pl.from_arrow(b),  # type: ignore[arg-type]
            their_layout,
            texts,
            wire,
            depth,
        )
        sums = [json.dumps(s.to_json()) for s in found]
        return pa.table({"measure": list(range(len(sums))), "sums": sums})

    grouped = left.groupBy("bucket").cogroup(right.groupBy("bucket"))
    rows = grouped.applyInArrow(run, "measure long, sums string").collect()
    totals = [ListSum()] * len(texts)
    for row in rows:
        totals[row["measure"]] += ListSum.from_json(json.loads(row["sums"]))
    return totals


def bucket_sums(
    model: pl.DataFrame,
    layout: str,
    baseline: pl.DataFrame,
    baseline_layout: str,
    texts: list[str],
    wire: dict[str, Any],
    depth: int | None,
) -> list[ListSum]:
    """One bucket's sums (what the executors run): its users' predictions of the model
    and of the baseline (user, item, score | rank; `bucket` dropped)."""
    if model.is_empty() or baseline.is_empty():  # no user with a list in both
        return [ListSum()] * len(texts)

    def as_input(frame: pl.DataFrame, value: str) -> Input:
        rows = frame.drop("bucket").lazy()
        role = Path("spark:predictions")
        return Input("predictions", role, "spark", value, {}, rows.with_row_index("row"), rows)

    measures = [list_measure(text) for text in texts]
    conventions = Conventions.from_wire(wire)
    mine, theirs = as_input(model, layout), as_input(baseline, baseline_layout)
    return list_sums(mine, theirs, measures, conventions, depth)
