"""Golden values from ranx itself, for tests/test_preset_ranx.py (does not import receval).

    bash tests/golden/ranx/make.sh      # builds /tmp/golden-ranx and runs this script there

Reads tests/golden/data/{ties,tiefree}_{predictions,truth}.csv with the csv module and feeds
ranx its own structures: Qrels.from_dict({user: {item: grade}}) with every truth row (grades
0-3; ranx's rel_lvl=1 default makes grade >= 1 relevant and ignores grade 0), and
Run.from_dict({user: {item: score}}) with the items in file order. ranx.evaluate needs the
same users on both sides, so it is called with make_comparable=True (ranx's own option: users
missing from the run get an empty list, users missing from the qrels are dropped). Every
other setting is ranx's default. Writes tests/golden/ranx/<dataset>.json.
"""

from __future__ import annotations

import csv
import json
import platform
import sys
from importlib.metadata import version
from pathlib import Path

from ranx import Qrels, Run, evaluate

HERE = Path(__file__).parent
DATA = HERE.parent / "data"
CUTOFFS = (1, 3, 5, 10)
METRICS = ("precision", "recall", "f1", "hit_rate", "mrr", "map", "ndcg", "ndcg_burges")


def read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def run_dataset(name: str) -> dict:
    truth_rows = read(DATA / f"{name}_truth.csv")
    pred_rows = read(DATA / f"{name}_predictions.csv")
    qrels_dict: dict[str, dict[str, int]] = {}
    for row in truth_rows:
        qrels_dict.setdefault(row["user"], {})[row["item"]] = int(row["relevance"])
    run_dict: dict[str, dict[str, float]] = {}
    for row in pred_rows:
        run_dict.setdefault(row["user"], {})[row["item"]] = float(row["score"])

    qrels = Qrels.from_dict(qrels_dict)
    run = Run.from_dict(run_dict)
    # ranx's k = 0 (the metric name without @k): the whole list.
    names = [f"{m}@{k}" for m in METRICS for k in CUTOFFS] + list(METRICS)
    means = evaluate(qrels, run, names, make_comparable=True)

    users = list(run.get_query_ids())
    assert sorted(users) == sorted(qrels_dict), "ranx evaluates the qrels users"

    # How ranx ordered each list (after its own sort): compare with score desc, then the
    # file order, to record how it broke the ties in this data.
    ranked = {u: list(run.run[u].keys()) for u in users}
    file_order_rank = {
        u: [i for i, _ in sorted(run_dict.get(u, {}).items(), key=lambda x: -x[1])] for u in users
    }
    ties_in_file_order = all(ranked[u] == file_order_rank[u] for u in users)
    n_tied_users = sum(len(set(s.values())) < len(s) for s in run_dict.values())

    metrics = {
        m: {"mean": float(means[m]), "per_user": [float(run.scores[m][u]) for u in users]}
        for m in names
    }
    return {
        "library": "ranx",
        "version": version("ranx"),
        "numba": version("numba"),
        "numpy": version("numpy"),
        "python": platform.python_version(),
        "pandas": version("pandas"),
        "dataset": name,
        "fed": (
            "Qrels.from_dict({user: {item: grade}}) with every truth row, grades 0-3 as "
            "they are (relevant: grade >= rel_lvl = 1, ranx's default; grade-0 rows are "
            "judged non-relevant); Run.from_dict({user: {item: score}}) with items in file "
            "order; evaluate(qrels, run, metrics, make_comparable=True): the mean is over "
            "every qrels user (also users with no recommendation, scored on an empty list, "
            "and users with only grade-0 rows); users only in the predictions are dropped."
        ),
        "ranx_call": "ranx.evaluate(qrels, run, ['<metric>@<k>', ...], make_comparable=True)",
        "users_evaluated": len(users),
        "users_with_tied_scores": n_tied_users,
        "ties_resolved_in_file_order": ties_in_file_order,
        "cutoffs": list(CUTOFFS),
        "no_cutoff": "a metric name without @k is ranx's k = 0: the whole list",
        "users": users,
        "metrics": metrics,
    }


def write(path: Path, result: dict) -> None:
    """Compact JSON: one line per metric."""
    head = {k: v for k, v in result.items() if k not in ("users", "metrics")}
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    lines.append(f'  "users": {json.dumps(result["users"], separators=(",", ":"))},')
    lines.append('  "metrics": {')
    items = list(result["metrics"].items())
    for i, (name, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"    {json.dumps(name)}: {json.dumps(value, separators=(',', ':'))}{comma}")
    lines += ["  }", "}", ""]
    path.write_text("\n".join(lines))
    json.loads(path.read_text())


def main() -> None:
    for name in sys.argv[1:] or ["tiefree", "ties"]:
        result = run_dataset(name)
        write(HERE / f"{name}.json", result)
        print(
            name,
            result["users_evaluated"],
            "users; ties in file order:",
            result["ties_resolved_in_file_order"],
        )


if __name__ == "__main__":
    main()
