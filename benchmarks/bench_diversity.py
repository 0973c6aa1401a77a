"""Inter-list diversity, exact, on 1M users x 20 items, beside Jurity on a sample; and
Jurity's, MS Recommenders' and RecTools' diversity and novelty beside receval (--part peers).

    cd /work/main
    UV_PROJECT_ENVIRONMENT=/tmp/bench-venv uv run --group bench python benchmarks/bench_diversity.py
    ... --users 20000                 # a quick run
    ... --jurity-python PATH          # Jurity's interpreter (default /tmp/bench-jurity/bin/python,
                                      # made by benchmarks/peers/make_jurity.sh)
    ... --part peers                  # only the peers' diversity and novelty (diversity_peers.py)
    ... --part peers --peer-users 2000  # a quick run (recorded: 20000 100000, the default)
    ... --part inter                  # only the inter-list benchmark below

The peers' environments: benchmarks/peers/make_{jurity,recommenders,rectools}.sh.

Jurity builds the user-by-user cosine matrix, so by default it estimates the metric from 10
samples of 10,000 users. receval computes it exactly over every user (a sum over items of
count products, grouped by list length). The script times, each in its own process:

    receval (all users)     inter_list_diversity@20 + catalog_coverage, gini, entropy @20
    receval (sample)        inter_list_diversity@20 on a 10,000-user sample
    jurity (sample)         Jurity's exact value (user_sample_size=None) on the same sample
    jurity (default)        Jurity's default estimate (10 runs x 10,000 users) on all users

and checks that receval and Jurity agree on the sample (to 1e-9) and that Jurity's estimate
is near receval's exact value. Data (Parquet for receval, CSV for Jurity's pandas) goes to
benchmarks/data/ (git-ignored) and is reused.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench import child_env, spawn

HERE = Path(__file__).resolve().parent
K = 20


def skewed_lists(rng: Any, users: int, items: int, draws: int) -> Any:
    """Each user's first K distinct items of `draws` draws, popular items (low ids) coming
    up more often: a polars DataFrame of user, item and position (0 first), in draw order."""
    import numpy as np
    import polars as pl

    user = np.repeat(np.arange(users, dtype=np.int64), draws)
    item = (items * rng.random(users * draws) ** 2).astype(np.int64)
    return (
        pl.DataFrame({"user": user, "item": item})
        .unique(["user", "item"], keep="first", maintain_order=True)
        .with_columns(pl.int_range(pl.len()).over("user").alias("position"))
        .filter(pl.col("position") < K)
    )


def generate(users: int, items: int, folder: Path, seed: int = 7) -> dict[str, Path]:
    """Lists of up to 20 distinct items per user; popular items (low ids) come up more."""
    import numpy as np
    import polars as pl

    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "predictions": folder / f"div_{users}_predictions.parquet",
        "truth": folder / f"div_{users}_truth.parquet",
        "catalog": folder / f"div_{users}_catalog.parquet",
        "sample_predictions": folder / f"div_{users}_sample_predictions.parquet",
        "sample_csv": folder / f"div_{users}_sample.csv",
        "all_csv": folder / f"div_{users}_all.csv",
    }
    if all(p.exists() for p in paths.values()):
        return paths
    rng = np.random.default_rng(seed)
    frame = (
        skewed_lists(rng, users, items, draws=24)
        .with_columns((1.0 - pl.col("position") / K).alias("score"))
        .drop("position")
    )
    frame.write_parquet(paths["predictions"])
    frame.group_by("user").agg(pl.col("item").first()).write_parquet(paths["truth"])
    pl.DataFrame({"item": np.arange(items, dtype=np.int64)}).write_parquet(paths["catalog"])
    sample_users = rng.choice(users, size=min(10_000, users), replace=False)
    sample = frame.filter(pl.col("user").is_in(sample_users.tolist()))
    sample.write_parquet(paths["sample_predictions"])
    sample.write_csv(paths["sample_csv"])
    frame.write_csv(paths["all_csv"])
    return paths


def receval_config(paths: dict[str, Path], predictions: Path, name: str, full: bool) -> Path:
    metrics = [f"inter_list_diversity@{K}"]
    if full:
        metrics += [f"catalog_coverage@{K}", f"gini@{K}", f"entropy@{K}"]
    config = {
        "predictions": {"path": str(predictions)},
        "ground_truth": {"path": str(paths["truth"])},
        "catalog": {"path": str(paths["catalog"])},
        "metrics": metrics,
        "conventions": {"users_without_relevant": "zero"},
    }
    path = predictions.parent / f"{name}.json.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    return path


JURITY_CHILD = """
import json, sys, time
import pandas as pd
from jurity.recommenders import InterListDiversity
path, result, mode = sys.argv[1], sys.argv[2], sys.argv[3]
frame = pd.read_csv(path)
started = time.perf_counter()
sample_size = None if mode == "exact" else 10000
metric = InterListDiversity(click_column="score", k=int(sys.argv[4]), user_id_column="user",
                            item_id_column="item", user_sample_size=sample_size)
value = metric.get_score(None, frame)
json.dump({"value": float(value), "compute_seconds": time.perf_counter() - started},
          open(result, "w"))
"""


def run_receval(config: Path, work: Path, timeout: float) -> dict[str, Any]:
    result = work / f"{config.stem}.result.json"
    receval = Path(sys.executable).with_name("receval")
    command = [str(receval), "run", str(config), "--format", "json", "--output", str(result)]
    outcome = spawn([*command, "--quiet"], work / f"{config.stem}.log", timeout, child_env(work))
    if "error" not in outcome:
        outcome["metrics"] = json.loads(result.read_text(encoding="utf-8"))["models"]["model"][
            "metrics"
        ]
    return outcome


def run_jurity(python: str, csv: Path, mode: str, work: Path, timeout: float) -> dict[str, Any]:
    script = work / "jurity_child.py"
    script.write_text(JURITY_CHILD, encoding="utf-8")
    result = work / f"jurity_{mode}.result.json"
    result.unlink(missing_ok=True)
    command = [python, str(script), str(csv), str(result), mode, str(K)]
    outcome = spawn(command, work / f"jurity_{mode}.log", timeout, child_env(work))
    if "error" not in outcome:
        outcome.update(json.loads(result.read_text(encoding="utf-8")))
    return outcome


PEER_PYTHONS = {
    "jurity": "/tmp/bench-jurity/bin/python",
    "recommenders": "/tmp/bench-recommenders/bin/python",
    "rectools": "/tmp/bench-rectools/bin/python",
}


def run_peer_part(args: argparse.Namespace) -> None:
    """--part peers: each size in turn (diversity_peers.py)."""
    from diversity_peers import run_peers

    pythons = {peer: getattr(args, f"{peer}_python") for peer in PEER_PYTHONS}
    results = {}
    for users in args.peer_users:
        only = set(args.peers) if args.peers else None
        max_rss_mib = args.peer_max_rss_gib * 1024
        rows = run_peers(users, args.peer_items, pythons, args.peer_timeout, max_rss_mib, only)
        results[str(users)] = rows
    if args.peer_json:
        args.peer_json.write_text(json.dumps(results, indent=1), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--jurity-python", default=PEER_PYTHONS["jurity"])
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--skip-jurity-default", action="store_true")
    parser.add_argument(
        "--part",
        choices=("all", "inter", "peers"),
        default="all",
        help="inter: receval's exact inter-list diversity beside Jurity's sample (the "
        "original benchmark); peers: Jurity, MS Recommenders and RecTools (all: both)",
    )
    parser.add_argument(
        "--peer-users",
        type=int,
        nargs="+",
        default=[20_000, 100_000],
        help="users of the peer comparison, one run per size (a quick run: 2000)",
    )
    parser.add_argument("--peer-items", type=int, default=2_000, help="catalog items (peers)")
    parser.add_argument("--peer-timeout", type=float, default=600, help="seconds (peers)")
    parser.add_argument("--peer-max-rss-gib", type=float, default=12, help="GiB (peers)")
    parser.add_argument("--peers", nargs="+", choices=sorted(PEER_PYTHONS), help="only these")
    for peer, python in PEER_PYTHONS.items():
        if peer != "jurity":
            parser.add_argument(f"--{peer}-python", default=python)
    parser.add_argument("--peer-json", type=Path, help="write the peer rows here as JSON")
    parser.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    work = HERE / "data"
    if args.part in ("all", "peers"):
        run_peer_part(args)
    if args.part == "peers":
        return 0
    if args.generate_only:
        generate(args.users, args.items, work)
        return 0
    started = time.perf_counter()
    # generated in a child process: a child forked from a big parent would report the
    # parent's pages in its peak RSS
    command = [sys.executable, __file__, "--generate-only", "--users", str(args.users)]
    command += ["--items", str(args.items)]
    made = spawn(command, work / "generate.log", args.timeout, child_env(work))
    if "error" in made:
        print(f"generating the data failed: {made['error']}")
        return 1
    paths = generate(args.users, args.items, work)  # the paths (the files exist)
    print(f"data: {args.users} users x up to {K} items ({time.perf_counter() - started:.1f} s)")
    rows: dict[str, dict[str, Any]] = {}
    full = receval_config(paths, paths["predictions"], f"div_full_{args.users}", True)
    rows["receval (all users, 4 metrics)"] = run_receval(full, work, args.timeout)
    only = receval_config(paths, paths["predictions"], f"div_only_{args.users}", False)
    rows["receval (all users, inter-list only)"] = run_receval(only, work, args.timeout)
    sample = receval_config(paths, paths["sample_predictions"], f"div_sample_{args.users}", False)
    rows["receval (10k-user sample)"] = run_receval(sample, work, args.timeout)
    python = args.jurity_python
    rows["jurity (10k-user sample, exact)"] = run_jurity(
        python, paths["sample_csv"], "exact", work, args.timeout
    )
    if not args.skip_jurity_default:
        rows["jurity (all users, default 10 x 10k sample)"] = run_jurity(
            python, paths["all_csv"], "default", work, args.timeout
        )
    name = f"inter_list_diversity@{K}"
    print(f"\n{'run':48} {'seconds':>8} {'peak MiB':>9}  value")
    for label, row in rows.items():
        value = row.get("value", row.get("metrics", {}).get(name))
        seconds = "failed" if row.get("seconds") is None else f"{row['seconds']:.2f}"
        shown = "" if value is None else f"{value:.12f}"
        print(f"{label:48} {seconds:>8} {row['rss_mib']:>9.0f}  {shown}  {row.get('error', '')}")
    exact_sample = rows["receval (10k-user sample)"].get("metrics", {}).get(name)
    jurity_sample = rows["jurity (10k-user sample, exact)"].get("value")
    if exact_sample is not None and jurity_sample is not None:
        gap = abs(exact_sample - jurity_sample)
        print(f"\nreceval vs Jurity on the same 10k users: |difference| = {gap:.2e}")
    receval_time = rows["receval (all users, inter-list only)"].get("seconds")
    jurity_time = rows["jurity (10k-user sample, exact)"].get("seconds")
    if receval_time and jurity_time:
        print(
            f"receval exact on {args.users} users takes {receval_time / jurity_time:.2f}x "
            "the time Jurity takes on 10,000 of them"
        )
    estimate = rows.get("jurity (all users, default 10 x 10k sample)", {}).get("value")
    exact = rows["receval (all users, inter-list only)"].get("metrics", {}).get(name)
    if estimate is not None and exact is not None:
        print(f"Jurity's sampled estimate is off the exact value by {abs(estimate - exact):.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
