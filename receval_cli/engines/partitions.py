"""partitions: N: a polars engine over hash buckets of the users, one after the other.

A partition is a set of users (a hash bucket of the user id) with all their predictions
and ground truth. Each is scanned from the files (keeping its users only, so memory holds
about 1/N of them) and evaluated into a Partial by the one assembly (evaluation/assembly.py), which
merges the Partials and finishes the Report exactly as for a single pass: the numbers are
the same bit for bit. With --per-user, each bucket's per-user rows go to a temporary
Parquet file, and the table is written sorted by user, as a single pass writes it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import polars as pl

from receval_cli import console
from receval_cli.analysis.segments import check_segment_gates, segment_keys
from receval_cli.config.loading import LoadedConfig
from receval_cli.errors import InputError, UsageError
from receval_cli.evaluation import unknown_items
from receval_cli.evaluation.assembly import PerUserSpool, Run, bucket_partial, finish
from receval_cli.evaluation.partial import merge
from receval_cli.evaluation.plan import metric_exprs
from receval_cli.inputs.optional import Sources, check_sources, read_sources
from receval_cli.inputs.readers import Input, align_ids, read_ground_truth, read_predictions
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.report.data import Report


def needs_whole_log(spec: MetricSpec) -> bool:
    """The metric compares items by their co-occurrence in the interactions log, which a
    bucket that holds its own users' interactions only cannot compute."""
    params = spec.param_dict()
    return params.get("feature") == "cooccurrence" or params.get("unexpected") == "history"


def check_partitionable(loaded: LoadedConfig, engine: str, side_inputs: bool = False) -> None:
    """Partitioned engines run the per-user, global and rating metrics; refuse the click
    metrics with the reason. `side_inputs`: the engine also runs the per-user metrics that
    read the catalog, the interactions or the baseline."""
    config = loaded.config
    specs = loaded.specs
    # the setting that chose the engine, as `engine` names it ("engine: spark", "partitions: 4")
    key = engine.partition(":")[0] if ":" in engine else "engine"
    unsupported = [str(s) for s in specs if lookup(s.name).scope == "logged"]
    if unsupported:
        fix = "Use another engine for them."
        raise UsageError(
            f"{engine} runs the per-user, global and rating metrics; {', '.join(unsupported)} "
            f"(click metrics, over the interactions log) do not run there yet. {fix}",
            key=key,
            found=unsupported,
            fix=fix,
        )
    if config.several_models:
        fix = "list one model."
        raise UsageError(
            f"{engine} evaluates one predictions file; {fix}",
            key=key,
            found=list(config.model_files()),
            fix=fix,
        )
    whole_log = [str(s) for s in specs if needs_whole_log(s)]
    if whole_log and engine == "engine: spark":
        fix = "Use another engine for them (partitions: N reads the whole log)."
        raise UsageError(
            f"{engine} sends each bucket the interactions of its own users only; "
            f"{', '.join(whole_log)} compare items by who else interacted with them (item "
            f"co-occurrence), which needs the whole log. {fix}",
            key=key,
            found=whole_log,
            fix=fix,
        )
    user_specs = tuple(s for s in specs if lookup(s.name).scope == "user")
    if side_inputs:
        return
    try:
        metric_exprs(user_specs, config.conventions, Sources())
    except InputError as error:
        fix = "Use another engine for those."
        raise UsageError(
            f"{engine} does not yet run the per-user metrics that read the catalog, the "
            "interactions or the baseline (novelty, serendipity, intra_list_diversity, ...); "
            f"the global ones (coverage, inter_list_diversity, gini, entropy) do run. {fix}",
            key=key,
            found=error.fields.get("key"),
            fix=fix,
        ) from None


def evaluate_partitioned(
    loaded: LoadedConfig, partitions: int, engine: Any, per_user: bool = False
) -> Report:
    """A polars engine over `partitions` hash buckets of the users, one after the other;
    `per_user` keeps the per-user rows (in temporary files)."""
    check_partitionable(loaded, f"partitions: {partitions}", side_inputs=True)
    config = loaded.config
    conventions = config.conventions
    (file,) = config.model_files().values()
    predictions = read_predictions(file, loaded.resolve_path(file.path))
    truth = read_ground_truth(config.ground_truth, loaded.resolve_path(config.ground_truth.path))
    sources = read_sources(loaded)
    align_ids(predictions, truth, *sources.given())
    check_sources(sources, conventions.duplicates)
    keys = segment_keys(loaded)  # each user's segment values, held whole (text ids)
    check_segment_gates(loaded, [] if keys is None else keys[1])
    spool = PerUserSpool() if per_user else None
    check = config.unknown_items.check
    partials = []
    for bucket in range(partitions):
        mine = (pl.col("user").hash(seed=0) % partitions) == bucket
        mine_p = dataclasses.replace(predictions, frame=predictions.frame.filter(mine))
        mine_t = dataclasses.replace(truth, frame=truth.frame.filter(mine))
        with console.stage(f"partition {bucket + 1}/{partitions}: read, rank, join, metrics"):
            partial = bucket_partial(
                mine_p,
                mine_t,
                loaded.specs,
                conventions,
                sources,
                engine,
                check,
                count_rows="raw" if bucket == 0 else "none",  # the raw scans: whole files
                keep="rows" if spool is not None else "none",
                segments=None if keys is None else keys[0],
            )
        if spool is not None and partial.per_user is not None:
            spool.add(partial.per_user)
            partial.per_user = None
        partials.append(partial)
    run = Run(
        predictions,
        truth,
        loaded.specs,
        conventions,
        sources,
        unknown_items.reference_of(truth, sources) if check else None,
        engine={"name": str(engine), "partitions": partitions},
        per_user_rows=None if spool is None else spool.scan(),
        spool=spool,
    )
    if keys is not None:
        run.segment_keys, run.segments = keys
    return finish(merge(partials), run)


def describe_only(role: str, path: str, layout: str, columns: dict[str, str]) -> Input:
    """An Input that only names a source (for messages and the report)."""
    empty = pl.LazyFrame()
    return Input(role, Path(path), "spark", layout, columns, empty, empty, location=path)
