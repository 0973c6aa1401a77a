"""bench_diversity.py --part peers: Jurity's, MS Recommenders' and RecTools' diversity and
novelty measures beside receval's, each a whole process on the same data.

The data: `users` users with exactly 20 distinct items each (popular items, low ids, come
up more often; scores 1, 0.95, ..., rank 1..20), a catalog of `items` items with one
category of 20 (the item features), and an interactions log (10 skewed draws per user,
less the pairs the user is recommended, as MS Recommenders demands; plus one row per
catalog item from 1,000 other users, so that every item has a popularity; (user, item)
pairs unique). Every list has 20 items, so MS Recommenders' novelty (a mean over all
recommendations) is the mean over users. Parquet for receval, CSV for the peers' pandas.

Each peer measure runs in its own process with its library's Python
(benchmarks/peers/diversity_children.py; venvs from benchmarks/peers/make_*.sh), and
receval runs its equivalent metric alone, in its own process, under the matching preset
or parameters:

    library           its measure                  receval (preset, else default conventions)
    Jurity 2.1.0      InterListDiversity, exact    inter_list_diversity@20 (jurity), on a
                      on a 10k-user sample         10k-user sample (Jurity's samples estimate)
                      IntraListDiversity (cosine   intra_list_diversity@20(feature=category)
                      on the one-hot category)     (jurity)
                      (no novelty measure in Jurity 2.1.0)
    MS Recommenders   diversity(item_feature_      intra_list_diversity@20(feature=category)
    1.2.1             vector: one-hot category)    (recommenders)
                      novelty                      novelty@20 (recommenders: unseen=zero)
                      diversity (co-occurrence)    no receval twin: timed only
    RecTools 0.19.0   IntraListDiversity (Hamming  intra_list_diversity@20(feature=category)
                      distance on the category)
                      MeanInvUserFreq              novelty@20(share=users)
                      Serendipity                  no twin (another definition): timed only

A process past `timeout` seconds or `max_rss_mib` is stopped and recorded so.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench import child_env, spawn

HERE = Path(__file__).resolve().parent
K = 20
CATEGORIES = 20
LOG_DRAWS = 10
SAMPLE = 10_000
CHILDREN = HERE / "peers" / "diversity_children.py"


def generate(users: int, items: int, folder: Path, seed: int = 11) -> dict[str, Path]:
    """The peers' data (module docstring), Parquet and CSV; reused when present."""
    import numpy as np
    import polars as pl

    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"peers_{users}_{items}"
    stem.mkdir(exist_ok=True)
    names = ("predictions", "catalog", "log", "truth", "sample")
    paths = {n: stem / f"{n}.parquet" for n in names}
    paths.update({f"{n}_csv": stem / f"peers_{n}.csv" for n in names})
    if all(p.exists() for p in paths.values()):
        return paths
    from bench_diversity import skewed_lists

    rng = np.random.default_rng(seed)
    frame = (
        skewed_lists(rng, users, items, draws=2 * K)
        .filter(pl.len().over("user") == K)
        .with_columns(
            (1.0 - pl.col("position") / K).alias("score"),
            (pl.col("position") + 1).alias("rank"),
        )
        .drop("position")
    )
    short = users - frame.get_column("user").n_unique()
    assert short == 0, f"{short} users drew fewer than {K} distinct items"
    catalog = pl.DataFrame(
        {
            "item": np.arange(items, dtype=np.int64),
            "category": rng.integers(0, CATEGORIES, items).astype(np.int64),
        }
    )
    drawn = pl.DataFrame(
        {
            "user": np.repeat(np.arange(users, dtype=np.int64), LOG_DRAWS),
            "item": (items * rng.random(users * LOG_DRAWS) ** 2).astype(np.int64),
        }
    )
    # one row per item from users outside the lists (ids from `users` on), so that every
    # item has a popularity; MS Recommenders refuses a recommended pair already in the log
    every_item = pl.DataFrame(
        {"user": users + np.arange(items, dtype=np.int64) % 1000, "item": np.arange(items)}
    )
    drawn = drawn.join(frame.select("user", "item"), on=["user", "item"], how="anti")
    log = pl.concat([drawn, every_item]).unique(maintain_order=True)
    truth = frame.filter(pl.col("rank") == 3).select("user", "item")
    sample_users = rng.choice(users, size=min(SAMPLE, users), replace=False)
    sample = frame.filter(pl.col("user").is_in(sample_users.tolist()))
    for name, table in (
        ("predictions", frame),
        ("catalog", catalog),
        ("log", log),
        ("truth", truth),
        ("sample", sample),
    ):
        table.write_parquet(paths[name])
        table.write_csv(paths[f"{name}_csv"])
    return paths


# (peer, its measure, the child's measure key or None: Jurity's inter-list child,
#  receval's metric or None, receval's preset or None)
ROWS: tuple[tuple[str, str, str | None, str | None, str | None], ...] = (
    (
        "jurity",
        "InterListDiversity, exact, 10k-user sample",
        None,
        f"inter_list_diversity@{K}",
        "jurity",
    ),
    (
        "jurity",
        "IntraListDiversity (one-hot category)",
        "intra",
        f"intra_list_diversity@{K}(feature=category)",
        "jurity",
    ),
    (
        "recommenders",
        "diversity(item_feature_vector)",
        "diversity_features",
        f"intra_list_diversity@{K}(feature=category)",
        "recommenders",
    ),
    ("recommenders", "novelty", "novelty", f"novelty@{K}", "recommenders"),
    ("recommenders", "diversity (co-occurrence)", "diversity_cooccurrence", None, None),
    (
        "rectools",
        "IntraListDiversity (Hamming, category)",
        "intra",
        f"intra_list_diversity@{K}(feature=category)",
        None,
    ),
    ("rectools", "MeanInvUserFreq", "miuf", f"novelty@{K}(share=users)", None),
    ("rectools", "Serendipity", "serendipity", None, None),
)
LIBRARY = {
    "jurity": "Jurity 2.1.0",
    "recommenders": "MS Recommenders 1.2.1",
    "rectools": "RecTools 0.19.0",
}


def receval_config(
    paths: dict[str, Path], metrics: list[str], preset: str | None, sample: bool, name: str
) -> Path:
    config: dict[str, Any] = {
        "predictions": {"path": str(paths["sample" if sample else "predictions"])},
        "ground_truth": {"path": str(paths["truth"])},
        "catalog": {"path": str(paths["catalog"]), "columns": {"category": "category"}},
        "interactions": {"path": str(paths["log"])},
        "metrics": metrics,
    }
    if preset is not None:
        config["conventions"] = {"preset": preset}
    path = paths["predictions"].parent / f"{name}.json.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    return path


def run_receval(config: Path, work: Path, timeout: float, max_rss_mib: float) -> dict[str, Any]:
    result = work / f"{config.stem}.result.json"
    result.unlink(missing_ok=True)
    receval = Path(sys.executable).with_name("receval")
    command = [str(receval), "run", str(config), "--format", "json", "--output", str(result)]
    command.append("--quiet")
    outcome = spawn(command, work / f"{config.stem}.log", timeout, child_env(work), max_rss_mib)
    if "error" not in outcome:
        report = json.loads(result.read_text(encoding="utf-8"))
        outcome["metrics"] = report["models"]["model"]["metrics"]
    return outcome


def run_peer(
    python: str, peer: str, measure: str, folder: Path, timeout: float, max_rss_mib: float
) -> dict[str, Any]:
    result = folder / f"{peer}_{measure}.result.json"
    result.unlink(missing_ok=True)
    command = [python, str(CHILDREN), peer, measure, str(folder), str(result)]
    log = folder / f"{peer}_{measure}.log"
    outcome = spawn(command, log, timeout, child_env(folder.parent), max_rss_mib)
    if "error" not in outcome:
        outcome.update(json.loads(result.read_text(encoding="utf-8")))
    return outcome


def run_jurity_inter(
    python: str, folder: Path, timeout: float, max_rss_mib: float
) -> dict[str, Any]:
    from bench_diversity import JURITY_CHILD

    script = folder / "jurity_inter_child.py"
    script.write_text(JURITY_CHILD, encoding="utf-8")
    result = folder / "jurity_inter.result.json"
    result.unlink(missing_ok=True)
    command = [python, str(script), str(folder / "peers_sample.csv"), str(result), "exact", str(K)]
    log = folder / "jurity_inter.log"
    outcome = spawn(command, log, timeout, child_env(folder.parent), max_rss_mib)
    if "error" not in outcome:
        outcome.update(json.loads(result.read_text(encoding="utf-8")))
    return outcome


def _seconds(row: dict[str, Any] | None) -> str:
    if row is None:
        return "-"
    if row.get("seconds") is not None and "error" in row:
        return f"failed ({row['error'][-200:]})"
    if row.get("seconds") is None:
        after = row.get("killed_after_s")
        return f"stopped ({row.get('error', '')}{f', {after:.0f} s' if after else ''})"
    return f"{row['seconds']:.2f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if not a or not b else f"{a / b:.1f}x"


def run_peers(
    users: int,
    items: int,
    pythons: dict[str, str],
    timeout: float,
    max_rss_mib: float,
    only: set[str] | None = None,
) -> list[dict[str, Any]]:
    """Generate (in a child process), run every row, print the table; return the rows."""
    work = HERE / "data"
    work.mkdir(exist_ok=True)
    command = [sys.executable, __file__, "--generate-only", str(users), str(items)]
    made = spawn(command, work / "generate_peers.log", timeout, child_env(work))
    if "error" in made:
        raise SystemExit(f"generating the peers' data failed: {made['error']}")
    paths = generate(users, items, work)
    folder = paths["predictions"].parent
    print(f"peers' data: {users} users x {K} items, {items} catalog items, {folder}")
    rows = []
    for peer, measure, key, metric, preset in ROWS:
        if only and peer not in only:
            continue
        if key is None:
            outcome = run_jurity_inter(pythons[peer], folder, timeout, max_rss_mib)
        else:
            outcome = run_peer(pythons[peer], peer, key, folder, timeout, max_rss_mib)
        row: dict[str, Any] = {"peer": peer, "measure": measure, "metric": metric}
        row["preset"] = preset
        row["peer_run"] = outcome
        if metric is not None:
            sample = key is None
            name = f"receval_{peer}_{key or 'inter'}"
            config = receval_config(paths, [metric], preset, sample, name)
            row["receval_run"] = run_receval(config, folder, timeout, max_rss_mib)
        rows.append(row)
        print_row(row)
    # every receval metric above (but the sample's) in one process: they share the read
    together = sorted({r[3] for r in ROWS if r[3] and r[2]} | {f"novelty@{K}(unseen=zero)"})
    config = receval_config(paths, together, None, False, "receval_together")
    combined = run_receval(config, folder, timeout, max_rss_mib)
    print_table(rows, users)
    print(
        f"\nreceval, {', '.join(together)} in one process (all users): "
        f"{_seconds(combined)} s, {combined.get('rss_mib', 0):,.0f} MiB"
    )
    rows.append({"together": together, "receval_run": combined})
    return rows


def print_row(row: dict[str, Any]) -> None:
    peer, mine = row["peer_run"], row.get("receval_run")
    value = peer.get("value")
    ours = None if mine is None else mine.get("metrics", {}).get(row["metric"])
    print(
        f"  {row['peer']:13} {row['measure']:45} {_seconds(peer):>10} "
        f"{peer.get('rss_mib', 0):7.0f} MiB  value {value}  receval {_seconds(mine)} {ours}",
        flush=True,
    )


def print_table(rows: list[dict[str, Any]], users: int) -> None:
    print(f"\n{users} users: seconds (whole process) and peak RSS MiB")
    print(
        "| library | its measure | s | MiB | receval metric (preset) | s | MiB | time ratio "
        "| RSS ratio | value | abs. difference |"
    )
    print("|---|---|---:|---:|---|---:|---:|---:|---:|---|---:|")
    for row in rows:
        peer, mine = row["peer_run"], row.get("receval_run") or {}
        value = peer.get("value")
        ours = mine.get("metrics", {}).get(row["metric"]) if row["metric"] else None
        gap = "-" if value is None or ours is None else f"{abs(value - ours):.1e}"
        metric = row["metric"] or "(none)"
        if row["preset"]:
            metric += f" ({row['preset']})"
        shown = "-" if value is None else f"{value:.12f}"
        print(
            f"| {LIBRARY[row['peer']]} | {row['measure']} | {_seconds(peer)} | "
            f"{peer.get('rss_mib', 0):,.0f} | {metric} | {_seconds(mine) if mine else '-'} | "
            f"{mine.get('rss_mib', 0):,.0f} | {_ratio(peer.get('seconds'), mine.get('seconds'))} | "
            f"{_ratio(peer.get('rss_mib'), mine.get('rss_mib'))} | {shown} | {gap} |"
        )


if __name__ == "__main__" and sys.argv[1:2] == ["--generate-only"]:
    generate(int(sys.argv[2]), int(sys.argv[3]), HERE / "data")
