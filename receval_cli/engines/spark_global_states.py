"""engine: spark: what the metrics that read the whole log or catalog need, computed once
over it and sent to each bucket with its rows (a bucket holds only its users' logged items
and the catalog rows of the items it recommends).

- The item groups of rsp, reo and exposure_disparity (metrics/fairness_state.py): the
  catalog's category, or the log's short head and long tail (its items' distinct users
  counted by Spark, then ranked and split by the polars code on one executor, so the
  split is the one a single machine makes). Each bucket gets the groups of the items it
  recommends, its users' relevant and logged items, and every group's size (a few numbers,
  collected on the driver); its state counts what a single machine counts for its users.
- The item co-occurrences of intra_list_diversity(feature=cooccurrence) and
  serendipity(unexpected=history): each bucket gets the log's (user, item) pairs of the
  items it recommends (and, for history, of its users' logged items), so the
  co-occurrence counts of its pairs are those of the whole log.
- The catalog's number of items (accuracy, mcc): counted once, sent as a number.

The buckets read them back with `global_state_sources`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.engines.spark_sources import SparkSources, arrow_schema, partition_frame
from receval_cli.evaluation.global_metrics import ranked_by_users
from receval_cli.evaluation.plan import catalog_size_metrics
from receval_cli.inputs.optional import Sources
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.fairness_state import ITEM_GROUP_METRICS, group_label, popularity_groups
from receval_cli.metrics.registry import Params

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame

# the right side's columns of the item groups' rows (kind "group")
GROUPING, GROUP = "grouping", "group_name"


def with_global_states(
    left: SparkFrame,
    right: SparkFrame,
    side: SparkSources,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    shipped: dict[str, Any],
) -> SparkFrame:
    """The co-group's right side (`right`: the truth and the optional inputs' rows, by
    bucket and kind; `left`: the predictions) with the rows each bucket gets for these
    metrics; what the buckets are told is added to `shipped`."""
    from pyspark.sql import functions as F

    recommended = left.select("bucket", "item")
    truth_items = right.where(F.col("kind") == "truth").select("bucket", "item")
    known = None
    if side.interactions is not None:
        known = right.where(F.col("kind") == "known").select("bucket", "user", "item")
    parts = []
    groupings = {
        group_label(p): p
        for p in (conventions.metric_params(s) for s in specs if s.name in ITEM_GROUP_METRICS)
    }
    if groupings:
        groups = _item_groups(side, groupings, conventions)
        sizes: dict[str, list[list[Any]]] = {label: [] for label in groupings}
        for row in groups.groupBy(GROUPING, GROUP).count().collect():
            sizes[row[GROUPING]].append([row[GROUP], int(row["count"])])
        shipped["item_groups"] = sizes
        needed = recommended.unionByName(truth_items)
        if known is not None:
            needed = needed.unionByName(known.select("bucket", "item"))
        rows = needed.distinct().join(groups, on="item")
        parts.append(rows.withColumn("kind", F.lit("group")))
    whole_log = [conventions.metric_params(s) for s in specs if _needs_whole_log(s, conventions)]
    if whole_log and side.interactions is not None and known is not None:
        needed = recommended
        if any(p.get("unexpected") == "history" for p in whole_log):
            needed = needed.unionByName(known.select("bucket", "item"))
        pairs = side.interactions.select("user", "item").distinct()
        rows = needed.distinct().join(pairs, on="item")
        parts.append(rows.withColumn("kind", F.lit("colog")))
        shipped["cooccurrence_log"] = True
    user_specs = tuple(s for s in specs if lookup(s.name).scope == "user")
    if side.catalog is not None and catalog_size_metrics(user_specs, conventions):
        shipped["catalog_items"] = side.catalog.count()
    for part in parts:
        right = right.unionByName(part, allowMissingColumns=True)
    return right


def _needs_whole_log(spec: MetricSpec, conventions: Conventions) -> bool:
    params = conventions.metric_params(spec)
    return params.get("feature") == "cooccurrence" or params.get("unexpected") == "history"


def _item_groups(
    side: SparkSources, groupings: Mapping[str, Params], conventions: Conventions
) -> SparkFrame:
    """(grouping, item, group_name): each grouping's items and their group, over the
    whole catalog or log."""
    from pyspark.sql import functions as F

    frames = []
    if "category" in groupings and side.catalog is not None:
        category = F.col("category").cast("string").alias(GROUP)
        rows = side.catalog.select(F.lit("category").alias(GROUPING), "item", category)
        frames.append(rows.where(F.col(GROUP).isNotNull()))
    ratios = {label: float(p["pop_ratio"]) for label, p in groupings.items() if label != "category"}
    if ratios and side.interactions is not None:
        frames.append(_popularity_split(side.interactions, ratios, conventions.tie_break))
    found = frames[0]
    for frame in frames[1:]:
        found = found.unionByName(frame)
    return found


def _popularity_split(log: SparkFrame, ratios: dict[str, float], tie_break: str) -> SparkFrame:
    """(grouping, item, group_name): for each pop_ratio, the log's short head and long tail
    (fairness_state.popularity_groups), its items' distinct users counted by Spark and
    split by polars on one executor."""
    from pyspark.sql import functions as F

    per_item = log.select("user", "item").distinct().groupBy("item")
    counted = per_item.agg(F.count(F.lit(1)).alias("users")).repartition(1)
    schema = arrow_schema(counted)
    item_type = dict(counted.dtypes)["item"]

    def run(batches: Any) -> Any:
        frame = partition_frame(batches, schema)
        if frame is None:
            return
        ranked = ranked_by_users(frame.with_columns(pl.col("users").cast(pl.Int64)), tie_break)
        for label, ratio in ratios.items():
            split = popularity_groups(ranked, ratio).collect()
            named = split.select(
                pl.lit(label).alias(GROUPING), "item", pl.col("group").alias(GROUP)
            )
            yield from named.to_arrow().to_batches()

    out = f"{GROUPING} string, item {item_type}, {GROUP} string"
    return counted.mapInArrow(run, out)


def global_state_sources(truth: pl.DataFrame, shipped: dict[str, Any], sources: Sources) -> None:
    """A bucket's rows of these kinds (`truth`, with its `kind` column) into its Sources."""
    kinds = truth.get_column("kind")
    sizes: dict[str, list[list[Any]]] = shipped.get("item_groups") or {}
    if sizes:
        rows = truth.filter(kinds == "group")
        sources.item_groups = {}
        for label, found in sizes.items():
            mine = rows.filter(pl.col(GROUPING) == label)
            items = mine.select("item", pl.col(GROUP).cast(pl.String).alias("group")).lazy()
            counted = pl.LazyFrame(
                {"group": [g for g, _ in found], "items": [n for _, n in found]},
                schema={"group": pl.String, "items": pl.Int64},
            )
            sources.item_groups[label] = (items, counted)
    if shipped.get("cooccurrence_log"):
        sources.cooccurrence_log = truth.filter(kinds == "colog").select("user", "item").lazy()
    if "catalog_items" in shipped:
        sources.catalog_items = int(shipped["catalog_items"])
