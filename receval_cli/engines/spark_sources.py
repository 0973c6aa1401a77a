"""engine: spark reads the optional inputs (catalog, interactions log, baseline) on the
executors: none of their rows passes through the driver.

Each is read by Spark as the predictions are (engines/spark_inputs.py): a local file after
the polars readers' checks of its schema, a table or a URI through the same mapping on
its Spark schema. Its rows are checked on the executors by the polars checks of
inputs/optional.py (`check_query`, `checks_of`), run on each partition of its rows,
partitioned so that repeats meet (the catalog by item, the log and the baseline by user);
the driver adds up one small row per partition and raises the polars engines' error.

The buckets then get what they need through the shuffle:
- each user's logged items and baseline list, co-grouped with the user's ground truth;
- the catalog rows and the log's item popularity of the items their users were
  recommended (joined on the bucket and the item), so no bucket receives a whole table.
The driver keeps a few numbers (the embedding length). The universe of the global metrics
(the catalog's item ids, else the log's distinct items) stays a Spark DataFrame: it goes to
the executor that merges the buckets, which finishes what depends on the items
(evaluation/item_facts.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import LoadedConfig, is_remote
from receval_cli.config.model import CatalogConfig, InteractionsConfig, PredictionsConfig
from receval_cli.engines.spark_inputs import (
    canonical_predictions,
    listed,
    read_mapped,
)
from receval_cli.inputs.optional import (
    SourceChecks,
    Sources,
    check_query,
    checks_of,
    map_catalog,
    map_interactions,
    raise_for_checks,
)
from receval_cli.inputs.readers import Input, map_predictions

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession
    from pyspark.sql import DataFrame as SparkFrame

# the columns of the log's item popularity (evaluation/side_columns.item_popularity)
POPULARITY = ("count", "holders", "popular_rank", "log_rows", "log_users")


@dataclass
class SparkSources:
    """The optional inputs as Spark DataFrames of canonical columns (None: not given), the
    driver's Inputs that name them (`sources`: paths, mappings, the embedding length),
    and the universe of the global metrics: its items (None: no catalog or log) and what
    they are (global_metrics.Universe's source)."""

    sources: Sources
    catalog: SparkFrame | None = None
    interactions: SparkFrame | None = None
    baseline: SparkFrame | None = None
    universe: SparkFrame | None = None
    universe_source: str = "none"

    def frames(self) -> list[SparkFrame]:
        """The inputs read (their ids as read, before checked_sources casts them)."""
        return [f for f in (self.catalog, self.interactions, self.baseline) if f is not None]


def read_spark_sources(spark: SparkSession, loaded: LoadedConfig, local: Sources) -> SparkSources:
    """Read the optional inputs on Spark, mapped, their ids as read: `local` holds the polars
    readers' Inputs of the local files (their schemas checked, their rows not read); a table
    or URI is mapped on its Spark schema. Their ids take part in the run's one id type
    (common_id_types, with the predictions' and the ground truth's), then checked_sources casts
    them to it and checks their rows."""
    config = loaded.config
    found = SparkSources(Sources())
    if config.catalog is not None:
        frame, source = _read(spark, loaded, config.catalog, local.catalog, "catalog")
        found.catalog = _canonical_catalog(frame, source, config.catalog)
        found.sources.catalog = source
    if config.interactions is not None:
        interactions = config.interactions
        frame, source = _read(spark, loaded, interactions, local.interactions, "interactions")
        cols = source.columns
        found.interactions = frame.select(
            frame[cols["user"]].alias("user"), frame[cols["item"]].alias("item")
        )
        found.sources.interactions = source
    if config.baseline is not None:
        frame, source = _read(spark, loaded, config.baseline, local.baseline, "baseline")
        found.baseline = canonical_predictions(frame, source, config.baseline.list_separator)
        found.sources.baseline = source
    return found


def common_id_types(frames: list[SparkFrame]) -> dict[str, str]:
    """The one Spark type of the user and of the item ids of every input, as align_ids
    gives the polars engines theirs (inputs/id_alignment.py): integers where every input
    holds integers, else text (an integer 7 matches the text "7", not "007")."""
    found = {}
    for column in ("user", "item"):
        types = {dict(frame.dtypes)[column] for frame in frames if column in frame.columns}
        found[column] = "bigint" if types <= {"int", "bigint", "smallint", "tinyint"} else "string"
    return found


def checked_sources(found: SparkSources, types: dict[str, str], duplicates: str) -> SparkSources:
    """The optional inputs with their ids cast to the run's types (common_id_types), their rows
    checked on the executors, and the universe of the global metrics."""
    if found.catalog is not None:
        found.catalog = _cast_ids(found.catalog, types)
    if found.interactions is not None:
        found.interactions = _cast_ids(found.interactions, types)
    if found.baseline is not None:
        found.baseline = _cast_ids(found.baseline, types)
    for given, rows, key in (
        (found.sources.catalog, found.catalog, "item"),
        (found.sources.interactions, found.interactions, "user"),
        (found.sources.baseline, found.baseline, "user"),
    ):
        if given is not None and rows is not None:
            checks = checks_on_executors(rows, given, key)
            raise_for_checks(found.sources, given, checks, duplicates)
    if found.catalog is not None:
        found.universe, found.universe_source = found.catalog.select("item"), "catalog"
    elif found.interactions is not None:
        items = found.interactions.select("item").distinct()
        found.universe, found.universe_source = items, "interactions log"
    return found


def _read(
    spark: SparkSession,
    loaded: LoadedConfig,
    config: CatalogConfig | InteractionsConfig | PredictionsConfig,
    checked: Input | None,
    role: str,
) -> tuple[SparkFrame, Input]:
    location = loaded.location(config.path)
    if checked is None and not is_remote(config.path):
        raise AssertionError(f"the local {role} was not read first")

    def mapping(probe: pl.LazyFrame, path: Path) -> Input:
        if isinstance(config, CatalogConfig):
            return map_catalog(probe, config, path, "spark")
        if isinstance(config, InteractionsConfig):
            return map_interactions(probe, config, path, "spark")
        return map_predictions(probe, config.columns, config.list_separator, path, "spark", role)

    return read_mapped(spark, location, config.format, config.separator, checked, role, mapping)


def _canonical_catalog(frame: SparkFrame, source: Input, config: CatalogConfig) -> SparkFrame:
    """(item[, category, tags, embedding, title]) as inputs/optional.map_catalog maps them:
    tags a set of non-empty texts (none: an empty set), embeddings arrays of doubles."""
    from pyspark.sql import functions as F

    cols = source.columns
    selected: list[Column] = [F.col(cols["item"]).alias("item")]
    if "category" in cols:
        selected.append(F.col(cols["category"]).cast("string").alias("category"))
    if "tags" in cols:
        tags = F.transform(listed(frame, cols["tags"], config.list_separator), _as_text)
        kept = F.array_distinct(F.filter(tags, lambda tag: tag != F.lit("")))
        selected.append(F.coalesce(kept, F.array().cast("array<string>")).alias("tags"))
    if "embedding" in cols:
        vector = listed(frame, cols["embedding"], config.list_separator)
        selected.append(F.transform(vector, _as_number).alias("embedding"))
    if "title" in cols:
        selected.append(F.col(cols["title"]).cast("string").alias("title"))
    if "propensity" in cols:  # numbers: map_catalog checked the column's type
        selected.append(F.col(cols["propensity"]).cast("double").alias("propensity"))
    return frame.select(*selected)


def _as_text(value: Column) -> Column:
    return value.cast("string")


def _as_number(value: Column) -> Column:
    return value.try_cast("double")


def _cast_ids(frame: SparkFrame, id_types: dict[str, str]) -> SparkFrame:
    from pyspark.sql import functions as F

    for column in ("user", "item"):
        if column in frame.columns:
            frame = frame.withColumn(column, F.col(column).cast(id_types[column]))
    return frame


def checks_on_executors(frame: SparkFrame, source: Input, key: str) -> SourceChecks:
    """inputs/optional.py's checks of an optional input, run by polars on each partition of
    its rows (partitioned by `key`, so that an item's or a user's rows meet), added up on
    the driver: one small row per partition comes back."""
    import pyarrow as pa  # type: ignore[import-untyped]

    role, path, layout, columns = source.role, str(source.path), source.layout, source.columns

    def run(batches: Any) -> Any:
        rows = partition_frame(batches, schema)
        if rows is None:
            return
        part = Input(role, Path(path), "spark", layout, columns, rows, rows)
        found = check_query(part).collect().row(0, named=True)
        text = json.dumps(checks_of(part, found).to_json(), default=str)
        yield pa.RecordBatch.from_pylist([{"checks": text}])

    schema = arrow_schema(frame)
    parts = frame.repartition(key).mapInArrow(run, "checks string").collect()
    total = SourceChecks({"rows": 0})
    for row in parts:
        total = total + SourceChecks.from_json(json.loads(row["checks"]))
    return total


def partition_frame(batches: Any, schema: Any) -> pl.LazyFrame | None:
    """A Spark partition's Arrow batches (mapInArrow) as one polars frame; None when the
    partition holds no row."""
    import pyarrow as pa

    table = pa.Table.from_batches(list(batches), schema=schema)
    return None if table.num_rows == 0 else cast(pl.DataFrame, pl.from_arrow(table)).lazy()


def arrow_schema(frame: SparkFrame) -> Any:
    """The Arrow schema of a Spark DataFrame's rows, for a partition with no rows."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(frame.schema)


def spark_item_popularity(log: SparkFrame, conventions: Conventions) -> SparkFrame:
    """evaluation/side_columns.item_popularity on Spark: per item of the log its rows (count),
    its users (holders) and its rank by popularity (count descending, then the tie_break
    order of the item: inputs/list_order.tie_order, whose input_order Spark refuses), with the log's
    totals (log_rows, log_users)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    per_item = log.groupBy("item").agg(
        F.count(F.lit(1)).alias("count"), F.countDistinct("user").alias("holders")
    )
    tie_break = conventions.tie_break
    item = F.col("item").cast("string") if tie_break.startswith("item_text_") else F.col("item")
    second = item.desc() if tie_break.endswith("_desc") else item.asc()
    order = Window.orderBy(F.col("count").desc(), second)
    ranked = per_item.withColumn("popular_rank", F.row_number().over(order))
    totals = log.agg(
        F.count(F.lit(1)).alias("log_rows"), F.countDistinct("user").alias("log_users")
    )
    return ranked.crossJoin(totals)


def popularity_rows(
    popularity: SparkFrame, rows: list[pl.Expr], id_type: pl.DataType
) -> tuple[SparkFrame, list[str]]:
    """The log's item popularity with the per-item columns the metrics ask of it
    (metrics/stats.Stats.items: `rows`, polars expressions over the whole table, e.g.
    long_tail_share's head), computed by polars on one executor with the single-machine
    types, and the names of those columns (which travel as row_0, row_1, ...)."""

    types: dict[str, pl.DataType] = {"item": id_type, **dict.fromkeys(POPULARITY, pl.Int64())}
    types["popular_rank"] = cast(pl.DataType, pl.get_index_type())

    def with_rows(frame: pl.LazyFrame) -> pl.LazyFrame:
        frame = frame.cast(types)  # type: ignore[arg-type]
        for expr in rows:
            frame = frame.with_columns(expr)
        # the added columns travel as row_0, row_1, ... (their names hold dots and brackets)
        renamed = {name: f"row_{i}" for i, name in enumerate(added)}
        return frame.with_columns(pl.col("popular_rank").cast(pl.Int64)).rename(renamed)

    added: list[str] = []
    named = pl.LazyFrame(schema=types)
    for expr in rows:
        named = named.with_columns(expr)
    added = [c for c in named.collect_schema().names() if c not in types]
    from pyspark.sql.pandas.types import from_arrow_schema

    empty = pl.DataFrame(schema=with_rows(pl.LazyFrame(schema=types)).collect_schema())
    schema = from_arrow_schema(empty.to_arrow().schema)

    def run(batches: Any) -> Any:
        frame = partition_frame(batches, arrow)
        if frame is not None:
            yield from with_rows(frame).collect().to_arrow().to_batches()

    arrow = arrow_schema(popularity.select("item", *POPULARITY))
    ordered = popularity.select("item", *POPULARITY).repartition(1)
    return ordered.mapInArrow(run, schema), added
