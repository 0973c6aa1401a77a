"""partitions: N: a polars engine over hash buckets of the users, one after the other.

A partition is a set of users (a hash bucket of the user id) with all their predictions
and ground truth. Each is scanned from the files (keeping its users only, so memory holds
about 1/N of them) and evaluated into a Partial by the one assembly (evaluation/assembly.py), which
merges the Partials and finishes the Report exactly as for a single pass: the numbers are
the same bit for bit (the click metrics too: each bucket gives their exact sums over its
users' recommendations and log rows, evaluation/click_parts.py). With --per-user, each
bucket's per-user rows go to a temporary Parquet file, and the table is written sorted by
user, as a single pass writes it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from receval_cli import console
from receval_cli.config.loading import LoadedConfig
from receval_cli.engines.running import ItemSet, Running
from receval_cli.evaluation import unknown_items
from receval_cli.evaluation.assembly import (
    BucketTask,
    FinishContext,
    PerUserSpool,
    bucket_partial,
    finish,
)
from receval_cli.evaluation.click_parts import log_items
from receval_cli.evaluation.kernel_core import BATCH_ROWS as ROWS
from receval_cli.evaluation.kernel_core import read_batches
from receval_cli.evaluation.segment_split import Segment, SegmentKeys
from receval_cli.inputs.readers import Input, PartOf
from receval_cli.metrics import lookup
from receval_cli.results.report import Report

if TYPE_CHECKING:
    from receval_cli.engines.run_plan import ModelInputs


def evaluate_partitioned(
    loaded: LoadedConfig,
    found: ModelInputs,
    partitions: int,
    keys: tuple[SegmentKeys, list[Segment]] | None,
    per_user: bool = False,
) -> Report:
    """One model (`found`: its inputs as the run planner read them) over `partitions`
    hash buckets of the users, one after the other; `keys`: the users' segment values
    and the segments; `per_user` keeps the per-user rows (in temporary files)."""
    predictions, truth, _, engine = found.parts()

    def buckets() -> Iterator[Bucket]:
        for bucket in range(partitions):
            mine = (pl.col("user").hash(seed=0) % partitions) == bucket
            mine_p = PartOf.of(predictions, mine)  # read as filtered slices of the file
            mine_t = dataclasses.replace(truth, frame=truth.frame.filter(mine))
            yield f"partition {bucket + 1}/{partitions}", mine_p, mine_t

    block = {"name": str(engine), "partitions": partitions}
    return evaluate_buckets(loaded, found, buckets(), keys, per_user, block, engine)


Bucket = tuple[str, Input, Input]  # the stage's name, the bucket's predictions and truth


def evaluate_buckets(
    loaded: LoadedConfig,
    found: ModelInputs,
    buckets: Iterable[Bucket],
    keys: tuple[SegmentKeys, list[Segment]] | None,
    per_user: bool,
    block: dict[str, Any],
    engine: Any,
    truth_in_memory: bool = False,
) -> Report:
    """The Report of `found` from its users' buckets (hash partitions, or the ranges of
    engines/ranges.py), each evaluated by polars' `engine` into a Partial and added to
    those before it (their tables made compact now and then, so the memory held from
    bucket to bucket stays that of one merged table of each kind); `block`: the report's
    inputs.engine; `truth_in_memory`: each bucket's ground truth is a frame in memory
    (ranges), whose items are then gathered as they pass for the unknown-items check
    rather than read again at the end."""
    conventions = loaded.config.conventions
    predictions, truth, sources, _ = found.parts()
    spool = PerUserSpool() if per_user else None
    check = loaded.config.unknown_items.check
    # the click metrics without propensities: 1 over the whole log's distinct items
    logged = any(lookup(s.name).scope == "logged" for s in loaded.specs)
    items = log_items(truth) if logged and "propensity" not in truth.columns else None
    running = Running(loaded.specs, conventions)
    reference = unknown_items.reference_of(truth, sources) if check else None
    # the ground truth's items as the buckets pass, for the unknown-items check: where
    # each bucket's truth is in memory (ranges) and the truth is the reference
    gathered = truth_in_memory and reference is not None and reference[0] == "ground truth"
    known = ItemSet() if gathered else None
    for number, (name, mine_p, mine_t) in enumerate(buckets):
        with console.stage(f"{name}: read, rank, join, metrics"):
            task = BucketTask(
                engine,
                check,
                count_rows="raw" if number == 0 else "none",  # the raw scans: whole files
                keep="rows" if spool is not None else "none",
                segments=None if keys is None else keys[0],
                log_items=items,
                items_into=running.items.add_bits,
            )
            partial = bucket_partial(mine_p, mine_t, loaded.specs, conventions, sources, task)
            if known is not None:
                known.add(mine_t.frame.select(pl.col("item").drop_nulls()).collect())
        if spool is not None and partial.per_user is not None:
            spool.add(partial.per_user)
            partial.per_user = None
        running.add(partial)
    run = FinishContext(
        predictions,
        truth,
        loaded.specs,
        conventions,
        sources,
        reference,
        engine=block,
        per_user_rows=None if spool is None else spool.scan(),
        spool=spool,
    )
    if keys is not None:
        run.segment_keys, run.segments = keys
    merged = running.merged()
    if reference is not None and known is None and running.items.bits_alone():
        # the reference's items read a batch at a time into bits, where the buckets' are
        # bits too: no table of either made (finish's query would make both)
        known = ItemSet()
        for batch in read_batches(unknown_items.reference_rows(truth, sources), ROWS, engine):
            known.add(batch)
    if known is not None:
        # None where either set holds ids other than bits: finish's query counts them
        merged.unknown = running.items.missing_from(known)
    return finish(merged, run)


def describe_only(role: str, path: str, layout: str, columns: dict[str, str]) -> Input:
    """An Input that only names a source (for messages and the report)."""
    empty = pl.LazyFrame()
    return Input(role, Path(path), "spark", layout, columns, empty, empty, location=path)
