"""User segments: which users fall in `attribute=value`, for every attribute of segment_by.

The attributes come from the `segments` file (one row per user), else from columns of the
ground truth (each user must have one value). A segment's metrics are the run's metrics
on the predictions and ground truth restricted to its users: the same numbers as filtering
the input files first (the interactions, catalog and baseline are not restricted: item
popularity stays the whole log's). Each attribute splits the users on its own; combine
attributes in one column for a cross of two. A user without a value is in `attribute=(none)`.

Every segment comes from one more pass over the inputs (`evaluate_segments`), not one
per value: a user's statistics depend only on its own list and ground truth (and on the
optional inputs, which are whole), so the per-user table is built once for all users. Per
segment, its users' metrics are computed again from their statistics on a table of the
segment's length (polars' float division depends on the length: see evaluate_segments),
and the means, sums and user counts of every segment come from one group_by with the rules
of pipeline._aggregate. Where a segment fails a check (no user in both files, none left to
average over), pipeline's own functions raise its reason. Only the metrics that are not
means of per-user values (global, rating and click metrics) are computed segment by
segment, from the lists and rows already in memory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from receval_cli.config import ConfidenceConfig, LoadedConfig, SegmentsConfig
from receval_cli.conventions import Conventions
from receval_cli.errors import InputError
from receval_cli.global_eval import global_values, state_queries, universe_of
from receval_cli.io import Input, align_ids, detect_format, read_ground_truth, scan
from receval_cli.logged import logged_metrics
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.registry import StateInputs, Universe
from receval_cli.metrics.stats import ordered_mean, ordered_sum
from receval_cli.pipeline import (
    USER_TALLY,
    _aggregate,
    _counted,
    _diagnose,
    _no_overlap_message,
    _pair_metrics,
    guard_ranges,
    metric_exprs,
    metric_users,
    per_user_frame,
    users_block,
)
from receval_cli.read_errors import READ_ERRORS, check_header_encoding, read_failure
from receval_cli.report import Report
from receval_cli.sources import Sources, check_sources

NONE = "(none)"


@dataclass(frozen=True)
class Segment:
    """The users whose `attribute` is `value`; the complement (attribute=(none)): the
    users without a value."""

    name: str  # attribute=value
    attribute: str
    value: str | None = None  # None: the complement
    complement: bool = False


def user_attributes(loaded: LoadedConfig) -> pl.DataFrame | None:
    """(user as text, one column per segment_by attribute), or None without segments."""
    config = loaded.config
    if not config.segment_by:
        return None
    if config.segments is not None:
        path = loaded.resolve_path(config.segments.path)
        return _from_file(config.segments, path, config.segment_by)
    truth = read_ground_truth(config.ground_truth, loaded.resolve_path(config.ground_truth.path))
    return _from_truth(truth, config.segment_by)


def _from_file(config: SegmentsConfig, path: Path, attributes: list[str]) -> pl.DataFrame:
    role = "segments"
    fmt = detect_format(path, config.format, role)
    frame = scan(path, fmt, config.separator, role, id_columns=(config.columns.user,))
    names = frame.collect_schema().names()
    for column in (config.columns.user, *attributes):
        if column not in names:
            check_header_encoding(path, role, names)  # UTF-16 or UTF-32: NUL bytes
            key = "segments.columns.user" if column == config.columns.user else "segment_by"
            raise InputError(
                f"segments file {path} has no column '{column}' (named by {key}). Its "
                f"columns are: {', '.join(names)}."
            )
    try:
        table = frame.select(
            pl.col(config.columns.user).cast(pl.String).alias("user"),
            *(pl.col(a).cast(pl.String) for a in attributes),
        ).collect()
    except READ_ERRORS as error:
        raise read_failure(path, fmt, config.separator, role, error) from None
    repeated = table.height - table.get_column("user").n_unique()
    if repeated:
        raise InputError(
            f"segments file {path}: {repeated} row(s) repeat a user already listed; give each "
            "user one row."
        )
    return table


def _from_truth(truth: Input, attributes: list[str]) -> pl.DataFrame:
    names = truth.raw.collect_schema().names()
    missing = [a for a in attributes if a not in names]
    if missing:
        raise InputError(
            f"segment_by names '{missing[0]}', which is not a column of the ground truth "
            f"{truth.path} (its columns: {', '.join(names)}), and the config gives no segments "
            "file. Add a segments file (segments.path) with that column, or fix segment_by."
        )
    user = truth.columns["user"]
    try:
        per_user = (
            truth.raw.select(
                pl.col(user).cast(pl.String).alias("user"),
                *(pl.col(a).cast(pl.String) for a in attributes),
            )
            .group_by("user")
            .agg(*(pl.col(a).drop_nulls().unique().alias(a) for a in attributes))
            .collect()
        )
    except READ_ERRORS as error:
        raise truth.read_failure(error) from None
    for attribute in attributes:
        several = per_user.filter(pl.col(attribute).list.len() > 1)
        if several.height:
            example = several.row(0, named=True)
            raise InputError(
                f"segment_by '{attribute}': user {example['user']!r} has several values in "
                f"the ground truth {truth.path} ({', '.join(example[attribute])}); a segment "
                "attribute needs one value per user. Use a segments file instead."
            )
    return per_user.with_columns(pl.col(a).list.first() for a in attributes)


def segments_of(attributes: pl.DataFrame, names: list[str]) -> list[Segment]:
    """Every attribute=value, in attribute order then value order; attribute=(none) holds
    the users without a value (a null, or absent from the segments file) when there are."""
    found = []
    for attribute in names:
        values = attributes.get_column(attribute)
        for value in sorted(values.drop_nulls().unique().to_list()):
            found.append(Segment(f"{attribute}={value}", attribute, value))
        found.append(Segment(f"{attribute}={NONE}", attribute, complement=True))
    return found


_KEY = "segment value"  # the attribute's value of each user, in the tables partitioned


@dataclass
class _Shared:
    """What every segment of one model is computed from: the whole run's tables."""

    predictions: Input
    truth: Input
    specs: tuple[MetricSpec, ...]
    conventions: Conventions
    per_user: pl.DataFrame  # every user's statistics, status and per-user metrics
    names: list[str]  # the per-user metrics
    exprs: list[pl.Expr]  # the per-user metrics, from the statistics
    counted: list[pl.Expr]  # per per-user metric: the user is in its mean
    lists: pl.DataFrame | None  # the ranked lists and deduped predictions (global metrics)
    items: pl.DataFrame | None
    rows: pl.DataFrame | None  # the predictions' and ground truth's rows (rating, click)
    truth_rows: pl.DataFrame | None
    universe: Universe
    report: Report  # the whole run's, for what a segment's report repeats

    def scoped(self, scope: str) -> tuple[MetricSpec, ...]:
        return tuple(s for s in self.specs if lookup(s.name).scope == scope)


def evaluate_segments(
    predictions: Input,
    truth: Input,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    sources: Sources,
    whole: Report,
    attributes: pl.DataFrame,
    segments: list[Segment],
    engine: Any = "auto",
    confidence: ConfidenceConfig | None = None,
) -> tuple[dict[str, Report], dict[str, str]]:
    """Each segment's Report (its metrics, users and intervals: what the report shows of
    a segment) and, for the segments that cannot be evaluated, the reason; a segment of
    users without a value that holds no user of the ground truth is in neither.

    The numbers, and the reasons, are those of a run on the inputs restricted to the
    segment's users (their ids compared as text); `whole` is the run on all of them, which has
    passed every check of the inputs. A segment's per-user metrics are computed again from
    its users' statistics, on a table of its own length: polars divides a column of one
    value exactly and a longer one by multiplying with the reciprocal (3 / 5 is 0.6 for
    one user, 0.6000000000000001 among several), and splits a table of a few rows across
    threads, so only the segment's own table gives the values of a run on its users alone.
    (For segments of a few users that run itself can differ in the last bit from one
    run to the next, with the threads.)
    """
    shared = _shared(predictions, truth, specs, conventions, sources, whole, engine)
    parts: dict[str, Report] = {}
    skipped: dict[str, str] = {}
    by_attribute: dict[str, list[Segment]] = {}
    for segment in segments:
        by_attribute.setdefault(segment.attribute, []).append(segment)
    for attribute, listed in by_attribute.items():
        groups = _partitions(shared, attributes, attribute)
        found = [groups.get(None if s.complement else s.value, {}) for s in listed]
        # the per-user metrics again, on each segment's own table (see the docstring)
        tables = [t.get("per_user", shared.per_user.clear()) for t in found]
        recomputed = pl.collect_all([t.lazy().with_columns(shared.exprs) for t in tables])
        sums = _summaries(shared, recomputed)
        for index, segment in enumerate(listed):
            try:
                part = _segment_report(
                    shared,
                    found[index],
                    recomputed[index],
                    sums.get(index),
                    segment.complement,
                    confidence,
                )
            except InputError as error:  # e.g. no user of the segment can be evaluated
                skipped[segment.name] = str(error)
                continue
            if part is not None:
                parts[segment.name] = part
    return parts, skipped


def _shared(
    predictions: Input,
    truth: Input,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    sources: Sources,
    whole: Report,
    engine: Any,
) -> _Shared:
    """One pass over the inputs: the per-user table (and the lists, and the rows, when
    metrics other than per-user means need them), as evaluate_inputs builds them."""
    align_ids(predictions, truth, *sources.given())
    check_sources(sources, conventions.duplicates)  # also finds the embedding length
    scope = {s: lookup(s.name).scope for s in specs}
    user_specs = tuple(s for s in specs if scope[s] == "user")
    global_specs = tuple(s for s in specs if scope[s] == "global")
    rated = any(scope[s] in ("pairs", "logged") for s in specs)
    plan = per_user_frame(predictions, truth, user_specs, conventions, sources, global_specs)
    queries = [plan.frame]
    if global_specs:
        queries += [plan.lists, plan.items]
    if rated:
        queries += [predictions.frame, truth.frame]
    try:
        tables = pl.collect_all(queries, engine=engine)
    except READ_ERRORS as error:
        raise _diagnose(error, predictions, truth) from None
    per_user = tables.pop(0)
    lists, items = (tables.pop(0), tables.pop(0)) if global_specs else (None, None)
    rows, truth_rows = (tables.pop(0), tables.pop(0)) if rated else (None, None)
    universe = universe_of(sources) if global_specs else Universe(None, "none")
    _, exprs = metric_exprs(user_specs, conventions, sources)
    return _Shared(
        predictions,
        truth,
        specs,
        conventions,
        per_user,
        list(exprs),
        list(exprs.values()),
        [_counted(s, conventions) for s in user_specs],
        lists,
        items,
        rows,
        truth_rows,
        universe,
        whole,
    )


def _partitions(
    shared: _Shared, attributes: pl.DataFrame, attribute: str
) -> dict[str | None, dict[str, pl.DataFrame]]:
    """Per value of the attribute (None: no value), its users' rows of each shared table,
    in the tables' order. A user's value is looked up by its id as text (the attributes
    hold ids as text)."""
    values = attributes.select(pl.col("user").alias(_KEY + " user"), pl.col(attribute).alias(_KEY))
    keyed = shared.per_user.with_columns(pl.col("user").cast(pl.String).alias(_KEY + " user"))
    keyed = keyed.join(values, on=_KEY + " user", how="left", maintain_order="left")
    keys = keyed.select("user", _KEY)  # one row per user
    tables = {"per_user": keyed.drop(_KEY + " user")}
    named = {"lists": shared.lists, "items": shared.items}
    named.update(rows=shared.rows, truth_rows=shared.truth_rows)
    for name, table in named.items():
        if table is not None:
            tables[name] = table.join(keys, on="user", how="left", maintain_order="left")
    groups: dict[str | None, dict[str, pl.DataFrame]] = {}
    for name, table in tables.items():
        for key, part in table.partition_by(_KEY, as_dict=True, include_key=False).items():
            groups.setdefault(key[0], {})[name] = part
    return groups


_INDEX = "segment index"


def _summaries(shared: _Shared, tables: list[pl.DataFrame]) -> dict[int, dict[str, Any]]:
    """Per segment (its index in `tables`, its users' per-user tables) with users: the
    tally of user_tally and, per per-user metric, what pipeline._aggregate computes (the
    mean or sum over the users it counts, in the table's order; how many it counts; how
    many its user rules keep), all in one group_by."""
    conventions = shared.conventions
    aggregations = [expr.alias(f"tally:{key}") for key, expr in USER_TALLY.items()]
    for spec in shared.scoped("user"):
        name = str(spec)
        kept = _counted(spec, conventions)
        values = pl.col(name).filter(kept)
        summed = lookup(spec.name).aggregate == "sum"
        aggregations += [
            (ordered_sum(values) if summed else ordered_mean(values)).alias(f"value:{name}"),
            kept.sum().alias(f"counted:{name}"),
            metric_users(conventions.metric_params(spec)).sum().alias(f"users:{name}"),
        ]
    filled = [index for index, table in enumerate(tables) if table.height]
    if not filled:
        return {}
    heights = pl.Series([tables[index].height for index in filled], dtype=pl.UInt32)
    segment = pl.Series(_INDEX, filled, dtype=pl.UInt32).repeat_by(heights).explode()
    stacked = pl.concat([tables[index] for index in filled]).with_columns(segment)
    grouped = stacked.group_by(_INDEX, maintain_order=True).agg(aggregations)
    return {row[_INDEX]: row for row in grouped.iter_rows(named=True)}


def _means(
    shared: _Shared, per_user: pl.DataFrame, summary: dict[str, Any] | None
) -> tuple[dict[str, float], dict[str, int]]:
    """pipeline._aggregate's result for one segment, read from its summary; when a metric
    has no user to average over, _aggregate itself raises the run's error."""
    names = shared.names
    if summary is None or any(
        summary[f"users:{n}"] == 0 or summary[f"counted:{n}"] == 0 for n in names
    ):
        return _aggregate(per_user, shared.scoped("user"), shared.conventions)
    means = {n: float(summary[f"value:{n}"]) for n in names}
    return means, {n: int(summary[f"counted:{n}"]) for n in names}


def _segment_report(
    shared: _Shared,
    tables: dict[str, pl.DataFrame],
    per_user: pl.DataFrame,
    summary: dict[str, Any] | None,
    complement: bool,
    confidence: ConfidenceConfig | None,
) -> Report | None:
    """One segment's Report from its users' rows (`per_user`: their per-user table;
    `summary`: its _summaries row, None without users), with the checks of
    evaluate_inputs in its order; None for a segment of users without a value holding no
    ground truth."""
    counts = {k: 0 if summary is None else int(summary[f"tally:{k}"]) for k in USER_TALLY}
    if complement and counts["in_ground_truth"] == 0:
        return None
    conventions = shared.conventions
    user_specs = shared.scoped("user")
    no_overlap = ""
    if counts["in_both"] == 0:
        no_overlap = _no_overlap_message(per_user, shared.predictions, shared.truth)
    users = users_block(
        counts, shared.truth, conventions.relevance_threshold, bool(user_specs), no_overlap
    )
    metrics, users_per_metric = _means(shared, per_user, summary)
    global_specs = shared.scoped("global")
    if global_specs:
        metrics.update(_global_metrics(shared, global_specs, per_user, tables))
    predictions, truth = _restricted(shared, tables)
    pairs = None
    pair_specs = shared.scoped("pairs")
    if pair_specs:
        pair_values, pairs = _pair_metrics(predictions, truth, pair_specs, conventions)
        metrics.update(pair_values)
    logged = None
    logged_specs = shared.scoped("logged")
    if logged_specs:
        logged_values, logged = logged_metrics(predictions, truth, logged_specs, conventions)
        metrics.update(logged_values)
    metrics = {str(spec): metrics[str(spec)] for spec in shared.specs}
    differing = {n: c for n, c in users_per_metric.items() if c != users["evaluated"]}
    if differing:
        users["evaluated_per_metric"] = differing
    guard_ranges(metrics, shared.specs, conventions)
    names = shared.names
    whole = shared.report
    report = Report(
        metrics=metrics,
        config={"metrics": names},
        conventions=whole.conventions,
        inputs=whole.inputs,
        users=users,
        per_user=per_user.select("user", "status", *names),
        counted=per_user.select("user", *shared.counted),
        pairs=pairs,
        logged=logged,
    )
    if confidence is not None:
        from receval_cli.uncertainty import add_intervals  # numpy: only with intervals

        add_intervals(report, confidence)
    return report


def _global_metrics(
    shared: _Shared,
    specs: tuple[MetricSpec, ...],
    per_user: pl.DataFrame,
    tables: dict[str, pl.DataFrame],
) -> dict[str, float]:
    """The global metrics of one segment: their states built from its users' lists."""
    assert shared.lists is not None
    assert shared.items is not None
    lists = tables.get("lists", shared.lists.clear())
    items = tables.get("items", shared.items.clear())
    inputs = StateInputs(lists.lazy(), items.lazy(), per_user.lazy())
    states = state_queries(specs, shared.conventions, inputs)
    built = pl.collect_all([query for _, query in states.values()])
    found = {
        name: (state, table)
        for (name, (state, _)), table in zip(states.items(), built, strict=True)
    }
    return global_values(specs, shared.conventions, found, shared.universe)


def _restricted(shared: _Shared, tables: dict[str, pl.DataFrame]) -> tuple[Input, Input]:
    """The predictions and ground truth of one segment's users (rows in memory, in file
    order), for the rating and click metrics; the whole inputs when those are not asked."""
    if shared.rows is None or shared.truth_rows is None:
        return shared.predictions, shared.truth
    rows = tables.get("rows", shared.rows.clear())
    truth_rows = tables.get("truth_rows", shared.truth_rows.clear())
    return (
        dataclasses.replace(shared.predictions, frame=rows.lazy()),
        dataclasses.replace(shared.truth, frame=truth_rows.lazy()),
    )
