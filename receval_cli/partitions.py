"""Evaluate users in partitions and merge: the engine-neutral half of Spark, and a local
engine for inputs too big for memory.

A partition is a set of users (a hash bucket of the user id) with all their predictions
and ground truth. The polars code evaluates it as it would the whole input
(`per_user_frame`) and returns mergeable partial results: per metric the sum of its
per-user values and the users counted, the users' tally, the input checks, and the
global metrics' states. Adding the partials up and finishing gives the whole run's
metrics; only the order in which floats are added differs (agreement to 1e-12).

`partitions: N` with a polars engine runs the N partitions one after the other, each
scanning the files and keeping its users only, so memory holds about 1/N of the users.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import time
from pathlib import Path
from typing import Any

import polars as pl

from receval_cli import console, unknown_items
from receval_cli.checks import raise_for, totals
from receval_cli.config import LoadedConfig
from receval_cli.conventions import Conventions
from receval_cli.errors import InputError, UsageError
from receval_cli.gates import check_gates
from receval_cli.global_eval import (
    global_values,
    recommended_items,
    require_universe,
    state_queries,
    universe_of,
)
from receval_cli.io import Input, align_ids, read_ground_truth, read_predictions
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.registry import State, StateInputs, merge_states
from receval_cli.pipeline import (
    PREDICTION_CHECKS,
    TRUTH_CHECKS,
    _counted,
    _diagnose,
    guard_ranges,
    metric_exprs,
    metric_users,
    per_user_frame,
    resolved_config,
    user_tally,
    users_block,
)
from receval_cli.read_errors import READ_ERRORS
from receval_cli.report import Report
from receval_cli.sources import Sources, check_sources, read_sources


def check_partitionable(loaded: LoadedConfig, engine: str, side_inputs: bool = False) -> None:
    """Partitioned engines run the per-user and global metrics; refuse the rest with the
    reason. `side_inputs`: the engine also runs the per-user metrics that read the catalog,
    the interactions or the baseline."""
    config = loaded.config
    specs = loaded.specs
    unsupported = [str(s) for s in specs if lookup(s.name).scope not in ("user", "global")]
    if unsupported:
        raise UsageError(
            f"{engine} runs the per-user and global metrics; {', '.join(unsupported)} "
            "(rating or click metrics) do not run there yet. Use another engine for them."
        )
    if config.several_models:
        raise UsageError(f"{engine} evaluates one predictions file; list one model.")
    user_specs = tuple(s for s in specs if lookup(s.name).scope == "user")
    if side_inputs:
        return
    try:
        metric_exprs(user_specs, config.conventions, Sources())
    except InputError:
        raise UsageError(
            f"{engine} does not yet run the per-user metrics that read the catalog, the "
            "interactions or the baseline (novelty, serendipity, intra_list_diversity, ...); "
            "the global ones (coverage, inter_list_diversity, gini, entropy) do run. Use "
            "another engine for those."
        ) from None


def _ipc(table: pl.DataFrame) -> str:
    buffer = io.BytesIO()
    table.write_ipc(buffer)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _from_ipc(text: str) -> pl.DataFrame:
    return pl.read_ipc(io.BytesIO(base64.b64decode(text)))


def partial_results(
    predictions: Input,
    truth: Input,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    engine: Any = "auto",
    sources: Sources | None = None,
    check_unknown: bool = True,
) -> dict[str, Any]:
    """One partition's mergeable partial results, as JSON-ready data. `sources`: the
    optional inputs, whole (item popularity is the whole log's)."""
    sources = sources or Sources()
    user_specs = tuple(s for s in specs if lookup(s.name).scope == "user")
    global_specs = tuple(s for s in specs if lookup(s.name).scope == "global")
    plan = per_user_frame(predictions, truth, user_specs, conventions, sources, global_specs)
    states = state_queries(
        global_specs, conventions, StateInputs(plan.lists, plan.items, plan.frame)
    )
    rows = [f.select(pl.len()) for f in (predictions.frame, truth.frame)]
    featured = plan.recs_sides & {"category", "tags", "embedding"}
    unknown = pl.LazyFrame({"item": []}).select(pl.len())
    if featured and sources.catalog is not None:
        catalog_items = sources.catalog.frame.select("item")
        unknown = recommended_items(plan.lists).join(catalog_items, on="item", how="anti")
        unknown = unknown.select(pl.len())
    # the distinct recommended items, for unknown_items (merged on the driver); or none
    recommended = recommended_items(plan.lists if check_unknown else plan.lists.head(0))
    queries = list(plan.check_queries.values())
    try:
        per_user, p_rows, t_rows, missing, listed, *tables = pl.collect_all(
            [plan.frame, *rows, unknown, recommended, *(q for _, q in states.values())],
            engine=engine,
        )
        apart = dict(zip(plan.check_queries, pl.collect_all(queries, engine=engine), strict=True))
    except READ_ERRORS as error:  # a damaged file: say which, and where
        raise _diagnose(error, predictions, truth) from None
    checks = {
        "predictions": totals(apart.get(PREDICTION_CHECKS, per_user), PREDICTION_CHECKS),
        "truth": totals(apart.get(TRUTH_CHECKS, per_user), TRUTH_CHECKS),
    }
    duplicates = {
        key: bool(distinct in per_user.columns and (per_user[length] != per_user[distinct]).any())
        for key, length, distinct in (
            ("duplicates", "list_rows", "list_distinct"),
            ("truth_duplicates", "truth_items", "truth_distinct"),
        )
    }
    sums = {}
    for spec in user_specs:
        name = str(spec)
        kept = _counted(spec, conventions)
        users = metric_users(conventions.metric_params(spec))
        row = per_user.select(
            pl.col(name).filter(kept).sum().alias("sum"),
            kept.sum().alias("counted"),
            users.sum().alias("users"),
        ).row(0)
        sums[name] = [float(row[0] or 0.0), int(row[1]), int(row[2])]
    return {
        "rows": {"predictions": int(p_rows.item()), "truth": int(t_rows.item())},
        "checks": checks,
        "duplicates": duplicates,
        "tally": user_tally(per_user),
        "unknown_feature_items": int(missing.item()),
        "recommended": _ipc(listed),
        "sums": sums,
        "states": {name: _ipc(table) for name, table in zip(states, tables, strict=True)},
    }


def merge_partials(partials: list[dict[str, Any]]) -> dict[str, Any]:
    """Add up the partitions' partial results (the states stay a list per state)."""
    merged: dict[str, Any] = {
        "rows": {"predictions": 0, "truth": 0},
        "checks": {"predictions": {}, "truth": {}},
        "duplicates": {"duplicates": False, "truth_duplicates": False},
        "tally": {},
        "unknown_feature_items": 0,
        "recommended": [],
        "sums": {},
        "states": {},
    }
    for part in partials:
        merged["unknown_feature_items"] += part["unknown_feature_items"]
        merged["recommended"].append(_from_ipc(part["recommended"]))
        for key in ("predictions", "truth"):
            merged["rows"][key] += part["rows"][key]
            for name, value in part["checks"][key].items():
                merged["checks"][key][name] = merged["checks"][key].get(name, 0) + (value or 0)
        for key, found in part["duplicates"].items():
            merged["duplicates"][key] |= found
        for key, value in part["tally"].items():
            merged["tally"][key] = merged["tally"].get(key, 0) + value
        for name, (total, counted, users) in part["sums"].items():
            old = merged["sums"].get(name, [0.0, 0, 0])
            merged["sums"][name] = [old[0] + total, old[1] + counted, old[2] + users]
        for name, text in part["states"].items():
            merged["states"].setdefault(name, []).append(_from_ipc(text))
    return merged


def finish(
    loaded: LoadedConfig,
    merged: dict[str, Any],
    predictions: Input,
    truth: Input,
    engine: dict[str, Any],
    started: float,
    reference: tuple[str, pl.LazyFrame],
) -> Report:
    """The Report from the merged partial results: checks, users, metrics, gates.
    `predictions` and `truth` only describe the inputs (paths, columns) in messages;
    `reference` names the items the recommended ones are checked against, and holds them."""
    conventions = loaded.config.conventions
    specs = loaded.specs
    for source, key in ((predictions, "predictions"), (truth, "truth")):
        raise_for(source, {"raw_rows": merged["rows"][key], **merged["checks"][key]})
    for key, found in merged["duplicates"].items():
        if found:
            raise InputError(
                f"{'predictions' if key == 'duplicates' else 'ground truth'}: some (user, item) "
                f"pairs appear more than once. Remove the duplicates, or set "
                f"conventions.{key} to say which row counts."
            )
    if merged["unknown_feature_items"]:
        raise InputError(
            f"{merged['unknown_feature_items']} recommended item(s) are not in the catalog, so "
            "intra-list diversity cannot compare them. Add them to the catalog, or check "
            "that the item ids match."
        )
    user_specs = tuple(s for s in specs if lookup(s.name).scope == "user")
    global_specs = tuple(s for s in specs if lookup(s.name).scope == "global")
    users = users_block(
        merged["tally"],
        truth,
        conventions.relevance_threshold,
        bool(user_specs),
        f"no user appears in both {predictions.path} and {truth.path}. Check the user "
        "columns and that both use the same ids.",
    )
    metrics: dict[str, float] = {}
    differing = {}
    for spec in user_specs:
        total, counted, evaluated = merged["sums"][str(spec)]
        if counted != users["evaluated"]:
            differing[str(spec)] = counted
        if evaluated == 0 or counted == 0:
            raise InputError(f"no user is left to average {spec} over (see its user rules).")
        summed = lookup(spec.name).aggregate == "sum"
        metrics[str(spec)] = total if summed else total / counted
    if differing:
        users["evaluated_per_metric"] = differing
    universe = universe_of(read_sources(loaded))
    require_universe(global_specs, universe)
    states: dict[str, tuple[State, pl.DataFrame]] = {}
    for spec in global_specs:
        partial = lookup(spec.name).partial
        assert partial is not None
        state = partial.state(spec.k, conventions.metric_params(spec))
        states[state.name] = (state, merge_states(merged["states"][state.name], state.keys))
    metrics.update(global_values(global_specs, conventions, states, universe))
    metrics = {str(s): metrics[str(s)] for s in specs}
    guard_ranges(metrics, specs, conventions)
    block = None
    if loaded.config.unknown_items.check:
        name, items = reference
        listed = pl.concat(merged["recommended"]).unique().lazy()
        block = unknown_items.describe(unknown_items.unknown_query(listed, items).collect(), name)
    report = Report(
        metrics=metrics,
        config=resolved_config(loaded),
        conventions=conventions.model_dump(),
        inputs={
            "predictions": {**predictions.describe(), "rows": merged["rows"]["predictions"]},
            "ground_truth": {**truth.describe(), "rows": merged["rows"]["truth"]},
            "engine": engine,
        },
        users=users,
        gates=check_gates(loaded.gates, metrics),
        elapsed_seconds=time.perf_counter() - started,
        unknown_items=block,
    )
    report.gates += unknown_items.check(report, loaded.config.unknown_items)
    return report


def evaluate_partitioned(loaded: LoadedConfig, partitions: int, engine: Any) -> Report:
    """A polars engine over `partitions` hash buckets of the users, one after the other."""
    started = time.perf_counter()
    check_partitionable(loaded, f"partitions: {partitions}", side_inputs=True)
    config = loaded.config
    (file,) = config.model_files().values()
    predictions = read_predictions(file, loaded.resolve_path(file.path))
    truth = read_ground_truth(config.ground_truth, loaded.resolve_path(config.ground_truth.path))
    sources = read_sources(loaded)
    align_ids(predictions, truth, *sources.given())
    check_sources(sources, config.conventions.duplicates)
    partials = []
    for bucket in range(partitions):
        mine = (pl.col("user").hash(seed=0) % partitions) == bucket
        mine_p = dataclasses.replace(predictions, frame=predictions.frame.filter(mine))
        mine_t = dataclasses.replace(truth, frame=truth.frame.filter(mine))
        conventions = config.conventions
        with console.stage(f"partition {bucket + 1}/{partitions}: read, rank, join, metrics"):
            check = config.unknown_items.check
            partial = partial_results(
                mine_p, mine_t, loaded.specs, conventions, engine, sources, check
            )
        partials.append(partial)
    info = {"name": str(engine), "partitions": partitions}
    reference = unknown_items.reference_of(truth, sources)
    return finish(loaded, merge_partials(partials), predictions, truth, info, started, reference)


def describe_only(role: str, path: str, layout: str, columns: dict[str, str]) -> Input:
    """An Input that only names a source (for messages and the report)."""
    empty = pl.LazyFrame()
    return Input(role, Path(path), "spark", layout, columns, empty, empty)
