"""The item-fairness metrics' hand cases and drawn inputs."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from cli_helpers import write, write_config

ITEMS = [9, 10, 100, *range(11, 31)]


def drawn(seed: int) -> dict[str, Any]:
    """Random inputs: predictions (user, item, score) with ties, truth (user, item,
    grade), a log (user, item) with repeats, the items' categories (None: the item is
    not in the catalog)."""
    rng = random.Random(seed)
    users = [9, 10, 100, *range(1000, 1025)]
    predictions, truth, log = [], [], []
    for index, user in enumerate(users):
        if index % 7 != 3:  # some users only in the ground truth
            for item in rng.sample(ITEMS, rng.choice([1, 2, 4, 9, 15])):
                predictions.append((user, item, rng.choice([0.1, 0.5, 0.5, 0.9])))
        if index % 5 != 2:  # some users only in the predictions
            for item in rng.sample(ITEMS, rng.choice([1, 3, 6])):
                truth.append((user, item, rng.choice([0, 1, 2])))
        for item in rng.sample(ITEMS, rng.choice([0, 2, 5])):
            log += [(user, item)] * rng.choice([1, 1, 2])
    categories = {item: rng.choice(["a", "b", "c", None]) for item in ITEMS[:-2]}
    return {"predictions": predictions, "truth": truth, "log": log, "categories": categories}


def write_inputs(folder: Path, data: dict[str, Any], metrics: list[str]) -> Path:
    rows = "".join(f"{u},{i},{s}\n" for u, i, s in data["predictions"])
    write(folder / "predictions.csv", "user,item,score\n" + rows)
    write(
        folder / "truth.csv",
        "user,item,grade\n" + "".join(f"{u},{i},{g}\n" for u, i, g in data["truth"]),
    )
    write(folder / "log.csv", "user,item\n" + "".join(f"{u},{i}\n" for u, i in data["log"]))
    lines = "".join(f"{i},{c}\n" for i, c in data["categories"].items() if c is not None)
    write(folder / "catalog.csv", "item,category\n" + lines)
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv", "columns": {"relevance": "grade"}},
        "interactions": {"path": "log.csv"},
        "catalog": {"path": "catalog.csv", "columns": {"category": "category"}},
        "metrics": metrics,
    }
    return write_config(folder, config)


def reference_inputs(data: dict[str, Any]) -> dict[str, Any]:
    """The lists ranked as receval ranks them (score descending, then item descending:
    the default tie_break), the users' log sets and relevant sets (grade >= 1)."""
    recs: dict[Any, list[Any]] = {}
    for user, item, score in data["predictions"]:
        recs.setdefault(user, []).append((score, item))
    ranked = {u: [i for _, i in sorted(p, key=lambda x: (-x[0], -x[1]))] for u, p in recs.items()}
    train: dict[Any, set[Any]] = {}
    for user, item in data["log"]:
        train.setdefault(user, set()).add(item)
    relevant: dict[Any, set[Any]] = {}
    for user, item, grade in data["truth"]:
        if grade >= 1:
            relevant.setdefault(user, set()).add(item)
    log_items = list(dict.fromkeys(i for _, i in data["log"]))
    order = sorted(log_items, reverse=True)  # the tie-break among equally popular items
    by_category: dict[str, set[Any]] = {}
    for item, category in data["categories"].items():
        if category is not None:
            by_category.setdefault(category, set()).add(item)
    return {
        "recs": ranked,
        "train": train,
        "relevant": relevant,
        "order": order,
        "category": by_category,
    }


CASES = [
    (3, "popularity", 0.8),
    (10, "popularity", 0.5),
    (10, "popularity", 0.8),
    (3, "category", None),
    (10, "category", None),
]


NAMES = ("rsp", "reo", "exposure_disparity")


def case_specs() -> list[str]:
    specs = []
    for k, groups, ratio in CASES:
        params = f"groups={groups}" + ("" if ratio is None else f",pop_ratio={ratio}")
        specs += [f"{name}@{k}({params})" for name in NAMES]
    return specs


HAND_PREDICTIONS = "user,item,score\n10,10,0.9\n10,100,0.5\n9,9,0.9\n9,100,0.9\n"


# user 100 is only in the ground truth; item 10 is user 9's at grade 2, user 9's 11 at 1
HAND_TRUTH = "user,item,grade\n10,100,1\n10,9,1\n9,11,1\n9,10,2\n100,9,1\n"


HAND_CATALOG = "item,category\n9,a\n10,a\n100,b\n11,b\n"


HAND_LOG = "user,item\n10,9\n10,9\n"


def hand_config(folder: Path, metrics: list[str], **extra: Any) -> Path:
    write(folder / "predictions.csv", HAND_PREDICTIONS)
    write(folder / "truth.csv", HAND_TRUTH)
    write(folder / "catalog.csv", HAND_CATALOG)
    write(folder / "log.csv", HAND_LOG)
    config: dict[str, Any] = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv", "columns": {"relevance": "grade"}},
        "interactions": {"path": "log.csv"},
        "catalog": {"path": "catalog.csv", "columns": {"category": "category"}},
        "metrics": metrics,
        **extra,
    }
    return write_config(folder, config)


GOLDEN = Path(__file__).resolve().parents[1] / "peers" / "elliot"


def golden_config(folder: Path, seed: int, metrics: list[str], **extra: Any) -> Path:
    data = GOLDEN / f"data_{seed}"
    config = {
        "predictions": {"path": str(data / "predictions.csv")},
        "ground_truth": {"path": str(data / "truth.csv"), "columns": {"relevance": "grade"}},
        "interactions": {"path": str(data / "log.csv")},
        "catalog": {"path": str(data / "catalog.csv"), "columns": {"category": "category"}},
        "metrics": metrics,
        **extra,
    }
    return write_config(folder, config)


def golden_spec(metric: str, grouping: str, k: int) -> str:
    if grouping == "category":
        return f"{metric}@{k}(groups=category)"
    return f"{metric}@{k}(pop_ratio={grouping.split(',')[1]})"
