"""Run the registry over the prepared data: every metric at every cutoff in one pass.
Over 400 lines: one job, the per-user plan by either core (the polars core's query, or
the compiled core's tables where it takes the run, with the lists and rows the global
states and the recs table read). The report's item exposure is in
evaluation/item_exposure.py, who each mean counts and each mean's range in
evaluation/metric_users.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from receval_cli import console
from receval_cli.compiled import extension
from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import LoadedConfig
from receval_cli.errors import InputError, RecEvalError
from receval_cli.evaluation import kernel_core, list_sums, list_walk
from receval_cli.evaluation.global_metrics import recommended_items
from receval_cli.evaluation.intent_lists import intent_table
from receval_cli.evaluation.metric_users import EVALUATED
from receval_cli.evaluation.numpy_ahead import import_numpy_meanwhile
from receval_cli.evaluation.prepare import (
    dedupe_predictions,
    index_truth,
    join_hits,
    rank_lists,
    ranked_items,
    with_score_precision,
)
from receval_cli.evaluation.seen_items import SeenItems
from receval_cli.evaluation.side_columns import missing_input, recs_aggregates
from receval_cli.inputs.checks import check_exprs
from receval_cli.inputs.diagnosis import READ_ERRORS, first_line
from receval_cli.inputs.optional import Sources
from receval_cli.inputs.readers import Input, failing_input
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.registry import over_column, ratio_of
from receval_cli.metrics.stats import Stats
from receval_cli.metrics.tie_expectation import ExpectedStats
from receval_cli.wording import setting

PREDICTION_CHECKS = "predictions:"
TRUTH_CHECKS = "truth:"


def metric_exprs(
    specs: tuple[MetricSpec, ...], conventions: Conventions, sources: Sources | None = None
) -> tuple[Stats, dict[str, pl.Expr]]:
    """The per-user expression of every spec, and the statistics they need.

    A metric whose side columns need an optional input that is not given is an error.
    With an input read elsewhere (`Sources.elsewhere`: a Spark table or URI, before Spark
    has read it), what needs its contents is not checked (a catalog's features): only
    the checks, not the expressions, are then of use.
    """
    sources = sources or Sources()
    stats = (
        ExpectedStats(tuple(sources.features()), sources.embedding_dims, conventions.max_depth)
        if conventions.tie_break == "expected"
        else Stats(tuple(sources.features()), sources.embedding_dims)
    )
    exprs = {}
    for spec in specs:
        params = conventions.metric_params(spec)
        before = set(stats.sides)
        try:
            value = lookup(spec.name).expr(stats, spec.k, params)
        except InputError as error:  # which of the catalog's features: once it is read
            about = str(error.fields.get("key"))
            if "catalog" in sources.elsewhere and about.startswith("catalog"):
                continue
            raise
        exprs[str(spec)] = value.alias(str(spec))
        ratio = ratio_of(spec)
        if ratio is not None:  # a ratio of sums: its per-user denominators too
            over = ratio.denominator(stats, spec.k, params)
            exprs[over_column(spec)] = over.cast(pl.Float64).alias(over_column(spec))
        if stats.needs_catalog and not sources.names("catalog"):
            fix = "Add a catalog (catalog.path: every item that could be recommended)."
            raise InputError(
                f"{spec} needs the catalog input (its number of items), which the config "
                f"does not give. {fix}",
                key=str(spec),
                found="catalog",
                fix=fix,
            )
        for side in sorted(stats.sides - before):
            missing = missing_input(side, sources)
            if missing is not None:
                fix = "Add it (see docs/metrics.md, 'Beyond accuracy')."
                raise InputError(
                    f"{spec} needs the {missing} input, which the config does not give. {fix}",
                    key=str(spec),
                    found=missing,
                    fix=fix,
                )
    return stats, exprs


def catalog_size_metrics(specs: tuple[MetricSpec, ...], conventions: Conventions) -> list[str]:
    """The specs whose per-user value reads the catalog's number of items (accuracy,
    mcc): an engine that splits the catalog cannot run them."""
    found = []
    for spec in specs:
        stats = Stats()
        try:
            lookup(spec.name).expr(stats, spec.k, conventions.metric_params(spec))
        except RecEvalError:
            continue  # metric_exprs reports it
        if stats.needs_catalog:
            found.append(str(spec))
    return found


def max_depth(specs: tuple[MetricSpec, ...], limit: int | None) -> int | None:
    """How deep each list must be kept: the largest cutoff (None: the whole list), and
    never past the `max_depth` convention."""
    deepest = None if any(s.k is None for s in specs) else max((s.k or 0 for s in specs), default=1)
    if limit is None:
        return deepest
    return limit if deepest is None else min(deepest, limit)


def user_status(conventions: Conventions) -> pl.Expr:
    """Why a user is or is not in the mean (first matching reason wins)."""
    skip_no_relevant = conventions.users_without_relevant == "skip"
    skip_no_recs = conventions.users_without_recommendations == "skip"
    return (
        pl.when(~pl.col("in_truth"))
        .then(pl.lit("only_in_predictions"))
        .when((pl.col("n_relevant") == 0) & skip_no_relevant)
        .then(pl.lit("no_relevant"))
        .when((pl.col("list_length") == 0) & skip_no_recs)
        .then(pl.lit("no_recommendations"))
        .otherwise(pl.lit(EVALUATED))
        .alias("status")
    )


@dataclass
class Plan:
    """The lazy per-user table, its metric columns, and where each input's checks are."""

    frame: pl.LazyFrame
    names: list[str]
    check_queries: dict[str, pl.LazyFrame]  # for inputs deduped before aggregation
    lists: pl.LazyFrame  # one row per user of the predictions: its ranked, capped list
    items: pl.LazyFrame  # the deduped predictions
    recs_sides: set[str]  # the side columns the beyond-accuracy metrics joined in
    # the distinct recommended items, where the core has them at hand (else from `lists`)
    recommended: pl.LazyFrame | None = None
    # (user, in_truth, list_length) where the core has them apart from the metrics (else
    # `frame` gives them): what the global metrics' states read of the users
    users: pl.LazyFrame | None = None
    # (user, item, rank, length): the lists' items one per row, where the core has them
    # at hand (StateInputs.ranked; else the states explode `lists`)
    placed: pl.LazyFrame | None = None
    # the recommended items' bits, where the core read the predictions in batches: the
    # unknown items counted on them (SeenItems.missing_from), no table of the items made
    seen: SeenItems | None = None

    def recommended_items(self) -> pl.LazyFrame:
        """The distinct items in the (capped) lists."""
        if self.recommended is not None:
            return self.recommended
        return recommended_items(self.lists)


def _checked(
    source: Input,
    prefix: str,
    value_column: str,
    policy: str,
    distinct: str,
    apart: dict[str, pl.LazyFrame],
) -> list[pl.Expr]:
    """Check aggregations to run inside the input's per-user group_by, when it sees raw rows.

    With a dedupe policy the group_by sees deduped rows, so the checks run apart.
    """
    checks = check_exprs(prefix, value_column)
    if policy != "error":
        apart[prefix] = source.frame.select(checks)
        return []
    return [*checks, pl.col("item").n_unique().alias(distinct)]


def per_user_frame(
    predictions: Input,
    truth: Input,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    sources: Sources | None = None,
    list_specs: tuple[MetricSpec, ...] = (),
    engine: Any = "auto",
    intents: pl.LazyFrame | None = None,
) -> Plan:
    """The lazy per-user table: statistics, checks, status and one column per metric.

    Four aggregations, each over its own table: the lists (ranking, length, checks), the
    ground truth (|R|, ideal DCGs, checks), the hits (every statistic of the recommended
    items that are in the ground truth) and, for beyond-accuracy metrics, the recs (every
    recommended item with its side columns). `list_specs` (global metrics) only deepen the
    lists. `intents`: the ground truth's intent rows, for the intent-aware metrics
    (evaluation/intent_lists.py; None: one intent).
    """
    sources = sources or Sources()
    stats, exprs = metric_exprs(specs, conventions, sources)
    check_queries: dict[str, pl.LazyFrame] = {}
    by = predictions.value_column
    scored = with_score_precision(predictions.frame, by, conventions.score_precision)
    deduped = dedupe_predictions(scored, by, conventions.duplicates)
    list_checks = _checked(
        predictions, PREDICTION_CHECKS, by, conventions.duplicates, "list_distinct", check_queries
    )
    depth = max_depth((*specs, *list_specs), conventions.max_depth)
    compiled = _compiled(
        predictions, truth, scored, stats, exprs, conventions, depth, engine, sources, list_specs
    )
    if compiled is not None:
        return compiled
    if stats.lists.aggregations and by != "score":
        key = setting("predictions", "columns", "score")
        fix = f"Name the score column as {key}, or use retrieve=list."
        raise InputError(
            f"predictions file {predictions.path}: retrieving items by prediction_threshold "
            f"needs scores, and this file's layout is {predictions.layout}. {fix}",
            key=key,
            path=predictions.path,
            found=predictions.layout,
            fix=fix,
        )
    ties = stats.expected_ties  # tie_break expected: the lists keep their ties
    lists = rank_lists(
        deduped,
        by,
        conventions.tie_break,
        depth,
        [*list_checks, *stats.lists.aggregations.values()],
        ties=ties,
    ).cache()  # ranked once, whatever reads it (the metrics, the items, the states)
    indexed = index_truth(truth.frame, conventions)
    truth_checks = _checked(
        truth, TRUTH_CHECKS, "rel", conventions.truth_duplicates, "truth_distinct", check_queries
    )
    truth_stats = (
        stats.truth.with_rows(indexed)
        .group_by("user")
        .agg(*stats.truth.aggregations.values(), pl.len().alias("truth_items"), *truth_checks)
    )
    per_list = lists.drop("items", *(["tie_first", "tie_size"] if ties else []))
    frame = truth_stats.join(per_list, on="user", how="full", coalesce=True)
    if stats.hits.aggregations:
        hits = join_hits(ranked_items(lists, ties), indexed)
        on_hits = set(stats.truth_columns_on_hits)
        if stats.needs_n_relevant_on_hits:
            on_hits.add("n_relevant")
        if on_hits:
            needed_truth = truth_stats.select("user", *sorted(on_hits))
            hits = hits.join(needed_truth, on="user", how="left")
        if stats.list_columns_on_hits:
            needed = lists.select("user", *sorted(stats.list_columns_on_hits))
            hits = hits.join(needed, on="user", how="left")
        hit_stats = (
            stats.hits.with_rows(hits).group_by("user").agg(list(stats.hits.aggregations.values()))
        )
        frame = frame.join(hit_stats, on="user", how="left")
    if _reads_recs(stats):
        recs_depth = stats.recs_depth(conventions.max_depth)
        ranked = ranked_items(lists)
        recs = recs_aggregates(ranked, stats, sources, indexed, conventions, recs_depth)
        frame = frame.join(recs, on="user", how="left")
    if stats.intents:
        table = intent_table(lists, truth.frame, intents, stats.intents, conventions)
        frame = frame.join(table, on="user", how="left")
    if stats.needs_catalog:
        assert sources.catalog is not None  # metric_exprs refuses the metric without it
        size = sources.catalog.frame.select(pl.len().cast(pl.Int64).alias("catalog_items"))
        if sources.catalog_items is not None:  # counted beforehand (a bucket's catalog rows)
            size = pl.LazyFrame(
                {"catalog_items": [sources.catalog_items]}, {"catalog_items": pl.Int64}
            )
        frame = frame.join(size, how="cross")
    items = deduped.select("user", "item")
    return Plan(
        _finished(frame, exprs, conventions),
        list(exprs),
        check_queries,
        lists,
        items,
        set(stats.sides),
    )


def ranked_lists(ranked: pl.DataFrame, per_user: pl.DataFrame) -> pl.LazyFrame:
    """One row per user of the predictions, as rank_lists gives it (the items in rank
    order, the row count), from the compiled core's ranked rows and per-user table."""
    # the rows come grouped by user in rank order (KernelTables.ranked), and a group keeps
    # its rows' order: no sort
    by_user = ranked.lazy().group_by("user", maintain_order=True)
    items = by_user.agg(pl.col("item").alias("items"))
    counts = per_user.lazy().select("user", "list_rows").filter(pl.col("list_rows").is_not_null())
    # built once, whatever reads it (the exposure at each cutoff, the global states)
    return items.join(counts, on="user", how="left").cache()


def placed_rows(ranked: pl.DataFrame) -> pl.LazyFrame:
    """(user, item, rank, length): the compiled core's ranked rows, which are the lists'
    items one per row (ranked_lists), each with its list's length: its rows (counted
    here, not read from the lists, which are then built only where something reads them).
    A user's rows come together in rank order (1, 2, ...), so its length is the rank of
    its last row, the row before the next rank 1: filled backward, no grouping."""
    rows = ranked.lazy().select("user", "item", "rank")
    last = pl.col("rank").shift(-1, fill_value=1) == 1
    length = pl.when(last).then(pl.col("rank")).backward_fill().cast(pl.UInt32)
    return rows.with_columns(length.alias("length")).cache()


def _with_known(ranked: pl.DataFrame, stats: Stats, sources: Sources) -> pl.DataFrame:
    """The compiled core's ranked rows with `known` (the log holds the row's pair) where a
    metric reads it, looked up by the compiled walk (list_walk.known_flags); as they are
    where it does not take them, and the recs table then joins the log's pairs."""
    module = list_sums.compiled_list_walk()
    if module is None or "known" not in stats.sides or sources.interactions is None:
        return ranked
    try:
        log = sources.interactions.frame.select("user", "item").collect()
    except READ_ERRORS:  # reported where the recs table reads the log
        return ranked
    threads = kernel_core.threads(ranked.height)
    flags = list_walk.known_flags(module, ranked, log, threads)
    return ranked if flags is None else ranked.with_columns(flags)


def _reads_recs(stats: Stats) -> bool:
    """Whether a metric asked for the recs table (beyond accuracy: side_columns.py)."""
    return bool(stats.recs.aggregations or stats.sums or stats.pair_cutoffs or stats.calibration)


def _finished(
    frame: pl.LazyFrame, exprs: dict[str, pl.Expr], conventions: Conventions
) -> pl.LazyFrame:
    """The per-user statistics with each user's status and metric values, by user."""
    return (
        frame.with_columns(*_user_facts(conventions), n_relevant=pl.col("n_relevant").fill_null(0))
        .with_columns(user_status(conventions), *exprs.values())
        .sort("user")  # a fixed order, so the means are summed the same way every run
    )


def _user_facts(conventions: Conventions) -> list[pl.Expr]:
    """in_truth and list_length (capped by max_depth) from truth_items and list_rows."""
    return [
        pl.col("truth_items").is_not_null().alias("in_truth"),
        _capped(pl.col("list_rows").fill_null(0), conventions.max_depth).alias("list_length"),
    ]


def _compiled(
    predictions: Input,
    truth: Input,
    scored: pl.LazyFrame,
    stats: Stats,
    exprs: dict[str, pl.Expr],
    conventions: Conventions,
    depth: int | None,
    engine: Any,
    sources: Sources,
    list_specs: tuple[MetricSpec, ...],
) -> Plan | None:
    """The Plan computed by the compiled core, or None where it does not take the run (see
    evaluation/kernel_core.py): the inputs are then read by the polars core's plan. Where
    the run reads the ranked lists (the recs table of the beyond-accuracy metrics, the
    global metrics, the items' exposure with a catalog), they are built from the rows the
    compiled core ranked (KernelTables.ranked), not ranked again."""
    module = extension()
    if module is None or engine not in ("auto", "in-memory", "streaming"):  # GPU: polars'
        return None
    wanted = kernel_core.requests(stats)
    if wanted is None or not kernel_core.takes(predictions, truth, conventions):
        return None
    columns = ["user", "item", "score"]
    if conventions.tie_break == "input_order":
        columns.append("row")
    rows = scored.select(columns)
    # a hash partition's rows: read as slices of the whole file, each filtered
    parted = predictions.parted()
    if parted is not None:
        by, precision = predictions.value_column, conventions.score_precision
        parted = (with_score_precision(parted[0], by, precision).select(columns), parted[1])
    # the lists, ranked: what the metrics read, and with a catalog the item figures'
    ranks = (
        _reads_recs(stats) or bool(list_specs) or (sources.catalog is not None and sources.figures)
    )
    rank_depth = _rank_depth(stats, list_specs, sources, conventions) if ranks else None
    numpy_import = import_numpy_meanwhile()  # the kernel reads numpy arrays
    try:
        tables: kernel_core.KernelTables | str | None = kernel_core.UNORDERED
        if kernel_core.streams(rows, conventions):
            indexed = index_truth(truth.frame, conventions)
            tables = kernel_core.evaluate_batches(
                module,
                wanted,
                rows,
                indexed,
                conventions,
                depth,
                engine,
                ranks,
                numpy_import,
                rank_depth,
                parted,
            )
        if tables == kernel_core.UNORDERED:  # read whole, sorted by user
            read, whole_truth = pl.collect_all(
                [rows, index_truth(truth.frame, conventions)], engine=engine
            )
            if numpy_import is not None:
                numpy_import.join()
            tables = kernel_core.evaluate_compiled(
                module, wanted, read, whole_truth, conventions, depth, ranks, rank_depth
            )
    except READ_ERRORS as error:  # a panic too: a damaged Parquet page can make one
        raise diagnose(error, predictions, truth) from None
    finally:
        if numpy_import is not None:
            numpy_import.join()
    if not isinstance(tables, kernel_core.KernelTables):
        return None
    how = "whole" if tables.top_rows is not None else f"in batches of {kernel_core.BATCH_ROWS:,}"
    console.log(f"the compiled core evaluated the predictions, read {how}")
    if tables.ranked is not None:
        lists = ranked_lists(tables.ranked, tables.per_user)
    elif tables.top_rows is None:  # read in batches: the lists are ranked if asked for
        lists = rank_lists(rows, "score", conventions.tie_break, depth, [])
    else:
        lists = rank_lists(tables.top_rows, "score", conventions.tie_break, depth, [])
    frame = tables.per_user.lazy()
    if tables.ranked is not None and _reads_recs(stats):
        recs_depth = stats.recs_depth(conventions.max_depth)
        indexed = index_truth(truth.frame, conventions)
        ranked = _with_known(tables.ranked, stats, sources).lazy()
        recs = recs_aggregates(ranked, stats, sources, indexed, conventions, recs_depth)
        frame = frame.join(recs, on="user", how="left")
    return Plan(
        _finished(frame, exprs, conventions),
        list(exprs),
        {},
        lists,
        rows.select("user", "item"),
        set(stats.sides),
        recommended=tables.recommended,
        users=tables.per_user.lazy().select(
            "user",
            *_user_facts(conventions),
            *(["n_relevant"] if "n_relevant" in tables.per_user.columns else []),
        ),
        placed=None if tables.ranked is None else placed_rows(tables.ranked),
        seen=tables.seen,
    )


def _rank_depth(
    stats: Stats, list_specs: tuple[MetricSpec, ...], sources: Sources, conventions: Conventions
) -> int | None:
    """How deep the ranked rows the compiled core keeps go (None: as deep as the metrics'
    lists): as deep as what reads them, the recs table (Stats.recs_depth) and the global
    metrics' lists (their deepest cutoff), but the item figures' exposure, with a catalog,
    reads every metric's depth. novelty@10 beside an ndcg@100 then keeps 10 rows a user."""
    if sources.catalog is not None and sources.figures:
        return None
    deepest = max_depth(list_specs, conventions.max_depth) if list_specs else 0
    if deepest is not None and _reads_recs(stats):
        recs = stats.recs_depth(conventions.max_depth)
        deepest = None if recs is None else max(deepest, recs)
    return deepest


def _capped(length: pl.Expr, limit: int | None) -> pl.Expr:
    return length if limit is None else pl.min_horizontal(length, pl.lit(limit, pl.UInt32))


def diagnose(error: BaseException, *inputs: Input) -> InputError:
    """Find which file the engine failed on, and say so (reads each input whole)."""
    found = failing_input(inputs)
    if found is not None:
        return found
    reason = first_line(error)
    return InputError(f"the inputs could not be evaluated: {reason}", found=reason)


def resolved_config(loaded: LoadedConfig) -> dict[str, Any]:
    """The config as the report states it: validated, metrics expanded, its path."""
    data = loaded.config.model_dump(mode="json", serialize_as_any=True)
    data["metrics"] = [str(s) for s in loaded.specs]
    data["source"] = str(loaded.path)
    return data
