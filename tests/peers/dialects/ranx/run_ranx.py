"""Golden values from ranx itself for every ranx metric name (does not import receval).

    bash tests/peers/dialects/ranx/make.sh [VENV]   # builds VENV and runs this script there

Feeds ranx exactly as tests/peers/ranx/run_ranx.py does: reads
tests/peers/data/{tiefree,ties,tiefree_int,ties_int}_{predictions,truth}.csv with the csv
module; Qrels.from_dict({user: {item: grade}}) with every truth row (grades as numbers; ranx
stores them as int, so 2.5 -> 2, 0.5 -> 0, -1 stays -1), Run.from_dict({user: {item: score}})
with the items in file order (ids as the file's text), evaluate(qrels, run, name,
make_comparable=True), every other argument ranx's default.

One evaluate call per metric name, each on a fresh Qrels and a fresh Run (make_comparable
re-sorts the Run in place, so reusing one Run would re-sort already sorted lists; for
lists of more than 15 items with tied scores that can change the order). The script also
evaluates all names in one call on one fresh Run and reports any per-user difference.

Must run with PYTHONHASHSEED=0 (ranx hashes item ids with Python's string hash). Sets
NUMBA_NUM_THREADS=1 before importing ranx: ranx's bpref raises ZeroDivisionError inside its
parallel loop for queries without a relevant judgment, numba drops the exception and the rest
of that thread's share of the queries keeps 0.0, so bpref depends on the thread count (every
other metric was checked to equal ranx's per-query function, whatever the threads). With one
thread: every query from the first raising one on (in ranx's order) gets 0.0. The per-query
values of ranx's own _bpref are written too, under "bpref_per_query" (null where it raises).
Writes tests/peers/dialects/ranx/<dataset>.json (json.dumps(indent=1, sort_keys=True)).
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
from importlib.metadata import version
from pathlib import Path

os.environ["NUMBA_NUM_THREADS"] = "1"  # before numba is imported: see the docstring

import numba
from ranx import Qrels, Run, evaluate
from ranx.meta.evaluate import extract_metric_and_params
from ranx.metrics.bpref import _bpref

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/peers/: golden_runs
from golden_runs import qrels_and_run

HERE = Path(__file__).parent
DATASETS = ("tiefree", "ties", "tiefree_int", "ties_int")
LIMIT = 15  # numba's argsort keeps input order on ties only in lists of at most 15 items
BASES = (
    "hits",
    "hit_rate",
    "precision",
    "recall",
    "f1",
    "r-precision",
    "mrr",
    "map",
    "dcg",
    "dcg_burges",
    "ndcg",
    "ndcg_burges",
    "bpref",
)
CUTOFFS = (1, 3, 5, 10, 30)  # 30: beyond every list (the longest has 24 items)
NAMES = [
    name for m in BASES for name in (m, *(f"{m}@{k}" for k in CUTOFFS), f"{m}@5-l2", f"{m}-l2")
] + ["rbp.5", "rbp.8", "rbp.95", "rbp.8-l2"]


def same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def run_dataset(name: str) -> tuple[dict, list[str]]:
    qrels_dict, run_dict = qrels_and_run(name, grade=float)
    users: list[str] | None = None
    metrics: dict[str, dict] = {}
    unsupported: dict[str, str] = {}
    for metric in NAMES:
        run = Run.from_dict(run_dict)
        try:
            mean = evaluate(Qrels.from_dict(qrels_dict), run, metric, make_comparable=True)
        except Exception as exc:  # ranx rejects the name (or fails on the data)
            unsupported[metric] = f"{type(exc).__name__}: {exc}"
            continue
        ids = list(run.get_query_ids())
        assert users is None or ids == users, "same users, same order, for every name"
        users = ids
        metrics[metric] = {
            "mean": float(mean),
            "per_user": {u: float(run.scores[metric][u]) for u in users},
        }
    if users is None:  # every name failed: ranx's order is still that of a comparable run
        users = list(
            Run.from_dict(run_dict).make_comparable(Qrels.from_dict(qrels_dict)).get_query_ids()
        )
    assert sorted(users) == sorted(qrels_dict), "ranx evaluates the qrels users"

    tied = {u for u, s in run_dict.items() if len(set(s.values())) < len(s)}
    beyond = sorted(u for u in users if u in tied and len(run_dict[u]) > LIMIT)

    # Cross-check: all names in one evaluate call, on one fresh Run.
    diffs: list[str] = []
    together_run = Run.from_dict(run_dict)
    supported = list(metrics)
    together = evaluate(Qrels.from_dict(qrels_dict), together_run, supported, make_comparable=True)
    if len(supported) == 1:
        together = {supported[0]: together}
    for m in supported:
        if not same(float(together[m]), metrics[m]["mean"]):
            diffs.append(f"{m} mean {together[m]!r} vs {metrics[m]['mean']!r}")
        for u in users:
            a, b = float(together_run.scores[m][u]), metrics[m]["per_user"][u]
            if not same(a, b):
                diffs.append(f"{m} {u} {a!r} vs {b!r}")

    # ranx's own per-query bpref (ranx.metrics.bpref._bpref), outside the parallel loop.
    qrels_t = Qrels.from_dict(qrels_dict)
    run_t = Run.from_dict(run_dict).make_comparable(qrels_t)
    assert list(run_t.get_query_ids()) == users
    tq, tr = qrels_t.to_typed_list(), run_t.to_typed_list()
    bpref_per_query: dict[str, dict[str, float | None]] = {}
    for metric in NAMES:
        m, _, rel_lvl = extract_metric_and_params(metric)
        if m != "bpref":
            continue
        values: dict[str, float | None] = {}
        for i, u in enumerate(users):
            try:
                values[u] = float(_bpref(tq[i], tr[i], rel_lvl))
            except ZeroDivisionError:
                values[u] = None
        bpref_per_query[metric] = values

    result = {
        "library": "ranx",
        "version": version("ranx"),
        "numba": version("numba"),
        "numpy": version("numpy"),
        "python": platform.python_version(),
        "dataset": name,
        "fed": (
            "Qrels.from_dict({user: {item: grade}}) with every truth row (grades as numbers, "
            "stored by ranx as int: 2.5 -> 2, 0.5 -> 0, -1 stays -1) and Run.from_dict({user: "
            "{item: score}}) with items in file order, ids as the file's text, then one "
            "evaluate(qrels, run, name, make_comparable=True) per metric name on a fresh Qrels "
            "and Run, PYTHONHASHSEED=0, every other argument ranx's default: every qrels user "
            "is evaluated (users without recommendations on an empty list), users only in the "
            "predictions are dropped."
        ),
        "users": users,
        "users_beyond_tie_limit": beyond,
        "metrics": metrics,
        "unsupported": unsupported,
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "bpref_per_query": bpref_per_query,
        "bpref_note": (
            "metrics['bpref*'] is what ranx.evaluate returns: its parallel loop silently drops "
            "the ZeroDivisionError of a query without a relevant judgment and, with one numba "
            "thread, leaves 0.0 for that query and every later one; bpref_per_query is ranx's "
            "_bpref called per query (null: ZeroDivisionError). NaN: no judged non-relevant "
            "document and a relevant one retrieved (0/0)."
        ),
    }
    return result, diffs


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") != "0":
        sys.exit("run with PYTHONHASHSEED=0 (ranx hashes item ids with Python's string hash)")
    for name in sys.argv[1:] or DATASETS:
        result, diffs = run_dataset(name)
        path = HERE / f"{name}.json"
        path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
        json.loads(path.read_text())
        nan = sum(math.isnan(v) for m in result["metrics"].values() for v in m["per_user"].values())
        print(
            f"{name}: {len(result['users'])} users, {len(result['metrics'])} metrics, "
            f"unsupported {sorted(result['unsupported'])}, NaN per-user values {nan}, "
            f"beyond tie limit {len(result['users_beyond_tie_limit'])}, "
            f"all-in-one-call differences {len(diffs)}"
        )
        for line in diffs[:20]:
            print("   ", line)


if __name__ == "__main__":
    main()
