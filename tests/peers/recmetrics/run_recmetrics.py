"""recmetrics' beyond-accuracy metrics on the beyond data (run by make.sh in its own venv).

    /tmp/golden-recmetrics/bin/python run_recmetrics.py [OUT.json]   # default: equal.json here

Does not import receval. Reads tests/peers/beyond_data/{log,catalog,equal_predictions}.csv
and runs recmetrics 0.1.5's personalization, intra_list_similarity, novelty,
prediction_coverage at k = 5 and 10. Only the `equal` dataset (every list has k items):
personalization builds np.array(predicted), which fails on lists of different lengths,
and intra_list_similarity gives NaN for a list of one item (see NOTES.md).

How the data are fed (recmetrics takes lists, not scores):
  predicted   one list per user (users sorted), the user's top k items by score,
              descending (cut by this script; the data have no tied score)
  feature_df  indexed by item id:
                embedding  catalog.csv's emb split on "|" into 8 float columns
                category   one 0/1 column per genre (one-hot)
  pop, u, n   pop: item -> number of distinct users with the item in log.csv; u: the
              number of distinct users in log.csv; n = k. Every recommended item is in
              the log (pop[i] would raise KeyError otherwise).
  catalog     the catalog's item ids (prediction_coverage)

How 0.1.5 computes them (recmetrics/metrics.py, read from the installed source):
  personalization        binary user x item matrix (a pandas pivot), sklearn's
                         cosine_similarity of its rows; 1 - (sum of the matrix - N) /
                         (N (N - 1)): one minus the mean similarity over ordered pairs of
                         distinct users (the diagonal is 1 for a non-empty list).
  intra_list_similarity  per list: cosine_similarity of feature_df.loc[list] (NaN rows
                         dropped, after fillna(0) on the table), the mean over the upper
                         triangle without the diagonal (pairs of positions p < q); the
                         mean over lists.
  novelty                per list: sum over its items of -log2(pop[i] / u), divided by n
                         (not by the list's length); novelty = the mean over lists.
                         Returns (novelty, per-list values).
  prediction_coverage    round(100 * distinct predicted items / len(catalog), 2): a
                         percentage rounded to 2 decimals.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import recmetrics

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import output, versions

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "beyond_data"
DATASET = "equal"
CUTOFFS = (5, 10)
PER_USER_AT = 10
TOL = 1e-12


def lists(k: int | None) -> tuple[list[str], list[list[str]]]:
    """Users sorted, and each user's items by score descending (the top k)."""
    frame = pd.read_csv(DATA / f"{DATASET}_predictions.csv", dtype={"user": str, "item": str})
    frame = frame.sort_values(["user", "score"], ascending=[True, False])
    users, predicted = [], []
    for user, rows in frame.groupby("user", sort=True):
        users.append(str(user))
        items = list(rows["item"])
        predicted.append(items if k is None else items[:k])
    return users, predicted


def feature_tables() -> dict[str, pd.DataFrame]:
    catalog = pd.read_csv(DATA / "catalog.csv", dtype=str, keep_default_na=False)
    vectors = [[float(x) for x in cell.split("|")] for cell in catalog["emb"]]
    columns = [f"e{d}" for d in range(len(vectors[0]))]
    embedding = pd.DataFrame(vectors, columns=columns, index=catalog["item"])
    genres = sorted(set(catalog["genre"]))
    category = pd.DataFrame(
        {g: (catalog["genre"] == g).astype(int).values for g in genres}, index=catalog["item"]
    )
    return {"embedding": embedding, "category": category}


def popularity() -> tuple[dict[str, int], int]:
    log = pd.read_csv(DATA / "log.csv", dtype=str)
    pop = {str(i): int(n) for i, n in log.groupby("item")["user"].nunique().items()}
    return pop, int(log["user"].nunique())


def run() -> dict[str, object]:
    tables = feature_tables()
    pop, u = popularity()
    catalog = list(tables["embedding"].index)
    metrics: dict[str, object] = {}
    _, full = lists(None)
    metrics["prediction_coverage[whole lists]"] = {
        "value": float(recmetrics.prediction_coverage(full, catalog))
    }
    for k in CUTOFFS:
        keep = k == PER_USER_AT
        users, predicted = lists(k)
        if any(len(p) != k for p in predicted):
            raise SystemExit(f"a list is shorter than {k}")
        metrics[f"personalization@{k}"] = {"value": float(recmetrics.personalization(predicted))}
        metrics[f"prediction_coverage@{k}"] = {
            "value": float(recmetrics.prediction_coverage(predicted, catalog))
        }
        for feature, table in tables.items():
            value = float(recmetrics.intra_list_similarity(predicted, table))
            per_user = {
                user: float(recmetrics.intra_list_similarity([items], table))
                for user, items in zip(users, predicted, strict=True)
            }
            if not math.isclose(value, float(np.mean(list(per_user.values()))), abs_tol=TOL):
                raise SystemExit(f"intra_list_similarity {value} is not the mean of the lists'")
            entry: dict[str, object] = {"value": value}
            if keep:
                entry["per_user"] = per_user
            metrics[f"intra_list_similarity@{k}[{feature}]"] = entry
        value, per_list = recmetrics.novelty(predicted, pop, u, k)
        entry = {"value": float(value)}
        if keep:
            entry["per_user"] = {user: float(v) for user, v in zip(users, per_list, strict=True)}
        metrics[f"novelty@{k}"] = entry
    return {
        **versions("recmetrics", "scikit-learn"),
        "data": "tests/peers/beyond_data (make_data.py)",
        "dataset": DATASET,
        "feeding": {
            "predicted": (
                "one list per user (users sorted): the top k items of equal_predictions.csv "
                "by score, descending; 'whole lists': every scored item (15 per user)"
            ),
            "feature_df": {
                "embedding": "indexed by item: catalog.csv's emb as 8 float columns",
                "category": "indexed by item: one 0/1 column per genre",
            },
            "pop": "item -> distinct users of the item in log.csv",
            "u": f"distinct users in log.csv ({u})",
            "n": "k",
            "catalog": "catalog.csv's item ids (60)",
        },
        "calls": {
            "personalization": "personalization(predicted)",
            "intra_list_similarity": (
                "intra_list_similarity(predicted, feature_df); per_user: "
                "intra_list_similarity([the user's list], feature_df)"
            ),
            "novelty": "novelty(predicted, pop, u, n=k): (value, per-list values = per_user)",
            "prediction_coverage": "prediction_coverage(predicted, catalog)",
        },
        "metrics": metrics,
    }


def main() -> None:
    out = output(HERE / f"{DATASET}.json")
    out.write_text(json.dumps(run(), indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
