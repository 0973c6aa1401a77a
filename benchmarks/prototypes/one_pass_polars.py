"""Prototype (issue #35, item 1, polars-native design): a per-user core that reads each
ranked list once, in rank order, in pure polars.

    uv run --frozen --group bench python benchmarks/prototypes/one_pass_polars.py \\
        PREDICTIONS.parquet TRUTH.parquet [--engine in-memory|streaming]
        [--design lists|hits] [--key pair|auto] [--stages] [--compare RECEVAL.json]

Input: bench.py's files, predictions (user_id, item_id, score) and ground truth (user_id,
item_id, rating). Output (stdout): one JSON object with the 36 means receval reports for
bench.py's config (ndcg, precision, recall, map, mrr, hit_rate at 1, 5, 10, 20, 50, 100)
under its conventions: tie_break item_desc, users_without_recommendations skip,
ap_denominator relevant, and receval's defaults otherwise (relevance_threshold 1, linear
gain of the grade also below the threshold, log2 discount, ideal DCG of the truth's grades
sorted descending cut at k, users without a relevant item skipped, precision over k).

The design:

1. the truth's grade is joined onto the predictions BEFORE ranking (a left join on
   (user, item); an item not in the truth has grade 0, which gains nothing and is not
   relevant);
2. ONE group_by(user) sorts each user's rows by (score desc, item desc) and keeps the
   grades of the first 100 in rank order: a list per user;
3. every per-user statistic comes from that list with list expressions: running hits,
   running DCG, running sum of precision at the hits (AP's numerator), each a cum_sum in
   rank order (so every sum is added one term after the other, the same bits on every
   run), read at position min(k, length); the first hit's rank from the hits list;
4. the ideal DCG is a running sum of the truth's grades sorted descending (a second,
   small group_by over the truth, which also counts the relevant items);
5. each metric's mean over the users in both files with a relevant item is the exact sum
   of the per-user values (integers on a 2^-k grid, Python ints) divided by their count,
   rounded once: as receval's exact_sum, the same bits whatever the order of the users.

Two refinements, measured beside the first design (see README.md): --design hits
shortens each ranked list to its items with a positive grade (and their ranks) before the
running sums, and --key auto joins on one packed UInt64 key when every id fits 32 bits.

No windows (.over), no explode and re-join. No input checks (duplicates, nulls, NaN,
unknown items): receval's would ride along in the group_by or run apart.

--stages times the query cut after each step (each a whole collect of its own, so later
stages include the earlier ones; polars 2 has no LazyFrame.profile any more).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl

CUTOFFS = (1, 5, 10, 20, 50, 100)
METRICS = ("ndcg", "precision", "recall", "map", "mrr", "hit_rate")
DEPTH = max(CUTOFFS)
THRESHOLD = 1.0  # relevance_threshold

USER, ITEM, SCORE, GRADE = "user_id", "item_id", "score", "rating"
Engine = Literal["in-memory", "streaming"]


# --------------------------------------------------------------------------------------------
# The query
# --------------------------------------------------------------------------------------------


def _packed_key() -> pl.Expr:
    """(user, item) as one UInt64, for ids in [0, 2^32) (see ids_fit_32_bits)."""
    return (pl.col(USER).cast(pl.UInt64) * (1 << 32) + pl.col(ITEM).cast(pl.UInt64)).alias("key")


def ids_fit_32_bits(predictions: Path, truth: Path) -> bool:
    """Whether every user and item id of both files is an integer in [0, 2^32), so that
    (user, item) packs into one UInt64 join key (a one-column join is cheaper than a
    two-column one). One min/max scan of the id columns."""
    for path in (predictions, truth):
        frame = pl.scan_parquet(path).select(USER, ITEM)
        if not all(dtype.is_integer() for dtype in frame.collect_schema().dtypes()):
            return False
        bounds = frame.select(
            pl.all().min().name.suffix("_min"), pl.all().max().name.suffix("_max")
        )
        row = bounds.collect().row(0)
        if any(v is None for v in row) or min(row) < 0 or max(row) >= 1 << 32:
            return False
    return True


def ranked_lists(predictions: Path, truth: Path, packed: bool = False) -> pl.LazyFrame:
    """Steps 1-2: one row per user, `rels` the grades of its first DEPTH items in rank
    order (0.0 where the item is not in the truth), `length` its prediction rows.
    packed: join on one UInt64 key (ids_fit_32_bits must hold)."""
    preds = pl.scan_parquet(predictions).select(USER, ITEM, SCORE)
    grades = pl.scan_parquet(truth).select(USER, ITEM, pl.col(GRADE).cast(pl.Float64).alias("rel"))
    if packed:
        preds = preds.with_columns(_packed_key())
        joined = preds.join(grades.select(_packed_key(), "rel"), on="key", how="left")
    else:
        joined = preds.join(grades, on=[USER, ITEM], how="left")
    in_rank_order = (
        pl.col("rel")
        .fill_null(0.0)
        .sort_by([SCORE, ITEM], descending=[True, True])  # the total order: score, then item
        .head(DEPTH)
    )
    return joined.group_by(USER).agg(in_rank_order.alias("rels"), pl.len().alias("length"))


def _position() -> pl.Expr:
    """Inside list.eval: the 1-based rank of each element."""
    return pl.int_range(1, pl.len() + 1, dtype=pl.UInt32)


def _discount(position: pl.Expr) -> pl.Expr:
    """receval's log2 discount, written as it writes it (the same bits): 1 / log2(i + 1)."""
    return 1.0 / (position.cast(pl.Float64) + 1.0).log(2)


def _gain(grade: pl.Expr) -> pl.Expr:
    """receval's linear gain (gain_below_threshold: grade): the grade, negatives as 0."""
    return grade.clip(lower_bound=0.0)


def running_lists() -> list[pl.Expr]:
    """Step 3: the running statistics of each list, in rank order."""
    e = pl.element()
    relevant = e >= THRESHOLD
    hits_so_far = relevant.cast(pl.UInt32).cum_sum()
    precision_at_hit = (
        pl.when(relevant).then(hits_so_far / _position().cast(pl.Float64)).otherwise(0.0)
    )
    rels = pl.col("rels")
    return [
        rels.list.eval(hits_so_far).alias("cum_hits"),
        rels.list.eval((_gain(e) * _discount(_position())).cum_sum()).alias("cum_dcg"),
        rels.list.eval(precision_at_hit.cum_sum()).alias("cum_ap"),
        # 1-based rank of the first relevant item (null: none in the list)
        (rels.list.eval(relevant.arg_true().first()).list.first() + 1).alias("first_hit"),
    ]


def hit_lists() -> list[list[pl.Expr]]:
    """Step 3, second design: first shorten each list to its items with a positive grade
    (on the benchmark data 7 of 100) with their ranks, then take the running sums over
    those short lists only (a zero term adds nothing, so the sums are the same bits), and
    count per cutoff how many of them are in the top k (search_sorted). Three rounds of
    with_columns (each reads the columns of the one before)."""
    e = pl.element()
    rels = pl.col("rels")
    ranks, grades = pl.col("hit_ranks"), pl.col("hit_rels")
    relevant = e >= THRESHOLD
    cutoffs = pl.Series(CUTOFFS, dtype=pl.UInt32)
    first_relevant = grades.list.eval(relevant.arg_true().first()).list.first()
    return [
        [
            rels.list.eval(_position().filter(e > 0)).alias("hit_ranks"),
            rels.list.filter(e > 0).alias("hit_rels"),
        ],
        [
            grades.list.eval(relevant.cast(pl.UInt32).cum_sum()).alias("cum_hits"),
            (grades.list.eval(_gain(e)) * ranks.list.eval(_discount(e))).alias("dcg_terms"),
            grades.list.eval(relevant.cast(pl.Float64)).alias("relevant_mask"),
            ranks.list.eval(e.search_sorted(cutoffs, side="right")).alias("within"),
            (ranks.list.get(first_relevant, null_on_oob=True)).alias("first_hit"),
        ],
        [
            pl.col("dcg_terms").list.eval(e.cum_sum()).alias("cum_dcg"),
            # precision at each relevant hit: hits so far / rank (x * 1.0 = x, x * 0.0 = 0)
            ((pl.col("cum_hits") / ranks.list.eval(e.cast(pl.Float64))) * pl.col("relevant_mask"))
            .list.eval(e.cum_sum())
            .alias("cum_ap"),
        ],
    ]


def _read_within(running: str, j: int) -> pl.Expr:
    """A running list over the hits read at the last hit within cutoff j's k (null if
    none): position within[j] - 1."""
    n = pl.col("within").list.get(j).cast(pl.Int64)
    return pl.when(n > 0).then(pl.col(running).list.get(n - 1, null_on_oob=True))


def ideal(truth: pl.LazyFrame) -> pl.LazyFrame:
    """Step 4: per user of the truth, |R| and the running ideal DCG (grades descending)."""
    gains = _gain(pl.col("rel")).sort(descending=True).head(DEPTH)
    running = (gains * _discount(pl.int_range(1, pl.len() + 1, dtype=pl.UInt32))).cum_sum()
    return truth.group_by(USER).agg(
        (pl.col("rel") >= THRESHOLD).sum().alias("n_relevant"),
        running.alias("cum_idcg"),
    )


def _read_at(running: str, k: int, length: str = "rels") -> pl.Expr:
    """A running list read at position min(k, its length) (null for an empty list)."""
    n = pl.col(length).list.len()
    return pl.col(running).list.get(pl.min_horizontal(n, k).cast(pl.Int64) - 1, null_on_oob=True)


def _constant(k: int) -> pl.Expr:
    """k as a full Float64 column, so that x / k is a true division on every row (polars
    divides a column by a scalar as a product with its reciprocal: 3 / 5 != 3 * 0.2)."""
    return pl.col("n_relevant").cast(pl.Float64).clip(float(k), float(k))


def _safe_div(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    return (
        pl.when(denominator > 0)
        .then(numerator.cast(pl.Float64) / denominator.cast(pl.Float64))
        .otherwise(0.0)
    )


def per_user_values(lists: pl.LazyFrame, truth: Path, design: str = "lists") -> pl.LazyFrame:
    """Steps 3-4: one row per evaluated user (in both files, with a relevant item), one
    Float64 column per metric@k. design: lists (running sums over the whole lists) or
    hits (over the items with a positive grade only, hit_lists)."""
    grades = pl.scan_parquet(truth).select(USER, pl.col(GRADE).cast(pl.Float64).alias("rel"))
    if design == "hits":
        stats = lists
        for step in hit_lists():
            stats = stats.with_columns(step)
    else:
        stats = lists.with_columns(running_lists())
    table = stats.join(ideal(grades), on=USER, how="inner").filter(
        (pl.col("n_relevant") > 0) & (pl.col("length") > 0)
    )
    n_rel = pl.col("n_relevant")
    columns = []
    for j, k in enumerate(CUTOFFS):
        if design == "hits":
            hits, dcg, ap = (_read_within(n, j) for n in ("cum_hits", "cum_dcg", "cum_ap"))
        else:
            hits, dcg, ap = (_read_at(n, k) for n in ("cum_hits", "cum_dcg", "cum_ap"))
        hits, dcg, ap = hits.fill_null(0), dcg.fill_null(0.0), ap.fill_null(0.0)
        idcg = _read_at("cum_idcg", k, "cum_idcg").fill_null(0.0)
        first = pl.col("first_hit")
        columns += [
            _safe_div(dcg, idcg).alias(f"ndcg@{k}"),
            (hits.cast(pl.Float64) / _constant(k)).alias(f"precision@{k}"),
            _safe_div(hits, n_rel).alias(f"recall@{k}"),
            _safe_div(ap, n_rel).alias(f"map@{k}"),
            pl.when(first <= k).then(1.0 / first.cast(pl.Float64)).otherwise(0.0).alias(f"mrr@{k}"),
            (hits > 0).cast(pl.Float64).alias(f"hit_rate@{k}"),
        ]
    return table.select(columns)


# --------------------------------------------------------------------------------------------
# Exact means
# --------------------------------------------------------------------------------------------

_HALF = 26
_CHUNK = 1 << 24  # values per bincount: each half's sum stays below 2^53 (exact in float64)


def exact_sum(values: np.ndarray) -> Fraction:
    """The exact sum of finite float64 values. Each normal value is M * 2^(e - 53) with M a
    53-bit integer (frexp); M is split in two halves of <= 27 bits, whose sums per exponent
    (bincount, float64) are exact below 2^53; the exponents are combined in Python ints."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if not np.isfinite(values).all():
        raise ValueError("a per-user value is not finite")
    tiny = (values != 0) & (np.abs(values) < np.finfo(np.float64).tiny)
    if tiny.any():  # subnormals: exact, slowly
        return sum((Fraction(float(v)) for v in values[tiny]), exact_sum(values[~tiny]))
    total = Fraction(0)
    for start in range(0, values.size, _CHUNK):
        mantissa, exponent = np.frexp(values[start : start + _CHUNK])
        whole = (mantissa * 2.0**53).astype(np.int64)  # exact: |mantissa| < 1, 53 bits
        high = whole >> _HALF
        low = whole - (high << _HALF)
        lowest = int(exponent.min())
        slot = exponent - lowest
        high_sums = np.bincount(slot, weights=high.astype(np.float64))
        low_sums = np.bincount(slot, weights=low.astype(np.float64))
        scaled = 0  # the chunk's sum in units of 2^(lowest - 53)
        for i in np.flatnonzero((high_sums != 0) | (low_sums != 0)):
            scaled += ((int(high_sums[i]) << _HALF) + int(low_sums[i])) << int(i)
        shift = lowest - 53
        total += Fraction(scaled << shift) if shift >= 0 else Fraction(scaled, 1 << -shift)
    return total


def exact_mean(values: np.ndarray) -> float:
    """The exact mean rounded once to the nearest float64 (Fraction -> float rounds
    correctly)."""
    return float(exact_sum(values) / values.size)


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def evaluate(
    predictions: Path, truth: Path, engine: Engine, design: str = "lists", key: str = "pair"
) -> dict[str, float]:
    packed = key == "packed" or (key == "auto" and ids_fit_32_bits(predictions, truth))
    lists = ranked_lists(predictions, truth, packed)
    table = per_user_values(lists, truth, design).collect(engine=engine)
    if table.height == 0:
        raise SystemExit("no user to evaluate")
    return {name: exact_mean(table.get_column(name).to_numpy()) for name in table.columns}


def stages(
    predictions: Path, truth: Path, engine: Engine, design: str = "lists", key: str = "pair"
) -> dict[str, float]:
    """Wall seconds of the query cut after each step, each collected whole (every column
    materialized, so that no projection pushdown skips the step's work); a later cut
    includes the earlier ones, except the ideal DCG, which is timed alone."""
    found = {}
    started = time.perf_counter()
    packed = key == "auto" and ids_fit_32_bits(predictions, truth)
    found[f"ids fit 32 bits: {packed} (min/max scan)"] = time.perf_counter() - started
    preds = pl.scan_parquet(predictions).select(USER, ITEM, SCORE)
    grades = pl.scan_parquet(truth).select(USER, ITEM, pl.col(GRADE).cast(pl.Float64).alias("rel"))
    if packed:
        joined = preds.with_columns(_packed_key()).join(
            grades.select(_packed_key(), "rel"), on="key", how="left"
        )
    else:
        joined = preds.join(grades, on=[USER, ITEM], how="left")
    lists = ranked_lists(predictions, truth, packed)
    if design == "hits":
        running = lists
        for step in hit_lists():
            running = running.with_columns(step)
    else:
        running = lists.with_columns(running_lists())
    cuts = {
        "read predictions": preds,
        "+ left join of the truth's grades": joined,
        "+ group_by(user), lists not sorted": joined.group_by(USER).agg(
            pl.col("rel").fill_null(0.0).head(DEPTH), pl.len()
        ),
        "+ sort_by (score, item) in the group_by: the ranked lists": lists,
        f"+ running lists ({design} design)": running,
        "ideal DCG and |R| alone (group_by over the truth)": ideal(grades.select(USER, "rel")),
        "whole query: + join with the ideal, 36 per-user values": per_user_values(
            lists, truth, design
        ),
    }
    for name, query in cuts.items():
        started = time.perf_counter()
        result = query.collect(engine=engine)
        found[name] = time.perf_counter() - started
        del result
    table = per_user_values(lists, truth, design).collect(engine=engine)
    started = time.perf_counter()
    for name in table.columns:
        exact_mean(table.get_column(name).to_numpy())
    found["36 exact means (after the query)"] = time.perf_counter() - started
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("predictions", type=Path)
    parser.add_argument("truth", type=Path)
    parser.add_argument("--engine", default="in-memory", choices=("in-memory", "streaming"))
    parser.add_argument(
        "--design",
        default="lists",
        choices=("lists", "hits"),
        help="running sums over the whole ranked lists (lists, the first design) or over "
        "the items with a positive grade only (hits)",
    )
    parser.add_argument(
        "--key",
        default="pair",
        choices=("pair", "auto"),
        help="join on (user, item) (pair), or on one packed UInt64 key when every id is "
        "an integer in [0, 2^32) (auto: checked with one min/max scan)",
    )
    parser.add_argument("--stages", action="store_true", help="time each step instead")
    parser.add_argument(
        "--compare",
        type=Path,
        help="a `receval run --format json` report on the same files: print, per metric, "
        "the absolute difference and whether the two values are the same float",
    )
    args = parser.parse_args(argv)
    if args.stages:
        found = stages(args.predictions, args.truth, args.engine, args.design, args.key)
        print(json.dumps(found, indent=2))
        return 0
    means = evaluate(args.predictions, args.truth, args.engine, args.design, args.key)
    ordered = {f"{m}@{k}": means[f"{m}@{k}"] for m in METRICS for k in CUTOFFS}
    print(json.dumps(ordered))
    if args.compare is not None:
        return compare(ordered, args.compare)
    return 0


def compare(means: dict[str, float], report: Path) -> int:
    """Per metric (over its 6 cutoffs): the largest |ours - receval's| and whether every
    value is bit-identical. Returns 0 when all 36 are."""
    theirs = json.loads(report.read_text(encoding="utf-8"))["models"]["model"]["metrics"]
    identical_all = True
    for metric in METRICS:
        names = [f"{metric}@{k}" for k in CUTOFFS]
        diffs = [abs(means[n] - float(theirs[n])) for n in names]
        same = [means[n] == float(theirs[n]) for n in names]  # JSON keeps float64 exactly
        identical_all &= all(same)
        print(
            f"{metric:<10} max |diff| {max(diffs):.3e}  bit-identical {sum(same)}/{len(same)}",
            file=sys.stderr,
        )
    print(f"all 36 bit-identical: {identical_all}", file=sys.stderr)
    return 0 if identical_all else 1


if __name__ == "__main__":
    sys.exit(main())
