"""Golden values from ranx 0.3.21 (hits, rbp) for tests/peers/test_cascade_peers.py (does not
import receval).

    bash tests/peers/cascade/make.sh

Fed as tests/peers/ranx/run_ranx.py feeds it: Qrels.from_dict({user: {item: grade}}) with
every truth row (ranx stores grades as int: 2.5 -> 2), Run.from_dict({user: {item: score}}),
ids as text, evaluate(..., make_comparable=True). Only the `tiefree` datasets: ranx's order
of tied scores in lists longer than 15 follows no rule. Writes ranx_<dataset>.json.
"""

from __future__ import annotations

import platform
import sys
from importlib.metadata import version
from pathlib import Path

from ranx import Qrels, Run, evaluate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import qrels_and_run, write_metrics

HERE = Path(__file__).parent
NAMES = ["hits@1", "hits@3", "hits@5", "hits@10", "hits@30", "hits", "rbp.9", "rbp.5", "rbp.95"]


def run_dataset(dataset: str) -> None:
    qrels_dict, run_dict = qrels_and_run(dataset)
    qrels = Qrels.from_dict(
        {u: {d: float(g) for d, g in docs.items()} for u, docs in qrels_dict.items()}
    )
    run = Run.from_dict(run_dict)
    means = evaluate(qrels, run, NAMES, make_comparable=True)
    users = list(run.get_query_ids())
    metrics = {n: {u: float(run.scores[n][u]) for u in sorted(users)} for n in NAMES}
    head = {
        "library": "ranx",
        "version": version("ranx"),
        "numba": version("numba"),
        "python": platform.python_version(),
        "dataset": dataset,
        "fed": "Qrels.from_dict with every truth row; Run.from_dict; make_comparable=True",
        "means": {n: float(means[n]) for n in NAMES},
    }
    write_metrics(HERE / f"ranx_{dataset}.json", head, metrics)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        run_dataset(name)
