"""Every metric of the registry is checked against an independent reference, or says why not.

An independent reference is a naive implementation written from the definitions
(tests/support/reference.py, tests/support/beyond_reference.py, the naive count of
test_classification) or a peer library's own numbers (pytrec_eval, trec_eval's test suite,
scikit-learn, ranx, RePlay, Jurity, MS Recommenders, recmetrics). What each one covers is
not typed here: it is read from the data its agreement test iterates (the test modules'
own constants), so
adding a metric to the registry without adding it to an agreement test fails below,
unless NO_REFERENCE names it with the reason. This module only reads those constants; it
runs no agreement test itself (they run in their own modules).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest
from suite_modules import load_test_module

from receval_cli.metrics.registry import REGISTRY


def _trec_suite_specs(module: ModuleType) -> Iterable[str]:
    """The receval metrics of the measures in trec_eval's expected outputs that the
    conformance test compares line by line."""
    for case in module.CASES:
        for measure, _query, _value in module.expected_lines(case[0]):
            spec = module.spec_for(measure)
            if spec is not None:
                yield spec


def _recommenders_specs(module: ModuleType) -> Iterable[str]:
    """The golden calls receval reproduces, on both datasets (CASES of the test)."""
    for dataset, call in module.CASES:
        yield module.pairs(dataset)[call]


@dataclass(frozen=True)
class Reference:
    """An independent reference and the agreement test that compares receval with it."""

    name: str  # what receval's values are checked against
    module: str  # the test module that checks them
    tests: tuple[str, ...]  # its test functions that compare receval with the reference
    specs: Callable[[ModuleType], Iterable[str]]  # the metric specs checked, from the module


REFERENCES = (
    Reference(
        "naive reference (tests/support/reference.py)",
        "test_reference_agreement",
        ("test_agrees_with_reference", "test_agrees_with_reference_on_longer_lists"),
        lambda m: m.reference.PARAMS,
    ),
    Reference(
        "naive beyond-accuracy reference (tests/support/beyond_reference.py)",
        "test_beyond",
        ("test_agrees_with_the_naive_implementation",),
        lambda m: m.NAIVE_METRICS,
    ),
    Reference(
        "naive set count (tests/metrics/test_classification.py)",
        "test_classification",
        ("test_agrees_with_a_naive_count",),
        lambda m: m.NAIVE_COUNT_METRICS,
    ),
    Reference(
        "pytrec_eval",
        "test_pytrec_eval",
        ("test_agrees_with_trec_eval",),
        lambda m: m.PAIRS.values(),
    ),
    Reference(
        "pytrec_eval, judgment-based measures",
        "test_judged",
        ("test_agrees_with_trec_eval",),
        lambda m: (*m.PYTREC.values(), *m.CUT.values()),
    ),
    Reference(
        "ir_measures 0.4.3 Judged (golden)",
        "test_judged",
        ("test_agrees_with_ir_measures",),
        lambda m: m.IR_MEASURES.values(),
    ),
    Reference(
        "pytrec_eval: precision points, set measures, gm_map (live and golden)",
        "test_pytrec_eval_points",
        ("test_agrees_with_pytrec_eval", "test_agrees_with_the_golden_file"),
        lambda m: m.SPECS,
    ),
    Reference(
        "trec_eval 10.0 test suite (tests/peers/trec_eval/conformance/trec_eval)",
        "test_trec_conformance",
        ("test_every_implemented_line_matches",),
        _trec_suite_specs,
    ),
    Reference(
        "ranx 0.3.21 (golden)",
        "test_preset_ranx",
        ("test_agrees_with_ranx",),
        lambda m: (base for base, _params in m.RANX_TO_RECEVAL.values()),
    ),
    Reference(
        "ir_measures 0.4.3 and ranx 0.3.21: err, nerr, rbp, hits (golden)",
        "test_cascade_peers",
        ("test_agrees_with_ir_measures", "test_agrees_with_ranx"),
        lambda m: m.CHECKED_SPECS,
    ),
    Reference(
        "ndeval 4.5 (pyndeval 0.0.8 through ir_measures 0.4.3, golden)",
        "test_ndeval_peers",
        ("test_agrees_with_ndeval_per_user_and_mean",),
        lambda m: m.CHECKED_SPECS,
    ),
    Reference(
        "RePlay 0.22.0 (golden)",
        "test_preset_replay",
        ("test_agrees_with_replay",),
        lambda m: m.REPLAY_TO_RECEVAL.values(),
    ),
    Reference(
        "Jurity 2.1.0 ranking metrics (golden)",
        "test_preset_jurity",
        ("test_mean_matches_jurity", "test_per_user_values_match_jurity"),
        lambda m: m.PAIRS.values(),
    ),
    Reference(
        "MS Recommenders 1.2.1 ranking metrics (golden)",
        "test_preset_recommenders",
        ("test_mean_matches_recommenders",),
        _recommenders_specs,
    ),
    Reference(
        "Jurity 2.1.0 / MS Recommenders 1.2.1 / recmetrics 0.1.5 beyond-accuracy (golden)",
        "test_beyond_peers",
        (
            "test_jurity_inter_list_diversity",
            "test_jurity_intra_list_diversity",
            "test_recommenders_catalog_coverage",
            "test_recommenders_distributional_coverage_is_entropy",
            "test_recommenders_novelty",
            "test_recmetrics_novelty",
            "test_recmetrics_prediction_coverage_of_whole_lists",
        ),
        lambda m: (*m.METRICS, *m.LOG_UNIVERSE_METRICS),
    ),
    Reference(
        "RePlay 0.22.0 beyond-accuracy (golden)",
        "test_recommender_metrics",
        ("test_agrees_with_replay_over_the_recommended_users", "test_agrees_with_replay_novelty"),
        lambda m: m.REPLAY_TO_RECEVAL.values(),
    ),
    Reference(
        "MS Recommenders 1.2.1 co-occurrence diversity and serendipity (golden)",
        "test_recommender_metrics",
        ("test_agrees_with_recommenders_cooccurrence",),
        lambda m: m.RECOMMENDERS_TO_RECEVAL.values(),
    ),
    Reference(
        "MS Recommenders 1.2.1 logloss, exp_var and scikit-learn (golden)",
        "test_recommender_metrics",
        ("test_agrees_with_recommenders_and_scikit_learn",),
        lambda m: m.RECOMMENDERS_PAIR_METRICS,
    ),
    Reference(
        "scikit-learn regression metrics",
        "test_rating",
        ("test_agrees_with_scikit_learn_and_rmse_bounds_mae",),
        lambda m: m.RATING_METRICS,
    ),
    Reference(
        "scikit-learn roc_auc_score",
        "test_rating",
        ("test_auc_agrees_with_scikit_learn",),
        lambda m: m.SKLEARN_AUC_METRICS,
    ),
    Reference(
        "Jurity 2.1.0 AUC (golden)",
        "test_jurity_auc",
        ("test_auc_matches_jurity",),
        lambda m: m.METRICS,
    ),
    Reference(
        "RecTools 0.19.0 (golden)",
        "test_rectools_metrics",
        (
            "test_agrees_with_rectools",
            "test_the_rectools_preset_agrees_with_plain_names",
            "test_covered_users_is_user_coverage",
        ),
        lambda m: (
            *m.pairs().values(),
            *m.pairs(m.PRESET_TO_RECEVAL).values(),
            *m.GLOBAL.values(),
        ),
    ),
    Reference(
        "torchmetrics 1.9.0 RetrievalFallOut (golden)",
        "test_torchmetrics_fall_out",
        ("test_agrees_with_torchmetrics",),
        lambda m: m.SPECS.values(),
    ),
    Reference(
        "Jurity 2.1.0 CTR estimators (golden)",
        "test_ctr",
        ("test_agrees_with_jurity",),
        lambda m: m.ESTIMATORS,
    ),
    Reference(
        "Open Bandit Pipeline 0.5.7 estimators (golden)",
        "test_ctr",
        ("test_agrees_with_the_open_bandit_pipeline",),
        lambda m: m.OBP_TO_RECEVAL.values(),
    ),
    Reference(
        "Steck's miscalibration written naively (tests/metrics/test_calibration.py)",
        "test_calibration",
        ("test_agrees_with_the_naive_formula",),
        lambda m: m.NAIVE_METRICS,
    ),
    Reference(
        "Krichene and Rendle's construction with scipy's distributions",
        "test_sampled",
        ("test_the_estimator_is_the_paper_s", "test_a_run_on_candidate_lists"),
        lambda m: m.CHECKED_SPECS,
    ),
    Reference(
        "pyxclib's psprecision, psndcg, compute_inv_propesity (golden)",
        "test_propensity",
        ("test_per_user_values_agree_with_pyxclib", "test_dataset_ratios_agree_with_pyxclib"),
        lambda m: m.PYXCLIB_SPECS,
    ),
    Reference(
        "napkinXC 0.7.2's psprecision_at_k, psndcg_at_k (golden)",
        "test_propensity_napkinxc",
        (
            "test_the_default_is_napkinxcs_per_instance_mean",
            "test_napkinxcs_normalized_value_is_the_ratio_of_the_means",
        ),
        lambda m: m.SPECS,
    ),
    Reference(
        "Jain et al.'s formulas written out, with pyxclib's weights",
        "test_propensity",
        ("test_agrees_with_the_paper_s_formulas",),
        lambda m: m.NAIVE_SPECS,
    ),
    Reference(
        "Elliot's RSP and REO, and Singh and Joachims' exposure "
        "(tests/support/fairness_reference.py)",
        "test_fairness",
        ("test_agrees_with_elliots_definitions",),
        lambda m: m.case_specs(),
    ),
)

# metric -> why no independent reference checks it (a non-empty reason)
NO_REFERENCE: dict[str, str] = {}

_SPEC_NAME = re.compile(r"\s*(\w+)")


def metric_name(spec: str) -> str:
    """The registry name of a spec: `ndcg@10(gain=exponential)` -> ndcg, aliases resolved."""
    match = _SPEC_NAME.match(spec)
    assert match is not None, spec
    aliases = {alias: name for name, d in REGISTRY.items() for alias in d.aliases}
    return aliases.get(match[1], match[1])


def coverage(
    references: Iterable[Reference] = REFERENCES,
    load: Callable[[str], ModuleType] = load_test_module,
) -> dict[str, set[str]]:
    """Metric name -> the references its agreement tests compare it with."""
    covered: dict[str, set[str]] = {}
    for ref in references:
        module = load(ref.module)
        for spec in ref.specs(module):
            covered.setdefault(metric_name(spec), set()).add(ref.name)
    return covered


THIS_FILE = "tests/metrics/test_registry_coverage.py"
UNREFERENCED = (
    "no independent reference, and not listed in NO_REFERENCE (add it to an agreement "
    f"test's data, or to NO_REFERENCE in {THIS_FILE} with the reason)"
)


def problems(
    registry: Iterable[str],
    covered: Mapping[str, Any],
    no_reference: Mapping[str, str],
) -> list[str]:
    """What is wrong: a metric neither covered nor exempted, an exemption without a reason,
    for a metric the registry does not have, or for a metric that is covered (stale)."""
    names = set(registry)
    found = []
    for name in sorted(names):
        if name not in covered and name not in no_reference:
            found.append(f"{name}: {UNREFERENCED}")
    for name, reason in sorted(no_reference.items()):
        if name not in names:
            found.append(f"{name}: in NO_REFERENCE but not in the registry")
        elif name in covered:
            found.append(f"{name}: in NO_REFERENCE but covered by {sorted(covered[name])}")
        if not reason.strip():
            found.append(f"{name}: in NO_REFERENCE without a reason")
    return found


@pytest.fixture(scope="module")
def covered() -> dict[str, set[str]]:
    return coverage()


def test_every_registered_metric_has_a_reference_or_a_reason(covered: dict[str, set[str]]) -> None:
    assert problems(REGISTRY, covered, NO_REFERENCE) == []


def test_references_name_only_registered_metrics(covered: dict[str, set[str]]) -> None:
    """A name read from a test that the registry does not know is a misread constant."""
    assert set(covered) <= set(REGISTRY), sorted(set(covered) - set(REGISTRY))


@pytest.mark.parametrize("ref", REFERENCES, ids=[r.name for r in REFERENCES])
def test_each_reference_is_checked_by_a_live_test(ref: Reference) -> None:
    """The agreement tests exist, are neither skipped nor expected to fail, and the data
    read from them names at least one metric."""
    module = load_test_module(ref.module)
    for test in ref.tests:
        function = getattr(module, test, None)
        assert callable(function), f"{ref.module}.{test} is gone"
        marks = {mark.name for mark in getattr(function, "pytestmark", [])}
        assert not marks & {"skip", "skipif", "xfail"}, f"{ref.module}.{test}: {marks}"
    assert list(ref.specs(module)), ref.name


def test_the_registry_has_the_metrics_expected() -> None:
    """The check above iterates the live registry (38 metrics when this was written)."""
    assert len(REGISTRY) >= 38
    assert {"ndcg", "auc", "ctr", "gini", "user_coverage"} <= set(REGISTRY)


# --- negative controls: the check can fail ----------------------------------------------
# They run on a made-up registry and references, not the live ones: a metric of the live
# registry without a reference fails the check above once, and these still pass.

FAKE_REGISTRY = ("alpha", "beta", "gamma")
FAKE_REFERENCES = (
    Reference("reference a", "test_a", ("test_a",), lambda m: ["alpha@5", "beta"]),
    Reference("reference b", "test_b", ("test_b",), lambda m: ["beta(mean=geometric)"]),
)
FAKE_NO_REFERENCE = {"gamma": "no independent implementation exists"}


def fake_coverage(references: Iterable[Reference] = FAKE_REFERENCES) -> dict[str, set[str]]:
    return coverage(references, load=ModuleType)


def test_the_fake_registry_passes_the_check() -> None:
    assert fake_coverage() == {"alpha": {"reference a"}, "beta": {"reference a", "reference b"}}
    assert problems(FAKE_REGISTRY, fake_coverage(), FAKE_NO_REFERENCE) == []


def test_an_unreferenced_metric_is_reported() -> None:
    """One gap, one line, which names the file to edit."""
    registry = [*FAKE_REGISTRY, "made_up_metric"]
    assert problems(registry, fake_coverage(), FAKE_NO_REFERENCE) == [
        "made_up_metric: no independent reference, and not listed in NO_REFERENCE (add it to "
        "an agreement test's data, or to NO_REFERENCE in tests/metrics/test_registry_coverage.py "
        "with the reason)"
    ]


def test_a_reference_dropping_a_metric_is_reported() -> None:
    """Without reference a, the metric only it checks (alpha) is reported; beta, which
    reference b checks too, is not."""
    without = fake_coverage(r for r in FAKE_REFERENCES if r.name != "reference a")
    assert problems(FAKE_REGISTRY, without, FAKE_NO_REFERENCE) == [f"alpha: {UNREFERENCED}"]


def test_bad_exemptions_are_reported() -> None:
    exemptions = {
        **FAKE_NO_REFERENCE,
        "not_a_metric": "gone from the registry",
        "alpha": "stale: reference a checks it",
        "made_up_metric": " ",
    }
    reported = problems([*FAKE_REGISTRY, "made_up_metric"], fake_coverage(), exemptions)
    assert "not_a_metric: in NO_REFERENCE but not in the registry" in reported
    assert "alpha: in NO_REFERENCE but covered by ['reference a']" in reported
    assert "made_up_metric: in NO_REFERENCE without a reason" in reported
    assert len(reported) == 3


def test_an_alias_counts_as_its_metric() -> None:
    assert metric_name("personalization@10") == "inter_list_diversity"
    assert metric_name("ndcg@5(gain=exponential)") == "ndcg"
    assert metric_name("gauc(weight=none)") == "gauc"
