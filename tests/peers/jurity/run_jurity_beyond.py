"""Jurity's diversity metrics on the beyond-accuracy data (run in make.sh's venv).

    /tmp/golden-jurity/bin/python run_jurity_beyond.py [OUT.json]   # default: beyond.json here

Does not import receval. Reads tests/peers/beyond_data/{equal,ragged}_predictions.csv and
catalog.csv and runs jurity.recommenders' InterListDiversity and IntraListDiversity at
k = 5 and 10 on both datasets, exactly (user_sample_size=None: every user, no sampling).

How Jurity 2.1.0 computes them (recommenders/diversity.py, read from the installed source):
  both first take each user's top k with utils.get_sorted_clicks (one sort of the whole
  frame by the click column, descending; the data have no tied score).
  InterListDiversity: a user x item binary matrix of the top-k lists (utils.tocsr), the
  sum of sklearn's pairwise cosine distances between its rows (pairwise_distances_chunked),
  halved, divided by the number of user pairs N (N - 1) / 2; a value with |v| <= 1e-6 is
  set to 0.0. Lists of different lengths are fine (cosine of the binary vectors).
  IntraListDiversity: each user's top-k rows self-joined on the user, pairs with item
  index x < y (distinct items, each unordered pair once), distance =
  sklearn.metrics.pairwise_distances(item_features without the id, metric)[x, y], the mean
  per user (pandas groupby: users sorted; users with fewer than 2 items have no pair and
  no value), then the mean over those users (base._get_results). With user_sample_size=None
  num_runs only divides the extended results' support, so num_runs=1 is passed (the value
  is checked to be the same with the default num_runs).

Feature tables fed to IntraListDiversity (item_id column `item`, then numbers only):
  embedding  catalog.csv's emb split on "|" into 8 float columns e0-e7, metric "cosine"
  category   one-hot of genre (one 0/1 column per genre), metric "cosine": 0 for the same
             genre, 1 otherwise
  tags       multi-hot of tags (one 0/1 column per tag; no tag: all 0), metric
             scipy.spatial.distance.jaccard, the callable (Jaccard distance of the non-zero
             sets; two empty sets: 0). The string "jaccard" fails here: sklearn 1.9.1's
             pairwise_distances reads X.dtype, which a DataFrame lacks (AttributeError).

Per-user values: get_score(..., batch_accumulate=True) keeps the per-user array in
`_results`; it is labelled with the sorted users that have >= 2 items in their top k, and
each label is checked by running the metric on that user's rows alone (stored at k = 10).
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
from jurity.recommenders import InterListDiversity, IntraListDiversity
from scipy.spatial.distance import jaccard

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import output, versions

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "beyond_data"
DATASETS = ("equal", "ragged")
CUTOFFS = (5, 10)
PER_USER_AT = 10  # per-user values stored at this k only (all are checked)
USER, ITEM, CLICK = "user", "item", "score"
FEATURES: dict[str, str | Callable[..., float]] = {
    "embedding": "cosine",
    "category": "cosine",
    "tags": jaccard,
}
TOL = 1e-12
# pandas warns on a copy in diversity.py (item_index columns); values unaffected
warnings.filterwarnings("ignore", category=pd.errors.SettingWithCopyWarning)


def predictions(dataset: str) -> pd.DataFrame:
    frame = pd.read_csv(DATA / f"{dataset}_predictions.csv", dtype={USER: str, ITEM: str})
    return frame[[USER, ITEM, CLICK]]


def feature_tables() -> dict[str, pd.DataFrame]:
    catalog = pd.read_csv(DATA / "catalog.csv", dtype=str, keep_default_na=False)
    vectors = [[float(x) for x in cell.split("|")] for cell in catalog["emb"]]
    embedding = pd.DataFrame(vectors, columns=[f"e{d}" for d in range(len(vectors[0]))])
    embedding.insert(0, ITEM, catalog["item"])
    genres = sorted(set(catalog["genre"]))
    category = pd.DataFrame({g: (catalog["genre"] == g).astype(int) for g in genres})
    category.insert(0, ITEM, catalog["item"])
    tag_sets = [set(cell.split("|")) - {""} for cell in catalog["tags"]]
    names = sorted(set().union(*tag_sets))
    tags = pd.DataFrame({t: [int(t in s) for s in tag_sets] for t in names})
    tags.insert(0, ITEM, catalog["item"])
    return {"embedding": embedding, "category": category, "tags": tags}


def name(metric: str | Callable[..., float]) -> str:
    return repr(metric) if isinstance(metric, str) else f"{metric.__module__}.{metric.__name__}"


def inter(predicted: pd.DataFrame, k: int) -> dict[str, object]:
    metric = InterListDiversity(
        click_column=CLICK, k=k, user_id_column=USER, item_id_column=ITEM, user_sample_size=None
    )
    extended = metric.get_score(None, predicted, return_extended_results=True)
    return {
        "value": float(extended["inter-list diversity"]),
        "support": int(extended["support"]),
        "call": (
            f"InterListDiversity(click_column='score', k={k}, user_id_column='user', "
            "item_id_column='item', user_sample_size=None).get_score(None, predicted)"
        ),
    }


def intra(
    predicted: pd.DataFrame, features: pd.DataFrame, metric: str | Callable[..., float], k: int
) -> dict[str, object]:
    def make(num_runs: int = 1) -> IntraListDiversity:
        return IntraListDiversity(
            features,
            click_column=CLICK,
            k=k,
            user_id_column=USER,
            item_id_column=ITEM,
            user_sample_size=None,
            metric=metric,
            num_runs=num_runs,
        )

    extended = make().get_score(None, predicted, return_extended_results=True)
    value = float(extended["intra-list diversity"])
    default_runs = float(make(10).get_score(None, predicted))
    if not math.isclose(value, default_runs, rel_tol=0, abs_tol=TOL):
        raise SystemExit(f"num_runs changes the value: {value} vs {default_runs}")
    scorer = make()
    scorer.get_score(None, predicted, batch_accumulate=True)
    values = np.concatenate(scorer._results)
    top = predicted.sort_values(CLICK, ascending=False).groupby(USER).head(k)
    sizes = top.groupby(USER)[ITEM].nunique()
    users = sorted(sizes[sizes >= 2].index)
    if len(values) != len(users):
        raise SystemExit(f"{len(values)} values for {len(users)} users")
    per_user = {u: float(v) for u, v in zip(users, values, strict=True)}
    for user, expected in per_user.items():
        alone = float(make().get_score(None, predicted[predicted[USER] == user]))
        if not math.isclose(alone, expected, rel_tol=0, abs_tol=TOL):
            raise SystemExit(f"{user}: {alone} alone, {expected} in the full run")
    if not math.isclose(value, float(np.mean(values)), rel_tol=0, abs_tol=TOL):
        raise SystemExit(f"{value} is not the mean of the per-user values")
    entry: dict[str, object] = {
        "value": value,
        "support": int(extended["support"]),
        "call": (
            f"IntraListDiversity(item_features, click_column='score', k={k}, "
            "user_id_column='user', item_id_column='item', user_sample_size=None, "
            f"metric={name(metric)}, num_runs=1).get_score(None, predicted)"
        ),
    }
    if k == PER_USER_AT:
        entry["per_user"] = per_user
    return entry


def run() -> dict[str, object]:
    tables = feature_tables()
    results: dict[str, dict[str, object]] = {}
    for dataset in DATASETS:
        predicted = predictions(dataset)
        entries: dict[str, object] = {}
        for k in CUTOFFS:
            entries[f"InterListDiversity@{k}"] = inter(predicted, k)
            for feature, metric in FEATURES.items():
                key = f"IntraListDiversity@{k}[{feature}]"
                entries[key] = intra(predicted, tables[feature], metric, k)
        results[dataset] = entries
    return {
        **versions("jurity", "scikit-learn", "scipy"),
        "data": "tests/peers/beyond_data (make_data.py)",
        "feeding": {
            "predicted_results": (
                "DATASET_predictions.csv as (user, item, score), ids as strings; Jurity ranks "
                "each user's items by `score` (click_column), descending, and keeps the top k"
            ),
            "actual_results": "None (ignored by both metrics)",
            "item_features": {
                "embedding": "item, e0-e7: catalog.csv's emb split on '|' (metric cosine)",
                "category": "item, one 0/1 column per genre (metric cosine)",
                "tags": (
                    "item, one 0/1 column per tag, empty tags all 0 (metric "
                    "scipy.spatial.distance.jaccard)"
                ),
            },
        },
        "population": {
            "InterListDiversity": "every user with a prediction: pairs of users",
            "IntraListDiversity": "users with >= 2 items in the top k (per_user lists them)",
        },
        "metrics": results,
    }


def main() -> None:
    out = output(HERE / "beyond.json")
    out.write_text(json.dumps(run(), indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
