"""Golden CTR values from Jurity itself (run in its own venv; does not import receval).

    /tmp/golden-jurity/bin/python tests/peers/jurity/run_jurity_ctr.py

The log is tests/peers/data/logged.csv (string ids) or logged_int.csv (the same rows,
integer ids), written by tests/peers/make_data.py from the tiefree truth: click = (grade
>= 1) and a seeded propensity per row. The recommendations are tiefree_predictions.csv
(tiefree_int_predictions.csv), their score the predicted reward, fed in Jurity's click
column.

Writes, per id type (DATASET tiefree or tiefree_int):
  ctr_DATASET.json    CTR with k=None (every recommendation) for matching, ips and dr, with
                      the propensity column and without it (Jurity's 1 / number of logged
                      items)
  ctr_k_DATASET.json  CTR(k=K) for K in 1, 3, 5, 10, the same six values, with per-user
                      intermediate data (see NOTES.md, "CTR and AUC at k")
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
from jurity import utils as jurity_utils
from jurity.recommenders import CTR

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import id_types

HERE = Path(__file__).parent
DATA = HERE.parent / "data"
USER, ITEM, CLICK, PROPENSITY = "user_id", "item_id", "click", "propensity"
ESTIMATIONS = ("matching", "ips", "dr")
K_CUTOFFS = (1, 3, 5, 10)
DATASETS = {"tiefree": "logged.csv", "tiefree_int": "logged_int.csv"}


def load(dataset: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = id_types(dataset)
    log = pd.read_csv(DATA / DATASETS[dataset], dtype=ids)
    log = log.rename(columns={"user": USER, "item": ITEM})
    predictions = pd.read_csv(DATA / f"{dataset}_predictions.csv", dtype=ids)
    recommendations = pd.DataFrame(
        {
            USER: predictions["user"],
            ITEM: predictions["item"],
            CLICK: predictions["score"],  # Jurity reads the predicted reward from click
        }
    )
    return log, recommendations


def jurity_ctr(
    log: pd.DataFrame, recs: pd.DataFrame, estimation: str, k: int | None, propensity: bool
) -> dict[str, float | int] | None:
    """Jurity's extended result; every call starts from an empty get_sorted_clicks cache
    (Jurity memoizes it on the scores alone, ignoring the ids: see NOTES.md)."""
    jurity_utils.get_sorted_clicks.cache_clear()
    if propensity:
        metric = CTR(click_column=CLICK, k=k, estimation=estimation)
        result = metric.get_score(log.copy(), recs.copy(), return_extended_results=True)
    else:
        metric = CTR(click_column=CLICK, k=k, estimation=estimation, propensity_column="absent")
        result = metric.get_score(
            log.drop(columns=[PROPENSITY]).copy(), recs.copy(), return_extended_results=True
        )
    if result is None:
        return None
    return {"ctr": float(result["ctr"]), "support": int(result["support"])}


def rebuilt(log: pd.DataFrame, recs: pd.DataFrame, k: int | None, propensity: bool) -> dict:
    """The same numbers rebuilt row by row, kept per user: each user's top k (a stable sort
    by score, descending; no tied score within a user on tiefree), joined to the log."""
    n_items = log[ITEM].nunique()
    top = recs.sort_values([USER, CLICK], ascending=[True, False], kind="stable")
    if k is not None:
        top = top.groupby(USER).head(k)
    logged = log if propensity else log.assign(**{PROPENSITY: 1 / n_items})
    rows = top.merge(logged, on=[USER, ITEM], how="left", suffixes=("_r", ""))
    matched = rows[CLICK].notna()
    rows["ips"] = np.where(matched, rows[CLICK] / rows[PROPENSITY], 0.0)
    rows["dr"] = rows[f"{CLICK}_r"] + np.where(
        matched, (rows[CLICK] - rows[f"{CLICK}_r"]) / rows[PROPENSITY], 0.0
    )
    rows["matched"] = matched
    per_user = {
        str(user): {
            "top_k": len(group),
            "matched": int(group["matched"].sum()),
            "clicks": int(group.loc[group["matched"], CLICK].sum()),
            "ips_sum": float(group["ips"].sum()),
            "dr_sum": float(group["dr"].sum()),
        }
        for user, group in rows.groupby(USER, sort=True)
    }
    n_matched = int(matched.sum())
    return {
        "top_k_rows": len(rows),
        "matched": n_matched,
        "matching": float(rows.loc[matched, CLICK].mean()) if n_matched else None,
        "ips": float(rows["ips"].mean()) if len(rows) else None,
        "dr": float(rows["dr"].mean()) if len(rows) else None,
        "per_user": per_user,
    }


def values_at(log: pd.DataFrame, recs: pd.DataFrame, k: int | None) -> dict[str, object]:
    out: dict[str, object] = {}
    for propensity in (True, False):
        suffix = "" if propensity else "_default_propensity"
        again = rebuilt(log, recs, k, propensity)
        for estimation in ESTIMATIONS:
            result = jurity_ctr(log, recs, estimation, k, propensity)
            value = None if result is None else result["ctr"]
            mine = again[estimation]
            if (value is None) != (mine is None) or (
                value is not None and not math.isclose(value, mine, rel_tol=0, abs_tol=1e-12)
            ):
                raise SystemExit(f"k={k} {estimation}{suffix}: Jurity {value}, rebuilt {mine}")
            out[estimation + suffix] = value
            if result is not None:
                expected = again["matched"] if estimation == "matching" else again["top_k_rows"]
                if result["support"] != expected:
                    raise SystemExit(f"k={k} {estimation}{suffix}: support {result}")
                out[f"{estimation}{suffix}_support"] = result["support"]
        if propensity:
            out["top_k_rows"] = again["top_k_rows"]
            out["matched"] = again["matched"]
            out["per_user"] = again["per_user"]
    return out


def header(dataset: str) -> dict[str, object]:
    return {
        "library": "jurity",
        "version": importlib.metadata.version("jurity"),
        "pandas": pd.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "dataset": dataset,
        "ids": "integers (int64)" if dataset.endswith("_int") else "strings",
    }


def main() -> None:
    for dataset, log_file in DATASETS.items():
        log, recs = load(dataset)
        plain = values_at(log, recs, None)
        golden = {
            **header(dataset),
            "fed": f"log: {log_file} (tiefree truth with click = grade >= 1 and its propensity "
            f"column); recommendations: {dataset}_predictions.csv, score as the predicted "
            "reward in the click column; k=None",
            "ctr": {key: value for key, value in plain.items() if key not in ("per_user",)},
        }
        (HERE / f"ctr_{dataset}.json").write_text(json.dumps(golden, indent=2) + "\n")
        at_k = {f"k={k}": values_at(log, recs, k) for k in K_CUTOFFS}
        golden_k = {
            **header(dataset),
            "fed": golden["fed"].replace(
                "k=None",
                "CTR(click_column='click', k=K, estimation=E[, propensity_column='absent'])",
            ),
            "k_rule": (
                "utils.get_sorted_clicks(predicted indexed by (user_id, item_id), 'user_id', "
                "'click', k): sort_values('click', ascending=False) (the score, descending; an "
                "unstable quicksort of the whole frame, no tie within a user on tiefree), "
                "groupby('user_id').head(k): each user's k highest-scored recommendations, "
                "all of them when the list is shorter; the log is joined to those rows only"
            ),
            "estimators": {
                "matching": "mean of the log's click over the top-k rows found in the log "
                "(inner join on (user_id, item_id)); None when no row matches",
                "ips": "mean over every top-k row (matched or not) of click / propensity for a "
                "matched row, 0 otherwise",
                "dr": "mean over every top-k row of score + (click - score) / propensity for a "
                "matched row, the score alone otherwise",
                "default_propensity": "without the propensity column: 1 / (distinct items in "
                "the whole log), counted before k",
            },
            "per_user_note": (
                "Jurity gives no per-user CTR (one mean over rows); per_user holds, for each "
                "user with a recommendation, its top-k rows, matched rows, clicks among them, "
                "and the sums of the ips and dr terms (with the propensity column), rebuilt "
                "with a stable sort and checked against Jurity's values and support"
            ),
            "ctr": at_k,
        }
        (HERE / f"ctr_k_{dataset}.json").write_text(json.dumps(golden_k, indent=1) + "\n")
        print("wrote", f"ctr_{dataset}.json", f"ctr_k_{dataset}.json")


if __name__ == "__main__":
    main()
