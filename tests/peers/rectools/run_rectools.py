"""Compute RecTools' metrics on tests/peers/rectools/data/ and write {str,int}.json.

Run by make.sh in RecTools' own environment (never by the tests). RecTools reads ranks,
not scores: each list (and each baseline list) is ranked here by score descending, then
item descending in the id's own order (text for `str`, numbers for `int`): receval's
tie_break item_desc, so tied scores are ranked as receval ranks them.

Inputs, as a RecTools user gives them: `interactions` are the truth rows with relevance
>= 1 (RecTools' interactions are all positive) for the ranking, classification and AUC
metrics and for CoveredUsers; SufficientReco and Intersection get the whole
recommendations table (every user of the predictions, those absent from the ground truth
included), and Intersection's `ref_reco` is the whole baseline file.

Users, as RecTools counts them: the interactions' users (those with a relevant row) for the
ranking, classification and AUC metrics and for CoveredUsers; the recommendations' users
for SufficientReco and Intersection. Every user RecTools reports is recorded per user.
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
from rectools import Columns
from rectools.metrics import (
    MAP,
    MCC,
    MRR,
    NDCG,
    PAP,
    Accuracy,
    CoveredUsers,
    F1Beta,
    HitRate,
    Intersection,
    PartialAUC,
    Precision,
    Recall,
    SufficientReco,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import compact_sorted

HERE = Path(__file__).parent
CUTOFFS = (1, 3, 5, 10, 30)


def read(name: str, ids: str) -> pd.DataFrame:
    dtype = str if ids == "str" else np.int64
    return pd.read_csv(HERE / "data" / f"{name}_{ids}.csv", dtype={"user": dtype, "item": dtype})


def ranked(frame: pd.DataFrame) -> pd.DataFrame:
    ordered = frame.sort_values(["user", "score", "item"], ascending=[True, False, False])
    ordered[Columns.Rank] = ordered.groupby("user").cumcount() + 1
    return ordered.rename(columns={"user": Columns.User, "item": Columns.Item})[
        [Columns.User, Columns.Item, Columns.Rank]
    ]


def per_user(series: pd.Series) -> list[list[object]]:
    return [[u.item() if hasattr(u, "item") else u, float(v)] for u, v in series.items()]


def main(ids: str) -> None:
    reco = ranked(read("predictions", ids))
    truth = read("truth", ids).rename(columns={"user": Columns.User, "item": Columns.Item})
    interactions = truth[truth["relevance"] >= 1][[Columns.User, Columns.Item]]
    catalog = read("catalog", ids)["item"].to_numpy()
    reference = ranked(read("baseline", ids))

    metrics: dict[str, object] = {}
    for k in CUTOFFS:
        metrics[f"Precision@{k}"] = Precision(k)
        metrics[f"Recall@{k}"] = Recall(k)
        metrics[f"F1Beta@{k}"] = F1Beta(k)
        metrics[f"HitRate@{k}"] = HitRate(k)
        metrics[f"MRR@{k}"] = MRR(k)
        metrics[f"MAP@{k}"] = MAP(k)
        metrics[f"MAP@{k}(divide_by_k=True)"] = MAP(k, divide_by_k=True)
        metrics[f"NDCG@{k}"] = NDCG(k)
        metrics[f"NDCG@{k}(divide_by_achievable=True)"] = NDCG(k, divide_by_achievable=True)
        metrics[f"Accuracy@{k}"] = Accuracy(k)
        metrics[f"MCC@{k}"] = MCC(k)
        metrics[f"PartialAUC@{k}"] = PartialAUC(k)
        metrics[f"PAP@{k}"] = PAP(k)
        metrics[f"SufficientReco@{k}"] = SufficientReco(k)
        metrics[f"SufficientReco@{k}(deep=True)"] = SufficientReco(k, deep=True)
        metrics[f"CoveredUsers@{k}"] = CoveredUsers(k)
        metrics[f"Intersection@{k}"] = Intersection(k)
        metrics[f"Intersection@{k}(ref_k=5)"] = Intersection(k, ref_k=5)

    results = {}
    for name, metric in metrics.items():
        if isinstance(metric, (Accuracy, MCC)):
            values = metric.calc_per_user(reco, interactions, catalog)
        elif isinstance(metric, SufficientReco):
            values = metric.calc_per_user(reco)
        elif isinstance(metric, Intersection):
            values = metric.calc_per_user(reco, reference)
        elif isinstance(metric, CoveredUsers):  # the users with a relevant row
            values = metric.calc_per_user(reco, interactions)
        else:
            values = metric.calc_per_user(reco, interactions)
        values = values.sort_index()
        results[name] = {"mean": float(values.mean()), "per_user": per_user(values)}
    out = {
        "library": "rectools",
        "version": version("rectools"),
        "dataset": ids,
        "metrics": results,
    }
    (HERE / f"{ids}.json").write_text(compact_sorted(out))


if __name__ == "__main__":
    for ids in sys.argv[1:] or ("str", "int"):
        main(ids)
