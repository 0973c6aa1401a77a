"""Benchmark receval against a bare polars floor, pytrec_eval and ranx on the same Parquet files.

    cd /work/main
    UV_PROJECT_ENVIRONMENT=/tmp/bench-venv uv run --group bench python benchmarks/bench.py
    ... --users 2000                      # a quick run
    ... --tools receval,polars            # a subset
    ... --repeat 1 --timeout 300          # one run per tool (default: best of 3), 300 s each
    ... --shape tied --text-ids           # one shape (default: both), ids as text

Two shapes of data, one table each: `distinct` (distinct scores within a user, a catalog of
200k items; generate below) and `tied`, the shape real logs have (shapes.py: Zipf popularity
over a catalog of 10x the users, about 5 tied score pairs a list, graded truth of about 11
items a user, 10% of users without). Every tool breaks ties as receval's config does (score
descending, then the item id descending: as a number for integer ids, as text for text ids).

Each tool runs in its own fresh Python process, timed by the wall clock from spawn to exit
(interpreter start, imports, reading the Parquet files, any conversion the tool needs, the
metrics), and its peak RSS is that process's own ru_maxrss (os.wait4). The data is generated
once per parameter set into benchmarks/data/ (git-ignored) and reused.

The script has no third-party import at module level: a child process imports only what its
tool needs, so its time and memory are the tool's.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE / "data"
TOOLS = ("receval", "polars", "polars_rank", "duckdb", "pytrec_eval", "ranx")
SHAPES = ("distinct", "tied")
FLOORS = ("polars", "polars_rank")  # the bare polars floors: receval is held to the faster
CUTOFFS = (1, 5, 10, 20, 50, 100)
METRICS = ("ndcg", "precision", "recall", "map", "mrr", "hit_rate")
DATA_VERSION = 2  # bump when the generator changes, so old files are not reused

# trec_eval's conventions, so receval's numbers are comparable with pytrec_eval and ranx.
TREC_CONVENTIONS = {
    "tie_break": "item_desc",
    "users_without_recommendations": "skip",
    "ap_denominator": "relevant",
}

# pytrec_eval measure family -> receval metric name.
PYTREC_MEASURES = {
    "P": "precision",
    "recall": "recall",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
    "success": "hit_rate",
}
# ranx metric name -> receval metric name.
RANX_METRICS = {
    "ndcg": "ndcg",
    "precision": "precision",
    "recall": "recall",
    "map": "map",
    "mrr": "mrr",
    "hit_rate": "hit_rate",
}

TARGET_VS_PYTREC = 4.0  # receval at least this many times faster than pytrec_eval
# The targets by the predictions' size (rows up to), on every shape: receval at most this
# many times the faster floor ("floor"), at least this many times faster than DuckDB's query
# ("duckdb"), its peak RSS below DuckDB's ("rss": "duckdb") or at most a bound in MiB that is
# also below DuckDB's ("rss": MiB), faster than ranx end to end ("ranx"), and at most
# this many seconds more than the faster floor outside polars ("fixed": each
# process's time less its polars stage, i.e. start, imports, config, report and exit; the
# difference of the whole processes is printed beside it)
SIZE_TARGETS: tuple[tuple[int | None, dict[str, Any]], ...] = (
    (2_000_000, {"fixed": 0.25}),
    (20_000_000, {"floor": 1.25, "duckdb": 1.6, "rss": "duckdb", "ranx": True}),
    (None, {"floor": 1.1, "duckdb": 1.8, "rss": 2 * 1024}),
)
AGREEMENT_TOLERANCE = 1e-9
WARM_UP_USERS = 200


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


def data_paths(data_dir: Path, users: int, per_user: int, seed: int) -> tuple[Path, Path]:
    stem = f"u{users}_l{per_user}_s{seed}_v{DATA_VERSION}"
    return data_dir / f"predictions_{stem}.parquet", data_dir / f"truth_{stem}.parquet"


def generate(users: int, per_user: int, seed: int, predictions: Path, truth: Path) -> None:
    """Write the predictions (users x per_user rows) and a graded ground truth.

    Predictions: each user gets per_user distinct items from a catalogue of 2,000 x per_user
    items (sorted runs with random gaps of 2..1000, rotated by a random offset), and scores.
    Ground truth: 10 to 30 items per user (mean 20), grades 1-4; each is, with probability
    0.35, one of the user's recommended items (whose score is then boosted so that relevant
    items tend to rank high) and otherwise an item next to one (never recommended).

    Scores are float32 values, distinct within each user, stored as float64: trec_eval keeps
    scores in single precision, so float64 scores that differ only beyond float32 precision
    would tie there (broken by docno as a string) but not in receval or ranx.
    """
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    max_gap = 1000
    catalogue = 2 * max_gap * per_user
    # Distinct items per user: a strictly increasing run spanning < catalogue/2, rotated.
    gaps = rng.integers(2, max_gap + 1, size=(users, per_user), dtype=np.int64)
    offsets = rng.integers(0, catalogue, size=(users, 1), dtype=np.int64)
    items = (offsets + np.cumsum(gaps, axis=1)) % catalogue
    # Gaps are >= 2, so item + 1 is never one of the user's recommendations.

    n_truth = rng.integers(10, 31, size=users)
    width = int(n_truth.max())
    positions = np.argsort(rng.random((users, per_user)), axis=1)[:, :width]
    keep = np.arange(width)[None, :] < n_truth[:, None]
    hit = rng.random((users, width)) < 0.35
    grades = rng.integers(1, 5, size=(users, width), dtype=np.int64)
    chosen = np.take_along_axis(items, positions, axis=1)
    truth_items = np.where(hit, chosen, (chosen + 1) % catalogue)

    # Relevant recommended items get a boost that grows with their grade.
    boost = np.zeros((users, per_user), dtype=np.float32)
    rows = np.repeat(np.arange(users)[:, None], width, axis=1)
    sel = hit & keep
    boost[rows[sel], positions[sel]] = 0.12 * grades[sel] * rng.random(int(sel.sum()))
    scores = rng.random((users, per_user), dtype=np.float32) + boost
    while True:  # redraw the few users with two equal float32 scores
        tied = np.flatnonzero((np.diff(np.sort(scores, axis=1), axis=1) == 0).any(axis=1))
        if tied.size == 0:
            break
        scores[tied] = rng.random((tied.size, per_user), dtype=np.float32) + boost[tied]

    user_ids = np.arange(1, users + 1, dtype=np.int64)
    pl.DataFrame(
        {
            "user_id": np.repeat(user_ids, per_user),
            "item_id": items.ravel() + 1,
            "score": scores.ravel().astype(np.float64),
        }
    ).write_parquet(_partial(predictions))
    pl.DataFrame(
        {
            "user_id": np.repeat(user_ids[:, None], width, axis=1)[keep],
            "item_id": truth_items[keep] + 1,
            "rating": grades[keep],
        }
    ).write_parquet(_partial(truth))
    _partial(predictions).replace(predictions)
    _partial(truth).replace(truth)


def _partial(path: Path) -> Path:
    return path.with_name(path.name + ".partial")


def ensure_data(args: argparse.Namespace, users: int) -> tuple[Path, Path]:
    args.data_dir.mkdir(parents=True, exist_ok=True)
    predictions, truth = data_paths(args.data_dir, users, args.per_user, args.seed)
    if args.regenerate or not (predictions.exists() and truth.exists()):
        print(f"generating {users:,} users x {args.per_user} items ...", flush=True)
        started = time.perf_counter()
        # in a child process: a tool's process forked from a parent that holds the data
        # would count the parent's pages in its own peak RSS
        import subprocess

        code = (
            "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
            "from bench import generate; generate(int(sys.argv[2]), int(sys.argv[3]), "
            "int(sys.argv[4]), Path(sys.argv[5]), Path(sys.argv[6]))"
        )
        arguments = [str(HERE), str(users), str(args.per_user), str(args.seed)]
        subprocess.run(
            [sys.executable, "-c", code, *arguments, str(predictions), str(truth)], check=True
        )
        print(f"  done in {time.perf_counter() - started:.1f} s", flush=True)
    else:
        print(f"reusing {predictions.name} and {truth.name}", flush=True)
    return predictions, truth


def shape_data(args: argparse.Namespace, users: int, shape: str) -> tuple[Path, Path]:
    """The predictions and truth of one shape (`distinct`: generate; `tied`: shapes.py, in a
    child process), generated once and reused; with `args.text_ids`, their ids as text."""
    if shape == "distinct":
        predictions, truth = ensure_data(args, users)
        return text_copies(args, predictions, truth) if args.text_ids else (predictions, truth)
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    import shapes

    found = shapes.paths(args.data_dir, users, args.text_ids, args.seed)
    predictions, truth = found["predictions"], found["truth"]
    if args.regenerate:
        predictions.unlink(missing_ok=True)
        truth.unlink(missing_ok=True)
    if predictions.exists() and truth.exists():
        print(f"reusing {predictions.name} and {truth.name}", flush=True)
        return predictions, truth
    print(f"generating the tied shape, {users:,} users x {shapes.PER_USER} items ...", flush=True)
    import subprocess

    command = [sys.executable, str(HERE / "shapes.py"), str(users), str(args.data_dir)]
    command += ["--seed", str(args.seed)] + (["--text-ids"] if args.text_ids else [])
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return predictions, truth


def text_copies(args: argparse.Namespace, *paths: Path) -> tuple[Path, Path]:
    """Copies of the files with the ids as text ("u12", "i345"), written in a child process."""
    import subprocess

    copies = tuple(path.with_name(f"{path.stem}_text.parquet") for path in paths)
    code = (
        "import sys, polars as pl; pl.scan_parquet(sys.argv[1]).with_columns("
        "pl.format('u{}', 'user_id').alias('user_id'), pl.format('i{}', 'item_id')"
        ".alias('item_id')).sink_parquet(sys.argv[2])"
    )
    for path, copy in zip(paths, copies, strict=True):
        if args.regenerate or not copy.exists():
            subprocess.run([sys.executable, "-c", code, str(path), str(_partial(copy))], check=True)
            _partial(copy).replace(copy)
    predictions, truth = copies
    return predictions, truth


def describe_data(predictions: Path, truth: Path) -> dict[str, Any]:
    import polars as pl

    def count(path: Path) -> int:
        return int(pl.scan_parquet(path).select(pl.len()).collect().item())

    return {
        "predictions": str(predictions),
        "prediction_rows": count(predictions),
        "predictions_mib": predictions.stat().st_size / 2**20,
        "truth": str(truth),
        "truth_rows": count(truth),
        "truth_mib": truth.stat().st_size / 2**20,
    }


def warm_page_cache(*paths: Path) -> None:
    """Read the files once so that no tool pays the first read from disk."""
    for path in paths:
        with path.open("rb") as handle:
            while handle.read(1 << 24):
                pass


def write_receval_config(data_dir: Path, predictions: Path, truth: Path) -> Path:
    config = data_dir / f"receval_{predictions.stem.removeprefix('predictions_')}.yaml"
    conventions = "\n".join(f"  {k}: {v}" for k, v in TREC_CONVENTIONS.items())
    config.write_text(
        "# Written by benchmarks/bench.py; trec_eval conventions for comparison.\n"
        "predictions:\n"
        f"  path: {predictions.name}\n"
        "  columns: {user: user_id, item: item_id, score: score}\n"
        "ground_truth:\n"
        f"  path: {truth.name}\n"
        "  columns: {user: user_id, item: item_id, relevance: rating}\n"
        f"cutoffs: [{', '.join(map(str, CUTOFFS))}]\n"
        f"metrics: [{', '.join(METRICS)}]\n"
        f"conventions:\n{conventions}\n",
        encoding="utf-8",
    )
    return config


# --------------------------------------------------------------------------------------------
# Children: each runs one tool and writes {"metrics": ..., "stages": ...} as JSON
# --------------------------------------------------------------------------------------------


def child_polars(predictions: Path, truth: Path, engine: str = "auto") -> dict[str, Any]:
    """The floor: scan, rank per user (ties broken by item id descending, as receval's
    config), left join, hits at each cutoff, mean. One collect."""
    import polars as pl

    started = time.perf_counter()
    rank = pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over(
        "user_id", order_by=["score", "item_id"], descending=True
    )
    ranked = pl.scan_parquet(predictions).select("user_id", "item_id", rank.alias("rank"))
    judged = (
        pl.scan_parquet(truth).filter(pl.col("rating") >= 1).select("user_id", "item_id", "rating")
    )
    n_relevant = judged.group_by("user_id").agg(pl.len().alias("n_relevant"))
    hit = pl.col("rating").is_not_null()
    hits = (
        ranked.join(judged, on=["user_id", "item_id"], how="left")
        .group_by("user_id")
        .agg((hit & (pl.col("rank") <= k)).sum().alias(f"hits@{k}") for k in CUTOFFS)
    )
    per_user = hits.join(n_relevant, on="user_id")  # users in both, as trec_eval
    exprs = []
    for k in CUTOFFS:
        h = pl.col(f"hits@{k}").cast(pl.Float64)
        exprs += [
            (h / k).mean().alias(f"precision@{k}"),
            (h / pl.col("n_relevant")).mean().alias(f"recall@{k}"),
            (h > 0).cast(pl.Float64).mean().alias(f"hit_rate@{k}"),
        ]
    metrics = per_user.select(exprs).collect(engine=engine).row(0, named=True)  # type: ignore[arg-type]
    return {"metrics": metrics, "stages": {"collect": time.perf_counter() - started}}


def child_polars_streaming(predictions: Path, truth: Path) -> dict[str, Any]:
    """The same floor on polars' streaming engine."""
    return child_polars(predictions, truth, "streaming")


def child_polars_rank(predictions: Path, truth: Path) -> dict[str, Any]:
    """The other floor, as a data engineer would write it in polars: scan, rank each
    user's items with `rank("ordinal", descending=True).over(user)` over (score, item id)
    (ties broken by item id descending, as receval's config), keep the top 100, inner join
    with the relevant truth, one hits and one DCG sum per user and cutoff, means over the
    users in both files (a user without a hit adds 0). Streaming engine; no checks."""
    import polars as pl

    started = time.perf_counter()
    deepest = max(CUTOFFS)
    key = pl.struct("score", "item_id")
    rank = key.rank("ordinal", descending=True).over("user_id").alias("rank")
    scanned = pl.scan_parquet(predictions)
    ranked = scanned.select("user_id", "item_id", rank).filter(pl.col("rank") <= deepest)
    judged = (
        pl.scan_parquet(truth).filter(pl.col("rating") >= 1).select("user_id", "item_id", "rating")
    )
    gain = pl.col("rating") / (pl.col("rank").cast(pl.Float64) + 1).log(2)
    per_user = (
        ranked.join(judged, on=["user_id", "item_id"], how="inner")
        .group_by("user_id")
        .agg(
            *((pl.col("rank") <= k).sum().alias(f"hits@{k}") for k in CUTOFFS),
            *(gain.filter(pl.col("rank") <= k).sum().alias(f"dcg@{k}") for k in CUTOFFS),
        )
        .join(judged.group_by("user_id").agg(pl.len().alias("n_relevant")), on="user_id")
    )
    users = (
        scanned.select("user_id")
        .unique()
        .join(judged.select("user_id").unique(), on="user_id")
        .select(pl.len().alias("users"))
    )
    sums, counted = pl.collect_all(
        [
            per_user.select(
                *(pl.col(f"hits@{k}").sum().alias(f"hits@{k}") for k in CUTOFFS),
                *(
                    (pl.col(f"hits@{k}") / pl.col("n_relevant")).sum().alias(f"recall@{k}")
                    for k in CUTOFFS
                ),
                *((pl.col(f"hits@{k}") > 0).sum().alias(f"hit_rate@{k}") for k in CUTOFFS),
                *(pl.col(f"dcg@{k}").sum().alias(f"dcg@{k}") for k in CUTOFFS),
            ),
            users,
        ],
        engine="streaming",
    )
    found, n = sums.row(0, named=True), counted.item()
    metrics = {}
    for k in CUTOFFS:
        metrics[f"precision@{k}"] = found[f"hits@{k}"] / k / n
        metrics[f"recall@{k}"] = found[f"recall@{k}"] / n
        metrics[f"hit_rate@{k}"] = found[f"hit_rate@{k}"] / n
    return {"metrics": metrics, "stages": {"collect": time.perf_counter() - started}}


def duckdb_query(predictions: Path, truth: Path) -> str:
    """The 36 metrics as one DuckDB SQL query over the Parquet files, with the
    conventions of receval's benchmark config (trec_eval's): ties broken by item id
    descending, relevance >= 1, gains the grades over log2(rank + 1) with the ideal DCG of
    the user's top-k grades, AP divided by the user's relevant items, reciprocal rank of
    the first hit within k, means over the users in both files."""
    deepest = max(CUTOFFS)
    per_user, ideal, means = [], [], []
    for k in CUTOFFS:
        per_user += [
            f"count(*) FILTER (WHERE r <= {k}) AS hits_{k}",
            f"sum(rating / log2(r + 1)) FILTER (WHERE r <= {k}) AS dcg_{k}",
            f"sum(h / r) FILTER (WHERE r <= {k}) AS ap_{k}",
        ]
        ideal.append(f"sum(rating / log2(ir + 1)) FILTER (WHERE ir <= {k}) AS idcg_{k}")
        means += [
            f'avg(coalesce(dcg_{k}, 0) / idcg_{k}) AS "ndcg@{k}"',
            f'avg(coalesce(hits_{k}, 0) / {k}) AS "precision@{k}"',
            f'avg(coalesce(hits_{k}, 0) / n_rel) AS "recall@{k}"',
            f'avg(coalesce(ap_{k}, 0) / n_rel) AS "map@{k}"',
            f'avg(CASE WHEN first_hit <= {k} THEN 1.0 / first_hit ELSE 0.0 END) AS "mrr@{k}"',
            f'avg(CASE WHEN hits_{k} > 0 THEN 1.0 ELSE 0.0 END) AS "hit_rate@{k}"',
        ]
    return f"""
WITH ranked AS (
    SELECT user_id, item_id,
           row_number() OVER (PARTITION BY user_id ORDER BY score DESC, item_id DESC) AS r
    FROM read_parquet('{predictions}')
    QUALIFY r <= {deepest}
), judged AS (
    SELECT user_id, item_id, rating FROM read_parquet('{truth}') WHERE rating >= 1
), ideal AS (
    SELECT user_id, count(*) AS n_rel, {", ".join(ideal)}
    FROM (
        SELECT user_id, rating,
               row_number() OVER (PARTITION BY user_id ORDER BY rating DESC) AS ir
        FROM judged
    )
    GROUP BY user_id
), hits AS (
    SELECT user_id, r, rating, row_number() OVER (PARTITION BY user_id ORDER BY r) AS h
    FROM ranked JOIN judged USING (user_id, item_id)
), per_user AS (
    SELECT user_id, min(r) AS first_hit, {", ".join(per_user)}
    FROM hits GROUP BY user_id
), users AS (
    SELECT DISTINCT user_id FROM ranked
)
SELECT {", ".join(means)}
FROM users JOIN ideal USING (user_id) LEFT JOIN per_user USING (user_id)
"""


def child_duckdb(predictions: Path, truth: Path, spill: Path | None = None) -> dict[str, Any]:
    """DuckDB: the one SQL query of duckdb_query, as a data engineer would run it. Where it
    spills (its temp directory: `spill`, emptied first), the most it held there is reported
    (`spilled_mib`, sampled every 0.2 s)."""
    import shutil
    import threading

    import duckdb

    started = time.perf_counter()
    connection = duckdb.connect()
    spilled = [0]
    done = threading.Event()
    if spill is not None:
        shutil.rmtree(spill, ignore_errors=True)
        connection.execute(f"SET temp_directory = '{spill}'")

        def watch() -> None:
            while not done.wait(0.2):
                sizes = [p.stat().st_size for p in spill.rglob("*") if p.is_file()]
                spilled[0] = max(spilled[0], sum(sizes))

        threading.Thread(target=watch, daemon=True).start()
    cursor = connection.execute(duckdb_query(predictions, truth))
    names = [column[0] for column in cursor.description]
    row = cursor.fetchone()
    done.set()
    assert row is not None
    metrics = dict(zip(names, (float(v) for v in row), strict=True))
    stages = {"query": time.perf_counter() - started}
    return {"metrics": metrics, "stages": stages, "spilled_mib": spilled[0] / 2**20}


def _to_dicts(predictions: Path, truth: Path) -> tuple[dict[str, Any], dict[str, Any], float]:
    """Read with polars and build {user: {item: value}} with string ids (pytrec_eval, ranx)."""
    import polars as pl

    started = time.perf_counter()
    preds = pl.read_parquet(predictions)
    qrels_frame = pl.read_parquet(truth)
    read = time.perf_counter() - started

    def nested(frame: pl.DataFrame, value: str) -> dict[str, Any]:
        grouped = frame.group_by("user_id", maintain_order=True).agg(
            pl.col("item_id").cast(pl.String), pl.col(value)
        )
        return {
            user: dict(zip(items, values, strict=True))
            for user, items, values in zip(
                grouped["user_id"].cast(pl.String).to_list(),
                grouped["item_id"].to_list(),
                grouped[value].to_list(),
                strict=True,
            )
        }

    run = nested(preds, "score")
    qrels = nested(qrels_frame, "rating")
    return run, qrels, read


def child_pytrec_eval(predictions: Path, truth: Path) -> dict[str, Any]:
    import pytrec_eval

    started = time.perf_counter()
    run, qrels, read = _to_dicts(predictions, truth)
    converted = time.perf_counter()
    ks = ",".join(map(str, CUTOFFS))
    measures = {f"{family}.{ks}" for family in PYTREC_MEASURES} | {"recip_rank"}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    computed = time.perf_counter()
    names: dict[str, str] = {"recip_rank": f"mrr@{max(CUTOFFS)}"}  # uncut; lists <= max k
    for family, metric in PYTREC_MEASURES.items():
        names.update({f"{family}_{k}": f"{metric}@{k}" for k in CUTOFFS})
    sums = dict.fromkeys(names, 0.0)
    for values in per_query.values():
        for measure in names:
            sums[measure] += values[measure]
    metrics = {names[m]: total / len(per_query) for m, total in sums.items()}
    return {
        "metrics": metrics,
        "stages": {
            "read": read,
            "convert": converted - started - read,
            "evaluate": computed - converted,
            "mean": time.perf_counter() - computed,
        },
        "users": len(per_query),
    }


def child_ranx(predictions: Path, truth: Path) -> dict[str, Any]:
    import ranx

    names = [f"{m}@{k}" for m in RANX_METRICS for k in CUTOFFS]
    # numba's compile (or its load from the on-disk cache) on two users first, timed apart:
    # the parent reports ranx with it (end to end) and without it
    jit_started = time.perf_counter()
    tiny = {"1": {"a": 1, "b": 2}, "2": {"c": 1}}
    ranx.evaluate(ranx.Qrels(tiny), ranx.Run({"1": {"a": 0.5, "c": 0.4}, "2": {"c": 0.9}}), names)
    jit = time.perf_counter() - jit_started
    started = time.perf_counter()
    run_dict, qrels_dict, read = _to_dicts(predictions, truth)
    converted = time.perf_counter()
    qrels = ranx.Qrels(qrels_dict)
    run = ranx.Run(run_dict)
    del run_dict, qrels_dict
    built = time.perf_counter()
    scores = ranx.evaluate(qrels, run, names, make_comparable=True)  # users in both, as trec_eval
    computed = time.perf_counter()
    metrics = {
        f"{RANX_METRICS[name.split('@')[0]]}@{name.split('@')[1]}": float(value)
        for name, value in scores.items()
    }
    return {
        "metrics": metrics,
        "stages": {
            "read": read,
            "to_dicts": converted - started - read,
            "Qrels+Run": built - converted,
            "evaluate": computed - built,
            "JIT (numba's compile or cache load, 2 users)": jit,
        },
        "jit_seconds": jit,
    }


CHILDREN = {
    "polars": child_polars,
    "polars_streaming": child_polars_streaming,
    "polars_rank": child_polars_rank,
    "duckdb": child_duckdb,
    "pytrec_eval": child_pytrec_eval,
    "ranx": child_ranx,
}


def child_main(tool: str, predictions: Path, truth: Path, result: Path) -> None:
    if tool == "duckdb":  # its temp directory beside the results, where its spill is seen
        output = child_duckdb(predictions, truth, result.parent / "duckdb_tmp")
    else:
        output = CHILDREN[tool](predictions, truth)
    result.write_text(json.dumps(output), encoding="utf-8")


# --------------------------------------------------------------------------------------------
# Parent: spawn, time, measure
# --------------------------------------------------------------------------------------------


def child_env(data_dir: Path) -> dict[str, str]:
    """The children's environment: bytecode is cached (in data_dir, not in the venv or repo).

    A user's second run of any tool finds its modules compiled; without this, a shell with
    PYTHONDONTWRITEBYTECODE=1 would make every process recompile polars, numba, ... (about
    1 s per process).
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str((data_dir / "pycache").resolve())
    return env


def session_rss(session: int) -> int:
    """Bytes resident in every process of a session (Linux /proc; 0 elsewhere)."""
    total = 0
    page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) != session:  # fields after the name: state, ppid, pgrp, session
                continue
            total += int((entry / "statm").read_text().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue
    return total


def spawn(
    command: list[str],
    log: Path,
    timeout: float,
    env: dict[str, str],
    max_rss_mib: float | None = None,
) -> dict[str, Any]:
    """Run command in a new session; wall seconds, the child's own peak RSS, exit status,
    and the peak RSS of the whole session sampled every 0.1 s (`tree_rss_mib`: for Spark,
    whose work runs in a JVM and Python workers that the child starts). Past `timeout`
    seconds, or `max_rss_mib` resident in the session (when given), it is killed."""
    import subprocess

    tree_peak = 0
    with log.open("wb") as sink:
        started = time.perf_counter()
        process = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True, env=env
        )
        polls = 0
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            elapsed = time.perf_counter() - started
            if pid:
                break
            polls += 1
            if polls % 10 == 0:
                tree_peak = max(tree_peak, session_rss(process.pid))
            over_memory = max_rss_mib is not None and tree_peak / 2**20 > max_rss_mib
            if elapsed > timeout or over_memory:
                os.killpg(process.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(process.pid, 0)
                process.returncode = -signal.SIGKILL
                why = f"over {max_rss_mib:.0f} MiB" if over_memory else "timeout"
                killed = {"seconds": None, "rss_mib": usage.ru_maxrss / 1024, "error": why}
                return {**killed, "killed_after_s": elapsed}
            time.sleep(0.01)
    process.returncode = os.waitstatus_to_exitcode(status)
    outcome: dict[str, Any] = {"seconds": elapsed, "rss_mib": usage.ru_maxrss / 1024}
    outcome["tree_rss_mib"] = max(tree_peak / 2**20, outcome["rss_mib"])
    if process.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
        outcome["error"] = f"exit {process.returncode}: " + " | ".join(tail)
    return outcome


def run_tool(
    tool: str,
    predictions: Path,
    truth: Path,
    config: Path,
    work: Path,
    timeout: float,
    max_rss_mib: float | None = None,
) -> dict[str, Any]:
    result = work / f"result_{tool}.json"
    result.unlink(missing_ok=True)
    if tool == "receval":
        receval = Path(sys.executable).with_name("receval")
        command = [str(receval), "run", str(config), "--format", "json"]
        command += ["--output", str(result), "--quiet"]
    else:
        command = [sys.executable, str(Path(__file__).resolve()), "--child", tool]
        command += ["--child-files", str(predictions), str(truth), str(result)]
    outcome = spawn(command, work / f"log_{tool}.txt", timeout, child_env(work), max_rss_mib)
    if "error" not in outcome:
        data = json.loads(result.read_text(encoding="utf-8"))
        if tool == "receval":
            evaluate = float(data["elapsed_seconds"])
            model = data["models"]["model"]
            outcome["metrics"] = model["metrics"]
            outcome["stages"] = {
                "evaluate (read+compute)": evaluate,
                "start, config, report": outcome["seconds"] - evaluate,
            }
            outcome["users"] = model["users"]["evaluated"]
        else:
            outcome.update(data)
    return outcome


def best_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest successful run, with the largest RSS seen over all runs."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[-1]
    best = dict(min(ok, key=lambda r: r["seconds"]))
    best["rss_mib"] = max(r["rss_mib"] for r in runs)
    best["all_seconds"] = [r["seconds"] for r in ok]
    return best


def run_warm_up(args: argparse.Namespace) -> dict[str, Any]:
    """Run each tool once, untimed, on tiny data: as a user who has run it before.

    This fills the on-disk caches a second run finds: Python bytecode (all tools) and numba's
    compiled functions (ranx, which caches them next to its sources). In-process work, such
    as numba loading or compiling its functions, still counts in the timed runs.
    """
    predictions, truth = ensure_data(args, WARM_UP_USERS)
    config = write_receval_config(args.data_dir, predictions, truth)
    outcomes = {}
    for tool in args.tools:
        outcome = run_tool(tool, predictions, truth, config, args.data_dir, args.timeout)
        outcomes[tool] = {k: outcome.get(k) for k in ("seconds", "rss_mib", "error")}
    shown = ", ".join(
        f"{tool} {o['error'] or format(o['seconds'], '.1f') + ' s'}" for tool, o in outcomes.items()
    )
    print(f"warm-up on {WARM_UP_USERS} users (untimed): {shown}", flush=True)
    return outcomes


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def fmt(value: float | None, spec: str) -> str:
    if value is None:
        width = "".join(c for c in spec.split(".")[0] if c.isdigit())
        return "-".rjust(int(width or 0))
    return format(value, spec)


def print_table(results: dict[str, dict[str, Any]]) -> None:
    base = results.get("receval", {}).get("seconds")
    header = f"{'tool':<12} {'seconds':>9} {'peak RSS MiB':>13} {'x receval':>10}  stages / note"
    print("\n" + header + "\n" + "-" * len(header))
    for tool, r in results.items():
        note = r.get("error") or ", ".join(
            f"{name} {secs:.2f}" for name, secs in r.get("stages", {}).items()
        )
        print(
            f"{tool:<12} {fmt(r['seconds'], '9.2f')} {fmt(r['rss_mib'], '13,.0f')} "
            f"{fmt(ratio(r['seconds'], base), '10.2f')}  {note}"
        )
        if len(r.get("all_seconds", [])) > 1:
            print(f"{'':<12} runs: {', '.join(f'{s:.2f}' for s in r['all_seconds'])}")


def own_ties(tool: str, shape: str, text_ids: bool) -> str | None:
    """Why a tool may order tied items otherwise than receval's config on this data, or None
    (the floors and DuckDB break ties as receval does; trec_eval by the id as text, which is
    receval's item_desc on text ids; ranx as its sort leaves them)."""
    if shape == "distinct":
        return None
    if tool == "ranx":
        return "ranx leaves tied items in its sort's order"
    if tool == "pytrec_eval" and not text_ids:
        return "trec_eval breaks ties by the id as text, item_text_desc"
    return None


def agreement(
    results: dict[str, dict[str, Any]], excused: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Compare every other tool's metrics with receval's on the metrics both report;
    `excused`: the tools that may differ, and why (own_ties)."""
    reference = results.get("receval", {}).get("metrics")
    rows = []
    if not reference:
        return rows
    for tool, r in results.items():
        theirs = r.get("metrics")
        if tool == "receval" or not theirs:
            continue
        shared = [m for m in theirs if m in reference]
        diffs = {m: abs(float(theirs[m]) - float(reference[m])) for m in shared}
        worst = max(diffs, key=lambda m: diffs[m]) if diffs else None
        rows.append(
            {
                "tool": tool,
                "shared": len(shared),
                "max_abs_diff": diffs[worst] if worst else None,
                "worst": worst,
                "agree": bool(diffs) and diffs[worst] <= AGREEMENT_TOLERANCE,
                "excused": (excused or {}).get(tool),
            }
        )
    return rows


def print_agreement(results: dict[str, dict[str, Any]], rows: list[dict[str, Any]]) -> None:
    shown = [f"{m}@10" for m in METRICS] + [f"map@{max(CUTOFFS)}", f"mrr@{max(CUTOFFS)}"]
    tools = [t for t, r in results.items() if r.get("metrics")]
    if "receval" not in tools:
        return
    print(
        "\nagreement (receval with trec_eval conventions: "
        + ", ".join(f"{k}={v}" for k, v in TREC_CONVENTIONS.items())
        + ")"
    )
    print(f"{'metric':<14}" + "".join(f"{t:>14}" for t in tools))
    for metric in shown:
        cells = []
        for tool in tools:
            value = results[tool]["metrics"].get(metric)
            cells.append(fmt(None if value is None else float(value), "14.6f"))
        print(f"{metric:<14}" + "".join(cells))
    for row in rows:
        verdict = "AGREE" if row["agree"] else "DIFFER"
        if not row["agree"] and row.get("excused"):
            verdict += f" (expected: {row['excused']})"
        print(
            f"  {row['tool']:<12} vs receval on {row['shared']} metrics: max |diff| = "
            f"{fmt(row['max_abs_diff'], '.2e')} ({row['worst']})  {verdict}"
        )
    if "pytrec_eval" in tools:
        print("  (pytrec_eval's recip_rank is uncut: compared with mrr@100, the list length)")


def targets(results: dict[str, dict[str, Any]], rows: int) -> list[dict[str, Any]]:
    """The targets for this size of predictions (SIZE_TARGETS), each with its measured
    value: against pytrec_eval, the faster polars floor, DuckDB's time and its peak RSS."""
    mine = results.get("receval", {}).get("seconds")
    checks = []
    pytrec = results.get("pytrec_eval", {}).get("seconds")
    if "pytrec_eval" in results:
        speedup = ratio(pytrec, mine)
        checks.append(
            {
                "target": f"receval >= {TARGET_VS_PYTREC:g}x faster than pytrec_eval",
                "value": speedup,
                "shown": f"{fmt(speedup, '.2f')}x faster",
                "passed": speedup is not None and speedup >= TARGET_VS_PYTREC,
            }
        )
    wanted = next(t for limit, t in SIZE_TARGETS if limit is None or rows <= limit)
    floors = {t: results[t]["seconds"] for t in FLOORS if results.get(t, {}).get("seconds")}
    if "floor" in wanted and floors:
        fastest = min(floors, key=lambda t: floors[t])
        slowdown = ratio(mine, floors[fastest])
        checks.append(
            {
                "target": f"receval <= {wanted['floor']:g}x the faster polars floor ({fastest})",
                "value": slowdown,
                "shown": f"{fmt(slowdown, '.2f')}x the floor",
                "passed": slowdown is not None and slowdown <= wanted["floor"],
            }
        )
    if "fixed" in wanted and floors:
        fastest = min(floors, key=lambda t: floors[t])
        outside = {tool: outside_polars(results.get(tool, {})) for tool in ("receval", fastest)}
        above = None
        if outside["receval"] is not None and outside[fastest] is not None:
            above = outside["receval"] - outside[fastest]
        whole = None if mine is None else mine - floors[fastest]
        checks.append(
            {
                "target": f"receval's time outside polars <= {wanted['fixed']:g} s more than "
                f"the faster floor's ({fastest})",
                "value": above,
                "shown": f"{fmt(above, '+.3f')} s ({fmt(outside['receval'], '.3f')} s against "
                f"{fmt(outside[fastest], '.3f')} s; whole processes {fmt(whole, '+.3f')} s)",
                "passed": above is not None and above <= wanted["fixed"],
            }
        )
    ranx_run = results.get("ranx", {})
    if wanted.get("ranx") and ranx_run.get("seconds"):
        speedup = ratio(ranx_run["seconds"], mine)
        jit = ranx_run.get("jit_seconds")
        apart = ratio(ranx_run["seconds"] - jit, mine) if jit is not None else None
        checks.append(
            {
                "target": "receval faster than ranx end to end (numba's JIT included)",
                "value": speedup,
                "shown": f"{fmt(speedup, '.2f')}x faster ({fmt(apart, '.2f')}x with ranx's "
                "JIT excluded)",
                "passed": speedup is not None and speedup > 1,
            }
        )
    duck = results.get("duckdb", {})
    if "duckdb" in wanted and "duckdb" in results:
        speedup = ratio(duck.get("seconds"), mine)
        checks.append(
            {
                "target": f"receval >= {wanted['duckdb']:g}x faster than DuckDB's query",
                "value": speedup,
                "shown": f"{fmt(speedup, '.2f')}x faster",
                "passed": speedup is not None and speedup >= wanted["duckdb"],
            }
        )
    rss = results.get("receval", {}).get("rss_mib")
    duck_rss = duck.get("rss_mib")
    if "rss" in wanted and rss is not None:
        if wanted["rss"] != "duckdb":
            bound = wanted["rss"]
            checks.append(
                {
                    "target": f"receval's peak RSS at most {bound:,.0f} MiB",
                    "value": rss,
                    "shown": f"{rss:,.0f} MiB",
                    "passed": rss <= bound,
                }
            )
        if duck_rss is not None:
            checks.append(
                {
                    "target": "receval's peak RSS below DuckDB's",
                    "value": rss,
                    "shown": f"{rss:,.0f} MiB against {duck_rss:,.0f} MiB",
                    "passed": rss < duck_rss,
                }
            )
    return checks


# the stage of each tool's process that runs polars (its read and compute)
POLARS_STAGES = ("evaluate (read+compute)", "collect")


def outside_polars(result: dict[str, Any]) -> float | None:
    """A process's seconds outside polars: its whole time less its polars stage (start,
    imports, config, report and exit); None where either is not known."""
    stages = result.get("stages", {})
    inside = next((stages[name] for name in POLARS_STAGES if name in stages), None)
    if result.get("seconds") is None or inside is None:
        return None
    return float(result["seconds"]) - float(inside)


def machine() -> dict[str, Any]:
    import platform
    from importlib import metadata

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "-"

    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f"{pages / 2**30:.1f} GiB"
    except (ValueError, OSError):
        memory = "?"
    return {
        "cpus": os.cpu_count(),
        "memory": memory,
        "python": platform.python_version(),
        "platform": platform.platform(),
        **{
            name: version(name)
            for name in ("receval", "polars", "numpy", "ranx", "numba", "duckdb")
        },
        "pytrec-eval-terrier": version("pytrec-eval-terrier"),
        "loadavg_at_start": os.getloadavg(),
    }


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=100_000, help="users (default 100000)")
    parser.add_argument("--per-user", type=int, default=100, help="items per user (100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help=f"comma-separated, from {','.join(TOOLS)}"
    )
    parser.add_argument("--timeout", type=float, default=600, help="seconds per tool and run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool; the best is kept")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--regenerate", action="store_true", help="rewrite the data files")
    parser.add_argument(
        "--shape",
        choices=[*SHAPES, "both"],
        default="both",
        help="distinct scores, or tied on a large catalog (shapes.py); default both, a table each",
    )
    parser.add_argument("--text-ids", action="store_true", help="user and item ids as text")
    parser.add_argument(
        "--no-warm-up",
        action="store_true",
        help="skip the untimed run of each tool on tiny data that fills the bytecode and "
        "numba caches (measure a first-ever run)",
    )
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--child-files", nargs=3, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is None:
        tools = [t.strip() for t in args.tools.split(",") if t.strip()]
        unknown = [t for t in tools if t not in TOOLS]
        if unknown or not tools:
            parser.error(f"unknown tool(s) {', '.join(unknown)}; choose from {', '.join(TOOLS)}")
        args.tools = tools
        args.shapes = list(SHAPES) if args.shape == "both" else [args.shape]
        if args.users <= 0 or args.per_user < max(CUTOFFS) or args.repeat <= 0:
            parser.error(f"--users and --repeat must be > 0, --per-user >= {max(CUTOFFS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child is not None:
        child_main(args.child, *args.child_files)
        return 0
    warm_up: dict[str, Any] = {}
    if not args.no_warm_up:
        warm_up = run_warm_up(args)
    passed = [run_shape(args, shape, warm_up) for shape in args.shapes]
    return 0 if all(passed) else 1


def run_shape(args: argparse.Namespace, shape: str, warm_up: dict[str, Any]) -> bool:
    """One shape's table, agreement and targets; whether every tool ran, agreed and every
    target passed."""
    ids = "text ids" if args.text_ids else "integer ids"
    print(f"\n=== shape: {shape} ({ids}) ===", flush=True)
    predictions, truth = shape_data(args, args.users, shape)
    config = write_receval_config(args.data_dir, predictions, truth)
    info = {"shape": shape, "machine": machine(), "data": describe_data(predictions, truth)}
    data = info["data"]
    print(
        f"predictions: {data['prediction_rows']:,} rows ({data['predictions_mib']:.0f} MiB), "
        f"ground truth: {data['truth_rows']:,} rows ({data['truth_mib']:.0f} MiB)"
    )
    m = info["machine"]
    print(
        f"machine: {m['cpus']} CPUs, {m['memory']}, Python {m['python']}, polars {m['polars']}, "
        f"load average {', '.join(f'{x:.2f}' for x in m['loadavg_at_start'])}"
    )
    warm_page_cache(predictions, truth)

    runs: dict[str, list[dict[str, Any]]] = {tool: [] for tool in args.tools}
    for round_ in range(args.repeat):
        for tool in args.tools:
            label = f" (run {round_ + 1}/{args.repeat})" if args.repeat > 1 else ""
            print(f"running {tool}{label} ...", flush=True)
            outcome = run_tool(tool, predictions, truth, config, args.data_dir, args.timeout)
            runs[tool].append(outcome)
            shown = outcome.get("error") or f"{outcome['seconds']:.2f} s"
            print(f"  {shown}, {outcome['rss_mib']:,.0f} MiB", flush=True)
    results = {tool: best_of(outcomes) for tool, outcomes in runs.items()}

    print_table(results)
    for floor in FLOORS:
        if "receval" in results and floor in results:
            floor_ratio = ratio(results["receval"]["seconds"], results[floor]["seconds"])
            print(f"receval / {floor} floor: {fmt(floor_ratio, '.2f')}x")
    excused = {t: why for t in args.tools if (why := own_ties(t, shape, args.text_ids))}
    rows = agreement(results, excused)
    print_agreement(results, rows)
    checks = targets(results, data["prediction_rows"])
    if checks:
        print(f"\ntargets ({shape} shape)")
    for check in checks:
        print(f"  {'PASS' if check['passed'] else 'FAIL'}  {check['target']}: {check['shown']}")

    summary = {
        **info,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "command": sys.argv,
        "warm_up": warm_up,
        "results": results,
        "agreement": rows,
        "targets": checks,
    }
    out = args.data_dir / f"results_{predictions.stem.removeprefix('predictions_')}.json"
    out.write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    print(f"\nfull results: {out}")
    failed = [tool for tool, r in results.items() if "error" in r]
    if failed:
        print(f"failed: {', '.join(failed)} (see {args.data_dir}/log_<tool>.txt)")
    agreed = all(r["agree"] or r["excused"] for r in rows)
    return all(c["passed"] for c in checks) and agreed and not failed


if __name__ == "__main__":
    sys.exit(main())
