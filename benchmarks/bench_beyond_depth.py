"""A beyond-accuracy metric beside a deep ranking metric: writes 2M prediction
rows (20k users x 100 items, random scores), a ground truth and a catalog with tags into
a folder, and three configs: intra_list_diversity@10(feature=tags) alone, ndcg@100 alone,
and both. Time each with `/usr/bin/time -f "%e s %M KB" receval run FOLDER/NAME.yaml -q`.

    uv run python benchmarks/bench_beyond_depth.py /tmp/depthbench
"""

import sys
from pathlib import Path

import numpy as np
import polars as pl

folder = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/depthbench")
folder.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(0)
users, per, n_items = 20000, 100, 5000
u = np.repeat(np.arange(users), per)
items = np.concatenate([rng.choice(n_items, per, replace=False) for _ in range(users)])
pl.DataFrame({"user": u, "item": items, "score": rng.random(users * per)}).write_parquet(
    folder / "p.parquet"
)
t_items = np.concatenate([rng.choice(n_items, 5, replace=False) for _ in range(users)])
pl.DataFrame({"user": np.repeat(np.arange(users), 5), "item": t_items}).write_parquet(
    folder / "t.parquet"
)
tags = [[f"t{rng.integers(50)}" for _ in range(rng.integers(1, 5))] for _ in range(n_items)]
pl.DataFrame({"item": np.arange(n_items), "tags": tags}).write_parquet(folder / "c.parquet")
for name, metrics in (
    ("alone", ["intra_list_diversity@10(feature=tags)"]),
    ("beside", ["intra_list_diversity@10(feature=tags)", "ndcg@100"]),
    ("ndcg", ["ndcg@100"]),
):
    (folder / f"{name}.yaml").write_text(
        "predictions: {path: p.parquet}\nground_truth: {path: t.parquet}\n"
        "catalog: {path: c.parquet, columns: {tags: tags}}\n"
        f"metrics: {metrics}\n"
    )
