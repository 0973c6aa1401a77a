"""MS Recommenders' co-occurrence diversity and serendipity on tests/peers/peer_metrics_data
(run by make.sh; does not import receval).

    /tmp/golden-recommenders/bin/python run_recommenders_cooccurrence.py [OUT.json]
    # default OUT: cooccurrence.json here

How 1.2.1 computes them (python_evaluation.py, read from the installed source), with the
default item_sim_measure="item_cooccurrence_count":
  similarity   _get_cooccurrence_similarity(train_df): for i1 <= i2, the rows of the
               self-join of train_df on the user (the users with both, when train_df
               repeats no row) / (sqrt(rows of i1) * sqrt(rows of i2)); a pair no user has
               both of is absent (its similarity is filled with 0)
  user_diversity  1 - the mean similarity over the pairs of the user's reco items (users
               with one item have no pair and no row); diversity: their mean
  user_serendipity  per recommended item: (1 - the mean similarity to the items of the
               user's train rows) * relevance (1 without col_relevance), then the mean over
               the user's recommended items; users absent from train_df have no row
               (an inner merge); serendipity: the mean over users
train_df and reco_df must not share a (user, item) pair (the library raises), so the
recommendations are fresh_predictions.csv (none of the user's log items).

Feeding (ids as int64):
  train_df  log.csv as (userID, itemID)
  reco_df   get_top_k_items(fresh_predictions.csv as (userID, itemID, prediction), k=k)
            (a stable sort by [userID, prediction]: tied scores keep their file order)
  with relevance: reco_df gets a `relevance` column, 1.0 when truth.csv grades the pair
            >= 1, else 0.0, passed as col_relevance="relevance"
k = 1, 3, 5, 10, 30 (30: beyond every list).
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import pandas as pd
from recommenders.evaluation import python_evaluation as pe

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import output, versions

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "peer_metrics_data"
CUTOFFS = (1, 3, 5, 10, 30)
USER, ITEM, PREDICTION = "userID", "itemID", "prediction"


def read(name: str) -> pd.DataFrame:
    data = pd.read_csv(DATA / name, dtype={"user": "int64", "item": "int64"})
    return data.rename(columns={"user": USER, "item": ITEM})


def per_user(frame: pd.DataFrame, column: str) -> dict[str, float]:
    return {str(int(u)): float(v) for u, v in frame[[USER, column]].values}


def run_cutoff(train: pd.DataFrame, predictions: pd.DataFrame, truth: pd.DataFrame, k: int):
    reco = pe.get_top_k_items(predictions, col_user=USER, col_rating=PREDICTION, k=k)
    reco = reco[[USER, ITEM]]
    relevant = truth[truth["relevance"] >= 1][[USER, ITEM]].assign(relevance=1.0)
    rated = reco.merge(relevant, on=[USER, ITEM], how="left").fillna({"relevance": 0.0})
    out = {}
    users = pe.user_diversity(train, reco)
    value = pe.diversity(train, reco)
    if users.empty:  # k = 1: no list has a pair; the mean of nothing is NaN there
        assert math.isnan(value)
        value = None
    else:
        assert math.isclose(value, users["user_diversity"].mean(), rel_tol=0, abs_tol=1e-12)
        value = float(value)
    out[f"diversity@{k}"] = {"value": value, "per_user": per_user(users, "user_diversity")}
    for label, frame, extra in (
        ("serendipity", reco, {}),
        ("serendipity[relevance]", rated, {"col_relevance": "relevance"}),
    ):
        users = pe.user_serendipity(train, frame, **extra)
        value = pe.serendipity(train, frame, **extra)
        assert math.isclose(value, users["user_serendipity"].mean(), rel_tol=0, abs_tol=1e-12)
        out[f"{label}@{k}"] = {
            "value": float(value),
            "per_user": per_user(users, "user_serendipity"),
        }
    return out


def main() -> None:
    # pandas 2.3 warns in the library (chained fillna, a copy); values unaffected
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=pd.errors.SettingWithCopyWarning)
    out = output(HERE / "cooccurrence.json")
    train = read("log.csv")
    assert not train.duplicated().any()
    predictions = read("fresh_predictions.csv").rename(columns={"score": PREDICTION})
    truth = read("truth.csv")
    metrics = {}
    for k in CUTOFFS:
        metrics |= run_cutoff(train, predictions, truth, k)
    result = {
        **versions("recommenders"),
        "data": "tests/peers/peer_metrics_data (make_data.py), ids as int64",
        "calls": {
            "diversity": "diversity(train_df, reco_df); per_user: user_diversity(same)",
            "serendipity": "serendipity(train_df, reco_df); per_user: user_serendipity(same)",
            "serendipity[relevance]": "serendipity(train_df, reco_df with relevance, "
            "col_relevance='relevance'); per_user: user_serendipity(same)",
        },
        "cutoffs": list(CUTOFFS),
        "metrics": metrics,
    }
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
