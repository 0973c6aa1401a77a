"""One model's Report from several passes: a config whose metrics need different
conventions (tools' names beside receval's, config/convention_groups.py) is evaluated once
per group of metrics, on any engine, and the passes' Reports are assembled here into one,
as if one pass had computed every metric.

The first pass (the config's own conventions) gives everything that is not a metric: the
users block, the inputs, the item tables. The others add their metrics, their per-user
values (joined on the user) and, where a metric counts other users than the first pass's,
that count under `users.evaluated_per_metric`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import polars as pl

from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.dialects import spec_of
from receval_cli.results.blocks import UsersBlock
from receval_cli.results.report import Report


def merged_report(parts: list[Report], specs: tuple[MetricSpec, ...]) -> Report:
    """The passes' Reports (the first under the config's own conventions) as one, its
    metrics in the config's order."""
    first = parts[0]
    if len(parts) == 1:
        return first
    order = {str(s): i for i, s in enumerate(specs)}
    metrics: dict[str, float | None] = {}
    for part in parts:
        metrics.update(part.metrics)
    ranked = sorted(metrics, key=lambda name: order.get(name, len(order)))
    segments = {
        name: merged_report([p.segments[name] for p in parts if name in p.segments], specs)
        for name in first.segments
    }
    firsts: dict[str, Any] = {
        name: next((v for p in parts if (v := getattr(p, name)) is not None), None)
        for name in _FIRST_GIVEN
    }
    skipped: dict[str, str] = {}
    for part in parts:
        skipped.update(part.segments_skipped)
    return dataclasses.replace(
        first,
        metrics={name: metrics[name] for name in ranked},
        users=_users(parts),
        per_user=_joined_frames([p.per_user for p in parts], fill=None),
        counted=_joined_frames([p.counted for p in parts], fill=False),
        per_user_rows=_joined_rows([p.per_user_rows for p in parts]),
        per_user_files=[p.per_user_files for p in parts],
        segments=segments,
        segments_skipped={k: v for k, v in skipped.items() if k not in segments},
        warnings=list(dict.fromkeys(w for p in parts for w in p.warnings)),
        **firsts,
    )


# what only some passes compute (the rating, click and beyond-accuracy blocks): the first
# pass that has it
_FIRST_GIVEN = (
    "pairs",
    "calibration",
    "logged",
    "weights",
    "items",
    "exposure",
    "popularity_bias",
    "fairness_states",
    "unknown_items",
)


def _users(parts: list[Report]) -> UsersBlock:
    """The first pass's users block; a metric of another pass whose mean counts other
    users than the first pass's evaluated ones joins `evaluated_per_metric`."""
    first = parts[0]
    block = first.users.copy()
    per_metric = dict(block.get("evaluated_per_metric", {}))
    for part in parts[1:]:
        own: dict[str, int] = part.users.get("evaluated_per_metric", {})
        for name in part.metrics:
            count = own.get(name, part.users["evaluated"])
            if count != block["evaluated"] and name in _counted_names(part):
                per_metric[name] = count
    if per_metric:
        block["evaluated_per_metric"] = per_metric
    return block


def _counted_names(part: Report) -> set[str]:
    """The metrics with a per-user mean (the global, pair and logged ones count no users)."""
    return {name for name in part.metrics if lookup(spec_of(name).name).scope == "user"}


def _joined(frames: list[pl.LazyFrame], fill: bool | None) -> pl.LazyFrame:
    """Per-user tables joined on the user, in the first's order: the first's columns, then
    each other's metric columns (null, or `fill`, for a user it lacks); a user only
    another pass holds gets its status from that pass."""
    joined = frames[0]
    names = joined.collect_schema().names()
    for frame in frames[1:]:
        theirs = frame.collect_schema().names()
        added = [c for c in theirs if c not in names]
        names = [*names, *added]
        status = ["status"] if "status" in theirs and "status" in names else []
        right = frame.select("user", *added, *(pl.col(c).alias(f"_{c}") for c in status))
        joined = joined.join(right, on="user", how="full", coalesce=True, maintain_order="left")
        if status:
            joined = joined.with_columns(pl.col("status").fill_null(pl.col("_status")))
            joined = joined.drop("_status")
        if fill is not None:
            joined = joined.with_columns(pl.col(added).fill_null(fill))
    return joined


def _joined_frames(frames: list[pl.DataFrame | None], fill: bool | None) -> pl.DataFrame | None:
    """_joined over in-memory tables (None where a pass kept none)."""
    if any(frame is None for frame in frames):
        return None
    return _joined([frame.lazy() for frame in frames if frame is not None], fill).collect()


def _joined_rows(frames: list[pl.LazyFrame | None]) -> pl.LazyFrame | None:
    """_joined over the --per-user rows, sorted by user as each pass's are."""
    if any(frame is None for frame in frames):
        return None
    return _joined([frame for frame in frames if frame is not None], None).sort("user")
