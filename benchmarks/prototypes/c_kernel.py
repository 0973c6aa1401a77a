"""Prototype (#35 item 1, CORE_PLAN.md): numba_kernel.py's kernel-sort mode with the kernel
in C (c_kernel.c), compiled ahead of time by gcc and called through ctypes: no JIT, no
numba import.

    .venv/bin/python benchmarks/prototypes/c_kernel.py PREDICTIONS.parquet TRUTH.parquet \\
        [--timings] [--output OUT.json]

Prints the same JSON as numba_kernel.py (the 36 means of bench.py's config, and with
--timings the seconds of each stage). The shared library is built once per source into
$XDG_CACHE_HOME/receval-prototypes (gcc -O2 -ffp-contract=off) and loaded from there by
later runs; "load kernel" is the load (and, on a first run, the build).
"""

from __future__ import annotations

import time

_T0 = time.perf_counter()

import argparse  # noqa: E402
import ctypes  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

_T_POLARS = time.perf_counter()

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from numba_kernel import CUTOFFS, LIMB_BITS, N_STATS, discounts, load_plain, means_from  # noqa: E402

LIMBS = (2048 + 53) // LIMB_BITS + 3  # c_kernel.c's LIMBS


def library() -> ctypes.CDLL:
    """The compiled kernel: built once per source text, then loaded from the cache."""
    source = HERE / "c_kernel.c"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "receval-prototypes"
    built = cache / f"c_kernel-{digest}.so"
    if not built.exists():
        cache.mkdir(parents=True, exist_ok=True)
        partial = built.with_suffix(f".{os.getpid()}.tmp")
        command = ["gcc", "-O2", "-ffp-contract=off", "-shared", "-fPIC", "-o", str(partial)]
        subprocess.run([*command, str(source), "-lm"], check=True)
        partial.replace(built)
    lib = ctypes.CDLL(str(built))
    pointer = ctypes.c_void_p
    lib.kernel_unsorted.restype = ctypes.c_int64
    lib.kernel_unsorted.argtypes = [
        ctypes.c_int64, pointer, pointer, pointer,
        ctypes.c_int64, pointer, pointer, pointer,
        ctypes.c_int64, pointer, pointer, pointer,
    ]  # fmt: skip
    return lib


def address(array: np.ndarray) -> int:
    assert array.flags["C_CONTIGUOUS"]
    return int(array.ctypes.data)


def in_batches(
    predictions: str, truth: str, rows: int, kernel: Callable[[tuple[np.ndarray, ...]], int]
) -> tuple[int, float, float]:
    """Both files grouped by user (ascending): the predictions come in batches; the rows of
    the batch's last user wait for the next batch (its list may go on there); each call of
    the kernel gets complete users and their slice of the truth (read whole: a fifth of the
    predictions here). Returns the users counted and the seconds spent reading and in the
    kernel (the read overlaps nothing: polars hands each batch over when asked)."""
    started = time.perf_counter()
    facts = pl.read_parquet(truth, columns=["user_id", "item_id", "rating"])
    t_users = np.ascontiguousarray(facts.get_column("user_id").to_numpy(), dtype=np.int64)
    t_items = np.ascontiguousarray(facts.get_column("item_id").to_numpy(), dtype=np.int64)
    t_grades = np.ascontiguousarray(facts.get_column("rating").to_numpy(), dtype=np.float64)
    if not (np.diff(t_users) >= 0).all():
        raise SystemExit("--batches needs the truth grouped by user, ascending")
    reading = time.perf_counter() - started
    computing = 0.0
    counted = 0
    carried: pl.DataFrame | None = None
    scan = pl.scan_parquet(predictions).select("user_id", "item_id", "score")
    batches = iter(scan.collect_batches(chunk_size=rows))
    while True:
        started = time.perf_counter()
        batch = next(batches, None)
        reading += time.perf_counter() - started
        if batch is None and carried is None:
            break
        frame = (
            batch
            if carried is None
            else (carried if batch is None else pl.concat([carried, batch]))
        )
        started = time.perf_counter()
        users = np.ascontiguousarray(frame.get_column("user_id").to_numpy(), dtype=np.int64)
        if users.size and not (np.diff(users) >= 0).all():
            raise SystemExit("--batches needs the predictions grouped by user, ascending")
        # complete users only, unless this was the last batch
        cut = users.size if batch is None else int(np.searchsorted(users, users[-1], "left"))
        carried = frame.slice(cut) if batch is not None else None
        if cut:
            items = np.ascontiguousarray(frame.get_column("item_id").to_numpy()[:cut], np.int64)
            scores = np.ascontiguousarray(frame.get_column("score").to_numpy()[:cut], np.float64)
            lo = int(np.searchsorted(t_users, users[0], "left"))
            hi = int(np.searchsorted(t_users, users[cut - 1], "right"))
            counted += kernel(
                (users[:cut], items, scores, t_users[lo:hi], t_items[lo:hi], t_grades[lo:hi])
            )
        computing += time.perf_counter() - started
        if batch is None:
            break
    now = time.perf_counter()
    return counted, now - computing, now


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("predictions")
    parser.add_argument("truth")
    parser.add_argument("--timings", action="store_true", help="add the time of each stage")
    parser.add_argument(
        "--batches",
        type=int,
        metavar="ROWS",
        help="read the predictions in batches of about ROWS rows (files grouped by user, "
        "ascending) and run the kernel on each batch's complete users: bounded memory",
    )
    parser.add_argument("--output", help="write the JSON here instead of stdout")
    args = parser.parse_args(argv)

    t_start = time.perf_counter()
    lib = library()
    t_lib = time.perf_counter()
    cutoffs = np.array(CUTOFFS, dtype=np.int64)
    disc = discounts(max(CUTOFFS))
    limbs = np.zeros((N_STATS, LIMBS), dtype=np.int64)

    def kernel(arrays: tuple[np.ndarray, ...]) -> int:
        users, items, scores, t_users, t_items, t_grades = arrays
        counted = lib.kernel_unsorted(
            users.shape[0], address(users), address(items), address(scores),
            t_users.shape[0], address(t_users), address(t_items), address(t_grades),
            cutoffs.shape[0], address(cutoffs), address(disc), address(limbs),
        )  # fmt: skip
        if counted < 0:
            raise MemoryError("the kernel ran out of memory")
        return int(counted)

    if args.batches:
        counted, t_read, t_kernel = in_batches(args.predictions, args.truth, args.batches, kernel)
    else:
        arrays = load_plain(args.predictions, args.truth)
        t_read = time.perf_counter()
        counted = kernel(arrays)
        t_kernel = time.perf_counter()
    result: dict[str, object] = {"metrics": means_from(limbs, counted), "users": counted}
    t_means = time.perf_counter()
    if args.timings:
        result["timings"] = {
            "import polars+numpy": _T_POLARS - _T0,
            "load kernel": t_lib - t_start,
            "read": t_read - t_lib,
            "kernel": t_kernel - t_read,
            "means": t_means - t_kernel,
            "total in process": time.perf_counter() - _T0,
        }
    text = json.dumps(result, indent=1)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
