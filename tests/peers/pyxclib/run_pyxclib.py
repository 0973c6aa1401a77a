"""pyxclib's propensity-scored metrics on data written here (run by make.sh in its own
venv, with pyxclib's source on PYTHONPATH).

    tests/peers/pyxclib/make.sh      # builds /tmp/golden-pyxclib, runs this

Does not import receval. Writes the inputs (predictions.csv, truth.csv, log.csv,
catalog.csv, and oracle_<source>_<k>.csv: each user's best list by pyxclib) and
golden.json: for each propensity source (model: compute_inv_propesity over the log;
catalog: 1 / the catalog's propensity) and k in 1, 3, 5,

    per_user   pyxclib's psprecision and psndcg on each evaluated user's row alone (the
               per-user ratio: receval's normalize=ideal), and the raw values from
               pyxclib's own helpers (_setup_metric, _eval_flags, _precision, _ndcg: the
               paper's psP@k and psnDCG@k, receval's normalize=none)
    dataset    psprecision and psndcg on the whole matrix: pyxclib's (and the Extreme
               Classification Repository's) ratio of the means over the users

How the data are fed: the label space is every item id of the four files, sorted
(column j = the j-th id); one matrix row per user receval evaluates by default (users of
the ground truth with a relevant item: grade >= 1; users only in the predictions are
left out). Each user's list is ranked as receval's default conventions rank it (score
descending, ties by the item id descending: tie_break item_desc) and given as sorted
indices (sorted=True), padded with the index num_labels (pyxclib's pad: a zero column
and a zero weight). The log's label matrix has one row per distinct user of the log and
a 1 per distinct (user, item): compute_inv_propesity's N is its rows, N_l its column sums.
Items the catalog lacks get weight 1 (receval's rule: p = 1).
"""

from __future__ import annotations

import json
import platform
import random
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from xclib.evaluation import xc_metrics as xc

HERE = Path(__file__).resolve().parent
CUTOFFS = (1, 3, 5)
A, B = 0.55, 1.5


def write(name: str, header: str, rows: list[tuple]) -> None:
    lines = [header, *(",".join(str(v) for v in row) for row in rows)]
    (HERE / name).write_text("\n".join(lines) + "\n")


def make_data() -> tuple[list, list, list, list]:
    rng = random.Random(38)
    items = [9, 10, 100, *range(11, 40)]
    users = [9, 10, 100, *range(200, 240)]
    predictions, truth = [], []
    for index, user in enumerate(users):
        mine = []
        if index % 10 != 6:  # some users only in the predictions
            mine = rng.sample(items, rng.choice([1, 2, 3, 6]))
            for item in mine:
                truth.append((user, item, rng.choice([0, 1, 1, 2])))  # grade 0: not relevant
        if index % 9 != 4:  # some users only in the ground truth
            length = rng.choice([0, 1, 2, 4, 7])  # lists shorter than k too
            listed = rng.sample(mine, min(len(mine), rng.choice([0, 1, 2, 3])))
            listed += rng.sample([i for i in items if i not in listed], length)
            for item in listed:
                predictions.append((user, item, rng.choice([0.2, 0.5, 0.5, 0.8])))  # ties
    # the log: skewed popularity (items 9, 10, 100 and the first few most often)
    log = sorted(
        {
            (rng.choice([*users, 500, 501]), rng.choice(items[: rng.choice([3, 8, 30])]))
            for _ in range(260)
        }
    )
    # the catalog: every item but 38 and 39 (relevant items it lacks count p = 1)
    catalog = [(item, rng.choice([0.05, 0.2, 0.25, 0.5, 1.0])) for item in items if item < 38]
    return predictions, truth, log, catalog


def main() -> None:
    predictions, truth, log, catalog = make_data()
    write("predictions.csv", "user,item,score", predictions)
    write("truth.csv", "user,item,relevance", truth)
    write("log.csv", "user,item", log)
    write("catalog.csv", "item,propensity", catalog)
    ids = sorted(
        {r[1] for r in predictions}
        | {r[1] for r in truth}
        | {r[1] for r in log}
        | {r[0] for r in catalog}
    )
    column = {item: j for j, item in enumerate(ids)}
    labels = len(ids)
    evaluated = sorted({u for u, _, g in truth if g >= 1})
    row = {user: i for i, user in enumerate(evaluated)}
    y = np.zeros((len(evaluated), labels), dtype=np.float32)
    for user, item, grade in truth:
        if grade >= 1:
            y[row[user], column[item]] = 1.0
    y = sp.csr_matrix(y)
    ranked: dict[int, list[int]] = {u: [] for u in evaluated}
    for user in evaluated:
        mine = [(s, i) for u, i, s in predictions if u == user]
        mine.sort(key=lambda p: (-p[0], -p[1]))  # score descending, then item descending
        ranked[user] = [column[i] for _, i in mine]
    width = max(max(len(v) for v in ranked.values()), max(CUTOFFS))
    indices = np.full((len(evaluated), width), labels, dtype=np.int64)
    for user, listed in ranked.items():
        indices[row[user], : len(listed)] = listed
    log_users = sorted({u for u, _ in log})
    # float64 labels: with float32 ones (as XMC data loaders give) numpy 2 computes
    # compute_inv_propesity's (N_l + B)^(-A) in float32 (about 1e-8 relative)
    log_matrix = np.zeros((len(log_users), labels), dtype=np.float64)
    for user, item in log:
        log_matrix[log_users.index(user), column[item]] = 1.0
    weights = {
        "model": xc.compute_inv_propesity(sp.csr_matrix(log_matrix), A, B),
        "catalog": np.array([1.0 / dict(catalog).get(item, 1.0) for item in ids]),
    }
    golden: dict = {
        "pyxclib": "kunaldahiya/pyxclib@5d130862df91a06d03b296ad264c89b037c33db7",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "a": A,
        "b": B,
        "evaluated": evaluated,
        "weights": {
            s: dict(zip(map(str, ids), map(float, w), strict=True)) for s, w in weights.items()
        },
        "per_user": {},
        "dataset": {},
    }
    for source, inv in weights.items():
        for k in CUTOFFS:
            per_user: dict[str, dict[str, float]] = {}
            for user in evaluated:
                i = row[user]
                x, t = indices[i : i + 1], y[i : i + 1]
                idx, labels_t, _ps_idx, inv_t = xc._setup_metric(x, t, inv, k=k, sorted=True)
                flags = xc._eval_flags(idx, labels_t, inv_t)
                total = int(labels_t.sum())
                n = np.cumsum(1 / np.log2(np.arange(1, max(total, k) + 1) + 1))[[total - 1]]
                per_user[str(user)] = {
                    "psp": float(xc.psprecision(x, t, inv, k=k, sorted=True)[k - 1]),
                    "psndcg": float(xc.psndcg(x, t, inv, k=k, sorted=True)[k - 1]),
                    "psp_none": float(xc._precision(flags, k)[k - 1]),
                    "psndcg_none": float(xc._ndcg(flags, n, k)[k - 1]),
                }
            golden["per_user"][f"{source}@{k}"] = per_user
            golden["dataset"][f"{source}@{k}"] = {
                "psp": float(xc.psprecision(indices, y, inv, k=k, sorted=True)[k - 1]),
                "psndcg": float(xc.psndcg(indices, y, inv, k=k, sorted=True)[k - 1]),
            }
            _, _, best, _ = xc._setup_metric(indices, y, inv, k=k, sorted=True)
            oracle = [
                (user, ids[j], k - r)
                for user in evaluated
                for r, j in enumerate(best[row[user]])
                if j < labels and y[row[user], j]
            ]
            write(f"oracle_{source}_{k}.csv", "user,item,score", oracle)
    (HERE / "golden.json").write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {HERE / 'golden.json'} ({len(evaluated)} users, {labels} items)", file=sys.stderr)


if __name__ == "__main__":
    main()
