"""Microsoft Recommenders' beyond-accuracy metrics on the beyond data (run by make.sh).

    /tmp/golden-recommenders/bin/python run_recommenders_beyond.py [OUT.json]
    # default OUT: beyond.json here

Does not import receval. Reads tests/peers/beyond_data/{log,catalog}.csv and
{equal,ragged}_predictions.csv and runs recommenders.evaluation.python_evaluation's
catalog_coverage, distributional_coverage, novelty, diversity and user_diversity
(item_sim_measure="item_feature_vector") at k = 5 and 10 on both datasets.

How the data are fed:
  train_df  log.csv as (userID, itemID): no repeated row (the library assumes none); no
            pair of it is recommended (the library raises if one is).
  reco_df   the library's own get_top_k_items(predictions as (userID, itemID,
            prediction), col_rating="prediction", k=k): each user's top k by score (a
            stable sort by [userID, prediction]; no tied score in the data), with `rank`.
  item_feature_df  (itemID, features) with features a numpy vector per item:
            embedding  catalog.csv's emb split on "|" (8 floats)
            category   the one-hot vector of genre (cosine 1 for the same genre, else 0)

How 1.2.1 computes them (python_evaluation.py, read from the installed source):
  catalog_coverage        reco_df[itemID].nunique() / train_df[itemID].nunique(): the
                          numerator counts recommended items absent from train_df too.
  distributional_coverage -sum p log2 p, p = an item's rows in reco_df / reco_df's rows.
  novelty                 historical_item_novelty: -log2(item's rows / train rows) per
                          item of train_df; then sum over reco_df's rows of that novelty
                          (an inner merge: an item absent from train_df adds nothing) /
                          reco_df's rows, all rows included. A mean over all
                          recommendations, not over users.
  user_diversity          _get_pairwise_items: the user's reco rows self-joined, i1 <= i2;
                          left-merged with the item-pair similarity (item_feature_vector:
                          f1.dot(f2) / (|f1| |f2|) over every catalog pair i1 <= i2),
                          pairs i1 == i2 dropped, the mean similarity per user (users with
                          one item have no pair and no row); user_diversity = 1 - it.
  diversity               the mean of user_diversity over its users.

Per-user values (stored at k = 10 only): user_diversity's rows, and novelty called on the
user's reco rows alone (the mean over that user's recommendations).
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from recommenders.evaluation import python_evaluation as pe

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import output, versions

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "beyond_data"
DATASETS = ("equal", "ragged")
CUTOFFS = (5, 10)
PER_USER_AT = 10
USER, ITEM, PREDICTION = "userID", "itemID", "prediction"
SIM = "item_feature_vector"
TOL = 1e-12


def train() -> pd.DataFrame:
    log = pd.read_csv(DATA / "log.csv", dtype=str)
    if log.duplicated().any():
        raise SystemExit("log.csv repeats a row")
    return pd.DataFrame({USER: log["user"], ITEM: log["item"]})


def predictions(dataset: str) -> pd.DataFrame:
    frame = pd.read_csv(DATA / f"{dataset}_predictions.csv", dtype={"user": str, "item": str})
    return pd.DataFrame({USER: frame["user"], ITEM: frame["item"], PREDICTION: frame["score"]})


def feature_tables() -> dict[str, pd.DataFrame]:
    catalog = pd.read_csv(DATA / "catalog.csv", dtype=str, keep_default_na=False)
    vectors = [np.array([float(x) for x in cell.split("|")]) for cell in catalog["emb"]]
    genres = sorted(set(catalog["genre"]))
    one_hot = [np.array([float(g == genre) for g in genres]) for genre in catalog["genre"]]
    return {
        "embedding": pd.DataFrame({ITEM: catalog["item"], "features": vectors}),
        "category": pd.DataFrame({ITEM: catalog["item"], "features": one_hot}),
    }


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0, abs_tol=TOL)


def run_cutoff(
    train_df: pd.DataFrame,
    rating_pred: pd.DataFrame,
    tables: dict[str, pd.DataFrame],
    k: int,
) -> dict[str, object]:
    reco_df = pe.get_top_k_items(rating_pred, col_user=USER, col_rating=PREDICTION, k=k)
    keep = k == PER_USER_AT
    entries: dict[str, object] = {
        f"catalog_coverage@{k}": {"value": float(pe.catalog_coverage(train_df, reco_df))},
        f"distributional_coverage@{k}": {
            "value": float(pe.distributional_coverage(train_df, reco_df))
        },
    }
    value = float(pe.novelty(train_df, reco_df))
    novelty: dict[str, object] = {"value": value}
    per_user = {
        u: float(pe.novelty(train_df, reco_df[reco_df[USER] == u]))
        for u in sorted(set(reco_df[USER]))
    }
    lengths = reco_df.groupby(USER).size()
    weighted = sum(lengths[u] * v for u, v in per_user.items()) / lengths.sum()
    if not close(value, float(weighted)):
        raise SystemExit(f"novelty {value} is not the length-weighted mean of the users'")
    if keep:
        novelty["per_user"] = per_user
    entries[f"novelty@{k}"] = novelty
    for feature, table in tables.items():
        value = float(pe.diversity(train_df, reco_df, item_feature_df=table, item_sim_measure=SIM))
        users = pe.user_diversity(train_df, reco_df, item_feature_df=table, item_sim_measure=SIM)
        per_user = {str(u): float(v) for u, v in users[[USER, "user_diversity"]].values}
        if not close(value, float(np.mean(list(per_user.values())))):
            raise SystemExit(f"diversity {value} is not the mean of user_diversity")
        entry: dict[str, object] = {"value": value, "support": len(per_user)}
        if keep:
            entry["per_user"] = per_user
        entries[f"diversity@{k}[{feature}]"] = entry
    return entries


def run() -> dict[str, object]:
    train_df = train()
    tables = feature_tables()
    results = {}
    for dataset in DATASETS:
        rating_pred = predictions(dataset)
        results[dataset] = {
            key: value
            for k in CUTOFFS
            for key, value in run_cutoff(train_df, rating_pred, tables, k).items()
        }
    return {
        **versions("recommenders"),
        "data": "tests/peers/beyond_data (make_data.py)",
        "feeding": {
            "train_df": "log.csv as (userID, itemID), ids as strings",
            "reco_df": (
                "get_top_k_items(DATASET_predictions.csv as (userID, itemID, prediction), "
                "col_user='userID', col_rating='prediction', k=k)"
            ),
            "item_feature_df": {
                "embedding": "(itemID, features): catalog.csv's emb as a numpy vector",
                "category": "(itemID, features): the one-hot vector of genre",
            },
        },
        "calls": {
            "catalog_coverage": "catalog_coverage(train_df, reco_df)",
            "distributional_coverage": "distributional_coverage(train_df, reco_df)",
            "novelty": (
                "novelty(train_df, reco_df); per_user: novelty(train_df, the user's reco rows)"
            ),
            "diversity": (
                "diversity(train_df, reco_df, item_feature_df=..., "
                "item_sim_measure='item_feature_vector'); per_user: user_diversity(same)"
            ),
        },
        "metrics": results,
    }


def main() -> None:
    # pandas 2.3 warns in the library (chained fillna, Series[0], a copy); values unaffected
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=pd.errors.SettingWithCopyWarning)
    out = output(HERE / "beyond.json")
    out.write_text(json.dumps(run(), indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
