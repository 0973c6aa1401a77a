"""The compiled core (#35): the ranking statistics of every user in one pass, in C.

The polars core (evaluation/plan.py) ranks each list in a group_by, explodes the ranked
lists, joins them with the ground truth and takes running sums over windows. This core
reads both inputs once into arrays, grouped by user, and hands them to `_kernel.c`, which
ranks each user's list itself, looks each ranked item's grade up in that user's truth and
walks the list once, adding every statistic's terms in rank order: the same operations in
the same order as the polars core, so every per-user value is the polars core's, bit for
bit (tests/test_kernel_core.py runs both cores on the same cases and compares every bit).

It computes the statistics the classic ranking metrics are built from (`Request`: hits,
reciprocal rank, AP's precision sum, DCG and the ideal DCG, hits within |R|), and only
runs where the run asks for nothing else (`requests`); everything else, and every input
it does not take (text ids, rank or list layouts, duplicates to drop, NaN scores, nulls,
a failed check to report), goes to the polars core, unchanged. The metrics' definitions
stay in metrics/: this core only produces the per-user statistics table they read.

`RECEVAL_CORE=polars` in the environment turns it off; so does a machine where the
extension was not compiled (setup: pyproject.toml's ext-modules, optional).
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.inputs.checks import check_exprs
from receval_cli.inputs.readers import Input
from receval_cli.metrics.stats import ALL, RELEVANT_ONLY, Stats, discount

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
_UNCLEAN = ("unsorted predictions", "unsorted truth", "a NaN score", "a NaN or infinite grade")


def extension() -> ModuleType | None:
    """The compiled kernel, or None (not built here, or RECEVAL_CORE=polars)."""
    if os.environ.get("RECEVAL_CORE", "").strip().lower() == "polars":
        return None
    try:
        return importlib.import_module("receval_cli._kernel")
    except ImportError:
        return None


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
    """The kernel's requests for these statistics, or None when one is not the kernel's."""
    if stats.lists.aggregations or stats.recs.aggregations or stats.pair_cutoffs:
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


def takes(predictions: Input, truth: Input, conventions: Conventions) -> bool:
    """Whether the kernel takes these inputs and conventions (else the polars core)."""
    if predictions.value_column != "score" or conventions.tie_break not in _TIES:
        return False
    if conventions.duplicates != "error" or conventions.truth_duplicates != "error":
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
    top_rows: pl.LazyFrame  # (user, item, score[, row]) ranked within depth
    recommended: pl.DataFrame  # (item): the distinct items of top_rows


def evaluate(
    module: ModuleType,
    wanted: Requests,
    predictions: pl.DataFrame,
    truth: pl.DataFrame,
    conventions: Conventions,
    depth: int | None,
) -> KernelTables | None:
    """Run the kernel over collected inputs: predictions (user, item, score[, row]) and
    indexed truth (user, item, rel, relevant). None where they hold what the polars core
    must see (nulls, NaN, a duplicate): it reports them or computes with them."""
    if any(frame.null_count().row(0) != (0,) * frame.width for frame in (predictions, truth)):
        return None
    predictions, truth, sorted_ids = with_codes(predictions, truth, conventions.tie_break)
    predictions, truth = _grouped(predictions), _grouped(truth)
    arrays = _arrays(predictions, truth)
    status, n_out, longest, largest = module.scan(
        arrays["users"], arrays["t_users"], arrays["scores"], arrays["t_rel"]
    )
    if status:
        return None
    import numpy as np

    deepest = ALL if depth is None else depth
    disc_len = max(min(longest, deepest), largest) + 1
    tables = [_discount_table(kind, disc_len) for kind in wanted.discounts()]
    slot = {kind: position for position, kind in enumerate(wanted.discounts())}
    request_array = np.array(
        [(r.kind, r.k, r.gain, slot.get(r.discount, 0)) for r in wanted.stats], dtype=np.int64
    ).reshape(-1, 4)
    ideal_array = np.array(
        [(gain, slot[d]) for _, gain, d in wanted.ideal], dtype=np.int64
    ).reshape(-1, 2)
    discounts = np.concatenate(tables) if tables else np.zeros(0, dtype=np.float64)
    n_req, n_ideal, tn = len(wanted.stats), len(wanted.ideal), truth.height
    out = {
        "user": np.empty(n_out, dtype=np.int64),
        "list_rows": np.empty(n_out, dtype=np.int64),
        "truth_items": np.empty(n_out, dtype=np.int64),
        "n_relevant": np.empty(n_out, dtype=np.int64),
        "flags": np.empty(n_out, dtype=np.uint8),
        "stats": np.empty((n_req, n_out), dtype=np.float64),
        "valid": np.empty((n_req, n_out), dtype=np.uint8),
        "ideal": np.empty((n_ideal, tn), dtype=np.float64),
        "in_top": np.zeros(predictions.height, dtype=np.uint8),
    }
    status = module.evaluate(
        arrays["users"], arrays["items"], arrays["scores"],
        arrays["t_users"], arrays["t_items"], arrays["t_rel"], arrays["t_relevant"],
        request_array, ideal_array, discounts,
        _TIES[conventions.tie_break], min(deepest, 2**62), n_out, threads(predictions.height),
        out["user"], out["list_rows"], out["truth_items"], out["n_relevant"], out["flags"],
        out["stats"], out["valid"], out["ideal"], out["in_top"],
    )  # fmt: skip
    if status == -1:
        raise MemoryError("the compiled core ran out of memory")
    if status:
        return None  # a repeated (user, item): the polars core reports it
    per_user = _per_user(out, wanted, truth)
    if "user" in sorted_ids:
        per_user = per_user.with_columns(sorted_ids["user"].gather(per_user.get_column("user")))
    in_top = pl.Series("in_top", out["in_top"]).cast(pl.Boolean)
    top_rows = predictions.drop("user_key", "item_key").with_columns(in_top).lazy()
    return KernelTables(
        per_user,
        top_rows.filter("in_top").drop("in_top"),
        _recommended(module, arrays["items"], out["in_top"], sorted_ids),
    )


def _recommended(
    module: ModuleType,
    keys: Any,
    in_top: Any,
    sorted_ids: dict[str, pl.Series],
) -> pl.DataFrame:
    """The distinct items of the rows within depth (the kernel's hash set: one pass)."""
    import numpy as np

    found = np.empty(len(keys), dtype=np.int64)
    count = module.distinct(keys, in_top, found)
    if count < 0:
        raise MemoryError("the compiled core ran out of memory")
    items = pl.Series("item", found[:count])
    if "item" in sorted_ids:
        items = sorted_ids["item"].gather(items).alias("item")
    return items.to_frame()


ROWS_PER_THREAD = 100_000  # fewer prediction rows a thread: one thread does it all


def threads(rows: int) -> int:
    """How many threads the kernel splits the users among: polars' own pool size
    (POLARS_MAX_THREADS), one per ROWS_PER_THREAD prediction rows at most."""
    return max(1, min(pl.thread_pool_size(), rows // ROWS_PER_THREAD))


def _grouped(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows grouped by user, ascending: sorted only where they are not (a stable sort,
    so each user's rows keep the file's order, for tie_break: input_order)."""
    if frame.get_column("user_key").is_sorted():
        return frame
    return frame.sort("user_key", maintain_order=True)


def _arrays(predictions: pl.DataFrame, truth: pl.DataFrame) -> dict[str, Any]:
    """Read-only numpy views (copies where a column is in several chunks)."""
    import numpy as np

    def column(frame: pl.DataFrame, name: str, dtype: Any) -> Any:
        values = frame.get_column(name).cast(dtype).to_numpy()
        return np.ascontiguousarray(values)

    return {
        "users": column(predictions, "user_key", pl.Int64),
        "items": column(predictions, "item_key", pl.Int64),
        "scores": column(predictions, "score", pl.Float64),
        "t_users": column(truth, "user_key", pl.Int64),
        "t_items": column(truth, "item_key", pl.Int64),
        "t_rel": column(truth, "rel", pl.Float64),
        "t_relevant": column(truth, "relevant", pl.UInt8),
    }


def _discount_table(kind: int, length: int) -> Any:
    """discount(position) for positions 0..length-1, computed by polars (its log is not
    C's log2 to the last bit), as the polars core computes it."""
    positions = pl.int_range(0, length, dtype=pl.UInt32, eager=True)
    table = pl.select(discount(pl.lit(positions), _DISCOUNTS[kind])).to_series()
    return table.to_numpy().astype("float64", copy=False)


def _per_user(out: dict[str, Any], wanted: Requests, truth: pl.DataFrame) -> pl.DataFrame:
    """The polars core's per-user columns (their types and nulls) from the kernel's."""
    flags = pl.Series(out["flags"])
    in_predictions = (flags & 1) > 0
    in_truth = (flags & 2) > 0
    with_hits = (flags & 4) > 0

    def where(mask: pl.Series, values: Any, dtype: pl.DataType | type[pl.DataType]) -> pl.Series:
        series = pl.Series(values).cast(dtype)
        return pl.select(pl.when(mask).then(series)).to_series()

    def zeros(mask: pl.Series) -> pl.Series:
        return where(mask, pl.zeros(len(mask), pl.UInt32, eager=True), pl.UInt32)

    columns: dict[str, pl.Series] = {"user": pl.Series(out["user"])}
    columns["n_relevant"] = where(in_truth, out["n_relevant"], pl.UInt32)
    for position, (name, _, _) in enumerate(wanted.ideal):
        lists = (
            pl.DataFrame({"user": truth.get_column("user_key"), name: out["ideal"][position]})
            .group_by("user", maintain_order=True)
            .agg(pl.col(name))
        )
        columns[name] = (
            pl.DataFrame({"user": columns["user"]})
            .join(lists, on="user", how="left", maintain_order="left")
            .get_column(name)
        )
    columns["truth_items"] = where(in_truth, out["truth_items"], pl.UInt32)
    for expr in check_exprs("truth:", "rel"):
        columns[expr.meta.output_name()] = zeros(in_truth)
    columns["truth_distinct"] = where(in_truth, out["truth_items"], pl.UInt32)
    columns["list_rows"] = where(in_predictions, out["list_rows"], pl.UInt32)
    for expr in check_exprs("predictions:", "score"):
        columns[expr.meta.output_name()] = zeros(in_predictions)
    columns["list_distinct"] = where(in_predictions, out["list_rows"], pl.UInt32)
    for position, request in enumerate(wanted.stats):
        valid = with_hits & (pl.Series(out["valid"][position]) > 0)
        dtype = pl.UInt32 if request.kind in (HITS, HITS_R) else pl.Float64
        columns[request.name] = where(valid, out["stats"][position], dtype)
    return pl.DataFrame(columns)
