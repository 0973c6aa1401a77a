"""Golden values from RePlay itself, for tests/peers/replay/test_preset_replay.py (does not import
receval).

    bash tests/peers/replay/make.sh    # builds /tmp/golden-replay and runs this script there

RePlay's metrics are binary: the ground truth is a set of (user, item) pairs with no grade.
It is fed the truth rows with grade >= 1 (grade-0 rows are left out, so a user whose rows
are all grade 0 is not in RePlay's ground truth at all) and every prediction row
(user, item, score), as polars DataFrames (RePlay's polars path; the pandas path is run too
and must give the same numbers). Each metric class is called with its defaults except the
column names: Metric(topk=[1, 3, 5, 10], query_column="user", item_column="item",
rating_column="score"), once with mode=Mean() (the default) and once with mode=PerUser().
Writes tests/peers/replay/<dataset>.json.
"""

from __future__ import annotations

import math
import platform
import sys
from importlib.metadata import version
from pathlib import Path

import polars as pl
from replay.metrics import MAP, MRR, NDCG, HitRate, Mean, PerUser, Precision, Recall

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import write_compact

HERE = Path(__file__).parent
DATA = HERE.parent / "data"
CUTOFFS = [1, 3, 5, 10, 30]  # 30: beyond every list (the longest has 24 items)
DATASETS = ["tiefree", "ties", "tiefree_int", "ties_int"]
CLASSES = {
    "Precision": Precision,
    "Recall": Recall,
    "HitRate": HitRate,
    "MRR": MRR,
    "MAP": MAP,
    "NDCG": NDCG,
}
COLUMNS = {"query_column": "user", "item_column": "item", "rating_column": "score"}


def run_dataset(name: str) -> dict:
    # string ids as strings; the _int datasets' ids as integers (RePlay then orders tied
    # items as numbers: sort([score, item], descending=True))
    ids = pl.Int64 if name.endswith("_int") else pl.String
    predictions = pl.read_csv(
        DATA / f"{name}_predictions.csv",
        schema={"user": ids, "item": ids, "score": pl.Float64},
    )
    truth_all = pl.read_csv(
        DATA / f"{name}_truth.csv",
        schema={"user": ids, "item": ids, "relevance": pl.Float64},
    )
    truth = truth_all.filter(pl.col("relevance") >= 1).select("user", "item")

    per_user: dict[str, dict[str, float]] = {}
    means: dict[str, float] = {}
    for cls in CLASSES.values():
        means |= cls(CUTOFFS, **COLUMNS)(predictions, truth)
        by_user = cls(CUTOFFS, mode=PerUser(), **COLUMNS)(predictions, truth)
        per_user |= {key.replace("-PerUser@", "@"): value for key, value in by_user.items()}
        # The pandas path (stable sort by score, then item, descending) must agree.
        pd_means = cls(CUTOFFS, mode=Mean(), **COLUMNS)(predictions.to_pandas(), truth.to_pandas())
        for key, value in pd_means.items():
            assert math.isclose(value, means[key], rel_tol=0, abs_tol=1e-12), (key, value)

    users = sorted(truth["user"].unique())
    metrics = {}
    for cls_name in CLASSES:
        for k in CUTOFFS:
            key = f"{cls_name}@{k}"
            assert sorted(per_user[key]) == users
            values = [float(per_user[key][u]) for u in users]
            metrics[key] = {"mean": float(means[key]), "per_user": values}

    gt_users = set(users)
    tied = predictions.group_by("user").agg(pl.col("score").is_duplicated().any().alias("t"))
    pred_users = set(predictions["user"])
    return {
        "library": "replay-rec",
        "version": version("replay-rec"),
        "python": platform.python_version(),
        "pandas": version("pandas"),
        "polars": version("polars"),
        "numpy": version("numpy"),
        "dataset": name,
        "ids": "integers (pl.Int64)" if ids == pl.Int64 else "strings",
        "fed": (
            "ground truth: the truth rows with grade >= 1 (grades 0-4, 2.5 and -1 included: "
            "a fractional grade >= 1 is relevant, -1 and 0.5 are not), as (user, item) "
            "pairs (RePlay's "
            "metrics are binary and take no grade; grade-0 rows are left out, so users whose "
            "rows are all grade 0 are not in RePlay's ground truth and not evaluated); "
            "recommendations: every prediction row (user, item, score); both as polars "
            "DataFrames. RePlay evaluates every ground-truth user (a user with no "
            "recommendation scores 0) and ignores users only in the recommendations."
        ),
        "replay_call": (
            "<Metric>(topk=[1, 3, 5, 10], query_column='user', item_column='item', "
            "rating_column='score'[, mode=PerUser()])(recommendations, ground_truth)"
        ),
        "mean_note": (
            "mean: RePlay's Mean(), polars .mean() of the per-user values in the row order "
            "of polars' group_by, which varies from run to run, so a rerun can change the "
            "last bits of a mean (about 1e-17); per-user values are exact and stable"
        ),
        "users_evaluated": len(users),
        "users_without_recommendations": sorted(gt_users - pred_users),
        "users_not_in_fed_ground_truth": sorted(pred_users - gt_users),
        "users_with_tied_scores": int(tied["t"].sum()),
        "cutoffs": CUTOFFS,
        "users": users,
        "metrics": metrics,
    }


def main() -> None:
    for name in sys.argv[1:] or DATASETS:
        result = run_dataset(name)
        write_compact(HERE / f"{name}.json", result)
        print(name, result["users_evaluated"], "users")


if __name__ == "__main__":
    main()
