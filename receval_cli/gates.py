"""Quality gates: a minimum or maximum per metric; a failed gate makes `run` exit 1."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from receval_cli.config import Gate


@dataclass(frozen=True)
class GateResult:
    metric: str
    bound: str  # "min" or "max"
    threshold: float
    value: float

    @property
    def passed(self) -> bool:
        return self.value >= self.threshold if self.bound == "min" else self.value <= self.threshold

    @property
    def margin(self) -> float:
        """How far the value is on the right side of the bar (negative: failed by that much)."""
        return self.value - self.threshold if self.bound == "min" else self.threshold - self.value

    def describe(self) -> str:
        sign = ">=" if self.bound == "min" else "<="
        verdict = "passed" if self.passed else f"FAILED by {abs(self.margin):.6g}"
        return f"{self.metric} = {self.value:.6g}, required {sign} {self.threshold:g}: {verdict}"

    def to_dict(self) -> dict[str, object]:
        return {
            "metric": self.metric,
            "bound": self.bound,
            "threshold": self.threshold,
            "value": self.value,
            "passed": self.passed,
            "margin": self.margin,
        }


def check_gates(gates: Mapping[str, Gate], metrics: Mapping[str, float]) -> list[GateResult]:
    results = []
    for metric, gate in gates.items():
        if gate.min is not None:
            results.append(GateResult(metric, "min", gate.min, metrics[metric]))
        if gate.max is not None:
            results.append(GateResult(metric, "max", gate.max, metrics[metric]))
    return results
