"""Jurity's ranking metrics on the shared golden data (run by make.sh in its own venv).

    tests/peers/jurity/make.sh            # builds /tmp/golden-jurity, runs this for both datasets
    python run_jurity.py DATASET OUT.json  # DATASET: ties, tiefree, ties_int, tiefree_int

Does not import receval. Feeds tests/peers/data/DATASET_{predictions,truth}.csv to
jurity.recommenders' Precision, Recall, MAP and NDCG with their defaults, at k = 1, 3, 5,
10, and writes the means, the support (users in each mean) and the per-user values.

How the data are fed (Jurity's data model is binary clicks):
  actual_results    every ground-truth row: user_id, item_id, click = 1 if relevance >= 1
                    else 0. Jurity keeps only the rows with click == 1 (`astype(bool)`), so
                    grade-0 rows are judged non-clicks and users with only grade-0 rows
                    have no click and drop out of every metric.
  predicted_results every prediction row: user_id, item_id, click = the score. Jurity ranks
                    by the column named like the click column (`get_sorted_clicks`).

Per-user values: Jurity computes a per-user array and averages it; `get_score(...,
batch_accumulate=True)` keeps that array in the metric's `_results`. The array is in the
order of pandas' groupby (users sorted), and carries no labels, so this script labels it
with the sorted user population of that metric and then checks every label by running the
same metric on that one user's rows alone.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from jurity import utils as jurity_utils
from jurity.recommenders import MAP, NDCG, Precision, Recall

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import read_frames, versions


def no_cache() -> None:
    """Jurity 2.1.0 memoizes get_sorted_clicks (utils_hash.lru_cache_df, 5 entries) on a
    hash of `frame.values.tobytes()` and the column names: not the index, which holds the
    ids once get_score has set (user_id, item_id) as the index. Two frames with the same
    scores but other ids (tiefree and tiefree_int; two users alone with equal scores) then
    get the first one's top k. Every call here starts from an empty cache."""
    jurity_utils.get_sorted_clicks.cache_clear()


DATA = Path(__file__).resolve().parent.parent / "data"
CUTOFFS = (1, 3, 5, 10, 30)  # 30: beyond every list (the longest has 24 items)
CLICK = "click"
METRICS = (Precision, Recall, MAP, NDCG)
# Jurity's `merged.fillna(False)` warns on pandas 2.3 (object downcasting); values unaffected
warnings.filterwarnings("ignore", category=FutureWarning, module="jurity")

FEEDING = {
    "actual_results": (
        "every ground-truth row as (user_id, item_id, click) with click = 1 if relevance >= 1 "
        "else 0 (grades 0-4 with 2.5 and -1: 2.5 is a click, 0.5 and -1 are not); "
        "Jurity keeps the rows with click == 1, so grade-0 rows are non-clicks and "
        "users whose rows are all grade 0 have no click"
    ),
    "predicted_results": (
        "every prediction row as (user_id, item_id, click) with click = the score: Jurity "
        "ranks each user's items by the column named like click_column, descending"
    ),
    "ids": "strings; the _int datasets' ids as integers (int64)",
    "call": "Metric(click_column='click', k=k).get_score(actual_results, predicted_results)",
}
POPULATION = {
    "Precision": "users with a click and at least one prediction",
    "MAP": "users with a click and at least one prediction",
    "Recall": "users with a click (no prediction: 0)",
    "NDCG": "users with a click (no prediction: 0)",
}


def load(dataset: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    predictions, truth = read_frames(dataset)
    actual = pd.DataFrame(
        {
            "user_id": truth["user"],
            "item_id": truth["item"],
            CLICK: (truth["relevance"] >= 1).astype(int),
        }
    )
    predicted = pd.DataFrame(
        {
            "user_id": predictions["user"],
            "item_id": predictions["item"],
            CLICK: predictions["score"],
        }
    )
    return actual, predicted


def population(name: str, actual: pd.DataFrame, predicted: pd.DataFrame) -> list[object]:
    """The users of the metric's per-user array, in its order (pandas groupby: sorted)."""
    clicked = set(actual.loc[actual[CLICK] == 1, "user_id"])
    if name in ("Precision", "MAP"):
        clicked &= set(predicted["user_id"])
    return sorted(clicked)


def per_user_array(metric: object, actual: pd.DataFrame, predicted: pd.DataFrame) -> np.ndarray:
    no_cache()
    metric.get_score(actual, predicted, batch_accumulate=True)  # type: ignore[attr-defined]
    results = metric._results  # type: ignore[attr-defined]
    return np.concatenate(results) if results else np.array([])


def run(dataset: str) -> dict[str, object]:
    actual, predicted = load(dataset)
    metrics: dict[str, object] = {}
    for cls in METRICS:
        for k in CUTOFFS:
            metric = cls(click_column=CLICK, k=k)
            no_cache()
            extended = metric.get_score(actual, predicted, return_extended_results=True)
            name = type(metric).__name__
            users = population(name, actual, predicted)
            values = per_user_array(cls(click_column=CLICK, k=k), actual, predicted)
            if len(values) != len(users):
                raise SystemExit(f"{metric}: {len(values)} values for {len(users)} users")
            per_user = {u: float(v) for u, v in zip(users, values, strict=True)}
            labels = {u: str(u) for u in users}  # JSON keys: the id as text
            differ = []
            for user, value in per_user.items():  # check the labels: the user's rows alone
                no_cache()
                alone = cls(click_column=CLICK, k=k).get_score(
                    actual[actual["user_id"] == user], predicted[predicted["user_id"] == user]
                )
                if not math.isclose(alone, value, rel_tol=0, abs_tol=1e-12):
                    differ.append(user)
            if differ and dataset.startswith("tiefree"):
                raise SystemExit(f"{metric}: users {differ} score differently alone")
            mean = float(extended[name.lower()])
            if not math.isclose(mean, float(np.mean(values)), rel_tol=0, abs_tol=1e-12):
                raise SystemExit(f"{metric}: mean {mean} is not the mean of the per-user values")
            metrics[str(metric)] = {
                "mean": mean,
                "support": int(extended["support"]),
                "per_user": {labels[u]: v for u, v in per_user.items()},
            }
            if differ:  # ties: the unstable sort orders equal scores differently alone
                metrics[str(metric)]["users_scoring_differently_alone"] = [
                    labels[u] for u in differ
                ]
    return {
        **versions("jurity"),
        "dataset": dataset,
        "per_user_keys": "the user id as text (integer ids too)",
        "feeding": FEEDING,
        "population": POPULATION,
        "ties": (
            "get_sorted_clicks sorts with DataFrame.sort_values(click) (quicksort, not stable): "
            "the order of equal scores is the sort's, not the file's; compare on tiefree only"
        ),
        "metrics": metrics,
    }


def main() -> None:
    dataset, out = sys.argv[1], Path(sys.argv[2])
    out.write_text(json.dumps(run(dataset), indent=1, sort_keys=False) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
