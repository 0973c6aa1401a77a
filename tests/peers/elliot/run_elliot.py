"""Golden values of Elliot's own RSP and REO (and its Popularity short head), on data this
script draws. Run by make.sh with a checkout of github.com/sisinflab/elliot:

    python run_elliot.py ELLIOT_SRC

ELLIOT_SRC holds elliot/evaluation/metrics/{base_metric,metrics_utils}.py,
elliot/evaluation/metrics/fairness/{rsp/rsp,reo/reo}.py and
elliot/evaluation/popularity_utils/popularity.py; only these files are loaded (Elliot's
package __init__ files import its whole framework), with numpy, pandas and scipy. Writes
data_<seed>/ (predictions, truth, log, catalog CSVs) and elliot.json beside this file.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
SEEDS = (1, 2, 3)
CUTOFFS = (3, 10)
POP_RATIOS = (0.8, 0.5)
ITEMS = [9, 10, 100, *range(11, 41)]


def load_elliot(src: Path) -> dict[str, types.ModuleType]:
    """Elliot's five files as modules of their own names, under empty stub packages."""
    for package in (
        "elliot",
        "elliot.evaluation",
        "elliot.evaluation.metrics",
        "elliot.evaluation.metrics.fairness",
        "elliot.evaluation.metrics.fairness.rsp",
        "elliot.evaluation.metrics.fairness.reo",
        "elliot.evaluation.popularity_utils",
    ):
        stub = types.ModuleType(package)
        stub.__path__ = [str(src / package.replace(".", "/"))]
        sys.modules[package] = stub
    loaded = {}
    for name in (
        "elliot.evaluation.metrics.base_metric",
        "elliot.evaluation.metrics.metrics_utils",
        "elliot.evaluation.metrics.fairness.rsp.rsp",
        "elliot.evaluation.metrics.fairness.reo.reo",
        "elliot.evaluation.popularity_utils.popularity",
    ):
        spec = importlib.util.spec_from_file_location(name, src / (name.replace(".", "/") + ".py"))
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        loaded[name.rsplit(".", 1)[1]] = module
    return loaded


def draw(seed: int) -> dict[str, Any]:
    """Integer ids whose text and number orders differ, tied scores, users on one side
    only, lists shorter than k, a log with repeated rows, items outside the catalog."""
    rng = random.Random(seed)
    users = [9, 10, 100, *range(1000, 1040)]
    predictions, truth, log = [], [], []
    for index, user in enumerate(users):
        if index % 7 != 3:
            for item in rng.sample(ITEMS, rng.choice([2, 4, 9, 15, 20])):
                predictions.append((user, item, rng.choice([0.1, 0.5, 0.5, 0.9])))
        if index % 5 != 2:
            for item in rng.sample(ITEMS, rng.choice([2, 4, 8])):
                truth.append((user, item, rng.choice([0, 1, 1, 2])))
        for item in rng.sample(ITEMS, rng.choice([0, 3, 6])):
            log += [(user, item)] * rng.choice([1, 1, 2])
    categories = {item: rng.choice(["a", "b", "c"]) for item in ITEMS[:-3]}
    return {"predictions": predictions, "truth": truth, "log": log, "categories": categories}


def write_data(folder: Path, data: dict[str, Any]) -> None:
    folder.mkdir(exist_ok=True)
    rows = "".join(f"{u},{i},{s}\n" for u, i, s in data["predictions"])
    (folder / "predictions.csv").write_text("user,item,score\n" + rows)
    rows = "".join(f"{u},{i},{g}\n" for u, i, g in data["truth"])
    (folder / "truth.csv").write_text("user,item,grade\n" + rows)
    (folder / "log.csv").write_text("user,item\n" + "".join(f"{u},{i}\n" for u, i in data["log"]))
    rows = "".join(f"{i},{c}\n" for i, c in data["categories"].items())
    (folder / "catalog.csv").write_text("item,category\n" + rows)


def elliot_inputs(data: dict[str, Any]) -> dict[str, Any]:
    """Elliot's recommendations (each list ordered by score descending, then item
    descending: receval's default tie_break), train_dict and relevant items (grade >= 1,
    receval's default relevance_threshold)."""
    lists: dict[int, list[tuple[int, float]]] = {}
    for user, item, score in data["predictions"]:
        lists.setdefault(user, []).append((item, score))
    recs = {u: sorted(p, key=lambda x: (-x[1], -x[0])) for u, p in lists.items()}
    train: dict[int, dict[int, float]] = {u: {} for u in recs}
    for user, item in data["log"]:
        train.setdefault(user, {})[item] = 1.0
    relevant: dict[int, list[int]] = {}
    for user, item, grade in data["truth"]:
        if grade >= 1:
            relevant.setdefault(user, []).append(item)
    return {"recs": recs, "train": train, "relevant": relevant}


def popularity_clusters(modules: dict[str, Any], data: dict[str, Any], ratio: float) -> dict:
    """Elliot's Popularity(data, pop_ratio) short head (0) and long tail (1). Its items'
    order (private_items) is item descending, so that ties in popularity fall as
    receval's default tie_break puts them (Elliot's own order comes from a set)."""
    pairs = sorted(set(data["log"]))
    items = sorted({i for _, i in pairs}, reverse=True)
    users = sorted({u for u, _ in pairs})
    column = {item: index for index, item in enumerate(items)}
    row = {user: index for index, user in enumerate(users)}
    matrix = sp.csr_matrix(
        (np.ones(len(pairs)), ([row[u] for u, _ in pairs], [column[i] for _, i in pairs])),
        shape=(len(users), len(items)),
    )
    dataset = types.SimpleNamespace(
        sp_i_train=matrix, private_items=dict(enumerate(items)), transactions=len(pairs)
    )
    popularity = modules["popularity"].Popularity(dataset, pop_ratio=ratio)
    head = popularity.get_short_head()
    return {**dict.fromkeys(head, 0), **dict.fromkeys(popularity.get_long_tail(), 1)}


def run_metric(cls: Any, inputs: dict[str, Any], clusters: dict[int, int], k: int) -> dict:
    """The metric's overall value and its per-cluster probabilities, by cluster id."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "clusters.tsv"
        path.write_text("".join(f"{item}\t{cluster}\n" for item, cluster in clusters.items()))
        relevance = types.SimpleNamespace(
            binary_relevance=types.SimpleNamespace(
                get_user_rel=lambda u: inputs["relevant"].get(u, [])
            )
        )
        objects = types.SimpleNamespace(
            cutoff=k, data=types.SimpleNamespace(train_dict=inputs["train"]), relevance=relevance
        )
        extra = {"clustering_file": str(path), "clustering_name": "groups"}
        metric = cls(inputs["recs"], None, None, objects, extra)
        values = [float(m.eval()) for m in metric.get()]
    return {"value": values[-1], "per_group": values[:-1]}


def main() -> None:
    modules = load_elliot(Path(sys.argv[1]))
    rsp, reo = modules["rsp"].RSP, modules["reo"].REO
    golden: dict[str, Any] = {}
    for seed in SEEDS:
        data = draw(seed)
        write_data(HERE / f"data_{seed}", data)
        inputs = elliot_inputs(data)
        names = sorted(set(data["categories"].values()))
        groupings = {
            "category": ({i: names.index(c) for i, c in data["categories"].items()}, names)
        }
        for ratio in POP_RATIOS:
            groupings[f"popularity,{ratio}"] = (
                popularity_clusters(modules, data, ratio),
                ["head", "tail"],
            )
        for label, (clusters, group_names) in groupings.items():
            for k in CUTOFFS:
                for name, cls in (("rsp", rsp), ("reo", reo)):
                    found = run_metric(cls, inputs, clusters, k)
                    key = f"{seed}|{label}|{k}|{name}"
                    golden[key] = {
                        "value": found["value"],
                        "per_group": dict(zip(group_names, found["per_group"], strict=True)),
                    }
    text = json.dumps(golden, indent=1, sort_keys=True, allow_nan=True)
    (HERE / "elliot.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
