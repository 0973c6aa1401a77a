"""Prototype (#35 item 1, second design): receval's ranking core as one compiled numba
kernel over the Arrow buffers of the ranked lists.

    uv run --frozen --group bench python benchmarks/prototypes/numba_kernel.py \\
        PREDICTIONS.parquet TRUTH.parquet [--mode join|kernel-sort|kernel-sort-parallel]
        [--sequential]
        [--timings] [--output OUT.json] [--per-user USERS.parquet]

Prints a JSON object with the 36 means that receval reports for benchmarks/bench.py's
config (ndcg, precision, recall, map, mrr, hit_rate at 1, 5, 10, 20, 50, 100) under
bench.py's conventions (tie_break item_desc, users_without_recommendations skip,
ap_denominator relevant) and receval's defaults for the rest (relevance_threshold 1,
linear gain with grades below the threshold gaining their grade, log2 discount, ideal DCG
at_k, precision denominator k, users_without_relevant skip). With --timings it adds
"timings" (seconds): imports of polars+numpy and of numba on their own, read (+ join +
sort), compile (the kernels' first call on tiny arrays: numba's compile, or its load from
the on-disk cache when NUMBA_CACHE_DIR holds them), kernel, means. The kernels are in
numba_kernel_jit.py: by default a thread imports numba and compiles (or loads) them while
polars reads, joins and sorts (numba's import and first call cost seconds of mostly
Python work, which polars' native work leaves room for); --sequential does one after the
other, so that each stage's time is its own.

Three ways to feed the kernel:

  join (default)  polars reads both files, left-joins each prediction's grade on (user,
                  item), sorts by (user, score desc, item desc); the truth is sorted by
                  (user, grade desc). The kernel gets contiguous numpy views of the sorted
                  columns and walks both tables once, merging them by user.
  kernel-sort     polars only reads (and sorts by user when a file is not grouped by
                  user); the kernel ranks each user's list itself (a merge sort by score
                  descending, then item descending), orders the user's truth by item and
                  by grade, and looks each item's grade up by binary search: no join, no
                  10M-row sort.
  kernel-sort-parallel
                  the same, the users split into chunks over the cores (numba's prange,
                  parallel=True); each chunk sums exactly into its own accumulator, so
                  the means are the same bits.

Per user, one pass in rank order accumulates hits, DCG (grade * discount, summed in rank
order over the rows found in the truth, as receval's running sum), AP's precision sum
(hits_so_far / rank, in rank order) and the first relevant rank, read at each cutoff; the
ideal DCG sums the user's grades sorted descending times the discount, in order. The
discount table 1/log2(i + 1) is computed by polars with receval's own expression (ln(x) /
ln(2), not log2: the last bits differ on about a quarter of ranks). The means are exact:
each per-user value is added into a fixed-point accumulator of 32-bit limbs (a float64
is an integer multiple of 2^-1075), and the mean is that integer divided by the user count,
rounded once, as receval's metrics/exact_sum.py does; so every mean should be
bit-identical to receval's.

Not done here (receval does them): the duplicate / null / NaN checks, the unknown-items
count, the content hash, other conventions, string ids (the merge by user needs ids that
sort the same way in both files: integers here).
"""

from __future__ import annotations

import time

_T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

_T_POLARS = time.perf_counter()

CUTOFFS = (1, 5, 10, 20, 50, 100)
METRICS = ("ndcg", "precision", "recall", "map", "mrr", "hit_rate")
N_STATS = len(METRICS) * len(CUTOFFS)
SCALE_BITS = 1075  # a finite float64 is an integer multiple of 2^-1075 (exact_sum.py)
LIMB_BITS = 32  # numba_kernel_jit's accumulator digits


def load_jit(mode: str, found: dict[str, Any]) -> None:
    """Import numba and the kernels, and compile (or load) the kernel for `mode`."""
    started = time.perf_counter()
    try:
        import numba_kernel_jit as jit

        found["import numba"] = jit.IMPORT_SECONDS
        found["import kernels"] = time.perf_counter() - started
        found["compile (or cache load)"] = jit.warm(mode)
        found["jit"] = jit
    except BaseException as error:  # handed to the main thread
        found["error"] = error


def discounts(length: int) -> np.ndarray:
    """disc[i] = receval's log2 discount of rank i (disc[0] unused), computed by polars with
    receval's expression (stats.discount), so the bits are polars'."""
    i = pl.int_range(0, length + 1, dtype=pl.UInt32, eager=True).cast(pl.Float64)
    return readonly(pl.select(1.0 / (i + 1.0).log(2)).to_series().to_numpy().copy())


def column(frame: pl.DataFrame, name: str, dtype: type) -> np.ndarray:
    """A column as a contiguous numpy array (a view of the Arrow buffer when it can be)."""
    return readonly(np.ascontiguousarray(frame.get_column(name).to_numpy(), dtype=dtype))


def readonly(array: np.ndarray) -> np.ndarray:
    """numba types a read-only array apart from a writable one (and compiles for each):
    polars' zero-copy views are read-only, so every input is made read-only (as
    numba_kernel_jit.warm's)."""
    array.setflags(write=False)
    return array


def load_join(predictions: str, truth: str) -> tuple[np.ndarray, ...]:
    truth_frame = pl.scan_parquet(truth).select(
        pl.col("user_id").alias("user"),
        pl.col("item_id").alias("item"),
        pl.col("rating").cast(pl.Float64).alias("grade"),
    )
    ranked = (
        pl.scan_parquet(predictions)
        .select(pl.col("user_id").alias("user"), pl.col("item_id").alias("item"), "score")
        .join(truth_frame, on=["user", "item"], how="left")
        .sort(["user", "score", "item"], descending=[False, True, True])
        .select("user", pl.col("grade").fill_null(float("nan")))
    )
    ideal = truth_frame.sort(["user", "grade"], descending=[False, True]).select("user", "grade")
    ranked_frame, ideal_frame = pl.collect_all([ranked, ideal])
    return (
        column(ranked_frame, "user", np.int64),
        column(ranked_frame, "grade", np.float64),
        column(ideal_frame, "user", np.int64),
        column(ideal_frame, "grade", np.float64),
    )


def load_plain(predictions: str, truth: str) -> tuple[np.ndarray, ...]:
    preds = pl.read_parquet(predictions, columns=["user_id", "item_id", "score"])
    facts = pl.read_parquet(truth, columns=["user_id", "item_id", "rating"])
    # the kernel needs each file grouped by user, ascending
    if not preds.get_column("user_id").is_sorted():
        preds = preds.sort("user_id")
    if not facts.get_column("user_id").is_sorted():
        facts = facts.sort("user_id")
    return (
        column(preds, "user_id", np.int64),
        column(preds, "item_id", np.int64),
        column(preds, "score", np.float64),
        column(facts, "user_id", np.int64),
        column(facts, "item_id", np.int64),
        column(facts, "rating", np.float64),
    )


def means_from(limbs: np.ndarray, counted: int) -> dict[str, float]:
    names = [f"{m}@{k}" for m in METRICS for k in CUTOFFS]
    result = {}
    for c, name in enumerate(names):
        scaled = 0
        for position, digit in enumerate(limbs[c].tolist()):
            if digit:
                scaled += digit << (LIMB_BITS * position)
        result[name] = scaled / (counted << SCALE_BITS) if counted else float("nan")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("predictions")
    parser.add_argument("truth")
    parser.add_argument(
        "--mode", choices=("join", "kernel-sort", "kernel-sort-parallel"), default="join"
    )
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="import numba and load the kernel after the read, not in a thread during it",
    )
    parser.add_argument("--timings", action="store_true", help="add the time of each stage")
    parser.add_argument("--output", help="write the JSON here instead of stdout")
    parser.add_argument(
        "--per-user", help="also write each user's 36 values to this Parquet file (a check)"
    )
    args = parser.parse_args(argv)

    found: dict[str, Any] = {}
    loader = threading.Thread(target=load_jit, args=(args.mode, found), daemon=True)
    t_start = time.perf_counter()
    if not args.sequential:
        loader.start()
    if args.mode == "join":
        arrays = load_join(args.predictions, args.truth)
    else:
        arrays = load_plain(args.predictions, args.truth)
    cutoffs = readonly(np.array(CUTOFFS, dtype=np.int64))
    disc = discounts(max(CUTOFFS))  # no rank past the deepest cutoff is read
    t_read = time.perf_counter()
    if args.sequential:
        loader.start()
    loader.join()
    if "error" in found:
        raise found["error"]
    jit = found["jit"]
    t_jit = time.perf_counter()
    keep, kept_users = jit.no_keep()
    if args.per_user:
        keep = np.empty((np.unique(arrays[0]).size, N_STATS))
        kept_users = np.empty(keep.shape[0], dtype=np.int64)
    if args.mode == "join":
        limbs, counted = jit.kernel_sorted(*arrays, cutoffs, disc, keep, kept_users)
    elif args.mode == "kernel-sort":
        limbs, counted = jit.kernel_unsorted(*arrays, cutoffs, disc, keep, kept_users)
    else:
        kernel = jit.kernel_unsorted_parallel
        limbs, counted = kernel(*arrays, cutoffs, disc, keep, kept_users)
    t_kernel = time.perf_counter()
    result: dict[str, object] = {"metrics": means_from(limbs, counted), "users": counted}
    t_means = time.perf_counter()
    if args.per_user:
        names = [f"{m}@{k}" for m in METRICS for k in CUTOFFS]
        # the parallel kernel has a row per user, NaN where the user is skipped
        rows = ~np.isnan(keep[:, 0]) if args.mode == "kernel-sort-parallel" else slice(counted)
        values = {name: keep[rows, c] for c, name in enumerate(names)}
        pl.DataFrame({"user": kept_users[rows], **values}).write_parquet(args.per_user)
    if args.timings:
        read = "read+join+sort" if args.mode == "join" else "read"
        timings = {
            "import polars+numpy": _T_POLARS - _T0,
            read: t_read - t_start,
            "import numba": found["import numba"],
            "import kernels": found["import kernels"],
            "compile (or cache load)": found["compile (or cache load)"],
            "numba: waited for after the read": t_jit - t_read,
            "kernel": t_kernel - t_jit,
            "means": t_means - t_kernel,
            "total in process": time.perf_counter() - _T0,
        }
        result["timings"] = {"overlapped": not args.sequential, **timings}
    text = json.dumps(result, indent=1)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
