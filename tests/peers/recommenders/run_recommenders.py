"""Microsoft Recommenders' ranking metrics on the shared golden data (run by make.sh).

    tests/peers/recommenders/make.sh            # builds /tmp/golden-recommenders, runs both
    python run_recommenders.py DATASET OUT.json  # DATASET: ties, tiefree, ties_int, tiefree_int

Does not import receval. Feeds tests/peers/data/DATASET_{predictions,truth}.csv to
recommenders.evaluation.python_evaluation's precision_at_k, recall_at_k, map_at_k, map,
ndcg_at_k (score_type binary, raw, exp; discfun_type loge, the default, and log2) and
r_precision_at_k, with their defaults otherwise (relevancy_method="top_k"), at k = 1, 3,
5, 10, and writes the means and the per-user values.

How the data are fed (the library has no relevance threshold in its ranking metrics: every
row of rating_true is a relevant item, and relevancy_method="by_threshold" only uses
`threshold` as the number of top items, another k):
  rating_true  the ground-truth rows with relevance >= 1, as (userID, itemID, rating) with
               rating = the grade (1-3); ndcg_at_k's score_type raw / exp use it as the
               gain. Grade-0 rows are left out, so users whose rows are all grade 0 are not
               in rating_true.
  rating_pred  every prediction row, as (userID, itemID, prediction) with prediction = the
               score.

Per-user values: the functions return only the mean, so each user's value is the same
function called on that user's rows alone (every metric is a mean of per-user values over
a population; the script checks that this mean over the population read from the source
gives the function's value on the whole data).
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from recommenders.evaluation import python_evaluation as pe

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import read_frames, versions

DATA = Path(__file__).resolve().parent.parent / "data"
CUTOFFS = (1, 3, 5, 10, 30)  # 30: beyond every list (the longest has 24 items)

FEEDING = {
    "rating_true": (
        "ground-truth rows with relevance >= 1 as (userID, itemID, rating), rating = the grade "
        "(1-4, 2.5 included, as float); grade-0, 0.5 and -1 rows are left out (every "
        "rating_true row is relevant to the library), so "
        "users whose rows are all grade 0 are absent"
    ),
    "rating_pred": "every prediction row as (userID, itemID, prediction), prediction = score",
    "ids": "strings; the _int datasets' ids as integers (int64)",
    "call": "f(rating_true, rating_pred, k=k, **variant); other arguments at their defaults",
}
BOTH = "users in rating_true and rating_pred (n_users of merge_ranking_true_pred)"
POPULATION = {
    "precision_at_k": BOTH,
    "recall_at_k": BOTH,
    "map_at_k": BOTH,
    "map": BOTH,
    "ndcg_at_k": "users in rating_true (outer merge with rating_true; no prediction: 0)",
    "r_precision_at_k": (
        "users in both with at least one hit at rank <= min(k, |R|): the others are NaN in "
        "a pandas division and mean() skips them"
    ),
}


def load(dataset: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    predictions, truth = read_frames(dataset)
    relevant = truth[truth["relevance"] >= 1].reset_index(drop=True)
    rating_true = pd.DataFrame(
        {"userID": relevant["user"], "itemID": relevant["item"], "rating": relevant["relevance"]}
    )
    rating_pred = pd.DataFrame(
        {
            "userID": predictions["user"],
            "itemID": predictions["item"],
            "prediction": predictions["score"],
        }
    )
    return rating_true, rating_pred


def calls() -> list[tuple[str, str, Callable[..., float], dict[str, object], bool]]:
    """(key, function name, function, keyword arguments, keep per-user values)."""
    out = []
    for k in CUTOFFS:
        for function in (pe.precision_at_k, pe.recall_at_k, pe.map_at_k, pe.map):
            out.append((f"{function.__name__}(k={k})", function.__name__, function, {"k": k}, True))
        for discfun in ("loge", "log2"):
            for score_type in ("binary", "raw", "exp"):
                kwargs = {"k": k, "score_type": score_type, "discfun_type": discfun}
                key = f"ndcg_at_k(k={k},score_type={score_type},discfun_type={discfun})"
                out.append((key, "ndcg_at_k", pe.ndcg_at_k, kwargs, discfun == "loge"))
        out.append(
            (f"r_precision_at_k(k={k})", "r_precision_at_k", pe.r_precision_at_k, {"k": k}, True)
        )
    return out


def population(name: str, rating_true: pd.DataFrame, rating_pred: pd.DataFrame) -> list[object]:
    users = set(rating_true["userID"])
    if name != "ndcg_at_k":
        users &= set(rating_pred["userID"])
    return sorted(users)


def number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def run(dataset: str) -> dict[str, object]:
    rating_true, rating_pred = load(dataset)
    metrics: dict[str, object] = {}
    for key, name, function, kwargs, keep in calls():
        mean = float(function(rating_true, rating_pred, **kwargs))
        users = population(name, rating_true, rating_pred)
        per_user = {
            str(user): number(
                function(
                    rating_true[rating_true["userID"] == user],
                    rating_pred[rating_pred["userID"] == user],
                    **kwargs,
                )
            )
            for user in users
        }
        if name == "r_precision_at_k":  # NaN (no hit at rank <= min(k, |R|)) is skipped
            per_user = {u: v for u, v in per_user.items() if v}
        values = list(per_user.values())
        if any(v is None for v in values) or not math.isclose(
            mean, float(np.mean(values)), rel_tol=0, abs_tol=1e-12
        ):
            raise SystemExit(f"{key}: {mean} is not the mean of the per-user values")
        entry: dict[str, object] = {"mean": mean, "support": len(values)}
        if keep:
            entry["per_user"] = per_user
        metrics[key] = entry
    return {
        **versions("recommenders"),
        "dataset": dataset,
        "per_user_keys": "the user id as text (integer ids too)",
        "feeding": FEEDING,
        "population": POPULATION,
        "ties": (
            "get_top_k_items sorts by [userID, prediction] with DataFrame.sort_values on two "
            "columns (a stable lexsort): equal scores keep their order in rating_pred, the file "
            "order; deterministic on both datasets"
        ),
        "metrics": metrics,
    }


def main() -> None:
    warnings.filterwarnings("ignore", category=FutureWarning)
    dataset, out = sys.argv[1], Path(sys.argv[2])
    out.write_text(json.dumps(run(dataset), indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
