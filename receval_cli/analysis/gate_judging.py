"""Quality gates; a failed gate makes `run` exit 1.

Absolute gates bound a metric's value (min, max). Relative gates compare a model with the
baseline (another model of the run, or a saved report): `max_drop` bounds how much worse
it may be, `max_relative_drop` the same as a share of the baseline's value, and
`no_significant_drop` fails on a significant loss in the paired comparison. "Worse" is
lower for most metrics and higher for those where lower is better (mae, gini, ...).
A metric with no value (null) fails its gate, whatever the gate compares with and
whatever a history holds, unless the gate says `on_null: waive` (then it is waived,
shown as such). A gate's result and its wording are in results/gates.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from receval_cli.config.model import Gate, HistoryDrop
from receval_cli.results.gates import (
    NULL_FAILS,
    NULL_WAIVED,
    NULL_WAIVES,
    GateResult,
    statistic,
)
from receval_cli.results.report import Report


def no_value(
    label: str,
    bound: str,
    threshold: float,
    model: str | None,
    on_null: str,
    detail: dict[str, Any] | None = None,
) -> GateResult:
    """The verdict of a gate on a metric with no value: failed, or waived where the gate
    says `on_null: waive` (detail `on_null` records it)."""
    found = dict(detail or {})
    if on_null != "waive":
        return GateResult(label, bound, threshold, None, model, found)
    found["on_null"] = "waive"
    return GateResult(label, bound, threshold, None, model, found, waived=NULL_WAIVED)


def check_gates(
    gates: Mapping[str, Gate],
    metrics: Mapping[str, float | None],
    model: str | None = None,
    segments: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> list[GateResult]:
    """The absolute bounds (min, max) of the gates that apply to this model; a gate that
    names a segment reads the metric of that segment's report (`segments`). `name`: the
    model's name a gate's `model:` is matched against (default `model`; a run of one
    model labels its gates with no model, yet `model: NAME` applies to it)."""
    results = []
    for metric, gate in gates.items():
        if gate.model is not None and gate.model != (name or model):
            continue
        values = metrics
        label = metric
        if gate.segment is not None:
            values = (segments or {})[gate.segment].metrics
            label = f"{metric} [{gate.segment}]"
        for bound in ("min", "max"):
            threshold = getattr(gate, bound)
            if threshold is None:
                continue
            value = values[metric]
            if value is None:
                results.append(no_value(label, bound, threshold, model, gate.on_null))
            else:
                results.append(GateResult(label, bound, threshold, value, model))
    return results


def drop(value: float, baseline: float, higher_is_better: bool) -> float:
    """How much worse `value` is than `baseline` (negative: better)."""
    return baseline - value if higher_is_better else value - baseline


def check_relative(
    metric: str,
    gate: Gate,
    model: str,
    comparison: Mapping[str, Any],
    higher_is_better: bool,
) -> list[GateResult]:
    """The relative bounds of one gate for one model, from its comparison with the baseline
    (keys value, baseline, difference, low, high, p_adjusted, verdict, alpha)."""
    results: list[GateResult] = []
    detail = {"baseline": comparison["baseline"], "model_value": comparison["value"]}
    if comparison["value"] is None or comparison["baseline"] is None:
        # no value on one side: every relative bound fails, saying so
        for bound in ("max_drop", "max_relative_drop"):
            threshold = getattr(gate, bound)
            if threshold is not None:
                results.append(no_value(metric, bound, threshold, model, gate.on_null, detail))
        return results
    base = float(comparison["baseline"])
    worse = drop(float(comparison["value"]), base, higher_is_better)
    if gate.baseline_drop is not None:
        results.append(GateResult(metric, "max_drop", gate.baseline_drop, worse, model, detail))
    if gate.max_relative_drop is not None:
        share = worse / abs(base) if base else (0.0 if worse <= 0 else float("inf"))
        results.append(
            GateResult(metric, "max_relative_drop", gate.max_relative_drop, share, model, detail)
        )
    if gate.no_significant_drop:
        keys = ("baseline", "difference", "low", "high", "p_value", "p_adjusted")
        results.append(
            GateResult(
                metric,
                "no_significant_drop",
                float(comparison["alpha"]),
                float(comparison["p_adjusted"]),
                model,
                {k: comparison[k] for k in keys},
                comparison["verdict"] == "loss",
            )
        )
    return results


def check_history(
    label: str,
    drop_gate: HistoryDrop,
    model: str | None,
    value: float | None,
    past: list[float],
    higher_is_better: bool,
    on_null: str = "fail",
) -> GateResult:
    """A max_drop gate against the history store: today's `value` against the gate's
    statistic of the `past` values (latest first, at most drop_gate.runs of them). No
    value today fails (or is waived: `on_null`) whatever the past holds; enough past
    runs or not is asked only of a value. `runs_used` in the detail: how many past
    runs the reference is of (0 when none was enough; 1 for `last`)."""
    relative = drop_gate.relative is not None
    bound = "history_relative_drop" if relative else "history_drop"
    threshold = drop_gate.relative if drop_gate.relative is not None else drop_gate.absolute
    assert threshold is not None
    detail: dict[str, Any] = {"vs": "history", "stat": drop_gate.stat, "runs": len(past)}
    detail.update(runs_wanted=drop_gate.runs, runs_needed=drop_gate.needed, runs_used=0)
    detail["model_value"] = value
    enough = len(past) >= drop_gate.needed
    if enough:
        reference = statistic(past, drop_gate.stat)
        used = 1 if drop_gate.stat == "last" else len(past)
        detail.update(reference=reference, runs_used=used)
    if value is None:
        return no_value(label, bound, threshold, model, on_null, detail)
    if not enough:
        found = f"{len(past)} past run{'s' if len(past) != 1 else ''}"
        waived = (
            f"{found} of this metric in the history, {drop_gate.needed} needed to compare "
            "with the recent past"
        )
        return GateResult(label, bound, threshold, None, model, detail, waived=waived)
    worse = drop(value, reference, higher_is_better)
    if relative:
        worse = worse / abs(reference) if reference else (0.0 if worse <= 0 else float("inf"))
    return GateResult(label, bound, threshold, worse, model, detail)


def warnings_agree(reports: dict[str, Report], gates: Sequence[GateResult]) -> dict[str, Report]:
    """The reports with each null metric's warning saying what became of its gate: "A gate
    on it fails." as the evaluation words it, "Its gate is waived (on_null: waive)." for a
    model whose gate on that metric (all users) is waived by `on_null: waive`."""
    waived: dict[str, set[str]] = {}
    for gate in gates:
        if gate.detail.get("on_null") == "waive" and gate.segment is None:
            # a gate names no model where there is no comparison: it is each model's
            for name in reports if gate.model is None else [gate.model]:
                waived.setdefault(name, set()).add(gate.metric)
    if not waived:
        return reports
    found = {}
    for name, report in reports.items():
        metrics = waived.get(name, set())
        found[name] = dataclasses.replace(
            report, warnings=[_agreeing(w, name, metrics) for w in report.warnings]
        )
    return found


def _agreeing(warning: str, name: str, metrics: set[str]) -> str:
    """`warning` ending NULL_WAIVES where it is the null warning of one of `metrics` for
    model `name` (a run that compares models prefixes it "model NAME: ")."""
    if not warning.endswith(NULL_FAILS):
        return warning
    for metric in metrics:
        said = f"{metric} has no value (null)"
        if warning.startswith(said) or warning.startswith(f"model {name}: {said}"):
            return warning[: -len(NULL_FAILS)] + NULL_WAIVES
    return warning
