"""err, nerr, rbp and hits against ir_measures 0.4.3 and ranx 0.3.21 (golden files).

The golden files (tests/peers/cascade/, made by its make.sh in the peers' own virtual
environments) hold each tool's per-user values on the shared data (tests/peers/data:
integer ids 9, 10, 100, 1000, ties, grades 0-4 with 2.5 and -1, users on one side only,
lists of 1-24 items against cutoffs up to 30). Each tool is matched by its own rules:

    ir_measures ERR@k       gdeval.pl: grades as integers (2.5 -> 2), max grade 4; ties by
                            docno descending as text (tie_break item_text_desc); it prints
                            5 decimals, so values agree to half its last digit
    ir_measures nERR_IA@k   pyndeval (ndeval) on one subtopic: binary relevance (grade >= 1,
                            or rel=2), R = 1/2: receval's nerr(grades=binary, max_grade=1);
                            ties by docno ascending as text (item_text_asc)
    ir_measures RBP(rel=r)  cwl_eval: binary gain (grade >= r); ties in the order given
                            (input_order)
    ranx hits@k, rbp.p      ranx preset; ranx's rbp is the grade itself (below rel_lvl 0),
                            unscaled: rbp(scale=none), which the preset sets; only the
                            tie-free data (ranx's order of tied scores in lists longer
                            than 15 follows no rule)

Every tool evaluates every ground-truth user (a user with no list or no relevant item
counts 0): users_without_recommendations and users_without_relevant are zero. Scores are
compared as float64 (the float32-only ties of the data are distinct for these tools).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import golden_files
import pytest

import receval_cli
from receval_cli.metrics import MetricSpec

HERE = golden_files.GOLDEN / "cascade"
IR_MEASURES_DATASETS = ("tiefree_int", "ties_int")  # gdeval takes numeric query ids only
RANX_DATASETS = ("tiefree", "tiefree_int")
ALL_USERS = {
    "users_without_recommendations": "zero",
    "users_without_relevant": "zero",
    "score_precision": "float64",
}

# ir_measures measure -> (receval spec, the tool's tie rule, tolerance)
_IR_MEASURES = [
    (re.compile(r"ERR@(\d+)"), "err@{}", "item_text_desc", 5.001e-6),
    (re.compile(r"nERR_IA@(\d+)"), "nerr@{}(grades=binary,max_grade=1)", "item_text_asc", 1e-9),
    (re.compile(r"RBP\(rel=1\)"), "rbp(p=0.8,gain=binary)", "input_order", 1e-9),
    (re.compile(r"RBP\(p=0.5,rel=1\)"), "rbp(p=0.5,gain=binary)", "input_order", 1e-9),
]
# measures at another relevance threshold: (measure, spec, tie rule, threshold)
_AT_THRESHOLD_2 = [
    (re.compile(r"nERR_IA\(rel=2\)@(\d+)"), "nerr@{}(grades=binary,max_grade=1)", "item_text_asc"),
    (re.compile(r"RBP\(p=0.9,rel=2\)"), "rbp(p=0.9,gain=binary)", "input_order"),
]
RANX_TO_RECEVAL = {
    "hits": "hits",
    "rbp.9": "rbp",  # the preset sets scale=none
    "rbp.5": "rbp(p=0.5,scale=none)",
    "rbp.95": "rbp(p=0.95)",
}
# the receval specs the tests above map the tools' measures to
# (tests/metrics/test_registry_coverage.py)
CHECKED_SPECS = (
    *(template for _, template, _, _ in _IR_MEASURES),
    *(template for _, template, _ in _AT_THRESHOLD_2),
    *RANX_TO_RECEVAL.values(),
)


def ir_measures_spec(measure: str) -> tuple[str, str, float, float] | None:
    """(receval spec, tie rule, tolerance, relevance threshold) of an ir_measures measure."""
    for pattern, template, tie_break, tol in _IR_MEASURES:
        match = pattern.fullmatch(measure)
        if match:
            return template.format(*match.groups()), tie_break, tol, 1.0
    for pattern, template, tie_break in _AT_THRESHOLD_2:
        match = pattern.fullmatch(measure)
        if match:
            return template.format(*match.groups()), tie_break, 1e-9, 2.0
    return None


def ranx_spec(measure: str) -> str:
    name, at, k = measure.partition("@")
    spec = MetricSpec.parse(RANX_TO_RECEVAL[name])
    return str(MetricSpec(spec.name, int(k) if at else None, spec.params))


def golden(library: str, dataset: str) -> dict[str, Any]:
    return json.loads((HERE / f"{library}_{dataset}.json").read_text(encoding="utf-8"))


def compare(report: Any, spec: str, values: dict[str, float], tol: float) -> int:
    """Per user and mean; returns how many values were compared."""
    rows = {str(r["user"]): r for r in report.per_user.iter_rows(named=True)}
    evaluated = {u for u, r in rows.items() if r["status"] == "evaluated"}
    assert evaluated == set(values), spec
    for user, want in values.items():
        got = rows[user][spec]
        assert math.isclose(got, want, rel_tol=0, abs_tol=tol), (spec, user, got, want)
    mean = math.fsum(values.values()) / len(values)
    assert math.isclose(report.metrics[spec], mean, rel_tol=0, abs_tol=tol), spec
    return len(values) + 1


@pytest.mark.parametrize("dataset", IR_MEASURES_DATASETS)
def test_agrees_with_ir_measures(dataset: str) -> None:
    data = golden("ir_measures", dataset)
    assert data["library"] == "ir_measures"
    assert data["version"] == "0.4.3"
    predictions, truth = golden_files.frames(dataset)
    compared = 0
    for measure, values in data["metrics"].items():
        found = ir_measures_spec(measure)
        assert found is not None, measure
        spec_text, tie_break, tol, threshold = found
        spec = str(MetricSpec.parse(spec_text))
        report = receval_cli.evaluate(
            predictions,
            truth,
            [spec],
            conventions={
                "preset": "pytrec_eval",
                **ALL_USERS,
                "tie_break": tie_break,
                "relevance_threshold": threshold,
            },
            truth_columns={"relevance": "relevance"},
        )
        compared += compare(report, spec, values, tol)
    assert compared > 1000
    assert any(v > 0 for v in data["metrics"]["nERR_IA@10"].values())


@pytest.mark.parametrize("dataset", RANX_DATASETS)
def test_agrees_with_ranx(dataset: str) -> None:
    data = golden("ranx", dataset)
    assert data["library"] == "ranx"
    assert data["version"] == "0.3.21"
    predictions, truth = golden_files.frames(dataset)
    specs = {measure: ranx_spec(measure) for measure in data["metrics"]}
    report = receval_cli.evaluate(
        predictions,
        truth,
        sorted(set(specs.values())),
        conventions={"preset": "ranx", "score_precision": "float64"},
        truth_columns={"relevance": "relevance"},
    )
    for measure, values in data["metrics"].items():
        compare(report, specs[measure], values, 1e-9)
        assert math.isclose(report.metrics[specs[measure]], data["means"][measure], abs_tol=1e-9)
    assert max(data["metrics"]["hits@30"].values()) >= 2
