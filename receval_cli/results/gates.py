"""A gate's result and its wording: the bounds a gate can carry, passed, failed or
waived, the requirement and the message every output format shows, and p-values for
reading. The gates are judged in analysis/gate_judging.py."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# every kind of bound a GateResult carries: each is worded by `requirement` (one mapping,
# checked against this list below), so every output format words every kind
BOUNDS = (
    "min",
    "max",
    "max_drop",
    "max_relative_drop",
    "no_significant_drop",
    "history_drop",
    "history_relative_drop",
)
HISTORY_BOUNDS = ("history_drop", "history_relative_drop")
# what became of a gate: passed and waived exit 0, failed exits 1
STATES = ("passed", "failed", "waived")
# what a gate on a metric with no value says (the run's warning says why it has none)
NO_VALUE = "the metric is undefined on these inputs, see the warning"
# why a gate on a metric with no value is waived: its config says so (on_null: waive)
NULL_WAIVED = "the metric has no value (null) and the gate says on_null: waive"
# what the run's warning of a metric with no value says of its gate: the default, and
# where the gate waives it (analysis/gate_judging.py rewrites the one for the other)
NULL_FAILS = "A gate on it fails."
NULL_WAIVES = "Its gate is waived (on_null: waive)."


@dataclass(frozen=True)
class GateResult:
    metric: str
    # min, max, max_drop, max_relative_drop, no_significant_drop, or against the history
    # store: history_drop, history_relative_drop
    bound: str
    threshold: float  # for no_significant_drop: the significance level alpha
    # the metric; for the drops, the drop; for significance, the adjusted p; None where
    # the metric has no value (auc with one class of pairs): the gate fails
    value: float | None
    model: str | None = None  # with several models: which one
    detail: dict[str, Any] = field(default_factory=dict)  # baseline value, interval, p
    significant_loss: bool = False  # no_significant_drop: the verdict of the comparison
    # why the gate passes without judging (a history gate with too few past runs)
    waived: str | None = None

    @property
    def passed(self) -> bool:
        if self.waived is not None:
            return True
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
        if self.value is None or self.waived is not None:
            return None
        if self.bound == "no_significant_drop":
            return self.value - self.threshold if self.significant_loss else 0.0
        return self.value - self.threshold if self.bound == "min" else self.threshold - self.value

    @property
    def label(self) -> str:
        return self.metric if self.model is None else f"{self.model}: {self.metric}"

    @property
    def segment(self) -> str | None:
        """The segment a gate on one reads ("country=DE" of "ndcg@10 [country=DE]")."""
        _, bracket, rest = self.metric.partition(" [")
        return rest[:-1] if bracket and rest.endswith("]") else None

    @property
    def row(self) -> str:
        """The metric whose table row shows the gate (a segment's gate: the metric's)."""
        return self.metric.partition(" [")[0] if self.segment is not None else self.metric

    @property
    def state(self) -> str:
        """passed, failed or waived (one of STATES): a waived gate passes without judging."""
        if self.waived is not None:
            return "waived"
        return "passed" if self.passed else "failed"

    @property
    def requirement(self) -> str:
        """What the gate asks, in words: ">= 0.3", "relative drop <= 2%", "no significant
        drop (alpha 0.05)", "drop <= 0.01 vs the median of the last 7 runs"."""
        return _REQUIREMENTS[self.bound](self)

    @property
    def name(self) -> str:
        """The gate as a test's name: "model: ndcg@10 >= 0.3" (JUnit, GitHub titles)."""
        return f"{self.label} {self.requirement}"

    @property
    def waived_briefly(self) -> str:
        """Why it is waived, short: "3 of 7 past runs" (the full reason: `waived`)."""
        detail = self.detail
        if detail.get("on_null") == "waive":
            return "no value (on_null: waive)"
        if "runs" in detail and "runs_needed" in detail:
            return f"{detail['runs']} of {detail['runs_needed']} past runs"
        return self.waived or ""

    def cell(self, ok: str = "ok", fail: str = "FAIL") -> str:
        """The verdict in a few words for a table cell or a CSV field: `ok >= 0.4`,
        `FAIL >= 0.4: no value`, `ok no significant drop (p 0.31)`, `waived: 3 of 7 past
        runs`; `ok` and `fail` name the verdicts."""
        if self.state == "waived":
            return f"waived: {self.waived_briefly}"
        text = f"{ok if self.passed else fail} {self.requirement}"
        if self.value is None:
            return f"{text}: no value"
        if self.bound == "no_significant_drop":
            return f"{text} (p {p_text(self.value)})"
        return text

    def describe(self) -> str:
        """The verdict in a sentence, with the values and, failed, the margin."""
        verdict = "passed" if self.passed else "FAILED"
        if self.waived is not None:
            return f"{self.label} {self.requirement}: waived, {self.waived}"
        if self.value is None:
            return (
                f"{self.label} has no value (null: {NO_VALUE}), required "
                f"{self.requirement}: FAILED, a gate needs a value"
            )
        if self.bound == "no_significant_drop":
            d = self.detail
            return (
                f"{self.label}: {d['difference']:+.6g} against the baseline "
                f"({d['baseline']:.6g}), interval [{d['low']:+.6g}, {d['high']:+.6g}], "
                f"adjusted p = {p_text(self.value)} (alpha {self.threshold:g}): {verdict}"
                + ("" if self.passed else ", a significant drop")
            )
        if not self.passed and self.margin is not None:
            verdict = f"FAILED by {abs(self.margin):.6g}"
        text = f"{self.label} = {self.value:.6g}, required {self.requirement}"
        if self.bound in HISTORY_BOUNDS:
            d = self.detail
            share = " (a share of the reference)" if self.bound == "history_relative_drop" else ""
            text = (
                f"{self.label} = {d['model_value']:.6g}: drop {self.value:.6g}{share} from "
                f"the {_history_runs(self)} in the history "
                f"({d['reference']:.6g}), required <= {self.threshold:g}"
            )
        elif self.bound in ("max_drop", "max_relative_drop"):
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
        if self.waived is not None:
            data["waived"] = self.waived
        data.update(self.detail)
        return data


SMALLEST_P = 1e-300  # a p of 0.0 underflowed: it is below every float this shows


def p_text(p: float) -> str:
    """A p-value for reading, in every format: 0.001 and above to 3 significant digits
    (0.0512, 0.5); below 0.001 in scientific notation (3.2e-07), never 0.0000 for a tiny
    p; an underflowed 0 as "< 1e-300"."""
    if p == 0.0:
        return f"< {SMALLEST_P:.0e}"
    if abs(p) < 1e-3:
        return f"{p:.1e}"
    return f"{p:.3g}"


def _percent(share: float) -> str:
    return f"{share * 100:g}%"


def _history_runs(gate: GateResult) -> str:
    """The past runs a history gate's reference is of, as many as were used: "median of
    the last 4 runs", "last run", "median of past runs (none used)"."""
    d = gate.detail
    stat = d.get("stat", "median")
    used = d.get("runs_used", d.get("runs", 0))
    if not used:
        return f"{stat} of past runs (none used)"
    if stat == "last":
        return "last run"
    return f"{stat} of the last {used} run{'s' if used != 1 else ''}"


def _history_reference(gate: GateResult) -> str:
    return f"vs the {_history_runs(gate)}"


# every bound kind in BOUNDS, worded: the one place a gate's requirement is written
_REQUIREMENTS: dict[str, Callable[[GateResult], str]] = {
    "min": lambda g: f">= {g.threshold:g}",
    "max": lambda g: f"<= {g.threshold:g}",
    "max_drop": lambda g: f"drop <= {g.threshold:g}",
    "max_relative_drop": lambda g: f"relative drop <= {_percent(g.threshold)}",
    "no_significant_drop": lambda g: f"no significant drop (alpha {g.threshold:g})",
    "history_drop": lambda g: f"drop <= {g.threshold:g} {_history_reference(g)}",
    "history_relative_drop": (
        lambda g: f"relative drop <= {_percent(g.threshold)} {_history_reference(g)}"
    ),
}
if tuple(_REQUIREMENTS) != BOUNDS:  # a bound kind added to one list and not the other
    raise RuntimeError(f"gate bounds {BOUNDS} and their wordings {tuple(_REQUIREMENTS)} differ")


def summary(gates: Sequence[GateResult]) -> str:
    """The gates counted by verdict, waived apart: "no gates", "1 gate passed", "all 3
    gates passed", "2 gates passed, 1 waived", "1 of 3 gates failed, 1 waived"."""
    if not gates:
        return "no gates"
    total = len(gates)
    counts = {state: sum(g.state == state for g in gates) for state in STATES}
    waived = f", {counts['waived']} waived" if counts["waived"] else ""
    if counts["failed"]:
        return f"{counts['failed']} of {total} gate{'s' if total > 1 else ''} failed{waived}"
    passed = counts["passed"]
    if not counts["waived"]:
        return "1 gate passed" if total == 1 else f"all {total} gates passed"
    if not passed:
        return f"{counts['waived']} gate{'s' if counts['waived'] > 1 else ''} waived, none judged"
    return f"{passed} gate{'s' if passed > 1 else ''} passed{waived}"


def statistic(values: list[float], stat: str) -> float:
    """median (the mean of the middle two for an even count), mean, or last (values[0])."""
    if stat == "last":
        return values[0]
    if stat == "mean":
        return math.fsum(values) / len(values)
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
