"""engine: spark with segment_by: each user's segment values read and checked by Spark.

The values come from the segments file (a local file, a `table:NAME` or a URI, read as
the other inputs are: engines/spark_inputs.read_mapped), else from columns of the ground
truth. They travel to the buckets with the ground truth, by the user's bucket, so each
bucket splits its own users by segment (evaluation/segment_split.py) and the driver
collects only the segments' distinct values. Users are matched to their values by their
id as text, as on the polars engines: a segments file that writes `0042` does not name
user 42. The checks are the polars engines' (a repeated user, several values of an
attribute for one user in the ground truth), with their messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from receval_cli.config.loading import LoadedConfig
from receval_cli.engines.spark_inputs import read_mapped
from receval_cli.evaluation.segment_split import Segment, segments_of
from receval_cli.inputs.readers import Input
from receval_cli.inputs.segments import (
    map_segments,
    nested_attribute,
    repeated_users,
    require_truth_columns,
    several_values,
    user_attributes,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import SparkSession

SEGMENT_USER = "segment_user"  # the user id as text, as the segments name it
_EXAMPLES = 3


def column_of(index: int) -> str:
    """The column that carries the index-th attribute to the buckets (an attribute may
    be named as one of the other rows' columns: category, value, ...)."""
    return f"segment_{index}"


@dataclass
class SparkSegments:
    """Each user's segment values: `rows` (user in the ground truth's id type, for the
    bucket; SEGMENT_USER; one column per attribute, column_of(i)), the attributes and the
    segments."""

    rows: SparkFrame
    by: tuple[str, ...]
    segments: list[Segment]


def read_spark_segments(
    spark: SparkSession,
    loaded: LoadedConfig,
    truth: tuple[SparkFrame, Input],
    user_type: str,
    local: Input | None,
) -> SparkSegments | None:
    """The users' segment values on Spark, checked; None without segment_by. `truth`: the
    ground truth as read (its own columns) and its mapping; `local`: the local segments
    file as the run plan read it (RunPlan.local_inputs)."""
    from pyspark.sql import functions as F

    config = loaded.config
    if not config.segment_by:
        return None
    by = tuple(config.segment_by)
    named = {attribute: column_of(i) for i, attribute in enumerate(by)}
    given = config.segments
    if given is not None:
        location = loaded.location(given.path)

        def mapping(probe: pl.LazyFrame, path: Path) -> Input:
            return map_segments(probe, given, path, list(by), "spark")

        frame, source = read_mapped(
            spark, location, given.format, given.separator, local, "segments", mapping
        )
        user = F.col(source.columns["user"]).cast("string").alias(SEGMENT_USER)
        values = frame.select(user, *(F.col(a).cast("string").alias(named[a]) for a in by))
        _check_repeats(values, loaded, location, local)
    else:
        raw, source = truth
        where = source.location or str(source.path)
        require_truth_columns(raw.columns, list(by), where)
        _check_flat(raw, by, where)
        user = F.col(source.columns["user"]).cast("string").alias(SEGMENT_USER)
        texts = raw.select(user, *(F.col(a).cast("string").alias(named[a]) for a in by))
        grouped = texts.groupBy(SEGMENT_USER).agg(
            *(F.array_sort(F.collect_set(named[a])).alias(named[a]) for a in by)
        )
        for attribute in by:
            several = grouped.filter(F.size(named[attribute]) > 1)
            found = several.orderBy(SEGMENT_USER).select(SEGMENT_USER, named[attribute]).first()
            if found is not None:
                raise several_values(attribute, found[0], list(found[1]), where)
        values = grouped.select(SEGMENT_USER, *(F.get(named[a], 0).alias(named[a]) for a in by))
    distinct = values.agg(*(F.array_sort(F.collect_set(named[a])).alias(a) for a in by)).first()
    assert distinct is not None  # an aggregation has one row
    segments = segments_of({a: list(distinct[a]) for a in by})
    key = F.col(SEGMENT_USER)
    bucket_user = key if user_type == "string" else key.try_cast(user_type)
    return SparkSegments(values.select(bucket_user.alias("user"), "*"), by, segments)


def _check_flat(raw: SparkFrame, by: tuple[str, ...], where: str) -> None:
    """A ground truth column of arrays, maps or structs named by segment_by: the polars
    engines' error (a segments file's schema is checked by map_segments)."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    for attribute in by:
        kind = raw.schema[attribute].dataType
        if isinstance(kind, (ArrayType, MapType, StructType)):
            raise nested_attribute(attribute, kind.simpleString(), where, "ground truth")


def _check_repeats(
    values: SparkFrame, loaded: LoadedConfig, location: str, local: Input | None
) -> None:
    """A user listed twice in the segments file: the polars engines' error (for a local
    file, their own reading gives it, examples in file order; else the smallest ids)."""
    from pyspark.sql import functions as F

    counts = values.groupBy(SEGMENT_USER).count().filter(F.col("count") > 1)
    found = counts.agg(
        F.sum(F.col("count") - 1).alias("repeated"),
        F.slice(F.array_sort(F.collect_list(SEGMENT_USER)), 1, _EXAMPLES).alias("examples"),
    ).first()
    if found is None or not found["repeated"]:
        return
    if local is not None:
        user_attributes(loaded)  # raises the polars engines' error
    raise repeated_users(location, int(found["repeated"]), list(found["examples"]))
