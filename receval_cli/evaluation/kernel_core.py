"""The compiled core: the ranking statistics of every user in one pass, in C.
Over 400 lines: one job, the compiled core's Python side: the requests, the arrays it is
fed and the tables it returns, kept beside each other as _kernel.c reads them.

The polars core (evaluation/plan.py) ranks each list in a group_by, explodes the ranked
lists, joins them with the ground truth and takes running sums over windows. This core
reads both inputs once into arrays, grouped by user, and hands them to `_kernel.c`, which
ranks each user's list itself, looks each ranked item's grade up in that user's truth and
walks the list once, adding every statistic's terms in rank order: the same operations in
the same order as the polars core, so every per-user value is the polars core's, bit for
bit (tests/evaluation/test_kernel_core.py runs both cores on the same cases and compares every bit).

It computes the statistics the classic ranking metrics are built from (`Request`: hits,
reciprocal rank, AP's precision sum, DCG and the ideal DCG, hits within |R|), and keeps
each row's rank where beyond-accuracy metrics read the recs table (plan.py builds it from
those rows: KernelTables.ranked). It runs where the run asks for nothing else
(`requests`); everything else, and every input
it does not take (text ids, rank or list layouts, duplicates to drop, NaN scores, nulls,
a failed check to report), goes to the polars core, unchanged. The metrics' definitions
stay in metrics/: this core only produces the per-user statistics table they read.

`RECEVAL_CORE=polars` in the environment turns it off; so does a machine where the
extension was not compiled (setup: pyproject.toml's ext-modules, optional).

About 700 lines, on purpose: the compiled core's whole Python side (what it takes, how
it reads, the C calls, the polars core's table) reads in one place, beside its C half.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from types import ModuleType
from typing import Any, TypeVar

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.evaluation.seen_items import SeenItems
from receval_cli.inputs.checks import check_exprs
from receval_cli.inputs.readers import Input
from receval_cli.metrics.stats import ALL, RELEVANT_ONLY, Stats, discount

T = TypeVar("T")
# request kinds (_kernel.c's enum)
HITS, RR, PSUM, DCG, HITS_R = 0, 1, 2, 3, 4
_KINDS = {"hits": HITS, "rr": RR, "precision_sum": PSUM}
_GAINS = {"linear": 0, "exponential": 1, "binary": 2}
_TIES = {"item_desc": 0, "item_asc": 1, "item_text_desc": 0, "item_text_asc": 1, "input_order": 2}
_DISCOUNTS = ("log2", "jarvelin")
# the hits table's helper rows the kernel's walk replaces (metrics/stats.py)
_HELPER_ROWS = re.compile(r"^(dcg\[.*\]|hits_so_far|precision_sum)$")
_AT = re.compile(r"^(hits|rr|precision_sum)@(\d+|all)$")
_DCG = re.compile(r"^dcg@(\d+|all)\[(.+),(log2|jarvelin)\]$")
_IDEAL = re.compile(r"^ideal_dcg\[(.+),(log2|jarvelin)\]$")


@dataclass(frozen=True)
class Request:
    """One per-user statistic the kernel computes, named as metrics/stats.py names it."""

    name: str
    kind: int
    k: int
    gain: int = 0
    discount: int = 0


@dataclass(frozen=True)
class Requests:
    """What the kernel is asked: the hits-table statistics and the ideal DCG lists."""

    stats: tuple[Request, ...]
    ideal: tuple[tuple[str, int, int], ...]  # (name, gain, discount)

    def discounts(self) -> list[int]:
        used = {r.discount for r in self.stats if r.kind == DCG} | {d for _, _, d in self.ideal}
        return sorted(used)


def _gain(kind: str) -> int | None:
    """_kernel.c's gain code for a gain kind (None: a grade -> gain map, not taken)."""
    base, _, rest = kind.partition(",")
    if base not in _GAINS or rest not in ("", RELEVANT_ONLY.lstrip(",")):
        return None
    return _GAINS[base] | (4 if rest else 0)


def requests(stats: Stats) -> Requests | None:
    """The kernel's requests for these statistics, or None when one is not the kernel's
    (none under tie_break expected: the kernel ranks in one order)."""
    if stats.expected_ties or stats.lists.aggregations or stats.intents:
        return None
    if stats.needs_catalog or stats.truth_columns_on_hits or stats.list_columns_on_hits:
        return None
    if stats.truth.rows or not all(_HELPER_ROWS.match(name) for name in stats.hits.rows):
        return None
    found: list[Request] = []
    for name in stats.hits.aggregations:
        at, dcg = _AT.match(name), _DCG.match(name)
        if name == "hits@R":
            found.append(Request(name, HITS_R, 0))
        elif at is not None:
            found.append(Request(name, _KINDS[at[1]], _cutoff(at[2])))
        elif dcg is not None:
            gain = _gain(dcg[2])
            if gain is None:
                return None
            found.append(Request(name, DCG, _cutoff(dcg[1]), gain, _DISCOUNTS.index(dcg[3])))
        else:
            return None
    ideal: list[tuple[str, int, int]] = []
    for name in stats.truth.aggregations:
        match = _IDEAL.match(name)
        if name == "n_relevant":
            continue
        gain = None if match is None else _gain(match[1])
        if match is None or gain is None:
            return None
        ideal.append((name, gain, _DISCOUNTS.index(match[2])))
    return Requests(tuple(found), tuple(ideal))


def _cutoff(text: str) -> int:
    return ALL if text == "all" else int(text)


def takes_conventions(conventions: Conventions) -> bool:
    """Whether the kernel implements these conventions (the others are the polars core's:
    duplicates to drop)."""
    return (
        conventions.tie_break in _TIES
        and conventions.duplicates == "error"
        and conventions.truth_duplicates == "error"
    )


def takes(predictions: Input, truth: Input, conventions: Conventions) -> bool:
    """Whether the kernel takes these inputs and conventions (else the polars core)."""
    if predictions.value_column != "score" or not takes_conventions(conventions):
        return False
    schemas = (predictions.frame.collect_schema(), truth.frame.collect_schema())
    if any(s.get(c) not in (pl.Int64, pl.String) for s in schemas for c in ("user", "item")):
        return False
    return schemas[0]["score"].is_float()


def with_codes(
    predictions: pl.DataFrame, truth: pl.DataFrame, tie_break: str
) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, pl.Series]]:
    """Both inputs with int64 keys the kernel reads: `user_key` (the user, or the user's
    place among the sorted user ids of both inputs when they are text) and `item_key`
    (the item in the order the tie-break compares items: the id, or its place among the
    sorted ids of both inputs when they are text, or compared as text). Returns, per
    column coded so, the sorted ids (a key's value is its place among them)."""
    sorted_ids: dict[str, pl.Series] = {}
    for column, text in (("user", False), ("item", tie_break.startswith("item_text_"))):
        values = [frame.get_column(column) for frame in (predictions, truth)]
        if text:
            values = [v.cast(pl.String) for v in values]
        if values[0].dtype == pl.Int64:
            keys = values
        else:
            distinct = pl.concat([v.unique() for v in values]).unique().sort()
            keys = [v.cast(pl.Enum(distinct)).to_physical().cast(pl.Int64) for v in values]
            sorted_ids[column] = distinct.cast(predictions.schema[column])
        predictions = predictions.with_columns(keys[0].alias(f"{column}_key"))
        truth = truth.with_columns(keys[1].alias(f"{column}_key"))
    return predictions, truth, sorted_ids


@dataclass
class KernelTables:
    """The kernel's results: the per-user statistics (the polars core's columns, before
    the status and the metrics), the prediction rows within each list's depth, and their
    distinct items."""

    per_user: pl.DataFrame
    top_rows: pl.LazyFrame | None  # (user, item, score[, row]) within depth (None: not kept)
    # (item): the distinct items of top_rows; from batches, made only where a query reads
    # it (3.4M ids from a catalog of 100M items, which a run of ranking metrics never reads)
    recommended: pl.LazyFrame
    # (user, item, rank) within depth, where asked (the recs table's rows: plan.py)
    ranked: pl.DataFrame | None = None
    seen: SeenItems | None = None  # from batches: the recommended items' bits


class _Kernel:
    """The kernel's calls for one run: its requests as arrays, and the discount tables,
    grown to the deepest position any call reads."""

    def __init__(
        self,
        module: ModuleType,
        wanted: Requests,
        conventions: Conventions,
        depth: int | None,
        ranks: bool = False,
    ) -> None:
        import numpy as np

        self.module, self.wanted, self.conventions = module, wanted, conventions
        self.ranks = ranks  # keep each row's rank within depth (top_rank)
        self.depth = ALL if depth is None else depth
        self.slot = {kind: position for position, kind in enumerate(wanted.discounts())}
        self.requests = np.array(
            [(r.kind, r.k, r.gain, self.slot.get(r.discount, 0)) for r in wanted.stats],
            dtype=np.int64,
        ).reshape(-1, 4)
        self.ideal = np.array(
            [(gain, self.slot[d]) for _, gain, d in wanted.ideal], dtype=np.int64
        ).reshape(-1, 2)
        self.disc_len = 0
        self.discounts = np.zeros(0, dtype=np.float64)
        self.ungrouped = False  # the last call's rows were not grouped by user
        self.row_capacity = 0
        self.row_buffers: dict[str, Any] = {}

    def run(self, arrays: dict[str, Any]) -> dict[str, Any] | None:
        """The kernel's per-user outputs for these users (None: an input the polars core
        must see: a NaN, a repeated (user, item), rows not grouped by user: `ungrouped`
        then says which). The per-row outputs are views of buffers the next call reuses."""
        import numpy as np

        module = self.module
        status, n_out, longest, largest = module.scan(
            arrays["users"], arrays["t_users"], arrays["scores"], arrays["t_rel"]
        )
        self.ungrouped = status == 1
        if status:
            return None
        needed = max(min(longest, self.depth), largest) + 1
        if needed > self.disc_len and self.slot:
            self.disc_len = max(needed, 2 * self.disc_len)
            tables = [_discount_table(kind, self.disc_len) for kind in self.slot]
            self.discounts = np.concatenate(tables)
        n_req, n_ideal, tn = len(self.requests), len(self.ideal), len(arrays["t_users"])
        rows = self._row_buffers(len(arrays["users"]))
        out = rows | {
            "user": np.empty(n_out, dtype=np.int64),
            "list_rows": np.empty(n_out, dtype=np.int64),
            "truth_items": np.empty(n_out, dtype=np.int64),
            "n_relevant": np.empty(n_out, dtype=np.int64),
            "flags": np.empty(n_out, dtype=np.uint8),
            "stats": np.empty((n_req, n_out), dtype=np.float64),
            "valid": np.empty((n_req, n_out), dtype=np.uint8),
            "ideal": np.empty((n_ideal, tn), dtype=np.float64),
        }
        status = module.evaluate(
            arrays["users"], arrays["items"], arrays["scores"],
            arrays["t_users"], arrays["t_items"], arrays["t_rel"], arrays["t_relevant"],
            self.requests, self.ideal, self.discounts,
            _TIES[self.conventions.tie_break], min(self.depth, 2**62), n_out,
            threads(len(arrays["users"])),
            out["user"], out["list_rows"], out["truth_items"], out["n_relevant"], out["flags"],
            out["stats"], out["valid"], out["ideal"], out["in_top"], out["top_rank"],
            out["top_row"], out["top_relevant"], out["top_item"],
        )  # fmt: skip
        if status == -1:
            raise MemoryError("the compiled core ran out of memory")
        return None if status else out

    def _row_buffers(self, n: int) -> dict[str, Any]:
        """The per-row outputs for n rows, cleared: views of buffers kept from call to
        call (a batch's 1M rows would otherwise take new memory each time, which the
        allocator keeps: the peak grew by about 20 MiB a batch)."""
        import numpy as np

        # each buffer's type and fill (None: only the places the kernel writes are read)
        kinds: dict[str, tuple[Any, int | None]] = {"in_top": (np.uint8, 0)}
        if self.ranks:
            kinds |= {"top_rank": (np.uint32, 0), "top_row": (np.int64, -1)}
            kinds |= {"top_relevant": (np.uint8, 0), "top_item": (np.int64, None)}
        if n > self.row_capacity or not self.row_buffers:
            self.row_capacity = max(n, self.row_capacity + self.row_capacity // 4)
            self.row_buffers = {
                name: np.empty(self.row_capacity, dtype) for name, (dtype, _) in kinds.items()
            }
        views: dict[str, Any] = {"top_rank": np.zeros(0, np.uint32)}
        views |= {"top_row": np.zeros(0, np.int64), "top_relevant": np.zeros(0, np.uint8)}
        views |= {"top_item": np.zeros(0, np.int64)}
        for name, (_, fill) in kinds.items():
            views[name] = self.row_buffers[name][:n]
            if fill is not None:
                views[name].fill(fill)
        return views


def evaluate_compiled(
    module: ModuleType,
    wanted: Requests,
    predictions: pl.DataFrame,
    truth: pl.DataFrame,
    conventions: Conventions,
    depth: int | None,
    ranks: bool = False,
    rank_depth: int | None = None,
) -> KernelTables | None:
    """Run the kernel over collected inputs: predictions (user, item, score[, row]) and
    indexed truth (user, item, rel, relevant). None where they hold what the polars core
    must see (nulls, NaN, a duplicate): it reports them or computes with them. `ranks`:
    keep the ranked rows (KernelTables.ranked), those up to `rank_depth` (None: within
    depth)."""
    if any(_has_nulls(frame) for frame in (predictions, truth)):
        return None
    predictions, truth, sorted_ids = with_codes(predictions, truth, conventions.tie_break)
    predictions, truth = _grouped(predictions), _grouped(truth)
    arrays = _arrays(predictions) | _truth_arrays(truth)
    out = _Kernel(module, wanted, conventions, depth, ranks).run(arrays)
    if out is None:
        return None
    ranked = None
    if ranks:
        kept = _kept(out, rank_depth)
        places = out["top_row"][kept]
        ranked = _ranked(predictions.select("user", "item").gather(places), out, kept)
    per_user = _per_user([_raw(out)], wanted)
    if "user" in sorted_ids:
        per_user = per_user.with_columns(sorted_ids["user"].gather(per_user.get_column("user")))
    in_top = pl.Series("in_top", out["in_top"]).cast(pl.Boolean)
    top_rows = predictions.drop("user_key", "item_key").with_columns(in_top).lazy()
    return KernelTables(
        per_user,
        top_rows.filter("in_top").drop("in_top"),
        _recommended(module, arrays["items"], out["in_top"], sorted_ids).lazy(),
        ranked,
    )


def _kept(out: dict[str, Any], rank_depth: int | None) -> Any:
    """Which rows' ranks are kept: those ranked within depth, up to `rank_depth` (None:
    all). Beside an ndcg@100, metrics of the lists at @10 read a tenth of the rows."""
    top_rank = out["top_rank"]
    if rank_depth is None or rank_depth >= ALL:
        return top_rank > 0
    return (top_rank > 0) & (top_rank <= rank_depth)


def _ranked(ids: pl.DataFrame, out: dict[str, Any], kept: Any) -> pl.DataFrame:
    """(user, item, rank, relevant) of the `kept` rows (_kept), grouped by user in the
    users' order, each user's in rank order: `ids` holds their (user, item), in the
    places the kernel's top_row names; `relevant` as the ground truth says it, null for
    an item not in it."""
    found = pl.Series(out["top_relevant"][kept])
    relevant = pl.when(found < 2).then(found == 1).alias("relevant")
    return ids.with_columns(pl.Series("rank", out["top_rank"][kept])).with_columns(
        pl.select(relevant).to_series()
    )


# batches: integer ids
_RANKED = {"user": pl.Int64, "item": pl.Int64, "rank": pl.UInt32, "relevant": pl.Boolean}
BATCH_ROWS = 1_000_000  # prediction rows read at once by evaluate_batches
UNORDERED = "predictions not grouped by user"


def streams(predictions: pl.LazyFrame, conventions: Conventions) -> bool:
    """Whether evaluate_batches can take these predictions: integer ids compared as
    numbers (a text id's key needs every id first)."""
    schema = predictions.collect_schema()
    integers = schema.get("user") == pl.Int64 and schema.get("item") == pl.Int64
    return integers and not conventions.tie_break.startswith("item_text_")


def evaluate_batches(
    module: ModuleType,
    wanted: Requests,
    predictions: pl.LazyFrame,
    indexed_truth: pl.LazyFrame,
    conventions: Conventions,
    depth: int | None,
    engine: Any,
    ranks: bool = False,
    numpy_import: threading.Thread | None = None,
    rank_depth: int | None = None,
    parted: tuple[pl.LazyFrame, pl.Expr] | None = None,
) -> KernelTables | str | None:
    """evaluate_compiled, with the predictions read in batches of about BATCH_ROWS rows (polars
    reads the next while the kernel works): memory for a batch, not the whole file. The
    file must be grouped by user, ascending; the rows of a batch's last user wait for the
    next batch (_Rows), and each call gets its users' slice of the (whole, sorted) truth,
    held as arrays alone. UNORDERED where the file is not so grouped (the caller then
    reads it whole: evaluate_compiled); None where it holds what the polars core must see.
    `parted`: (the whole file's rows, the filter that keeps the predictions' rows), where
    `predictions` is a hash partition of them."""
    # the first batch, meanwhile
    batches = read_batches(predictions, BATCH_ROWS, engine, parted)
    truth = indexed_truth.collect(engine=engine)
    if numpy_import is not None:  # imported while polars read (it releases the GIL)
        numpy_import.join()
    import numpy as np

    if _has_nulls(truth):
        return None
    truth = _grouped(truth.with_columns(user_key=pl.col("user"), item_key=pl.col("item")))
    whole = _truth_arrays(truth)
    del truth  # the arrays hold what the kernel reads
    kernel = _Kernel(module, wanted, conventions, depth, ranks)
    raw: list[Raw] = []  # each batch's per-user outputs, typed once at the end (_per_user)
    ranked: list[pl.DataFrame] = []
    seen = SeenItems(module)
    rows = _Rows()
    done_truth = 0  # truth rows handed to the kernel so far
    last_user: int | None = None
    for batch in itertools.chain(batches, [None]):
        if batch is not None:
            if _has_nulls(batch):
                return None
            rows.add(batch)
        users = rows.arrays["users"]
        if len(users) == 0:
            continue
        if last_user is not None and users[0] <= last_user:
            return UNORDERED
        # complete users only: the rows of the last user wait for the next batch
        cut = len(users) if batch is None else int(np.searchsorted(users, users[-1], "left"))
        if cut == 0:
            continue
        head = {name: values[:cut] for name, values in rows.arrays.items()}
        # the truth of the users up to this batch's last complete user
        end = int(np.searchsorted(whole["t_users"], users[cut - 1], "right"))
        part = {name: values[done_truth:end] for name, values in whole.items()}
        out = kernel.run(head | part)
        if out is None:
            return UNORDERED if kernel.ungrouped else None
        in_top = out.pop("in_top")
        seen.add(rows.arrays["items"][:cut], in_top, partial(rows.distinct, module, in_top, cut))
        if ranks:
            kept = _kept(out, rank_depth)
            ranked.append(_ranked(pl.DataFrame(rows.ids(out, kept)), out, kept))
        raw.append(_raw(out))
        done_truth, last_user = end, int(users[cut - 1])
        rows.keep_from(cut)
    if done_truth < len(whole["t_users"]):  # truth users after the last predicted one
        rest = {name: values[done_truth:] for name, values in whole.items()}
        no_rows = {
            "users": np.zeros(0, np.int64),
            "items": np.zeros(0, np.int64),
            "scores": np.zeros(0, np.float64),
        }
        out = kernel.run(no_rows | rest)
        if out is None:
            return None
        out.pop("in_top")
        raw.append(_raw(out))
    if not raw:
        return None
    per_user = _per_user(raw, wanted)
    ranked_rows = pl.concat(ranked) if ranked else pl.DataFrame(schema=_RANKED)
    items = pl.defer(lambda: seen.series().to_frame(), schema={"item": pl.Int64})
    return KernelTables(per_user, None, items, ranked_rows if ranks else None, seen)


class _Rows:
    """The prediction rows the kernel reads next, as arrays kept from batch to batch: the
    rows of the last user of the batch before (carried), then the new batch's. A batch
    comes from polars in several chunks, so it is copied once into these arrays (grown
    when a batch needs more), not into new ones each time: memory the allocator would
    keep (about 20 MiB more of peak a batch of 1M rows)."""

    COLUMNS = (
        ("users", "user", "int64"),
        ("items", "item", "int64"),
        ("scores", "score", "float64"),
    )

    def __init__(self) -> None:
        import numpy as np

        self.held = 0
        self.buffers = {name: np.empty(0, dtype) for name, _, dtype in self.COLUMNS}
        self.arrays: dict[str, Any] = dict(self.buffers)
        self.found = np.empty(0, np.int64)  # distinct's output

    def add(self, batch: pl.DataFrame) -> None:
        import numpy as np

        need = self.held + batch.height
        for name, column, dtype in self.COLUMNS:
            buffer = self.buffers[name]
            if need > len(buffer):
                grown = np.empty(max(need, len(buffer) + len(buffer) // 4), dtype)
                grown[: self.held] = buffer[: self.held]
                self.buffers[name] = buffer = grown
            series = batch.get_column(column).cast(pl.Int64 if dtype == "int64" else pl.Float64)
            chunks = [chunk.to_numpy() for chunk in series.get_chunks()]
            np.concatenate(chunks or [np.zeros(0, dtype)], out=buffer[self.held : need])
            self.arrays[name] = buffer[:need]
        self.held = need

    def keep_from(self, cut: int) -> None:
        """Keep the rows from `cut` on (the last user's), at the front."""
        left = self.held - cut
        for name, buffer in self.buffers.items():
            buffer[:left] = buffer[cut : self.held].copy()
            self.arrays[name] = buffer[:left]
        self.held = left

    def distinct(self, module: ModuleType, in_top: Any, cut: int) -> Any:
        """The distinct items of the first `cut` rows within depth (_distinct)."""
        import numpy as np

        if len(self.found) < cut:
            self.found = np.empty(len(self.buffers["items"]), np.int64)
        return _distinct(module, self.arrays["items"][:cut], in_top, self.found[:cut])

    def ids(self, out: dict[str, Any], kept: Any) -> dict[str, Any]:
        """(user, item) of the `kept` ranked rows, in the kernel's places: a user's ranked
        rows take its own rows' places, so the users are the rows' own; the kernel wrote
        each ranked row's item (top_item). No gather of the rows by top_row."""
        users = self.arrays["users"][: len(kept)]
        return {"user": users[kept], "item": out["top_item"][kept]}


def _sliced(frame: pl.LazyFrame) -> bool:
    """Whether a slice of `frame` is read from its Parquet files alone: polars pushes the
    slice into the one scan (no filter before it), so a slice reads its own row groups,
    not the rows before it."""
    plan = frame.slice(1, 1).explain(optimized=True)
    pushed = "SLICE: Positive" in plan and "SLICE[" not in plan
    return pushed and plan.count(" SCAN ") == 1 and "Parquet SCAN " in plan


def read_batches(
    frame: pl.LazyFrame,
    rows: int,
    engine: Any,
    parted: tuple[pl.LazyFrame, pl.Expr] | None = None,
) -> Iterator[pl.DataFrame]:
    """`frame` in batches of about `rows` rows, the next read on another thread meanwhile.
    From Parquet, a slice at a time: polars' streaming batches decode the row groups ahead
    of the reader, up to a whole file of 10M rows (240 MiB more of peak there). `parted`:
    (whole, keep), where `frame` is `whole.filter(keep)` (a hash partition): then slices of
    `whole`, each filtered, of 2 * `rows` rows (the filtered scan's batches ran ahead by
    250 MiB a partition at 100M rows in 4 partitions; slices of 1M rows read the file
    4 times in 6 s there, of 2M in 4 s)."""
    if parted is not None and _sliced(parted[0]):
        whole, keep = parted
        return ahead(batch.filter(keep) for batch in _slices(whole, 2 * rows, engine))
    if not _sliced(frame):
        return ahead(frame.collect_batches(chunk_size=rows, engine=engine))
    return ahead(_slices(frame, rows, engine))


def _slices(frame: pl.LazyFrame, rows: int, engine: Any) -> Iterator[pl.DataFrame]:
    """The rows of `frame` (which _sliced), `rows` at a time; none empty."""
    start = 0
    while True:
        batch = frame.slice(start, rows).collect(engine=engine)
        if batch.height:
            yield batch
        if batch.height < rows:
            return
        start += rows


def ahead(batches: Iterable[T]) -> Iterator[T]:
    """The batches, each next one read on another thread while the caller works on the
    current one (polars and the kernel both release the GIL). The first is read from the
    call on, before the caller asks for it."""
    found = iter(batches)
    reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="receval-read")
    return _handed(reader, found, reader.submit(next, found, None))


def _handed(
    reader: ThreadPoolExecutor, found: Iterator[T], coming: Future[T | None]
) -> Iterator[T]:
    # an iterator never started lets its reader's thread end when both are collected
    with reader:
        while (batch := coming.result()) is not None:
            coming = reader.submit(next, found, None)
            yield batch


def _has_nulls(frame: pl.DataFrame) -> bool:
    return any(count for count in frame.null_count().row(0))


def _distinct(module: ModuleType, keys: Any, in_top: Any, found: Any = None) -> Any:
    """The distinct keys of the rows within depth (the kernel's hash set: one pass), found
    in `found` (an int64 buffer of len(keys)) or a new array."""
    import numpy as np

    if found is None:
        found = np.empty(len(keys), dtype=np.int64)
    count = module.distinct(keys, in_top, found)
    if count < 0:
        raise MemoryError("the compiled core ran out of memory")
    return found[:count].copy()


def _recommended(
    module: ModuleType, keys: Any, in_top: Any, sorted_ids: dict[str, pl.Series]
) -> pl.DataFrame:
    """The distinct recommended items (read back from their keys where they are text)."""
    items = pl.Series("item", _distinct(module, keys, in_top))
    if "item" in sorted_ids:
        items = sorted_ids["item"].gather(items).alias("item")
    return items.to_frame()


ROWS_PER_THREAD = 100_000  # fewer prediction rows a thread: one thread does it all


def threads(rows: int, pool: int | None = None) -> int:
    """How many threads the kernel splits the users among: polars' own pool size
    (POLARS_MAX_THREADS; `pool`, where it was read before: inside a polars UDF,
    pl.thread_pool_size() answers 1), one per ROWS_PER_THREAD prediction rows at most."""
    size = pl.thread_pool_size() if pool is None else pool
    return max(1, min(size, rows // ROWS_PER_THREAD))


def _grouped(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows grouped by user, ascending: sorted only where they are not (a stable sort,
    so each user's rows keep the file's order, for tie_break: input_order)."""
    if frame.get_column("user_key").is_sorted():
        return frame
    return frame.sort("user_key", maintain_order=True)


def _column(frame: pl.DataFrame, name: str, dtype: Any) -> Any:
    """A column as a contiguous numpy array (a view where polars holds it in one chunk)."""
    import numpy as np

    return np.ascontiguousarray(frame.get_column(name).cast(dtype).to_numpy())


def _arrays(predictions: pl.DataFrame) -> dict[str, Any]:
    """The predictions' keys and scores, as the kernel reads them."""
    return {
        "users": _column(predictions, "user_key", pl.Int64),
        "items": _column(predictions, "item_key", pl.Int64),
        "scores": _column(predictions, "score", pl.Float64),
    }


def _truth_arrays(truth: pl.DataFrame) -> dict[str, Any]:
    """The indexed truth's keys, grades and relevance, as the kernel reads them."""
    return {
        "t_users": _column(truth, "user_key", pl.Int64),
        "t_items": _column(truth, "item_key", pl.Int64),
        "t_rel": _column(truth, "rel", pl.Float64),
        "t_relevant": _column(truth, "relevant", pl.UInt8),
    }


def _discount_table(kind: int, length: int) -> Any:
    """discount(position) for positions 0..length-1, computed by polars (its log is not
    C's log2 to the last bit), as the polars core computes it."""
    positions = pl.int_range(0, length, dtype=pl.UInt32, eager=True)
    table = pl.select(discount(pl.lit(positions), _DISCOUNTS[kind])).to_series()
    return table.to_numpy().astype("float64", copy=False)


_PER_USER = ("user", "flags", "n_relevant", "truth_items", "list_rows")  # 1-d outputs
_PER_REQUEST = ("stats", "valid", "ideal")  # 2-d: a row per statistic or ideal DCG


@dataclass
class Raw:
    """One call's per-user outputs as the kernel wrote them (numpy arrays of its own: each
    call writes its per-user outputs into new ones; `ideal`: each ideal DCG's values over
    the call's truth rows), before _per_user types them. Kept as arrays: a frame of them
    a call took 77 numpy conversions, 4 ms a batch (4 s at 1B rows)."""

    out: dict[str, Any]


def _raw(out: dict[str, Any]) -> Raw:
    return Raw({name: out[name] for name in (*_PER_USER, *_PER_REQUEST)})


def _joined(raw: list[Raw], name: str, row: int | None = None) -> pl.Series:
    """One output's values over every call, in call order (a row of a 2-d output), in one
    chunk of polars' memory: polars takes each call's array as it is, and its allocator
    hands the next range the pages of the last (numpy's concatenation took new pages
    from the system each range: 7-13 s of system time at 1B rows)."""
    parts = [part.out[name] if row is None else part.out[name][row] for part in raw]
    return pl.concat([pl.Series(values=part) for part in parts], rechunk=True)


def _per_user(raw: list[Raw], wanted: Requests) -> pl.DataFrame:
    """The polars core's per-user columns (their types and nulls) from the kernel's
    outputs, in one query over all of them (the raw numbers take a third of the typed
    table's memory: a batch's typed table is never held beside the others). The users
    come in ascending order, and the user column says so (the plan's sort by user is then
    free)."""

    flags = pl.col("flags")
    in_predictions, in_truth, with_hits = (flags & 1) > 0, (flags & 2) > 0, (flags & 4) > 0

    def where(mask: pl.Expr, column: str, dtype: Any, name: str) -> pl.Expr:
        return pl.when(mask).then(pl.col(column).cast(dtype)).alias(name)

    def zeros(mask: pl.Expr, name: str) -> pl.Expr:
        return pl.when(mask).then(pl.lit(0, pl.UInt32)).alias(name)

    columns = [pl.col("user"), where(in_truth, "n_relevant", pl.UInt32, "n_relevant")]
    # each truth user's running ideal DCGs: its truth rows' slice (the rows are grouped
    # by user in the users' order), null for the users with no truth
    lengths = pl.col("truth_items")
    starts = lengths.cum_sum() - lengths
    for position, (name, _, _) in enumerate(wanted.ideal):
        values = _joined(raw, "ideal", position)
        whole = pl.lit(values).implode().list.slice(starts, lengths)
        columns.append(pl.when(in_truth).then(whole).alias(name))
    columns.append(where(in_truth, "truth_items", pl.UInt32, "truth_items"))
    columns += [zeros(in_truth, e.meta.output_name()) for e in check_exprs("truth:", "rel")]
    columns.append(where(in_truth, "truth_items", pl.UInt32, "truth_distinct"))
    columns.append(where(in_predictions, "list_rows", pl.UInt32, "list_rows"))
    columns += [
        zeros(in_predictions, e.meta.output_name()) for e in check_exprs("predictions:", "score")
    ]
    columns.append(where(in_predictions, "list_rows", pl.UInt32, "list_distinct"))
    for position, request in enumerate(wanted.stats):
        valid = with_hits & (pl.col(f"valid {position}") > 0)
        dtype = pl.UInt32 if request.kind in (HITS, HITS_R) else pl.Float64
        columns.append(where(valid, f"stat {position}", dtype, request.name))
    numbers = {name: _joined(raw, name) for name in _PER_USER}
    for position in range(len(wanted.stats)):
        numbers[f"stat {position}"] = _joined(raw, "stats", position)
        numbers[f"valid {position}"] = _joined(raw, "valid", position)
    frame = pl.DataFrame(numbers)
    del numbers
    raw.clear()  # the batches' numbers: freed as the typed table is made
    typed = frame.select(columns)
    if typed.get_column("user").is_sorted():
        typed = typed.with_columns(pl.col("user").set_sorted())
    return typed
