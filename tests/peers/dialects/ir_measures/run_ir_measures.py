"""Golden values of ir_measures 0.4.3 (its DefaultPipeline: pytrec_eval, cwl_eval, compat,
pyndeval, judged, msmarco, gdeval, ...), one measure string at a time. Does not import receval.

    bash tests/peers/dialects/ir_measures/make.sh      # builds /tmp/irmvenv, runs this

    python run_ir_measures.py DATASET...

Reads tests/peers/data/<dataset>_{truth,predictions}.csv with the csv module and feeds
ir_measures as tests/peers/cascade/run_ir_measures.py does: Qrel(user, item, int(grade)) for
every truth row (grades as C's atol reads them: 2.5 -> 2, -1 stays -1), ScoredDoc(user, item,
float(score)) for every prediction row. For each measure text: ir_measures.parse_measure, then
iter_calc([measure], qrels, run) (per user) and calc_aggregate([measure], qrels, run) (mean),
one measure per call. gdeval's measures (ERR, nDCG(dcg='exp-log2')) take numeric query ids
only: run on the `_int` datasets only (listed under "skipped" elsewhere). A measure that
raises is recorded under "unsupported" with its error text. Writes <dataset>.json here.
"""

from __future__ import annotations

import json
import platform
import sys
from importlib.metadata import version
from pathlib import Path

import ir_measures

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/peers/: golden_runs
import golden_runs

HERE = Path(__file__).parent

MEASURES = [
    "P@1",
    "P@3",
    "P@5",
    "P@10",
    "P@30",
    "P(rel=2)@5",
    "R@5",
    "R@10",
    "R@30",
    "R(rel=2)@10",
    "nDCG@1",
    "nDCG@5",
    "nDCG@10",
    "nDCG@30",
    "nDCG",
    "AP@5",
    "AP@10",
    "AP",
    "AP(rel=2)@10",
    "RR",
    "RR(rel=2)",
    "RR@5",
    "RR@10",
    "Rprec",
    "Rprec(rel=2)",
    "Bpref",
    "infAP",
    "Success@1",
    "Success@5",
    "Success@10",
    "IPrec@0.0",
    "IPrec@0.1",
    "IPrec@0.5",
    "IPrec@1.0",
    "SetP",
    "SetR",
    "SetF",
    "SetF(beta=0.5)",
    "SetAP",
    "NumRel",
    "NumRet",
    "NumRelRet",
    "NumQ",
    "Judged@5",
    "Judged@10",
    "Judged",
    "ERR@5",
    "ERR@10",
    "ERR@30",
    "nDCG(dcg='exp-log2')@10",
    "nERR_IA@5",
    "nERR_IA@10",
    "RBP(rel=1)",
    "RBP(p=0.5,rel=2)",
    "P(judged_only=True)@5",
]
GDEVAL = {"ERR@5", "ERR@10", "ERR@30", "nDCG(dcg='exp-log2')@10"}
FED = (
    "Qrel(user, item, int(grade)) for every truth row (grade truncated toward zero: "
    "2.5 -> 2, -1 stays -1) and ScoredDoc(user, item, float(score)) for every prediction row, "
    "ids as the CSV's text, one measure per iter_calc/calc_aggregate call."
)


def qrels_and_run(dataset: str) -> tuple[list, list]:
    qrels, run = golden_runs.qrels_and_run(dataset)  # grades truncated toward zero
    return (
        [ir_measures.Qrel(u, d, g) for u, docs in qrels.items() for d, g in docs.items()],
        [ir_measures.ScoredDoc(u, d, s) for u, docs in run.items() for d, s in docs.items()],
    )


def provider_of(measure) -> str:
    for provider in ir_measures.DefaultPipeline.providers:
        if provider.is_available() and provider.supports(measure):
            return provider.NAME
    return "none"


def run_dataset(dataset: str) -> dict:
    qrels, run = qrels_and_run(dataset)
    metrics: dict[str, dict] = {}
    providers: dict[str, str] = {}
    unsupported: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for text in MEASURES:
        if text in GDEVAL and not dataset.endswith("_int"):
            skipped[text] = "gdeval takes numeric query ids only: run on the _int datasets"
            continue
        try:
            measure = ir_measures.parse_measure(text)
            per_user: dict[str, float] = {}
            for metric in ir_measures.iter_calc([measure], qrels, run):
                if metric.query_id in per_user:
                    raise ValueError(f"query {metric.query_id!r} reported twice")
                per_user[metric.query_id] = float(metric.value)
            (mean,) = ir_measures.calc_aggregate([measure], qrels, run).values()
        except Exception as error:
            unsupported[text] = f"{type(error).__name__}: {error}"
            continue
        key = str(measure)
        metrics[key] = {"given": text, "mean": float(mean), "per_user": per_user}
        providers[key] = provider_of(measure)
    return {
        "library": "ir_measures",
        "version": version("ir_measures"),
        "python": platform.python_version(),
        "pytrec_eval": version("pytrec-eval-terrier"),
        "cwl_eval": version("cwl-eval"),
        "pyndeval": version("pyndeval"),
        "dataset": dataset,
        "fed": FED,
        "metrics": metrics,
        "providers": providers,
        "unsupported": unsupported,
        "skipped": skipped,
    }


def main() -> None:
    for dataset in sys.argv[1:]:
        result = run_dataset(dataset)
        path = HERE / f"{dataset}.json"
        path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(
            path.name,
            len(result["metrics"]),
            "measures,",
            "unsupported:",
            sorted(result["unsupported"]),
        )


if __name__ == "__main__":
    main()
