"""Other tools' measure names in a config give those tools' numbers.

Golden files of each tool on the shared generator's data (tests/peers/data: integer ids
whose text and number orders differ, heavy ties, grades 0-4 with 2.5 and -1, users on one
side only, lists of 1-24 items), each made by a script in tests/peers/dialects/<tool>/
that does not import receval:

    trec_eval    NIST trec_eval 10.0 (commit f425365) printing 17 significant digits:
                 -q -m all_trec, the same with -c, and -m forms with parameters, with
                 and without -c
    ir_measures  ir_measures 0.4.3 (pytrec_eval, cwl_eval, pyndeval, judged, msmarco and
                 gdeval inside), every measure receval reproduces
    ranx         ranx 0.3.21, every metric name, with cutoffs and -l2

The config names each measure as the tool writes it, and nothing else: no preset, no
convention. Every per-user value and every mean must agree to 1e-9 (gdeval prints 5
decimals: half its last digit there).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import golden_files
import pytest
from cli_helpers import evaluate_model

HERE = golden_files.GOLDEN / "dialects"
DATASETS = ("tiefree", "ties", "tiefree_int", "ties_int")
TOLERANCE = 1e-9


def per_user(report: Any) -> dict[str, dict[str, Any]]:
    return {str(row["user"]): row for row in report.per_user.iter_rows(named=True)}


# -- trec_eval -------------------------------------------------------------------------------

NOT_MEASURES = {"runid", "num_q", "relstring"}
# the -m forms the .params outputs were made with (make.sh), and the .rbp ones
PARAM_FORMS = [
    "P.1,3,7",
    "ndcg_cut.3,7,23",
    "map_cut.3,7",
    "success.2,3",
    "recall.3,7",
    "iprec_at_recall.0.25,0.75",
    "Rprec_mult.0.5,1.5",
    "utility.2,-1,0,0",
    "11pt_avg.0.25,0.5",
    "set_F.0.5",
    "ndcg.1=3,2=9",
    "relative_P.3,7",
    "unj.3,7",
]
RBP_FORMS = ["rbp.p=0.5", "rbp_resid.p=0.5"]
# the .paramsc ones: the same under -c, with c != 0 in utility, and rbp's (users without a
# run are scored on trec_eval's one-document placeholder ranking)
PARAMS_C_FORMS = [
    *(f if not f.startswith("utility") else "utility.2,-1,-1,0" for f in PARAM_FORMS),
    *RBP_FORMS,
]


def trec_eval_lines(name: str) -> list[tuple[str, str, str]]:
    lines = []
    for line in (HERE / "trec_eval" / name).read_text().splitlines():
        measure, query, value = (part.strip() for part in line.split("\t"))
        if measure not in NOT_MEASURES:
            lines.append((measure, query, value))
    return lines


TREC_CASES = [
    (dataset, output, forms)
    for dataset in DATASETS
    for output, forms in (
        ("aq", None),
        ("aqc", None),
        ("params", PARAM_FORMS),
        ("rbp", RBP_FORMS),
        ("paramsc", PARAMS_C_FORMS),
    )
]
COMPLETE = ("aqc", "paramsc")  # -c: the whole qrels


@pytest.mark.parametrize(
    ("dataset", "output", "forms"), TREC_CASES, ids=[f"{d}.{o}" for d, o, _ in TREC_CASES]
)
def test_trec_eval_names_give_trec_eval_numbers(
    tmp_path: Path, dataset: str, output: str, forms: list[str] | None
) -> None:
    """-m all_trec's every printed name (and -m's forms) written in a config: trec_eval
    10.0's value for every query and the mean. -c is trec_eval's option, not a name's:
    the config gives it as the preset's setting (users_without_recommendations: zero)."""
    lines = trec_eval_lines(f"{dataset}.{output}")
    printed = list(dict.fromkeys(measure for measure, _, _ in lines))
    folder = HERE / "trec_eval"
    config: dict[str, Any] = {
        "predictions": {"path": str(folder / f"{dataset}.run")},
        "ground_truth": {
            "path": str(folder / f"{dataset}.qrels{'' if output in COMPLETE else '_ret'}")
        },
        "metrics": forms or printed,
    }
    if output in COMPLETE:
        config["conventions"] = {"preset": "trec_eval", "users_without_recommendations": "zero"}
    report = evaluate_model(tmp_path, config, per_user=True)
    assert set(printed) <= set(report.metrics), sorted(set(printed) - set(report.metrics))
    rows = per_user(report)
    compared = 0
    for measure, query, value in lines:
        got = report.metrics[measure] if query == "all" else rows[query][measure]
        assert got is not None, (measure, query)
        assert math.isclose(got, float(value), rel_tol=0, abs_tol=TOLERANCE), (
            measure,
            query,
            got,
            value,
        )
        compared += 1
    assert compared == len(lines) > 100


def test_every_all_trec_measure_is_compared() -> None:
    """The names -m all_trec prints, each compared above (trec_eval's own list)."""
    names = {measure for measure, _, _ in trec_eval_lines("ties_int.aq")}
    assert len(names) >= 90
    assert {"P_10", "ndcg_cut_10", "map_cut_10", "gm_map", "success_1", "recip_rank"} <= names
    assert {"Rprec", "bpref", "iprec_at_recall_0.10", "infAP", "utility", "rbp"} <= names


# -- ir_measures -----------------------------------------------------------------------------

# what ir_measures computes that receval does not reproduce: a query count, and a mode that
# drops unjudged documents first
NOT_REPRODUCED = {"NumQ", "P(judged_only=True)@5"}
# gdeval.pl prints 5 decimals
GDEVAL = {"ERR@5", "ERR@10", "ERR@30", "nDCG(dcg='exp-log2')@10"}
SUMS = {"NumRel", "NumRet", "NumRet(rel=1)"}


def tool_golden(tool: str, version: str, dataset: str) -> dict[str, Any]:
    """A tool's golden file of a dataset, checked to be that tool's, at that version."""
    data: dict[str, Any] = json.loads((HERE / tool / f"{dataset}.json").read_text("utf-8"))
    assert (data["library"], data["version"]) == (tool, version)
    return data


def on_csv(tmp_path: Path, dataset: str, metrics: list[str]) -> Any:
    """The metrics, as written, on a dataset's CSV files (no preset, no convention)."""
    return evaluate_model(tmp_path, golden_files.dataset_config(dataset, metrics), per_user=True)


@pytest.mark.parametrize("dataset", DATASETS)
def test_ir_measures_names_give_ir_measures_numbers(tmp_path: Path, dataset: str) -> None:
    data = tool_golden("ir_measures", "0.4.3", dataset)
    measures = [m for m in data["metrics"] if m not in NOT_REPRODUCED]
    report = on_csv(tmp_path, dataset, measures)
    rows = per_user(report)
    compared = 0
    for measure in measures:
        values = data["metrics"][measure]
        tol = 5.001e-6 if measure in GDEVAL else TOLERANCE
        for user, want in values["per_user"].items():
            got = rows[user][measure]
            if measure in SUMS and got is None:  # a user without a list: summed as 0
                got = 0
            assert math.isclose(got, want, rel_tol=0, abs_tol=tol), (measure, user, got, want)
            compared += 1
        mean = report.metrics[measure]
        assert math.isclose(mean, values["mean"], rel_tol=0, abs_tol=tol), (measure, mean)
    assert compared > 2500


def test_what_ir_measures_computes_and_receval_does_not_is_refused(tmp_path: Path) -> None:
    from cli_helpers import assert_user_error, hand_case, invoke

    for measure, says in [
        ("NumQ", "unknown metric"),
        ("P(judged_only=True)@5", "receval reproduces P without 'judged_only'"),
        ("RBP(p=0.8)@10", "receval reproduces ir_measures' RBP without a cutoff"),
    ]:
        result = invoke("run", hand_case(tmp_path, metrics=[measure]))
        assert_user_error(result, says)


# -- ranx ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dataset", DATASETS)
def test_ranx_names_give_ranx_numbers(tmp_path: Path, dataset: str) -> None:
    """Every ranx metric name, with cutoffs and -l2, as ranx:NAME. ranx's order of tied
    scores in lists longer than 15 follows no rule (its numba sort): those users are left
    out, and so are the means they are part of."""
    data = tool_golden("ranx", "0.3.21", dataset)
    assert not data["unsupported"]
    names = [name for name in data["metrics"] if not name.startswith("bpref")]  # refused below
    report = on_csv(tmp_path, dataset, [f"ranx:{name}" for name in names])
    rows = per_user(report)
    unruly = set(data["users_beyond_tie_limit"])
    compared = 0
    for name in names:
        values = data["metrics"][name]
        key = f"ranx:{name}"
        for user, want in values["per_user"].items():
            if user in unruly:
                continue
            got = rows[user][key]
            assert math.isclose(got, want, rel_tol=0, abs_tol=TOLERANCE), (key, user, got, want)
            compared += 1
        if not unruly:
            mean = report.metrics[key]
            assert math.isclose(mean, values["mean"], rel_tol=0, abs_tol=TOLERANCE), (key, mean)
    assert compared > 5000


def test_ranx_bpref_is_refused_saying_why(tmp_path: Path) -> None:
    """ranx's evaluate gives bpref values that depend on its thread count (its golden file
    records them, and bpref_per_query what its per-query function gives): refused."""
    from cli_helpers import assert_user_error, hand_case, invoke

    data = tool_golden("ranx", "0.3.21", "tiefree_int")
    per_query = data["bpref_per_query"]["bpref"]
    assert any(v is None for v in per_query.values())  # the ZeroDivisionError ranx hides
    result = invoke("run", hand_case(tmp_path, metrics=["ranx:bpref@10"]))
    assert_user_error(result, "ranx 0.3.21's bpref is not reproducible")
