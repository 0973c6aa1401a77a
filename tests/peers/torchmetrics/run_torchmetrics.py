"""Compute torchmetrics' RetrievalFallOut on tests/peers/rectools/data/ and write
fall_out_{str,int}.json. Run by make.sh in its own environment (never by the tests).

torchmetrics sees each user's list as a query: preds = minus the item's rank (the list
ranked by score descending, then item descending in the id's own order: receval's
tie_break item_desc, so tied scores rank as receval ranks them; torch's own argsort of
tied scores is not stable), target = 1 when the truth grades the item >= 1. Only the
lists of users in the truth are given (receval evaluates no user outside it); their
users without a relevant item are queries like the others. Per user: the metric on that
user's query alone; mean: the metric on all queries at once.
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

import pandas as pd
import torch
from torchmetrics.retrieval import RetrievalFallOut

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import compact_sorted

DATA = Path(__file__).parent.parent / "rectools" / "data"
HERE = Path(__file__).parent
CUTOFFS = (1, 3, 5, 10, 30, None)
ACTIONS = ("neg", "pos", "skip")


def read(name: str, ids: str) -> pd.DataFrame:
    dtype = str if ids == "str" else "int64"
    return pd.read_csv(DATA / f"{name}_{ids}.csv", dtype={"user": dtype, "item": dtype})


def queries(ids: str) -> pd.DataFrame:
    predictions = read("predictions", ids)
    truth = read("truth", ids)
    predictions = predictions[predictions["user"].isin(set(truth["user"]))]
    ordered = predictions.sort_values(["user", "score", "item"], ascending=[True, False, False])
    ordered["rank"] = ordered.groupby("user").cumcount() + 1
    relevant = truth[truth["relevance"] >= 1][["user", "item"]].assign(target=1)
    merged = ordered.merge(relevant, on=["user", "item"], how="left")
    merged["target"] = merged["target"].fillna(0).astype("int64")
    merged["query"] = merged["user"].astype("category").cat.codes.astype("int64")
    return merged


def compute(frame: pd.DataFrame, k: int | None, action: str) -> float | None:
    metric = RetrievalFallOut(empty_target_action=action, top_k=k)
    metric.update(
        torch.tensor(-frame["rank"].to_numpy(), dtype=torch.float64),
        torch.tensor(frame["target"].to_numpy()),
        indexes=torch.tensor(frame["query"].to_numpy()),
    )
    value = metric.compute()
    return float(value)


def main(ids: str) -> None:
    frame = queries(ids)
    results = {}
    for k in CUTOFFS:
        for action in ACTIONS:
            per_user = []
            for user, rows in frame.groupby("user", sort=True):
                if action == "skip" and rows["target"].all():
                    continue  # skipped: no value for this user
                user_id = user.item() if hasattr(user, "item") else user
                per_user.append([user_id, compute(rows, k, action)])
            name = f"RetrievalFallOut(top_k={k},empty_target_action={action})"
            results[name] = {"mean": compute(frame, k, action), "per_user": per_user}
    out = {
        "library": "torchmetrics",
        "version": version("torchmetrics"),
        "torch": version("torch"),
        "dataset": ids,
        "metrics": results,
    }
    (HERE / f"fall_out_{ids}.json").write_text(compact_sorted(out))


if __name__ == "__main__":
    for ids in sys.argv[1:] or ("str", "int"):
        main(ids)
