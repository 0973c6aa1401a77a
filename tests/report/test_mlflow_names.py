"""Report keys as MLflow names (report/mlflow_names.py): the table of docs/tracking.md,
and every name the metric registry and the tools' dialects produce mapped to a valid,
distinct MLflow name (MLflow's own validator where the mlflow extra is installed), its
interval's bounds and its segments' forms included."""

from __future__ import annotations

import re
from typing import Any

import pytest

from receval_cli.config.metric_lists import metric_specs
from receval_cli.errors import ConfigError, TrackingError
from receval_cli.metrics.dialects import TOOL_EXAMPLES
from receval_cli.metrics.registry import REGISTRY
from receval_cli.metrics.tool_ir_measures import IR_MEASURES
from receval_cli.metrics.tool_trec_eval import TREC_EVAL_LISTS
from receval_cli.report.mlflow_names import (
    MLFLOW_KEY_LENGTH,
    joined_name,
    mlflow_name,
    model_metrics,
)
from receval_cli.results.report import Report

# MLflow's rule for metric, param and tag names (mlflow/utils/validation.py), restated
# here so that the quick tests check it without the extra
ALLOWED = re.compile(r"[/\w.\- :]*")
# the names written in other tools' own forms, beyond one example of each measure
TOOL_FORMS = [
    "utility.2,-1,0,0",
    "ndcg_1=3,2=9",
    "set_F.0.5",
    "rbp.0.95",
    "map_cut.5,10",
    "P(rel=2)@10",
    "RBP(p=0.8)",
    "RBP(rel=2,p=0.8)",
    "nDCG(dcg=exp-log2)@10",
    "IPrec@0.1",
    "ranx:map@100-l2",
    "ranx:rbp.95",
    "trec_eval:map",
    "ir_measures:AP",
    "ir_measures:AP@10",
]


def _valid(name: str) -> bool:
    """MLflow's checks: the characters, the length, and a path with no empty, `.` or
    `..` part (posixpath.normpath leaves it as it is)."""
    import posixpath

    return (
        ALLOWED.fullmatch(name) is not None
        and 0 < len(name) <= MLFLOW_KEY_LENGTH
        and posixpath.normpath(name) == name
        and not name.startswith(("..", "/"))
    )


def _receval_entries() -> list[str]:
    """Every registered metric (and alias) without and with a cutoff, and with each
    choice of each parameter (a number, a share, a gains map, levels where it takes one)."""
    entries = []
    for definition in REGISTRY.values():
        for name in (definition.name, *definition.aliases):
            for at in ("", "@10", "@1000"):
                entries.append(name + at)
                for param in definition.all_params():
                    values: list[Any] = list(param.choices)
                    if param.positive_number:
                        values += [2, 0.5]
                    if param.share:
                        values += [0.8]
                    if param.gain_map:
                        values += ["1:3;2:9", "0:0;1:1.5"]
                    if param.parts is not None and not param.gain_map:
                        values += ["0.25;0.5", 11]
                    entries += [f"{name}{at}({param.name}={value})" for value in values]
    return entries


def _tool_entries() -> list[str]:
    entries = [*TOOL_EXAMPLES, *TOOL_FORMS, *TREC_EVAL_LISTS]
    entries += [f"{name}@5" for name in IR_MEASURES]
    return entries


def every_report_key() -> set[str]:
    """The report keys the metric lists give for every entry above that the registry takes."""
    keys: set[str] = set()
    for entry in [*_receval_entries(), *_tool_entries()]:
        try:
            keys.update(str(spec) for spec in metric_specs([entry], None, "test"))
        except ConfigError:
            continue
    return keys


@pytest.fixture(scope="module")
def report_keys() -> set[str]:
    keys = every_report_key()
    assert len(keys) > 1000  # the generation reached the registry and the dialects
    return keys


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("ndcg@10", "ndcg_at_10"),
        ("ndcg@10(gain=exponential)", "ndcg_at_10.gain-exponential"),
        ("psp@10(normalize=dataset,users_without_relevant=zero)", None),
        ("P(rel=2)@10", "P.rel-2_at_10"),
        ("RBP(p=0.8)", "RBP.p-0.8"),
        ("utility_2,-1,0,0", "utility_2.-1.0.0"),
        ("ndcg(gains=1:3;2:9)", "ndcg.gains-1:3_2:9"),
        ("ranx:map@100-l2", "ranx:map_at_100-l2"),
        ("iprec_at_recall_0.10", "iprec_at_recall_0.10"),
        ("group=a b/c+", "group-a_u0020_b_u002f_c_u002b_"),
        ("land=Österreich", "land-_u00d6_sterreich"),
        ("..", "_u002e_."),
        ("", "_"),
    ],
)
def test_the_documented_table(key: str, name: str | None) -> None:
    expected = name or "psp_at_10.normalize-dataset.users_without_relevant-zero"
    assert mlflow_name(key) == expected
    assert _valid(mlflow_name(key))


def test_every_report_key_maps_to_a_valid_distinct_name(report_keys: set[str]) -> None:
    """With its interval's bounds and as a segment's metric, each key of every metric the
    registry and the dialects produce is a valid MLflow name, and no two keys meet."""
    seen: dict[str, str] = {}
    clashes = []
    for key in sorted(report_keys):
        name = mlflow_name(key)
        for form in (name, f"{name}_low", f"{name}_high", joined_name("segment", "g-a", name)):
            assert _valid(form), (key, form)
            if seen.setdefault(form, key) != key:
                clashes.append((seen[form], key, form))
    assert clashes == []


def test_the_ids_are_not_metric_names(report_keys: set[str]) -> None:
    """The values logged beside the metrics (users/evaluated, vs_baseline/...) hold a
    `/`, which no metric's name holds, so none is taken for a metric."""
    assert not any("/" in mlflow_name(key) for key in report_keys)


@pytest.mark.slow
def test_mlflow_s_own_validator_takes_every_name(
    report_keys: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """MLflow's validator (the extra) agrees with the restated rule on every name."""
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")  # no usage report of MLflow's
    validation = pytest.importorskip("mlflow.utils.validation")
    for key in sorted(report_keys):
        name = mlflow_name(key)
        for form in (name, f"{name}_high", joined_name("segment", mlflow_name("g=a b"), name)):
            validation._validate_metric_name(form)
            validation._validate_param_name(f"conventions.by_metric.{name}")
    with pytest.raises(validation.MlflowException):  # the validator does refuse
        validation._validate_metric_name("ndcg@10")


def test_a_long_name_is_cut_to_mlflow_s_length_and_kept_apart() -> None:
    first = joined_name("segment", mlflow_name("g=" + "x" * 300), "ndcg_at_10")
    second = joined_name("segment", mlflow_name("g=" + "x" * 301), "ndcg_at_10")
    assert len(first) == len(second) == MLFLOW_KEY_LENGTH
    assert first != second
    assert _valid(first)
    assert joined_name("ndcg_at_10") == "ndcg_at_10"


def _report(metrics: dict[str, float | None], **extra: Any) -> Report:
    users: Any = {"evaluated": 2}
    return Report(metrics=metrics, conventions={}, inputs={}, users=users, **extra)


def test_a_model_s_values_under_their_names() -> None:
    """A null metric is left out; an interval's bounds, the users, each segment's values
    and each comparison's numbers come under their documented names."""
    segment = _report({"ndcg@10": 0.25, "map": None})
    report = _report(
        {"ndcg@10": 0.5, "map": None},
        confidence={"intervals": {"ndcg@10": [0.4, 0.6], "map": None}},
        segments={"group=a": segment},
    )
    comparison = {"metric": "ndcg@10", "difference": 0.1, "low": None, "p_value": 0.02}
    assert model_metrics(report, [comparison]) == {
        "users/evaluated": 2.0,
        "ndcg_at_10": 0.5,
        "ndcg_at_10_low": 0.4,
        "ndcg_at_10_high": 0.6,
        "segment/group-a/users/evaluated": 2.0,
        "segment/group-a/ndcg_at_10": 0.25,
        "vs_baseline/ndcg_at_10/difference": 0.1,
        "vs_baseline/ndcg_at_10/p_value": 0.02,
    }


def test_two_keys_that_would_meet_are_refused() -> None:
    """Where two of a report's keys would share a name (a segment's value spelt as
    another's escape), nothing is logged and the error names both."""
    report = _report({"ndcg@10": 0.5}, segments={"g=a+": _report({}), "g=a_u002b_": _report({})})
    with pytest.raises(TrackingError, match=r"g-a_u002b_.*nothing was logged"):
        model_metrics(report)
