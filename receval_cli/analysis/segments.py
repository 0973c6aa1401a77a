"""User segments: which users fall in `attribute=value`, for every attribute of segment_by.

The attributes come from the `segments` file (one row per user), else from columns of the
ground truth (each user must have one value). A segment's metrics are the run's metrics
on the predictions and ground truth restricted to its users: the same numbers as filtering
the input files first (the interactions, catalog and baseline are not restricted: item
popularity stays the whole log's). Each attribute splits the users on its own; combine
attributes in one column for a cross of two. A user without a value is in `attribute=(none)`.

Every segment comes from one more pass over the inputs (`evaluate_segments`), not one
per value: a user's statistics and per-user values depend only on its own list and ground
truth (and on the optional inputs, which are whole), so the per-user table is built once
for all users and split by segment. Each segment's users are then a bucket of the one
assembly (assembly.table_partial, finish): its checks, messages and exact means are a
run's on those users, and where a segment fails a check (no user in both files, none left
to average over) that run's error is its reason. Only the metrics that are not means of
per-user values (global, rating and click metrics) are computed segment by segment, from
the lists and rows already in memory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import LoadedConfig
from receval_cli.config.model import ConfidenceConfig, SegmentsConfig
from receval_cli.errors import InputError
from receval_cli.evaluation.assembly import Run, finish, table_partial, users_block
from receval_cli.evaluation.clicks import logged_metrics
from receval_cli.evaluation.global_metrics import state_queries, universe_of
from receval_cli.evaluation.plan import diagnose, per_user_frame
from receval_cli.evaluation.rating import bucket_pairs
from receval_cli.inputs.diagnosis import READ_ERRORS, check_header_encoding, read_failure
from receval_cli.inputs.optional import Sources, check_sources
from receval_cli.inputs.readers import Input, align_ids, detect_format, read_ground_truth, scan
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.registry import StateInputs, Universe
from receval_cli.report.data import Report
from receval_cli.wording import setting

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
            named_by = ("segments", "columns", "user")
            key = setting(*named_by) if column == config.columns.user else setting("segment_by")
            raise InputError(
                f"segments file {path} has no column '{column}' (named by {key}). Its "
                f"columns are: {', '.join(names)}.",
                key=key,
                path=path,
                column=column,
                found=names[:50],
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
        users = table.get_column("user")
        examples = users.filter(users.is_duplicated()).unique(maintain_order=True).head(3)
        fix = "give each user one row."
        raise InputError(
            f"segments file {path}: {repeated} row(s) repeat a user already listed; {fix}",
            path=path,
            found={"rows": repeated, "examples": examples.to_list()},
            fix=fix,
        )
    return table


def _from_truth(truth: Input, attributes: list[str]) -> pl.DataFrame:
    names = truth.raw.collect_schema().names()
    missing = [a for a in attributes if a not in names]
    if missing:
        key = setting("segment_by")
        fix = f"Add a segments file ({setting('segments', 'path')}) with that column, or fix {key}."
        raise InputError(
            f"{key} names '{missing[0]}', which is not a column of the ground truth "
            f"{truth.path} (its columns: {', '.join(names)}), and the config gives no segments "
            f"file. {fix}",
            key=key,
            path=truth.path,
            column=missing[0],
            found=names[:50],
            fix=fix,
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
            key = setting("segment_by")
            fix = "Use a segments file instead."
            raise InputError(
                f"{key} '{attribute}': user {example['user']!r} has several values in "
                f"the ground truth {truth.path} ({', '.join(example[attribute])}); a segment "
                f"attribute needs one value per user. {fix}",
                key=key,
                path=truth.path,
                column=attribute,
                found={"user": example["user"], "values": list(example[attribute])},
                fix=fix,
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
    sources: Sources
    per_user: pl.DataFrame  # every user's statistics, status and per-user metrics
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
    passed every check of the inputs.
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
        for index, segment in enumerate(listed):
            try:
                part = _segment_report(shared, found[index], segment.complement, confidence)
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
        raise diagnose(error, predictions, truth) from None
    per_user = tables.pop(0)
    lists, items = (tables.pop(0), tables.pop(0)) if global_specs else (None, None)
    rows, truth_rows = (tables.pop(0), tables.pop(0)) if rated else (None, None)
    universe = universe_of(sources) if global_specs else Universe(None, "none")
    return _Shared(
        predictions,
        truth,
        specs,
        conventions,
        sources,
        per_user,
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


def _segment_report(
    shared: _Shared,
    tables: dict[str, pl.DataFrame],
    complement: bool,
    confidence: ConfidenceConfig | None,
) -> Report | None:
    """One segment's Report from its users' rows, finished by the one assembly (so with
    the checks, the messages and the exact means of a run on those users); None for a
    segment of users without a value holding no ground truth."""
    conventions = shared.conventions
    per_user = tables.get("per_user", shared.per_user.clear())
    partial = table_partial(per_user, shared.scoped("user"), conventions, keep="all")
    if complement and partial.tally["in_ground_truth"] == 0:
        return None
    run = Run(
        shared.predictions,
        shared.truth,
        shared.specs,
        conventions,
        shared.sources,
        None,
        universe=shared.universe,
    )
    global_specs = shared.scoped("global")
    if global_specs:
        partial.states = _global_states(shared, global_specs, per_user, tables)
    pair_specs, logged_specs = shared.scoped("pairs"), shared.scoped("logged")
    if pair_specs or logged_specs:  # the users' checks first, as in a run
        users_block(partial, run, bool(shared.scoped("user")))
        predictions, truth = _restricted(shared, tables)
        if pair_specs:  # finish scores them, as in a run
            partial.pairs = bucket_pairs(predictions, truth, pair_specs, conventions)
        if logged_specs:
            values, run.logged = logged_metrics(predictions, truth, logged_specs, conventions)
            run.extra_metrics.update(values)
    report = finish(partial, run)
    report = dataclasses.replace(report, inputs=shared.report.inputs)
    if confidence is not None:
        from receval_cli.analysis.intervals import with_intervals  # numpy: only with intervals

        return with_intervals(report, confidence)
    return report


def _global_states(
    shared: _Shared,
    specs: tuple[MetricSpec, ...],
    per_user: pl.DataFrame,
    tables: dict[str, pl.DataFrame],
) -> dict[str, list[pl.DataFrame]]:
    """The global metrics' states of one segment, built from its users' lists."""
    assert shared.lists is not None
    assert shared.items is not None
    lists = tables.get("lists", shared.lists.clear())
    items = tables.get("items", shared.items.clear())
    inputs = StateInputs(lists.lazy(), items.lazy(), per_user.lazy())
    states = state_queries(specs, shared.conventions, inputs)
    built = pl.collect_all([query for _, query in states.values()])
    return {name: [table] for name, table in zip(states, built, strict=True)}


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
