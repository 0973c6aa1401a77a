"""Golden values from ir_measures 0.4.3 (gdeval's ERR, pyndeval's nERR_IA, cwl_eval's RBP)
for tests/peers/test_cascade_peers.py (does not import receval).

    bash tests/peers/cascade/make.sh

Fed the shared data (tests/peers/data, the `_int` datasets: gdeval takes numeric query
ids only) as ir_measures.Qrel(user, item, int(grade)) with every truth row (grades as C's
atol reads them: 2.5 -> 2) and ScoredDoc(user, item, score). Per user, ir_measures'
iter_calc values; the users are those each tool reports. Writes ir_measures_<dataset>.json.
"""

from __future__ import annotations

import platform
import sys
from importlib.metadata import version
from pathlib import Path

import ir_measures
from ir_measures import ERR, RBP, nERR_IA

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import qrels_and_run, write_metrics

HERE = Path(__file__).parent
CUTOFFS = (1, 3, 5, 10, 30)
MEASURES = {
    **{f"ERR@{k}": ERR @ k for k in CUTOFFS},
    **{f"nERR_IA@{k}": nERR_IA @ k for k in (1, 3, 5, 10, 20)},  # ndeval: k <= 20
    **{f"nERR_IA(rel=2)@{k}": nERR_IA(rel=2) @ k for k in (3, 10)},
    "RBP(rel=1)": RBP(rel=1),
    "RBP(p=0.9,rel=2)": RBP(p=0.9, rel=2),
    "RBP(p=0.5,rel=1)": RBP(p=0.5, rel=1),
}


def run_dataset(dataset: str) -> None:
    qrels_dict, run_dict = qrels_and_run(dataset)
    qrels = [ir_measures.Qrel(u, d, g) for u, docs in qrels_dict.items() for d, g in docs.items()]
    run = [ir_measures.ScoredDoc(u, d, s) for u, docs in run_dict.items() for d, s in docs.items()]
    metrics = {}
    for name, measure in MEASURES.items():
        values = {m.query_id: float(m.value) for m in ir_measures.iter_calc([measure], qrels, run)}
        metrics[name] = dict(sorted(values.items()))
    head = {
        "library": "ir_measures",
        "version": version("ir_measures"),
        "providers": {
            "ERR": "gdeval (perl)",
            "nERR_IA": f"pyndeval {version('pyndeval')}",
            "RBP": f"cwl_eval {version('cwl-eval')}",
        },
        "python": platform.python_version(),
        "dataset": dataset,
        "fed": "Qrel(user, item, int(grade)) for every truth row; ScoredDoc(user, item, score)",
        "call": "ir_measures.iter_calc([measure], qrels, run)",
    }
    write_metrics(HERE / f"ir_measures_{dataset}.json", head, metrics)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        run_dataset(name)
