"""The shape real logs have, generated on demand in chunks (never committed).

    python benchmarks/shapes.py USERS OUT_DIR [--text-ids] [--seed N] [--log] [--catalog N]

`tied`: each user gets up to 100 distinct items drawn from a Zipf-like popularity (log-uniform
rank, exponent 1) over a catalog of 10x the users' count (`--catalog` sets another), mapped
to item ids by a multiplicative hash, so popular ids are spread over the whole id range and
their text and number orders differ. Scores are rounded to 3 decimals, so about 5 pairs per list tie
(C(100, 2) / 1000). The graded truth holds about 11 items per user (grades 1-5), 10% of
users none; about a third of a user's truth items are among their recommendations (whose
scores get a boost), the rest drawn from the same popularity. With `--log`, an interactions
log as large as the predictions (users x 100 popularity draws) and a catalog of every item
with one of 20 categories are written too (the beyond-accuracy metrics' inputs).

The files are written one chunk of users at a time (row groups of 100k users at most), so
1B rows (10M users) are generated in a few GiB of memory. `--text-ids` writes the user and
item ids as strings ("u123", "i456").
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

PER_USER = 100
CATALOG_PER_USER = 10
TRUTH_MEAN = 11.0
NO_TRUTH = 0.10
CATEGORIES = 20
CHUNK_USERS = 100_000
_MULTIPLIER = 2_654_435_761  # odd, and prime: coprime with any catalog size it does not divide


def paths(
    out: Path, users: int, text_ids: bool, seed: int, catalog: int | None = None
) -> dict[str, Path]:
    sized = "" if catalog in (None, CATALOG_PER_USER * users) else f"_c{catalog}"
    stem = f"tied_u{users}{sized}_s{seed}{'_text' if text_ids else ''}"
    return {
        "predictions": out / f"predictions_{stem}.parquet",
        "truth": out / f"truth_{stem}.parquet",
        "interactions": out / f"interactions_{stem}.parquet",
        "catalog": out / f"catalog_{stem}.parquet",
    }


def _item_ids(ranks, catalog: int):  # type: ignore[no-untyped-def]
    """Popularity rank (0 = most popular) -> item id in [1, catalog]: a bijection when the
    multiplier is coprime with the catalog size."""
    multiplier = _MULTIPLIER
    while math.gcd(multiplier, catalog) != 1:
        multiplier += 2
    return (ranks * multiplier + 7919) % catalog + 1


def _popular(rng, shape, catalog: int):  # type: ignore[no-untyped-def]
    """Popularity ranks with P(rank r) ~ 1/r over [0, catalog)."""
    import numpy as np

    draws = np.exp(rng.random(shape) * math.log(catalog)) - 1
    return np.minimum(draws.astype(np.int64), catalog - 1)


def _chunk(rng, first: int, users: int, catalog: int):  # type: ignore[no-untyped-def]
    import numpy as np

    ranks = np.sort(_popular(rng, (users, 2 * PER_USER), catalog), axis=1)
    duplicate = np.zeros_like(ranks, dtype=bool)
    duplicate[:, 1:] = ranks[:, 1:] == ranks[:, :-1]
    # a random 100 of the distinct draws (not the 100 most popular)
    order = np.argsort(duplicate + rng.random(ranks.shape), axis=1)[:, :PER_USER]
    ranks = np.take_along_axis(ranks, order, axis=1)
    valid = ~np.take_along_axis(duplicate, order, axis=1)  # a few users get fewer than 100
    items = _item_ids(ranks, catalog)

    n_truth = np.where(
        rng.random(users) < NO_TRUTH, 0, rng.poisson(TRUTH_MEAN / (1 - NO_TRUTH), users)
    )
    width = max(int(n_truth.max()), 1)
    from_list = rng.random((users, width)) < 0.35
    positions = rng.integers(0, PER_USER, (users, width))
    listed = np.take_along_axis(items, positions, axis=1)
    drawn = _item_ids(_popular(rng, (users, width), catalog), catalog)
    truth_items = np.where(from_list, listed, drawn)
    grades = rng.integers(1, 6, (users, width))
    keep = np.arange(width)[None, :] < n_truth[:, None]
    order = np.argsort(truth_items, axis=1)  # each (user, item) once in the truth
    ordered = np.take_along_axis(truth_items, order, axis=1)
    repeated = np.zeros_like(keep)
    repeated[:, 1:] = ordered[:, 1:] == ordered[:, :-1]
    np.put_along_axis(keep, order, np.take_along_axis(keep, order, axis=1) & ~repeated, axis=1)

    scores = rng.random((users, PER_USER))
    rows = np.repeat(np.arange(users)[:, None], width, axis=1)
    hit = from_list & keep
    scores[rows[hit], positions[hit]] += 0.1 * grades[hit]
    scores = np.round(scores, 3)

    user_ids = np.arange(first + 1, first + users + 1, dtype=np.int64)
    predictions = {
        "user_id": np.repeat(user_ids, PER_USER)[valid.ravel()],
        "item_id": items.ravel()[valid.ravel()],
        "score": scores.ravel()[valid.ravel()],
    }
    truth = {
        "user_id": np.repeat(user_ids[:, None], width, axis=1)[keep],
        "item_id": truth_items[keep],
        "rating": grades[keep],
    }
    return predictions, truth


def _table(columns: dict, text_ids: bool):  # type: ignore[no-untyped-def]
    import pyarrow as pa
    import pyarrow.compute as pc

    arrays = {}
    for name, values in columns.items():
        if text_ids and name in ("user_id", "item_id"):
            prefix = "u" if name == "user_id" else "i"
            arrays[name] = pc.binary_join_element_wise(
                prefix, pa.array(values).cast(pa.string()), ""
            )
        else:
            arrays[name] = pa.array(values)
    return pa.table(arrays)


def generate(
    users: int,
    out: Path,
    *,
    text_ids: bool = False,
    seed: int = 7,
    log: bool = False,
    catalog: int | None = None,
) -> dict[str, Path]:
    """Write the files (skipped where they already exist); return their paths. `catalog`:
    the number of items (default 10x the users)."""
    import numpy as np
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    catalog = catalog or CATALOG_PER_USER * users
    if catalog < 2 * PER_USER:
        raise ValueError(f"a catalog of {catalog} items is too small for {PER_USER} a user")
    found = paths(out, users, text_ids, seed, catalog)
    wanted = ["predictions", "truth"] + (["interactions", "catalog"] if log else [])
    if all(found[name].exists() for name in wanted):
        return found
    rng = np.random.default_rng(seed)
    writers: dict[str, pq.ParquetWriter] = {}
    partial = {name: found[name].with_name(found[name].name + ".partial") for name in found}
    started = time.perf_counter()
    for first in range(0, users, CHUNK_USERS):
        size = min(CHUNK_USERS, users - first)
        predictions, truth = _chunk(rng, first, size, catalog)
        tables = {"predictions": predictions, "truth": truth}
        if log:
            seen = _item_ids(_popular(rng, size * PER_USER, catalog), catalog)
            user_ids = np.repeat(np.arange(first + 1, first + size + 1, dtype=np.int64), PER_USER)
            tables["interactions"] = {"user_id": user_ids, "item_id": seen}
        for name, columns in tables.items():
            table = _table(columns, text_ids)
            if name not in writers:
                writers[name] = pq.ParquetWriter(partial[name], table.schema, compression="zstd")
            writers[name].write_table(table)
        if first and first % (10 * CHUNK_USERS) == 0:
            print(f"  {first:,} users in {time.perf_counter() - started:.0f} s", flush=True)
    if log:
        ids = np.arange(1, catalog + 1, dtype=np.int64)
        categories = np.char.add("c", (ids * 31 % CATEGORIES).astype(str))
        table = _table({"item_id": ids, "category": categories}, text_ids)
        pq.write_table(table, partial["catalog"], compression="zstd")
    for writer in writers.values():
        writer.close()
    for name in wanted:
        partial[name].replace(found[name])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("users", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--text-ids", action="store_true")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--log", action="store_true", help="also an interactions log and catalog")
    parser.add_argument("--catalog", type=int, help="items in the catalog (default 10x users)")
    args = parser.parse_args(argv)
    found = generate(
        args.users,
        args.out,
        text_ids=args.text_ids,
        seed=args.seed,
        log=args.log,
        catalog=args.catalog,
    )
    for name, path in found.items():
        if path.exists():
            print(f"{name}: {path} ({path.stat().st_size / 2**20:,.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
