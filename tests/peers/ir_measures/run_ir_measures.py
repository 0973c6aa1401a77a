"""Golden values of ir_measures' Judged@k, for tests/metrics/test_judged.py (does not import
receval).

    bash tests/peers/ir_measures/make.sh      # builds /tmp/golden-ir-measures, runs this

Reads tests/peers/data/{ties,tiefree}{,_int}_{predictions,truth}.csv with the csv module
and gives ir_measures its own structures, ids as text (for the _int datasets the number's
text): qrels {user: {item: int(grade)}} with every truth row (Judged asks only whether an
item is there, so grade -1 counts as judged), run {user: {item: score}} with scores as
float64. ir_measures' Judged provider sorts each list by score descending, then by docno
ascending as text, and divides the judged items of the top k by min(k, list length); it
reports every user of the qrels (its Evaluator gives 0 to those missing from the run), and
the mean over them (ir_measures.calc_aggregate). Writes
tests/peers/ir_measures/judged_<dataset>.json.
"""

from __future__ import annotations

import json
import platform
import sys
from importlib.metadata import version
from pathlib import Path

import ir_measures
from ir_measures import Judged

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import qrels_and_run

HERE = Path(__file__).parent
CUTOFFS = (1, 3, 5, 10, 30)  # 30: beyond every list (the longest has 24 items)


def run_dataset(name: str) -> dict:
    qrels, run = qrels_and_run(name)  # grades truncated: int(float(grade))
    measures = [Judged @ k for k in CUTOFFS] + [Judged]
    per_user: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(measures, qrels, run):
        per_user.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
    means = ir_measures.calc_aggregate(measures, qrels, run)
    return {
        "library": f"ir-measures {version('ir-measures')}",
        "python": platform.python_version(),
        "dataset": name,
        "measures": {str(m): {"mean": means[m], "per_user": per_user[str(m)]} for m in measures},
    }


def main() -> None:
    for name in sys.argv[1:]:
        result = run_dataset(name)
        path = HERE / f"judged_{name}.json"
        path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(path, len(result["measures"]["Judged"]["per_user"]), "users")


if __name__ == "__main__":
    main()
