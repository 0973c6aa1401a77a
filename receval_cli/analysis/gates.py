"""Quality gates; a failed gate makes `run` exit 1.

Absolute gates bound a metric's value (min, max). Relative gates compare a model with the
baseline (another model of the run, or a saved report): `max_drop` bounds how much worse
it may be, `max_relative_drop` the same as a share of the baseline's value, and
`no_significant_drop` fails on a significant loss in the paired comparison. "Worse" is
lower for most metrics and higher for those where lower is better (mae, gini, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from receval_cli.config.model import Gate

_SIGNS = {"min": ">=", "max": "<=", "max_drop": "drop <=", "max_relative_drop": "drop <="}
# what a gate on a metric with no value says (the run's warning says why it has none)
NO_VALUE = "the metric is undefined on these inputs, see the warning"


@dataclass(frozen=True)
class GateResult:
    metric: str
    bound: str  # min, max, max_drop, max_relative_drop or no_significant_drop
    threshold: float  # for no_significant_drop: the significance level alpha
    # the metric; for the drops, the drop; for significance, the adjusted p; None where
    # the metric has no value (auc with one class of pairs): the gate fails
    value: float | None
    model: str | None = None  # with several models: which one
    detail: dict[str, Any] = field(default_factory=dict)  # baseline value, interval, p
    significant_loss: bool = False  # no_significant_drop: the verdict of the comparison

    @property
    def passed(self) -> bool:
        if self.bound == "no_significant_drop":
            return not self.significant_loss
        if self.value is None:
            return False  # no value cannot be shown to meet the bar
        if self.bound == "min":
            return self.value >= self.threshold
        return self.value <= self.threshold

    @property
    def margin(self) -> float | None:
        """How far the value is on the right side of the bar (negative: failed by that
        much); None when there is no value."""
        if self.value is None:
            return None
        if self.bound == "no_significant_drop":
            return self.value - self.threshold if self.significant_loss else 0.0
        return self.value - self.threshold if self.bound == "min" else self.threshold - self.value

    @property
    def label(self) -> str:
        return self.metric if self.model is None else f"{self.model}: {self.metric}"

    def describe(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        if self.value is None:
            return (
                f"{self.label} has no value (null: {NO_VALUE}), required "
                f"{_SIGNS[self.bound]} {self.threshold:g}: FAILED, a gate needs a value"
            )
        if self.bound == "no_significant_drop":
            d = self.detail
            return (
                f"{self.label}: {d['difference']:+.6g} against the baseline "
                f"({d['baseline']:.6g}), interval [{d['low']:+.6g}, {d['high']:+.6g}], "
                f"adjusted p = {self.value:.3g} (alpha {self.threshold:g}): {verdict}"
                + ("" if self.passed else ", a significant drop")
            )
        if not self.passed and self.margin is not None:
            verdict = f"FAILED by {abs(self.margin):.6g}"
        text = f"{self.label} = {self.value:.6g}, required {_SIGNS[self.bound]} {self.threshold:g}"
        if self.bound in ("max_drop", "max_relative_drop"):
            share = " (a share of the baseline)" if self.bound == "max_relative_drop" else ""
            text = (
                f"{self.label}: drop {self.value:.6g}{share} from the baseline's "
                f"{self.detail['baseline']:.6g}, required <= {self.threshold:g}"
            )
        return f"{text}: {verdict}"

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"metric": self.metric}
        if self.model is not None:
            data["model"] = self.model
        data.update(
            bound=self.bound,
            threshold=self.threshold,
            value=self.value,
            passed=self.passed,
            margin=self.margin,
        )
        data.update(self.detail)
        return data


def check_gates(
    gates: Mapping[str, Gate],
    metrics: Mapping[str, float | None],
    model: str | None = None,
    segments: Mapping[str, Any] | None = None,
) -> list[GateResult]:
    """The absolute bounds (min, max) of the gates that apply to this model; a gate that
    names a segment reads the metric of that segment's report (`segments`)."""
    results = []
    for metric, gate in gates.items():
        if gate.model is not None and gate.model != model:
            continue
        values = metrics
        label = metric
        if gate.segment is not None:
            values = (segments or {})[gate.segment].metrics
            label = f"{metric} [{gate.segment}]"
        for bound in ("min", "max"):
            threshold = getattr(gate, bound)
            if threshold is not None:
                results.append(GateResult(label, bound, threshold, values[metric], model))
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
                results.append(GateResult(metric, bound, threshold, None, model, detail))
        return results
    base = float(comparison["baseline"])
    worse = drop(float(comparison["value"]), base, higher_is_better)
    if gate.max_drop is not None:
        results.append(GateResult(metric, "max_drop", gate.max_drop, worse, model, detail))
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
