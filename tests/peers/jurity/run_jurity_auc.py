"""Jurity's AUC on the shared golden data (run in make.sh's venv, /tmp/golden-jurity).

    /tmp/golden-jurity/bin/python run_jurity_auc.py DATASET OUT.json  # DATASET: ties, tiefree
    # or, with no arguments: every dataset (tiefree, ties and their _int twins) to
    # auc_<dataset>.json here, and AUC(k=K) for K in 1, 3, 5, 10 on tiefree and tiefree_int
    # to auc_k_<dataset>.json (see NOTES.md, "CTR and AUC at k")

Does not import receval. Feeds tests/peers/data/DATASET_{predictions,truth}.csv to
jurity.recommenders.AUC (click_column="click", k=None: every prediction) and writes its
value, the pairs it scored, and scikit-learn's roc_auc_score on the same pairs.

How Jurity 2.1.0 computes it (recommenders/auc.py, read from the installed source):
  get_score sets (user_id, item_id) as the index of both frames, and with k=None keeps every
  prediction (with k it would keep each user's top k by get_sorted_clicks, an unstable sort);
  it inner-joins actual to predicted on that index (`actual.join(predicted, how="inner",
  rsuffix="_r")`), so only pairs in both files count: truth rows without a prediction and
  predictions without a truth row are dropped. Label = actual's click column, score =
  predicted's column of the same name ("click_r" after the join). _get_results returns
  sklearn.metrics.roc_auc_score(labels, scores), or NaN when the labels have one class.
  Unlike Precision/Recall/MAP/NDCG, AUC does not drop the click == 0 rows: grade-0 truth rows
  are the negatives. roc_auc_score integrates the ROC curve over distinct thresholds, so a
  tied (positive, negative) pair counts 1/2 and the value does not depend on row order:
  deterministic on both datasets.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from jurity import utils as jurity_utils
from jurity.recommenders import AUC
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import read_frames, versions


def no_cache() -> None:
    """Jurity 2.1.0 memoizes get_sorted_clicks (utils_hash.lru_cache_df, 5 entries) on a
    hash of `frame.values.tobytes()` and the column names: not the index, which holds the
    ids once get_score has set (user_id, item_id) as the index. Two frames with the same
    scores but other ids (tiefree and tiefree_int; two users alone with equal scores) then
    get the first one's top k. Every call here starts from an empty cache."""
    jurity_utils.get_sorted_clicks.cache_clear()


HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"
CLICK = "click"
USER, ITEM = "user_id", "item_id"

FEEDING = {
    "actual_results": (
        "every ground-truth row as (user_id, item_id, click) with click = 1 if relevance >= 1 "
        "else 0; AUC keeps the click == 0 rows (they are the negatives)"
    ),
    "predicted_results": (
        "every prediction row as (user_id, item_id, click) with click = the score; after the "
        "join Jurity reads it as click_r"
    ),
    "ids": "strings; the _int datasets' ids as integers (int64)",
    "call": "AUC(click_column='click').get_score(actual_results, predicted_results, "
    "return_extended_results=True)  (k=None: every prediction)",
}
PAIRS_RULE = (
    "inner join of actual and predicted on (user_id, item_id): pairs in both files; truth rows "
    "without a prediction (receval: unpredicted) and predictions without a truth row "
    "(receval: unrated) are dropped"
)


def load(dataset: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    predictions, truth = read_frames(dataset)
    actual = pd.DataFrame(
        {USER: truth["user"], ITEM: truth["item"], CLICK: (truth["relevance"] >= 1).astype(int)}
    )
    predicted = pd.DataFrame(
        {USER: predictions["user"], ITEM: predictions["item"], CLICK: predictions["score"]}
    )
    return actual, predicted


def run(dataset: str) -> dict[str, object]:
    actual, predicted = load(dataset)
    for name, frame in (("actual", actual), ("predicted", predicted)):
        if frame.duplicated([USER, ITEM]).any():  # a repeated pair would join twice
            raise SystemExit(f"{dataset}: duplicate (user, item) rows in {name}")
    extended = AUC(click_column=CLICK).get_score(actual, predicted, return_extended_results=True)
    value = float(extended["auc"])

    # the pairs Jurity scored, rebuilt as its join builds them
    both = actual.merge(predicted, on=[USER, ITEM], how="inner", suffixes=("", "_r"))
    if len(both) != extended["support"]:
        raise SystemExit(f"{dataset}: {len(both)} joined pairs, Jurity's support is {extended}")
    cross_check = float(roc_auc_score(both[CLICK], both[f"{CLICK}_r"]))
    if not math.isclose(value, cross_check, rel_tol=0, abs_tol=1e-12):
        raise SystemExit(f"{dataset}: Jurity {value} != roc_auc_score {cross_check}")

    # order independence: the same call on shuffled rows
    rng = np.random.default_rng(0)
    shuffled = [
        float(
            AUC(click_column=CLICK).get_score(
                actual.sample(frac=1, random_state=rng), predicted.sample(frac=1, random_state=rng)
            )
        )
        for _ in range(5)
    ]
    if max(abs(s - value) for s in shuffled) > 1e-12:
        raise SystemExit(f"{dataset}: AUC changes with row order: {value} vs {shuffled}")

    truth_pairs = set(zip(actual[USER], actual[ITEM], strict=True))
    predicted_pairs = set(zip(predicted[USER], predicted[ITEM], strict=True))
    tied_scores = int(both[f"{CLICK}_r"].duplicated(keep=False).sum())
    return {
        **versions("jurity", "scikit-learn"),
        "dataset": dataset,
        "feeding": FEEDING,
        "metric": "AUC(click)",
        "auc": value,
        "support": int(extended["support"]),
        "pairs": {
            "rule": PAIRS_RULE,
            "used": len(both),
            "positives": int(both[CLICK].sum()),
            "negatives": int((both[CLICK] == 0).sum()),
            "truth_rows_without_prediction": len(truth_pairs - predicted_pairs),
            "predictions_without_truth_row": len(predicted_pairs - truth_pairs),
            "scored_pairs_sharing_a_score": tied_scores,
        },
        "sklearn_roc_auc_score_on_pairs_in_both": cross_check,
        "order_independent": True,
        "ties": (
            "roc_auc_score counts a tied (positive, negative) pair as 1/2 and does not depend on "
            "row order (checked on 5 shuffles): deterministic on ties as on tiefree"
        ),
    }


K_CUTOFFS = (1, 3, 5, 10)
K_RULE = (
    "with k, get_score first keeps each user's top k predictions: utils.get_sorted_clicks = "
    "predicted.sort_values(click, ascending=False).groupby(user_id).head(k) (one unstable "
    "quicksort of the whole frame by score, descending; on tiefree no user has a tied "
    "score, so the top k is well defined), then inner-joins actual to those rows on "
    "(user_id, item_id) and returns roc_auc_score(click, click_r) over the joined rows, or "
    "NaN when they hold one class only"
)


def run_k(dataset: str) -> dict[str, object]:
    actual, predicted = load(dataset)
    tied = predicted.groupby(USER)[CLICK].apply(lambda s: s.duplicated().any())
    if dataset.startswith("tiefree") and tied.any():
        raise SystemExit(f"{dataset}: tied scores within a user")
    values: dict[str, object] = {}
    for k in K_CUTOFFS:
        no_cache()
        extended = AUC(click_column=CLICK, k=k).get_score(
            actual, predicted, return_extended_results=True
        )
        value = float(extended["auc"])
        # the same rows rebuilt: each user's k highest scores, joined to the truth rows
        top = predicted.sort_values([USER, CLICK], ascending=[True, False]).groupby(USER).head(k)
        both = actual.merge(top, on=[USER, ITEM], how="inner", suffixes=("", "_r"))
        if len(both) != extended["support"]:
            raise SystemExit(f"{dataset}@{k}: {len(both)} pairs, Jurity {extended}")
        check = float(roc_auc_score(both[CLICK], both[f"{CLICK}_r"]))
        if not math.isclose(value, check, rel_tol=0, abs_tol=1e-12):
            raise SystemExit(f"{dataset}@{k}: Jurity {value} != roc_auc_score {check}")
        per_user = {
            str(u): {
                "top_k": int((top[USER] == u).sum()),
                "pairs": len(g),
                "positives": int(g[CLICK].sum()),
            }
            for u, g in both.groupby(USER)
        }
        values[f"AUC(click)@{k}"] = {
            "k": k,
            "auc": value,
            "support": int(extended["support"]),
            "positives": int(both[CLICK].sum()),
            "negatives": int((both[CLICK] == 0).sum()),
            "top_k_rows": len(top),
            "sklearn_roc_auc_score_on_the_rows": check,
            "per_user": per_user,
        }
    return {
        **versions("jurity", "scikit-learn"),
        "dataset": dataset,
        "feeding": {
            **FEEDING,
            "call": "AUC(click_column='click', k=k).get_score(actual, "
            "predicted, return_extended_results=True)",
        },
        "k_rule": K_RULE,
        "per_user_note": (
            "Jurity gives no per-user AUC (one roc_auc_score over every joined row); per_user "
            "lists, for each user with a joined row, the rows it keeps (top_k), the joined "
            "pairs and their positives, rebuilt with a stable sort and checked against "
            "Jurity's support"
        ),
        "metrics": values,
    }


def main() -> None:
    if len(sys.argv) == 1:
        datasets = ("tiefree", "ties", "tiefree_int", "ties_int")
        jobs = [(d, HERE / f"auc_{d}.json") for d in datasets]
    else:
        jobs = [(sys.argv[1], Path(sys.argv[2]))]
    for dataset, out in jobs:
        out.write_text(json.dumps(run(dataset), indent=1) + "\n")
        print(f"wrote {out}")
    if len(sys.argv) == 1:
        for dataset in ("tiefree", "tiefree_int"):
            out = HERE / f"auc_k_{dataset}.json"
            out.write_text(json.dumps(run_k(dataset), indent=1) + "\n")
            print(f"wrote {out}")


if __name__ == "__main__":
    main()
