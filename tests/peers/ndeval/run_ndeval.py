"""Golden values of ndeval's intent-aware measures, through ir_measures' pyndeval provider
(ndeval's C code, pyndeval 0.0.8), for tests/metrics/test_intent_aware.py (does not import
receval).

    bash tests/peers/ndeval/make.sh      # builds /tmp/ndeval, runs this

Reads diversity_truth.csv (user, intent, item, rel) and diversity_run.csv (user, item,
score) with the csv module; ids as text. The qrels go to ir_measures as its GenericQrel
with the intent as the iteration (the pyndeval provider reads the iteration as the
subtopic), the run as {user: {item: score}}. pyndeval sorts each list by score
descending, then by docno ascending as text. Per user: the users of the qrels (ir_measures
gives 0 to those missing from the run); mean: ir_measures.calc_aggregate, over every user
of the qrels. Each measure is computed on its own (see main). Writes
ndeval_golden.json.
"""

from __future__ import annotations

import csv
import json
import platform
from importlib.metadata import version
from pathlib import Path

import ir_measures

HERE = Path(__file__).parent
CUTOFFS = (1, 2, 3, 5, 10, 20)  # ndeval computes to depth 20 at most
ALPHAS = (0.5, 0.3, 0.8)
BETAS = (0.5, 0.8)


def measure_names() -> list[str]:
    names = []
    for k in CUTOFFS:
        names += [f"ERR_IA@{k}", f"nERR_IA@{k}", f"P_IA@{k}", f"StRecall@{k}"]
        names += [f"alpha_nDCG(alpha={a})@{k}" for a in ALPHAS]
    for a in ALPHAS:
        for b in BETAS:
            names += [f"NRBP(alpha={a},beta={b})", f"nNRBP(alpha={a},beta={b})"]
    return names


def main() -> None:
    with open(HERE / "diversity_truth.csv", encoding="utf-8") as file:
        qrels = [
            ir_measures.GenericQrel(r["user"], r["item"], int(r["rel"]), r["intent"])
            for r in csv.DictReader(file)
        ]
    run: dict[str, dict[str, float]] = {}
    with open(HERE / "diversity_run.csv", encoding="utf-8") as file:
        for r in csv.DictReader(file):
            run.setdefault(r["user"], {})[r["item"]] = float(r["score"])
    measures = [ir_measures.parse_measure(name) for name in measure_names()]
    per_user: dict[str, dict[str, float]] = {}
    means = {}
    for measure in measures:  # one at a time: ir_measures 0.4.3 hands its pyndeval
        # provider the run as one iterator, which a second alpha or beta finds used up
        for metric in ir_measures.iter_calc([measure], qrels, run):
            per_user.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
        means.update(ir_measures.calc_aggregate([measure], qrels, run))
    result = {
        "library": f"ir-measures {version('ir-measures')}, pyndeval {version('pyndeval')}",
        "python": platform.python_version(),
        "measures": {
            str(m): {"mean": means[m], "per_user": per_user.get(str(m), {})} for m in measures
        },
    }
    path = HERE / "ndeval_golden.json"
    path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(path, len(result["measures"]), "measures")


if __name__ == "__main__":
    main()
