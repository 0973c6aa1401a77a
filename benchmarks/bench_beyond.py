"""The beyond-accuracy metrics' cost over the ranking metrics alone: the same data
through two configs, each a whole `receval run` process, best of --repeat.

    cd /work/main
    uv run python benchmarks/bench_beyond.py                  # 100k users x 100 items = 10M rows
    uv run python benchmarks/bench_beyond.py --users 20000    # 2M rows, a quick run
    ... --breakdown                                           # also ndcg + each metric alone

The data (seeded numpy, written to benchmarks/data/beyond_<users>x<items>/, which git
ignores, and reused): predictions of `--items` distinct items per user drawn from 20,000
items with a popularity skew, random scores; a ground truth of 10 graded items per user;
an interactions log of 20 rows per user (popularity, what users knew); a catalog with a
category (20 values), 1-4 tags (out of 50) and a 16-dimensional embedding per item.

`--tied DIR` runs on the tied, large-catalog shape instead (benchmarks/shapes.py's files
in DIR, written there with the log and the catalog when missing: 10 x --users catalog
items in 20 categories, a log of 100 rows a user): `ranking` is bench.py's 36 values
(trec_eval's conventions), `declared` the same with the catalog and the log named in the
config but read by no metric, and `beyond` adds novelty@10, arp@10, catalog_coverage@10,
gini@10 and intra_list_diversity@10 by category. It prints each run's wall seconds and
CPU seconds (user + system: the fairer figure on a busy machine), the cost of the
declared inputs, and beyond / ranking (target: at most 2x).

`ranking` computes ndcg, precision, recall, map, mrr and hit_rate; `beyond` adds every
beyond-accuracy metric (coverage of catalog, predictions and users, novelty and novelty of
new items, serendipity, unexpectedness, intra-list diversity by category, tags and
embedding, inter-list diversity, gini, entropy, ARP, long-tail share), each at cutoffs
10, 20 and 50 and each on its own top k. The target: the whole `beyond` run takes at most
2x the `ranking` run (its extra cost at most 1x); the script exits 1 when it does not.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import bench

HERE = Path(__file__).resolve().parent
CUTOFFS = [10, 20, 50]
RANKING = ["ndcg", "precision", "recall", "map", "mrr", "hit_rate"]
BEYOND = [
    "catalog_coverage",
    "prediction_coverage",
    "user_coverage",
    "novelty",
    "{name: novelty, items: new}",
    "serendipity",
    "unexpectedness",
    "{name: intra_list_diversity, feature: category}",
    "{name: intra_list_diversity, feature: tags}",
    "{name: intra_list_diversity, feature: embedding}",
    "inter_list_diversity",
    "gini",
    "entropy",
    "arp",
    "long_tail_share",
]
TARGET = 2.0  # beyond / ranking, whole processes


def generate(users: int, per_user: int, folder: Path, catalog_items: int = 20_000) -> None:
    import numpy as np
    import polars as pl

    if (folder / "c.parquet").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    drawn = (catalog_items * rng.random(users * per_user * 2) ** 2).astype(np.int64)
    predictions = (
        pl.DataFrame({"user": np.repeat(np.arange(users), per_user * 2), "item": drawn})
        .unique(["user", "item"], maintain_order=True)
        .group_by("user", maintain_order=True)
        .head(per_user)
    )
    predictions = predictions.with_columns(score=pl.Series(rng.random(predictions.height)))
    predictions.write_parquet(folder / "p.parquet")
    truth = pl.DataFrame(
        {
            "user": np.repeat(np.arange(users), 10),
            "item": (catalog_items * rng.random(users * 10) ** 2).astype(np.int64),
            "rating": rng.integers(1, 6, users * 10),
        }
    ).unique(["user", "item"], maintain_order=True)
    truth.write_parquet(folder / "t.parquet")
    pl.DataFrame(
        {
            "user": rng.integers(0, users, users * 20),
            "item": (catalog_items * rng.random(users * 20) ** 2).astype(np.int64),
        }
    ).write_parquet(folder / "i.parquet")
    tags = [
        [f"t{rng.integers(50)}" for _ in range(rng.integers(1, 5))] for _ in range(catalog_items)
    ]
    pl.DataFrame(
        {
            "item": np.arange(catalog_items),
            "genre": [f"g{x}" for x in rng.integers(0, 20, catalog_items)],
            "tags": tags,
            "embedding": pl.Series(rng.normal(size=(catalog_items, 16)).tolist()),
        }
    ).write_parquet(folder / "c.parquet")


def write_config(folder: Path, name: str, metrics: list[str]) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(
        "predictions: {path: p.parquet}\n"
        "ground_truth: {path: t.parquet, columns: {relevance: rating}}\n"
        "catalog: {path: c.parquet, columns: {category: genre, tags: tags, embedding: embedding}}\n"
        "interactions: {path: i.parquet}\n"
        f"cutoffs: {CUTOFFS}\n"
        "conventions: {relevance_threshold: 4}\n"
        f"metrics: [{', '.join(metrics)}]\n",
        encoding="utf-8",
    )
    return path


def timed_run(config: Path) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of one whole `receval run` process (bench.py's spawn)."""
    seconds, rss, _ = timed_cpu(config)
    return seconds, rss


def timed_cpu(config: Path, output: Path | None = None) -> tuple[float, float, float]:
    """Seconds, peak RSS (MiB) and CPU seconds (the child's user + system time) of one
    whole `receval run` process (bench.py's spawn); the report to `output`."""
    import resource

    receval = Path(sys.executable).with_name("receval")
    output = output or config.with_suffix(".json")
    command = [str(receval), "run", str(config), "--quiet", "--format", "json", "-o", str(output)]
    log = output.with_suffix(".log")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    outcome = bench.spawn(command, log, 1800, bench.child_env(output.parent))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if "error" in outcome:
        raise SystemExit(f"{config.name}: {outcome['error']}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return outcome["seconds"], outcome["rss_mib"], cpu


TIED_BEYOND = [
    "novelty@10",
    "arp@10",
    "catalog_coverage@10",
    "gini@10",
    "{name: intra_list_diversity, feature: category, k: 10}",
]


def tied_configs(data: Path, users: int, work: Path) -> dict[str, Path]:
    """bench.py's config on the tied shape's files (absolute paths), as is (`ranking`),
    with the catalog and the log declared (`declared`), and with the five metrics
    (`beyond`), written to `work`."""
    import shapes

    found = shapes.generate(users, data, log=True)
    work.mkdir(parents=True, exist_ok=True)
    base = (
        f"predictions:\n  path: {found['predictions']}\n"
        "  columns: {user: user_id, item: item_id, score: score}\n"
        f"ground_truth:\n  path: {found['truth']}\n"
        "  columns: {user: user_id, item: item_id, relevance: rating}\n"
        "cutoffs: [1, 5, 10, 20, 50, 100]\n"
        "conventions: {tie_break: item_desc, users_without_recommendations: skip, "
        "ap_denominator: relevant}\n"
    )
    inputs = (
        f"catalog:\n  path: {found['catalog']}\n"
        "  columns: {item: item_id, category: category}\n"
        f"interactions:\n  path: {found['interactions']}\n"
        "  columns: {user: user_id, item: item_id}\n"
    )
    metrics = {"ranking": RANKING, "declared": RANKING, "beyond": RANKING + TIED_BEYOND}
    configs = {}
    for name, listed in metrics.items():
        text = base + f"metrics: [{', '.join(listed)}]\n" + ("" if name == "ranking" else inputs)
        configs[name] = work / f"tied_{name}.yaml"
        configs[name].write_text(text, encoding="utf-8")
    return configs


def tied(data: Path, users: int, repeat: int) -> int:
    """The tied shape: ranking, declared and beyond in rounds (each round runs the three
    one after the other, so a busy machine slows them alike); best of `repeat`."""
    configs = tied_configs(data, users, HERE / "data" / f"beyond_tied_u{users}")
    timed_cpu(configs["ranking"])  # warm-up: the children's bytecode, the page cache
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in configs}
    for _ in range(repeat):
        for name, config in configs.items():
            runs[name].append(timed_cpu(config))
    print(f"tied shape, {users:,} users x 100 items, catalog and log of {data}; best of {repeat}")
    best = {}
    for name, found in runs.items():
        wall = min(s for s, _, _ in found)
        cpu = min(c for _, _, c in found)
        rss = max(m for _, m, _ in found)
        best[name] = (wall, cpu)
        shown = ", ".join(f"{s:.2f}/{c:.2f}" for s, _, c in found)
        print(f"{name:8s} {wall:7.2f} s  cpu {cpu:6.2f} s  {rss:7,.0f} MiB  (wall/cpu: {shown})")
    for label, index in (("wall", 0), ("cpu", 1)):
        declared = best["declared"][index] - best["ranking"][index]
        ratio = best["beyond"][index] / best["ranking"][index]
        print(f"{label}: declared inputs +{declared:.2f} s; beyond / ranking = {ratio:.2f}x")
    ratio = best["beyond"][1] / best["ranking"][1]
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    print(f"{verdict}  beyond / ranking (cpu) = {ratio:.2f}x (target <= {TARGET:g}x)")
    return 0 if verdict == "PASS" else 1


def best_of(config: Path, repeat: int) -> tuple[float, float, list[float]]:
    runs = [timed_run(config) for _ in range(repeat)]
    return min(s for s, _ in runs), max(m for _, m in runs), [s for s, _ in runs]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--items", type=int, default=100, help="predictions per user")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--breakdown", action="store_true", help="ndcg + each metric alone")
    parser.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--tied", type=Path, metavar="DIR", help="the tied, large-catalog shape's files in DIR"
    )
    args = parser.parse_args()
    if args.tied is not None:
        return tied(args.tied, args.users, args.repeat)
    folder = HERE / "data" / f"beyond_{args.users}x{args.items}"
    if args.generate_only:
        generate(args.users, args.items, folder)
        return 0
    # in a child process: a child forked from a parent holding the data would count the
    # parent's pages in its peak RSS
    sizes = ["--users", str(args.users), "--items", str(args.items)]
    subprocess.run([sys.executable, __file__, "--generate-only", *sizes], check=True)
    print(f"{args.users * args.items:,} prediction rows in {folder}; cutoffs {CUTOFFS}")
    timed_run(write_config(folder, "ranking", RANKING))  # warm-up: the children's bytecode
    ranking = best_of(write_config(folder, "ranking", RANKING), args.repeat)
    beyond = best_of(write_config(folder, "beyond", RANKING + BEYOND), args.repeat)
    for name, (seconds, rss, runs) in (("ranking", ranking), ("beyond", beyond)):
        shown = ", ".join(f"{s:.2f}" for s in runs)
        print(f"{name:8s} {seconds:7.2f} s  {rss:7,.0f} MiB  (runs: {shown})")
    ratio = beyond[0] / ranking[0]
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    print(f"{verdict}  beyond / ranking = {ratio:.2f}x (target <= {TARGET:g}x)")
    if args.breakdown:
        alone = best_of(write_config(folder, "ndcg", ["ndcg"]), args.repeat)[0]
        print(f"\nndcg alone {alone:.2f} s; ndcg + one metric (extra over ndcg alone):")
        for n, metric in enumerate(BEYOND):
            seconds = best_of(write_config(folder, f"only_{n}", ["ndcg", metric]), args.repeat)[0]
            print(f"  {metric:50s} {seconds:6.2f} s  (+{seconds - alone:.2f})")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
