"""Ranges: the users in ranges of one read of the predictions, grouped by user.

Predictions written by a group-by, a sort or a per-user scoring job come grouped by user in
ascending order. Then a run reads them once, in batches, and cuts them into ranges of about
`rows` rows of whole users (a user's rows never straddle two ranges); each range is
evaluated with its users' ground truth into a Partial by the one assembly, exactly as a
hash bucket of engines/partitions.py is, and the Partials are added up as they come. The
memory is that of one range, whatever the size of the files: the per-user tables of a
range are reduced to sums before the next is read.

The ground truth is read in step when it is grouped by user in the same order (one more
batch when a range needs it); otherwise it is read whole, sorted by user, and sliced. The
first batch of predictions that is not in ascending user order (or holds a null user)
ends the attempt (`Unordered`): the caller evaluates the run in hash partitions instead,
which take any order.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import polars as pl

from receval_cli import console
from receval_cli.config.loading import LoadedConfig
from receval_cli.evaluation.kernel_core import ahead
from receval_cli.evaluation.segment_split import Segment, SegmentKeys
from receval_cli.inputs.readers import Input
from receval_cli.results.report import Report

if TYPE_CHECKING:
    from receval_cli.engines.run_plan import ModelInputs

BATCH_ROWS = 1_000_000  # rows polars hands over at once


class Unordered(Exception):
    """The predictions are not grouped by user in ascending order (or hold a null user)."""


class TruthUnordered(Unordered):
    """The ground truth is not grouped by user in ascending order: read it whole."""


def _batches(frame: pl.LazyFrame, engine: Any) -> Iterator[pl.DataFrame]:
    """The frame in batches, each next one read on another thread meanwhile."""
    return ahead(frame.collect_batches(chunk_size=BATCH_ROWS, engine=engine))


def _ordered(batch: pl.DataFrame, last: Any) -> Any:
    """The batch's last user; Unordered where its users are not ascending from `last`."""
    users = batch.get_column("user")
    if users.null_count() or not users.is_sorted():
        raise Unordered
    if last is not None and users[0] < last:
        raise Unordered
    return users[-1]


def prediction_ranges(frame: pl.LazyFrame, rows: int, engine: Any) -> Iterator[pl.DataFrame]:
    """The predictions in ranges of whole users: each ends with the last user that starts
    within its first `rows` rows (a user with more rows than that makes a range alone)."""
    held = pl.DataFrame(schema=frame.collect_schema())
    last = None
    for batch in _batches(frame, engine):
        if batch.height == 0:
            continue
        last = _ordered(batch, last)
        held = pl.concat([held, batch], rechunk=False)
        while held.height > rows:
            users = held.get_column("user")
            boundary = users[rows]  # the user of the first row past `rows`
            cut = users.search_sorted(boundary, "left")
            if cut == 0:  # its first user has more rows than a range: alone, when whole
                cut = users.search_sorted(boundary, "right")
                if cut >= held.height:
                    break  # its rows may go on in the next batch
            yield held.slice(0, cut)
            held = held.slice(cut)
    if held.height:
        yield held


class TruthFeed:
    """The ground truth's rows range by range: those of the users up to a range's last
    (`upto`), then the rest (`rest`). Read in step from a stream grouped by user in
    ascending order, or (`whole`) read at once, sorted by user."""

    def __init__(self, frame: pl.LazyFrame, engine: Any, whole: bool) -> None:
        self.schema = frame.collect_schema()
        self.held = pl.DataFrame(schema=self.schema)
        self.last: Any = None
        self.stream: Iterator[pl.DataFrame] | None = None
        if whole:
            self.held = frame.sort("user", nulls_last=False).collect(engine=engine)
        else:
            self.stream = _batches(frame, engine)

    def _more(self) -> bool:
        """Read the next batch into `held`; False at the end of the stream."""
        if self.stream is None:
            return False
        for batch in self.stream:
            if batch.height == 0:
                continue
            try:
                self.last = _ordered(batch, self.last)
            except Unordered:
                raise TruthUnordered from None
            self.held = pl.concat([self.held, batch], rechunk=False)
            return True
        self.stream = None
        return False

    def upto(self, user: Any) -> pl.DataFrame:
        """The rows of the users up to `user` (and including it), removed from the feed."""
        while self.stream is not None and (self.held.height == 0 or self.held["user"][-1] <= user):
            if not self._more():
                break
        cut = self.held.get_column("user").search_sorted(user, "right")
        found, self.held = self.held.slice(0, cut), self.held.slice(cut)
        return found

    def rest(self) -> pl.DataFrame:
        while self._more():
            pass
        found, self.held = self.held, self.held.clear()
        return found


def user_ranges(
    predictions: Input, truth: Input, rows: int, engine: Any, whole_truth: bool
) -> Iterator[tuple[Input, Input, int]]:
    """The ranges' inputs: each range's predictions, its users' ground truth (the truth
    users between two ranges' users go with the later range; those after the last, in a
    range of their own) and its prediction rows."""
    feed = TruthFeed(truth.frame, engine, whole_truth)
    for chunk in prediction_ranges(predictions.frame, rows, engine):
        users = feed.upto(chunk.get_column("user")[-1])
        yield _input(predictions, chunk), _input(truth, users), chunk.height
    rest = feed.rest()
    if rest.height:
        empty = pl.DataFrame(schema=predictions.frame.collect_schema())
        yield _input(predictions, empty), _input(truth, rest), 0


def _input(source: Input, rows: pl.DataFrame) -> Input:
    return dataclasses.replace(source, frame=rows.lazy())


def _rows_of(predictions: Input) -> int | None:
    """The predictions' rows where the files say it (Parquet metadata), else None."""
    from receval_cli.engines.memory import rows_on_disk

    if predictions.path.suffix.lower() != ".parquet" and not predictions.path.is_dir():
        return None
    return rows_on_disk([predictions.path]) or None


def _show_progress(done: int, total: int | None, seconds: float) -> None:
    """Rows done (of how many) and the time left, on the run's progress line and in -v."""
    if total is None or done >= total or done == 0:
        text = f"evaluated {done:,} prediction rows in {seconds:.0f} s"
    else:
        left = seconds * (total - done) / done
        share = 100 * done / total
        text = (
            f"evaluated {done:,} of {total:,} prediction rows ({share:.0f}%), "
            f"about {left:.0f} s left"
        )
    console.progress(text)
    console.log(text)


def evaluate_in_ranges(
    loaded: LoadedConfig,
    found: ModelInputs,
    keys: tuple[SegmentKeys, list[Segment]] | None,
    per_user: bool,
    rows: int,
) -> Report:
    """One model over ranges of about `rows` prediction rows (engines/partitions.py's
    assembly, as for hash buckets). Unordered where the predictions are not grouped by
    user in ascending order; the ground truth is read whole where it is not."""
    from receval_cli.engines.partitions import Bucket, evaluate_buckets

    predictions, truth, _, engine = found.parts()

    def run(whole_truth: bool) -> Report:
        block: dict[str, Any] = {"name": str(engine), "ranges": 0}

        def buckets() -> Iterator[Bucket]:
            total, done, started = _rows_of(predictions), 0, time.perf_counter()
            # the next range is read on another thread while this one is evaluated
            coming = ahead(user_ranges(predictions, truth, rows, engine, whole_truth))
            for mine_p, mine_t, height in coming:
                block["ranges"] += 1
                yield f"range {block['ranges']}", mine_p, mine_t
                done += height
                _show_progress(done, total, time.perf_counter() - started)

        return evaluate_buckets(
            loaded, found, buckets(), keys, per_user, block, "auto", truth_in_memory=True
        )

    try:
        return run(whole_truth=False)
    except TruthUnordered:  # found while read in step: read whole, from the start
        console.log("the ground truth is not grouped by user: read whole, sorted")
        return run(whole_truth=True)
