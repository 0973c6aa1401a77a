"""MS Recommenders' logloss and exp_var, and scikit-learn's log_loss and
explained_variance_score, on tests/peers/peer_metrics_data (run by make.sh; does not import
receval).

    /tmp/golden-recommenders/bin/python run_recommenders_probability.py [OUT.json]
    # default OUT: probability.json here

How 1.2.1 computes them (python_evaluation.py, read from the installed source): both call
merge_rating_true_pred, an inner pd.merge of rating_true and rating_pred on (userID,
itemID) (pairs on one side only are dropped), then
  logloss  sklearn.metrics.log_loss(y_true, y_pred): natural log, y_pred clipped to
           [eps, 1 - eps] with eps = np.finfo(float64).eps = 2^-52 (scikit-learn 1.9: no
           eps argument any more); y_pred outside [0, 1] raises; y_true must hold two
           classes (no labels argument is passed)
  exp_var  sklearn.metrics.explained_variance_score(y_true, y_pred): 1 - Var(y - p) /
           Var(y), population variances; Var(y) = 0 gives 1.0 if Var(y - p) = 0 else 0.0
           (force_finite)

Feeding (integer ids):
  logloss  rating_true = clicks.csv (userID, itemID, rating = its 0/1 relevance),
           rating_pred = probabilities.csv (prediction = its score in [0, 1], 0 and 1
           exactly among them)
  exp_var  rating_true = ratings.csv (rating 1-5), rating_pred = predictions.csv (score)
Per user: the same calls on one user's rows (logloss: users with both classes; exp_var:
users with two or more pairs whose ratings are not all equal).
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import platform
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from recommenders.evaluation import python_evaluation as pe
from sklearn.metrics import explained_variance_score, log_loss

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import output

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "peer_metrics_data"
KEYS = ["userID", "itemID"]


def frame(name: str, value: str) -> pd.DataFrame:
    data = pd.read_csv(DATA / name, dtype={"user": "int64", "item": "int64"})
    return pd.DataFrame({"userID": data["user"], "itemID": data["item"], value: data.iloc[:, 2]})


def calls(true: pd.DataFrame, pred: pd.DataFrame, which: str) -> dict[str, float]:
    merged = true.merge(pred, on=KEYS)
    y, p = merged["rating"].to_numpy(), merged["prediction"].to_numpy()
    if which == "logloss":
        ms = pe.logloss(true, pred)
        sk = log_loss(y, p)
    else:
        ms = pe.exp_var(true, pred)
        sk = explained_variance_score(y, p)
    assert math.isclose(ms, sk, rel_tol=0, abs_tol=1e-15), (which, ms, sk)
    return {"recommenders": float(ms), "sklearn": float(sk), "pairs": len(merged)}


def run(which: str, truth_file: str, pred_file: str) -> dict[str, object]:
    true, pred = frame(truth_file, "rating"), frame(pred_file, "prediction")
    whole = calls(true, pred, which)
    per_user = {}
    merged = true.merge(pred, on=KEYS)
    for user, rows in merged.groupby("userID"):
        if rows["rating"].nunique() < 2:  # one class (logloss raises) or a constant rating
            continue
        one = calls(true[true.userID == user], pred[pred.userID == user], which)
        per_user[str(user)] = one["recommenders"]
    return {
        "value": whole["recommenders"],
        "sklearn": whole["sklearn"],
        "pairs": whole["pairs"],
        "per_user": per_user,
    }


def main() -> None:
    out = output(HERE / "probability.json")
    result = {
        "library": "recommenders",
        "version": importlib.metadata.version("recommenders"),
        "scikit-learn": sklearn.__version__,
        "python": platform.python_version(),
        "pandas": pd.__version__,
        "numpy": np.__version__,
        "data": "tests/peers/peer_metrics_data (make_data.py), ids as int64",
        "calls": {
            "logloss": "logloss(clicks.csv as rating_true, probabilities.csv as rating_pred); "
            "sklearn: log_loss(y_true, y_pred) on the merged pairs",
            "exp_var": "exp_var(ratings.csv as rating_true, predictions.csv as rating_pred); "
            "sklearn: explained_variance_score(y_true, y_pred) on the merged pairs",
        },
        "metrics": {
            "logloss": run("logloss", "clicks.csv", "probabilities.csv"),
            "exp_var": run("exp_var", "ratings.csv", "predictions.csv"),
        },
    }
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
