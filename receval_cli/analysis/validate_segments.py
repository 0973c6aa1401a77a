"""`receval validate`'s summary of the segments: the segments file among the inputs (where,
how mapped, rows, nulls, user id type) and the segments segment_by gives, as the run
reports them (analysis/validate.py calls these on what the run planner read)."""

from __future__ import annotations

from typing import Any

import polars as pl

from receval_cli.config.loading import LoadedConfig
from receval_cli.evaluation.segment_split import Segment, SegmentKeys
from receval_cli.inputs.segments import segments_input


def segments_block(
    loaded: LoadedConfig, keys: SegmentKeys, segments: list[Segment]
) -> dict[str, Any]:
    """The segments the run reports (segment_by's attributes, from the segments file or
    the ground truth), and how many users have a value of each attribute."""
    attributes = keys.attributes
    return {
        "by": list(keys.by),
        "from": "segments file" if loaded.config.segments is not None else "ground truth",
        "segments": [s.name for s in segments],
        "users_with_a_value": {a: attributes.height - attributes[a].null_count() for a in keys.by},
    }


def segments_file_block(loaded: LoadedConfig, keys: SegmentKeys) -> dict[str, Any]:
    """The segments file's block among the inputs: where, how mapped, its rows (one per
    user), the nulls of its mapped columns and its user id type."""
    given = loaded.config.segments
    assert given is not None
    path = loaded.resolve_path(given.path)
    source = segments_input(given, path, list(keys.by))
    user = given.columns.user
    mapped = [user, *keys.by]
    found = source.raw.select(pl.col(c).null_count() for c in dict.fromkeys(mapped)).collect()
    attributes = keys.attributes
    return {
        **source.describe(),
        "columns": {"user": user, **{a: a for a in keys.by}},
        "rows": attributes.height,
        "users": attributes.height,
        "nulls": {k: int(v) for k, v in found.row(0, named=True).items()},
        "id_types": {"user": str(source.raw.collect_schema()[user])},
    }
