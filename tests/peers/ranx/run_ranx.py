"""Golden values from ranx itself, for tests/peers/ranx/test_preset_ranx.py (does not import
receval).

    bash tests/peers/ranx/make.sh      # builds /tmp/golden-ranx and runs this script there

Reads tests/peers/data/{ties,tiefree}{,_int}_{predictions,truth}.csv with the csv module
and feeds ranx its own structures, ids as text: Qrels.from_dict({user: {item: grade}}) with
every truth row (grades as numbers, 0-4 with 2.5 and -1; ranx stores them as int, so 2.5 is
2; its rel_lvl=1 default makes grade >= 1 relevant and ignores the rest), and
Run.from_dict({user: {item: score}}) with the items in file order. ranx.evaluate needs the
same users on both sides, so it is called with make_comparable=True (ranx's own option: users
missing from the run get an empty list, users missing from the qrels are dropped). Every
other setting is ranx's default. Writes tests/peers/ranx/<dataset>.json.
"""

from __future__ import annotations

import platform
import sys
from importlib.metadata import version
from pathlib import Path

from ranx import Qrels, Run, evaluate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import qrels_and_run, write_compact

HERE = Path(__file__).parent
CUTOFFS = (1, 3, 5, 10, 30)  # 30: beyond every list (the longest has 24 items)
DATASETS = ("tiefree", "ties", "tiefree_int", "ties_int")
LIMIT = 15  # numba's argsort keeps input order on ties only in lists of at most 15 items
METRICS = ("precision", "recall", "f1", "hit_rate", "mrr", "map", "ndcg", "ndcg_burges")


def run_dataset(name: str) -> dict:
    # ids stay the text of the file (ranx takes string ids only; for the _int datasets that
    # is the number's text); grades as numbers, as they are: Qrels.from_dict stores them
    # with np.array(grades, dtype=int), which truncates 2.5 to 2 (and keeps -1).
    qrels_dict, run_dict = qrels_and_run(name, grade=float)

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
    in_file_order = {u: ranked[u] == file_order_rank[u] for u in users}
    tied = {u for u, s in run_dict.items() if len(set(s.values())) < len(s)}
    beyond = sorted(u for u in users if u in tied and len(run_dict[u]) > LIMIT)
    # within the limit ranx keeps file order on ties; beyond it, whatever the quicksort does
    ties_in_file_order = all(in_file_order[u] for u in users if u not in beyond)
    n_tied_users = len(tied)

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
            "Qrels.from_dict({user: {item: grade}}) with every truth row, grades as numbers "
            "as they are (ranx stores them as int: 2.5 becomes 2, -1 stays -1; relevant: "
            "grade >= rel_lvl = 1, ranx's default; grade-0 rows are "
            "judged non-relevant); Run.from_dict({user: {item: score}}) with items in file "
            "order; evaluate(qrels, run, metrics, make_comparable=True): the mean is over "
            "every qrels user (also users with no recommendation, scored on an empty list, "
            "and users with only grade-0 rows); users only in the predictions are dropped."
        ),
        "ranx_call": "ranx.evaluate(qrels, run, ['<metric>@<k>', ...], make_comparable=True)",
        "users_evaluated": len(users),
        "ids": "the file's text (ranx takes string ids)",
        "users_with_tied_scores": n_tied_users,
        "ties_resolved_in_file_order": ties_in_file_order,
        "ties_limit": (
            f"lists of more than {LIMIT} items with tied scores: numba's quicksort orders "
            "their ties by no simple rule (ranx's documented limit); compare only other users"
        ),
        "users_beyond_tie_limit": beyond,
        "users_beyond_tie_limit_in_file_order": [u for u in beyond if in_file_order[u]],
        "cutoffs": list(CUTOFFS),
        "no_cutoff": "a metric name without @k is ranx's k = 0: the whole list",
        "users": users,
        "metrics": metrics,
    }


def main() -> None:
    for name in sys.argv[1:] or DATASETS:
        result = run_dataset(name)
        write_compact(HERE / f"{name}.json", result)
        print(
            name,
            result["users_evaluated"],
            "users; ties in file order:",
            result["ties_resolved_in_file_order"],
        )


if __name__ == "__main__":
    main()
