"""The one assembly: a bucket of users -> a Partial; Partials -> merged; merged -> Report.
Over 400 lines: the one assembly every engine goes through (bucket -> Partial -> merged
-> Report), with the checks and messages that exist once, here.

Every engine runs the same three steps. A bucket is a set of users with all their
predictions and ground truth: the whole input on one machine (`evaluate_inputs`, the
one-bucket case), a hash bucket of the users with `partitions: N` (engines/partitions.py), or a
co-grouped bucket on a Spark executor (engines/spark.py). `bucket_partial` evaluates a
bucket with the polars plan (plan.per_user_frame) and returns a Partial: what the
report needs from those users, in a form that adds up. `merge` adds Partials up (in any
order and grouping: counts are integers, metric sums are exact, see metrics/exact_sum.py) and
`finish` turns the merged Partial into the Report: every check, count, message, mean and
the unknown-items block exist here once. So the JSON `metrics` of every engine are equal
bit for bit on the same data.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.errors import InputError
from receval_cli.evaluation import fingerprints, unknown_items
from receval_cli.evaluation.click_parts import click_parts, finish_clicks
from receval_cli.evaluation.fingerprints import truth_digest
from receval_cli.evaluation.global_metrics import (
    state_queries,
    state_sides,
    universe_of,
)
from receval_cli.evaluation.intent_lists import REPEATED, intent_checks, split_intents
from receval_cli.evaluation.item_exposure import exposure_depth, item_exposure, same_exposure
from receval_cli.evaluation.item_facts import ItemFacts, describes_items, item_facts
from receval_cli.evaluation.metric_users import guard_ranges
from receval_cli.evaluation.numpy_ahead import import_numpy_meanwhile
from receval_cli.evaluation.partial import (
    ROLES,
    Partial,
    empty_partial,
    per_user_rows,
    table_partial,
)
from receval_cli.evaluation.plan import (
    PREDICTION_CHECKS,
    TRUTH_CHECKS,
    Plan,
    diagnose,
    per_user_frame,
)
from receval_cli.evaluation.rating_pairs import (
    finish_pairs,
    pair_join,
    pair_partial,
    pair_queries,
    predicted_actual_counts,
)
from receval_cli.evaluation.segment_split import (
    Segment,
    SegmentKeys,
    segment_partials,
    segment_value,
    users_of,
    with_values,
)
from receval_cli.inputs.checks import (
    duplicates_error,
    find_duplicates,
    intents_repeated_error,
    raise_for,
    raw_rows,
    totals,
)
from receval_cli.inputs.diagnosis import READ_ERRORS
from receval_cli.inputs.id_alignment import align_ids
from receval_cli.inputs.optional import Sources, check_sources
from receval_cli.inputs.readers import Input
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.fairness import one_group_notes
from receval_cli.metrics.registry import (
    StateInputs,
    Universe,
    finish_mean,
    finish_ratio,
    no_value_warning,
)
from receval_cli.results.blocks import ConventionsBlock, InputBlock, UsersBlock
from receval_cli.results.report import Report
from receval_cli.wording import setting

CountRows = Literal["raw", "bucket", "none"]
Keep = Literal["none", "rows", "all"]


@dataclass(frozen=True)
class BucketTask:
    """What a bucket_partial call computes beside the metrics, and how.

    `count_rows`: "raw" counts the files' rows (the raw scans: the whole files, so only
    one bucket of a run does it), "bucket" the bucket's mapped rows, "none" nothing.
    `keep`: "rows" keeps the per-user rows, "all" also the whole per-user table and the
    in-the-mean flags (a one-bucket run), "none" neither. `list_specs` only deepen the
    lists (validate ranks them as deep as run would); `extra` queries are collected in
    the same pass, into `Partial.extra`. `reference`: the items the recommended ones are
    checked against, for a one-bucket run (see `Partial.unknown`); `reference_ahead`
    reads it while the metrics are computed (for a reference no larger than the ground
    truth a one-bucket run reads whole anyway); `items_when_read`: the Partial goes
    straight to finish (not merged, shipped or read by validate), so the recommended
    items the core has at hand are made only if finish reads them
    (`Partial.recommended_later`); `items_into`: takes the bucket's recommended items as
    bits (numpy uint64 words, evaluation/seen_items.py) where the compiled core kept them
    so, in place of a table of them in `Partial.recommended` (a run's buckets added up by
    engines/running.py). `segments`: each
    user's segment values; the bucket's users are then also split by segment
    (`Partial.segments`, evaluation/segment_split.py) and its kept per-user rows carry
    their values. `log_items`: the run's distinct logged items, for the click metrics
    without propensities (None: this bucket's log is the run's).
    """

    engine: Any = "auto"
    check_unknown: bool = True
    count_rows: CountRows = "raw"
    keep: Keep = "none"
    list_specs: tuple[MetricSpec, ...] = ()
    extra: tuple[pl.LazyFrame, ...] = ()
    reference: pl.LazyFrame | None = None
    segments: SegmentKeys | None = None
    log_items: int | None = None
    reference_ahead: bool = False
    items_when_read: bool = False
    items_into: Callable[[Any], None] | None = None


def bucket_partial(
    predictions: Input,
    truth: Input,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    sources: Sources | None = None,
    task: BucketTask = BucketTask(),
) -> Partial:
    """One bucket's Partial: the per-user, global, rating and click metrics of its users,
    its checks and its counts, and what `task` asks beside them."""
    engine, segments = task.engine, task.segments
    sources = sources or Sources()
    read_truth = truth  # as read: its rows counted and fingerprinted
    truth, intents = split_intents(truth, conventions)
    user_specs = tuple(s for s in specs if lookup(s.name).scope == "user")
    global_specs = tuple(s for s in specs if lookup(s.name).scope == "global")
    pair_specs = tuple(s for s in specs if lookup(s.name).scope == "pairs")
    deepening = (*global_specs, *task.list_specs)
    # the truth's digest (and the reference's items) do not depend on the lists: read
    # while the lists are (polars releases the GIL), not after them
    early = [truth_digest(read_truth)]
    if task.reference is not None and task.reference_ahead:
        early.append(task.reference)
    early_tables = _collect_meanwhile(early, engine)
    plan = per_user_frame(
        predictions, truth, user_specs, conventions, sources, deepening, engine, intents
    )
    users = plan.frame if plan.users is None else plan.users
    sides = state_sides(truth, sources, conventions)
    states = state_queries(
        global_specs,
        conventions,
        StateInputs(plan.lists, plan.items, users, ranked=plan.placed, sides=sides),
    )
    # the report describes the recommended items and their exposure with a
    # beyond-accuracy metric or a catalog (the exposure: only for the item figures)
    items = describes_items(global_specs, plan.recs_sides, sources)
    featured = bool(plan.recs_sides & {"category", "tags", "embedding"})
    listed = task.check_unknown or items or (featured and sources.catalog is not None)
    # every query of the bucket, by what it is for; collected together in one pass
    groups: dict[str, list[pl.LazyFrame]] = {"rows": [], "recommended": [], "exposure": []}
    if task.count_rows == "raw":
        groups["rows"] = [raw_rows(predictions), raw_rows(read_truth)]
    elif task.count_rows == "bucket":
        read = (predictions, read_truth)
        groups["rows"] = [f.frame.select(pl.len().alias("raw_rows")) for f in read]
    # the core's items, where the Partial goes straight to finish: made only if it reads them
    later = task.items_when_read and plan.recommended is not None
    # or handed over as the core's bits, where the run takes them so (no table made)
    bits = None if plan.seen is None or later else plan.seen.held_bits()
    handed = listed and bits is not None and task.items_into is not None
    if listed and not later and not handed:
        groups["recommended"] = [plan.recommended_items()]
    exposure_state = None  # the state that is the report's exposure already, if any
    if items and sources.figures:
        depth = exposure_depth((*user_specs, *global_specs))
        exposure_state = same_exposure(states, depth)
        if exposure_state is None:
            groups["exposure"] = [item_exposure(plan.lists, depth)]
    groups["states"] = [query for _, query in states.values()]
    groups["pairs"] = []
    if pair_specs:
        joined = pair_join(predictions, truth, pair_specs, conventions)
        groups["pairs"] = pair_queries(joined, pair_specs, conventions)
    try:
        digest, *reference = early_tables.result()
    except READ_ERRORS as error:
        raise diagnose(error, predictions, truth) from None
    groups["unknown"] = []
    if task.reference is not None:
        groups["unknown"] = [_unknown_query(plan, reference, task.reference)]
    groups["digest"] = [digest.lazy()]
    groups["intents"] = [] if intents is None else [intent_checks(intents, conventions)]
    groups["extra"] = list(task.extra)
    # what the segments' global and rating metrics are computed from, split by segment
    segment_tables: dict[str, pl.LazyFrame] = {}
    if segments is not None and global_specs:
        segment_tables.update(lists=plan.lists, items=plan.items)
    if segments is not None and pair_specs:
        segment_tables.update(predictions=predictions.frame, truth=truth.frame)
    groups["segments"] = list(segment_tables.values())
    numpy_import = import_numpy_meanwhile()
    try:
        per_user, *flat = pl.collect_all(
            [plan.frame, *(query for group in groups.values() for query in group)],
            engine=engine,
        )
        apart = dict(
            zip(
                plan.check_queries,
                pl.collect_all(list(plan.check_queries.values()), engine=engine),
                strict=True,
            )
        )
    except READ_ERRORS as error:  # a panic too: a damaged Parquet page can make one
        raise diagnose(error, predictions, truth) from None
    finally:  # past here, code that looks numpy up in sys.modules finds it whole
        if numpy_import is not None:
            numpy_import.join()
    tables = iter(flat)
    found = {name: [next(tables) for _ in group] for name, group in groups.items()}
    rows = {
        role: {k: int(v) for k, v in table.row(0, named=True).items()}
        for role, table in zip(ROLES, found["rows"], strict=False)
    }
    partial = table_partial(per_user, user_specs, conventions, task.keep)
    partial.rows = rows
    partial.checks = {
        "predictions": _counts(apart.get(PREDICTION_CHECKS, per_user), PREDICTION_CHECKS),
        "truth": _counts(apart.get(TRUTH_CHECKS, per_user), TRUTH_CHECKS),
    }
    for table in found["intents"]:
        counts = table.row(0, named=True).items()
        partial.checks["truth"].update({k: int(v or 0) for k, v in counts})
    partial.duplicates = _duplicates(per_user, predictions, truth)
    partial.states = {name: [table] for name, table in zip(states, found["states"], strict=True)}
    partial.recommended = found["recommended"]
    if handed:
        assert task.items_into is not None
        task.items_into(bits)
    if plan.seen is not None and not later:  # its items are read: its bits to the next bucket
        plan.seen.release()
    if listed and later:
        assert plan.recommended is not None
        partial.recommended_later = plan.recommended.collect
    partial.exposure = found["exposure"]
    if exposure_state is not None:
        partial.exposure = list(partial.states[exposure_state])
    partial.pairs = pair_partial(found["pairs"], pair_specs) if pair_specs else None
    partial.unknown = found["unknown"][0] if found["unknown"] else None
    partial.digest = {k: int(v or 0) for k, v in found["digest"][0].row(0, named=True).items()}
    partial.extra = found["extra"]
    if segments is not None:
        split = dict(zip(segment_tables, found["segments"], strict=True))
        partial.segments = segment_partials(
            per_user,
            segments,
            split,
            predictions,
            truth,
            specs,
            conventions,
            task.keep == "all",
            sides,
        )
        if partial.per_user is not None:
            partial.per_user = with_values(partial.per_user, segments)
    logged_specs = tuple(s for s in specs if lookup(s.name).scope == "logged")
    if logged_specs:
        _add_clicks(partial, predictions, truth, logged_specs, conventions, task)
    return partial


def _unknown_query(
    plan: Plan, collected: list[pl.DataFrame], reference: pl.LazyFrame
) -> pl.LazyFrame:
    """unknown_items.unknown_query's row: counted on the core's bits of the recommended
    items where it kept them and the reference was read ahead (SeenItems.missing_from),
    else a query of the distinct items against the reference."""
    if plan.seen is not None and collected:
        found = plan.seen.missing_from(collected[0].get_column("item"))
        if found is not None:
            return found.lazy()
    reference_items = collected[0].lazy() if collected else reference
    return unknown_items.unknown_query(plan.recommended_items(), reference_items)


def _collect_meanwhile(queries: list[pl.LazyFrame], engine: Any) -> Future[list[pl.DataFrame]]:
    """The queries, collected on another thread from now on (its thread ends with them)."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="receval-ahead")
    collected = pool.submit(pl.collect_all, queries, engine=engine)
    pool.shutdown(wait=False)
    return collected


def _add_clicks(
    partial: Partial,
    predictions: Input,
    truth: Input,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    task: BucketTask,
) -> None:
    """The click metrics' parts of the bucket (click_parts.py), and of each of its segments
    (their users' recommendations and log rows; the propensity without a column is the
    run's, 1 over its distinct logged items)."""
    partial.clicks = click_parts(predictions, truth, specs, conventions, task.log_items)
    if partial.clicks is None or task.segments is None:
        return
    for name, segment in partial.segments.items():
        attribute, value = segment_value(name)
        mine = users_of(Segment(name, attribute, value, value is None), task.segments)
        p, t = (dataclasses.replace(f, frame=f.frame.filter(mine)) for f in (predictions, truth))
        segment.clicks = click_parts(p, t, specs, conventions, partial.clicks.log_items)


def _counts(frame: pl.DataFrame, prefix: str) -> dict[str, int]:
    return {k: int(str(v or 0)) for k, v in totals(frame, prefix).items()}


def _duplicates(per_user: pl.DataFrame, predictions: Input, truth: Input) -> dict[str, Any]:
    """The inputs whose (user, item) pairs repeat in this bucket, with examples (found only
    then: the group_by's distinct count flags them at no extra pass)."""
    found = {}
    for role, source, length, distinct in (
        ("predictions", predictions, "list_rows", "list_distinct"),
        ("truth", truth, "truth_items", "truth_distinct"),
    ):
        if distinct in per_user.columns and (per_user[length] != per_user[distinct]).any():
            found[role] = find_duplicates(source.frame)
    return found


@dataclass
class FinishContext:
    """What finishing a run needs besides the merged Partial. `predictions` and `truth`
    name the inputs in messages and in the report (their frames are not read);
    `reference` names the items the recommended ones are checked against, and holds them."""

    predictions: Input
    truth: Input
    specs: tuple[MetricSpec, ...]
    conventions: Conventions
    sources: Sources
    # None: the unknown-items check is off; its items None where the facts are computed
    reference: tuple[str, pl.LazyFrame | None] | None
    engine: dict[str, Any] | None = None  # the report's inputs.engine, for partitioned runs
    per_user_rows: pl.LazyFrame | None = None  # the buckets' per-user rows, when spooled
    spool: PerUserSpool | None = None  # the files per_user_rows reads (kept with the Report)
    universe: Universe | None = None  # the catalog's items, when already read
    # segment_by: the segments to report (their Partials are merged.segments) and the
    # users' values (the per-user rows' last columns)
    segments: list[Segment] = field(default_factory=list)
    segment_keys: SegmentKeys | None = None

    def items_universe(self) -> Universe:
        if self.universe is None:
            self.universe = universe_of(self.sources)
        return self.universe


def raise_checks(merged: Partial, run: FinishContext, facts: ItemFacts) -> UsersBlock:
    """Raise the first failed check, in a fixed order: the inputs' rows (empty files, list
    layouts, nulls, NaN), duplicates, the users, then the items' (the universe, the items
    the catalog does not describe: `facts`). Returns the report's `users` block."""
    predictions, truth = run.predictions, run.truth
    for role, source in zip(ROLES, (predictions, truth), strict=True):
        raise_for(source, {**merged.rows.get(role, {"raw_rows": 1}), **merged.checks[role]})
    if merged.checks["truth"].get(REPEATED):
        raise intents_repeated_error(truth, merged.checks["truth"][REPEATED])
    for role, source, key in (
        ("predictions", predictions, "duplicates"),
        ("truth", truth, "truth_duplicates"),
    ):
        if role in merged.duplicates:
            raise duplicates_error(source, key, merged.duplicates[role])
    user_specs = tuple(s for s in run.specs if lookup(s.name).scope == "user")
    users = users_block(merged, run, bool(user_specs))
    if facts.check_error is not None:
        raise facts.check_error
    return users


def facts_of(merged: Partial, run: FinishContext) -> ItemFacts:
    """The merged Partial's item-level results: as computed where its items are (Spark),
    else computed here against the run's universe and unknown-items reference."""
    if merged.facts is not None:
        return merged.facts
    reference = None if run.reference is None else run.reference[1]
    return item_facts(
        merged.item_tables(),
        run.specs,
        run.conventions,
        run.sources,
        run.items_universe(),
        reference,
    )


def finish(merged: Partial, run: FinishContext) -> Report:
    """The Report from the merged Partial: the checks, the users, the click metrics, the
    means, the global metrics, the items and the unknown items."""
    conventions, sources = run.conventions, run.sources
    facts = facts_of(merged, run)
    users = raise_checks(merged, run, facts)
    user_specs = tuple(s for s in run.specs if lookup(s.name).scope == "user")
    logged_specs = tuple(s for s in run.specs if lookup(s.name).scope == "logged")
    clicks: dict[str, float | None] = {}
    logged, weights = None, None
    if logged_specs:  # after the inputs' and users' checks, as in a single pass
        clicks, logged, weights = finish_clicks(
            merged.clicks, logged_specs, conventions, run.predictions, run.truth
        )
    metrics: dict[str, float | None] = {**_means(merged, user_specs)}
    if facts.value_error is not None:
        raise facts.value_error
    metrics.update(facts.values)
    pairs_block, calibration = None, None
    pair_specs = tuple(s for s in run.specs if lookup(s.name).scope == "pairs")
    if pair_specs and merged.pairs is not None:
        values, pairs_block = finish_pairs(
            merged.pairs, pair_specs, conventions, run.predictions, run.truth
        )
        metrics.update(values)
        calibration = predicted_actual_counts(merged.pairs)
    metrics.update(clicks)
    metrics = {str(spec): metrics[str(spec)] for spec in run.specs}
    guard_ranges(metrics, run.specs, conventions)
    unknown = None
    if run.reference is not None and facts.unknown is not None:
        unknown = unknown_items.describe(facts.unknown, run.reference[0])
    inputs: dict[str, InputBlock] = {
        "predictions": fingerprints.input_block(
            run.predictions, _row_count(merged, "predictions"), users.get("in_predictions")
        ),
        "ground_truth": fingerprints.input_block(
            run.truth, _row_count(merged, "truth"), users.get("in_ground_truth")
        ),
        **{source.role: fingerprints.input_block(source, None, None) for source in sources.given()},
    }
    content_hash = fingerprints.digest_text(merged.digest)
    if content_hash is not None:
        inputs["ground_truth"]["content_hash"] = content_hash
        inputs["ground_truth"]["hash_method"] = fingerprints.HASH_METHOD
    if run.engine is not None:
        inputs["engine"] = cast(InputBlock, run.engine)
    # the --per-user table: null where a user is not in a metric's mean (never a 0 that
    # averaging the column would count)
    per_user = None
    if merged.values is not None and merged.counted is not None:
        rows = per_user_rows(merged.values.lazy(), merged.counted.lazy(), user_specs)
        per_user = with_values(rows.collect(), run.segment_keys)
    report = Report(
        metrics=metrics,
        conventions=cast(ConventionsBlock, conventions.model_dump()),
        inputs=inputs,
        users=users,
        per_user=per_user,
        counted=merged.counted,
        per_user_rows=_per_user_rows(merged, run, per_user),
        per_user_files=run.spool,
        pairs=pairs_block,
        calibration=calibration,
        logged=logged,
        weights=weights,
        items=facts.items,
        exposure=facts.exposure,
        popularity_bias=facts.popularity_bias,
        fairness_states=facts.fairness_states,
        unknown_items=unknown,
        warnings=[no_value_warning(s) for s in run.specs if metrics[str(s)] is None]
        + one_group_notes(run.specs, metrics, facts.fairness_states, conventions.metric_params),
    )
    if not run.segments:
        return report
    parts, skipped = _finish_segments(merged, run, inputs)
    return dataclasses.replace(report, segments=parts, segments_skipped=skipped)


def _finish_segments(
    merged: Partial, run: FinishContext, inputs: dict[str, Any]
) -> tuple[dict[str, Report], dict[str, str]]:
    """Each segment's Report, finished from its merged Partial as a run on its users alone
    (its checks, messages and exact means; its click metrics from its users' parts), and for
    the segments that cannot be evaluated, the reason (that run's error). A segment of
    users without a value that holds no user of the ground truth is in neither."""
    parts: dict[str, Report] = {}
    skipped: dict[str, str] = {}
    for segment in run.segments:
        partial = merged.segments.get(segment.name) or empty_partial()
        if segment.complement and partial.tally["in_ground_truth"] == 0:
            continue
        own = FinishContext(
            run.predictions,
            run.truth,
            run.specs,
            run.conventions,
            run.sources,
            None,
            universe=run.items_universe(),
        )
        try:
            report = finish(partial, own)
        except InputError as error:  # e.g. no user of the segment can be evaluated
            skipped[segment.name] = str(error)
            continue
        parts[segment.name] = dataclasses.replace(report, inputs=inputs)
    return parts, skipped


def _per_user_rows(
    merged: Partial, run: FinishContext, per_user: pl.DataFrame | None
) -> pl.LazyFrame | None:
    """The run's per-user rows: spooled, kept by its one bucket, or its per-user table;
    None when the run kept none."""
    if run.per_user_rows is not None:
        return run.per_user_rows
    if merged.per_user is not None:
        return merged.per_user.lazy()
    return None if per_user is None else per_user.lazy()


def _row_count(merged: Partial, role: str) -> int | None:
    counts = merged.rows.get(role)
    return None if counts is None else counts["raw_rows"]


def users_block(merged: Partial, run: FinishContext, ranking: bool) -> UsersBlock:
    """The report's `users` block from the tally; `ranking`: per-user metrics are asked,
    so some user must count."""
    counts = merged.tally
    truth = run.truth
    if counts["in_both"] == 0:
        samples = {role: list(merged.samples.get(role, [])) for role in ROLES}
        shown = {role: ", ".join(map(repr, users)) for role, users in samples.items()}
        user_key = setting("predictions", "columns", "user")
        fix = (
            f"Check {user_key} and {setting('ground_truth', 'columns', 'user')}, and that "
            "both files use the same ids."
        )
        raise InputError(
            f"no user appears in both {run.predictions.path} (users e.g. "
            f"{shown['predictions']}) and {truth.path} (users e.g. {shown['truth']}). {fix}",
            key=user_key,
            path=run.predictions.path,
            found=samples,
            fix=fix,
        )
    if counts["evaluated"] == 0 and ranking:
        column = truth.source_column("rel")
        fix = (
            f"Lower the threshold, check the column '{column}', or set "
            "users_without_relevant / users_without_recommendations to zero."
        )
        raise InputError(
            f"no user could be evaluated: of the {counts['in_ground_truth']} users in "
            f"{truth.path}, {counts['skipped_no_relevant']} have no item with relevance >= "
            f"{run.conventions.relevance_threshold:g} (conventions.relevance_threshold) and "
            f"{counts['skipped_no_recs']} have no recommendation (skipped by the conventions). "
            f"{fix}",
            key="conventions.relevance_threshold",
            path=truth.path,
            column=column,
            found={
                "in_ground_truth": counts["in_ground_truth"],
                "no_relevant": counts["skipped_no_relevant"],
                "no_recommendations": counts["skipped_no_recs"],
            },
            fix=fix,
        )
    block: UsersBlock = {
        "in_ground_truth": counts["in_ground_truth"],
        "in_predictions": counts["in_predictions"],
        "in_both": counts["in_both"],
        "evaluated": counts["evaluated"],
        "counted_as_zero": {
            "no_recommendations": counts["zero_recs"],
            "no_relevant": counts["zero_relevant"],
        },
        "skipped": {
            "no_relevant": counts["skipped_no_relevant"],
            "no_recommendations": counts["skipped_no_recs"],
        },
        "only_in_predictions": counts["only_in_predictions"],
    }
    if "tied_positions" in counts:
        block["ties"] = {
            "tied_positions": counts["tied_positions"],
            "tied_groups": counts["tied_groups"],
            "users_with_ties": counts["users_with_ties"],
        }
    differing = {
        name: total.counted
        for name, total in merged.totals.items()
        if total.counted != counts["evaluated"]
    }
    if differing:
        block["evaluated_per_metric"] = differing
    return block


def _means(merged: Partial, specs: tuple[MetricSpec, ...]) -> dict[str, float]:
    """Each per-user metric's mean over its users (or sum, for counts): the exact sum
    divided once, correctly rounded (mean=geometric: exp of the exact mean of the logs)."""
    metrics = {}
    for spec in specs:
        name = str(spec)
        total = merged.totals[name]
        if total.users == 0:
            fix = "Set them to zero."
            raise InputError(
                f"no user is left to average {name} over: its users_without_relevant / "
                f"users_without_recommendations settings skip every user. {fix}",
                key=name,
                found=0,
                fix=fix,
            )
        if total.counted == 0:
            why = lookup(spec.name).no_value  # else intra_list_diversity's reason
            fix = lookup(spec.name).no_value_fix or "Check the cutoff against the inputs."
            if not why:  # intra_list_diversity (a cutoff below 2 is refused as read)
                fix = "Check that the model's lists hold 2 items or more."
            why = why or "no list has 2 items in its top k to compare"
            raise InputError(
                f"{name} is undefined for every evaluated user: {why}. {fix}",
                key=name,
                found=0,
                fix=fix,
            )
        summed = lookup(spec.name).aggregate == "sum"
        if total.over is not None:  # a ratio of sums (registry.Ratio)
            metrics[name] = finish_ratio(total.total, total.over)
        elif summed:
            metrics[name] = total.total.total()
        else:
            metrics[name] = finish_mean(total.total, total.counted, spec)
    return metrics


def evaluate_inputs(
    predictions: Input,
    truth: Input,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    sources: Sources | None = None,
    engine: Any = "auto",
    check_unknown: bool = True,
    segments: tuple[SegmentKeys, list[Segment]] | None = None,
) -> Report:
    """Evaluate mapped inputs in one bucket: one query computes the checks and every
    metric at every cutoff, and the click metrics' sums.

    `engine` is polars' collect engine ("in-memory", "streaming", a GPUEngine, "auto");
    `check_unknown` counts the recommended items the reference lacks (evaluation/unknown_items.py).
    `segments`: the users' segment values and the segments, each evaluated in the same
    pass (evaluation/segment_split.py).
    """
    sources = sources or Sources()
    align_ids(predictions, truth, *sources.given())
    check_sources(sources, conventions.duplicates)
    return evaluate_aligned(
        predictions, truth, specs, conventions, sources, engine, check_unknown, segments
    )


def evaluate_aligned(
    predictions: Input,
    truth: Input,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    sources: Sources,
    engine: Any = "auto",
    check_unknown: bool = True,
    segments: tuple[SegmentKeys, list[Segment]] | None = None,
) -> Report:
    """evaluate_inputs on inputs whose ids are aligned and whose optional inputs are
    checked already (the run planner's, engines/run_plan.py): not scanned for that again."""
    reference = unknown_items.reference_of(truth, sources) if check_unknown else None
    task = BucketTask(
        engine,
        check_unknown,
        "raw",
        "all",
        reference=None if reference is None else reference[1],
        segments=None if segments is None else segments[0],
        reference_ahead=reference is not None and reference[0] == "ground truth",
        items_when_read=True,
    )
    partial = bucket_partial(predictions, truth, specs, conventions, sources, task)
    run = FinishContext(predictions, truth, specs, conventions, sources, reference)
    if segments is not None:
        run.segment_keys, run.segments = segments
    return finish(partial, run)


class PerUserSpool:
    """The buckets' per-user rows, one Parquet file each in a temporary folder (deleted
    with this object), read back as one table in the order of a one-bucket run."""

    def __init__(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="receval-per-user-")
        self._count = 0

    def add(self, rows: pl.DataFrame) -> None:
        rows.write_parquet(Path(self._folder.name) / f"bucket-{self._count:06d}.parquet")
        self._count += 1

    def scan(self) -> pl.LazyFrame:
        frames = pl.scan_parquet(Path(self._folder.name) / "*.parquet")
        return frames.sort("user", nulls_last=False)
