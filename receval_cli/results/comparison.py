"""A model against the baseline on one metric: the difference, its interval, p-values and
the verdict. Computed by analysis/intervals.py (`compare_with_baseline`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Comparison:
    """One model against the baseline on one metric."""

    model: str
    metric: str
    value: float | None  # None: no value (auc with one class of pairs), so no difference
    baseline: float | None
    difference: float | None
    users: int | None = None  # users in both (per-user metrics)
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    verdict: str = "untested"  # win, loss, tie, or untested (no per-user values)
    alpha: float = 0.05
    # power (analysis/power.py): the smallest difference the paired t-test detects with
    # the configured power over these users, and the users a target difference needs
    detectable: float | None = None
    users_needed: int | None = None
    # per user: how many the model beats the baseline on, ties, and loses (by the metric's
    # direction); Cohen's d of the paired differences (mean / sd) and its interval
    wins: int | None = None
    ties: int | None = None
    losses: int | None = None
    effect_size: float | None = None
    effect_low: float | None = None
    effect_high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "metric": self.metric,
            "value": self.value,
            "baseline": self.baseline,
            "difference": self.difference,
            "users": self.users,
            "low": self.low,
            "high": self.high,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "verdict": self.verdict,
            "alpha": self.alpha,
            "detectable": self.detectable,
            "users_needed": self.users_needed,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "effect_size": self.effect_size,
            "effect_low": self.effect_low,
            "effect_high": self.effect_high,
        }


@dataclass(frozen=True)
class ListComparison:
    """How alike a model's lists are to the baseline model's (comparison.lists): one list
    measure's mean over the users with a list in both files and a value."""

    model: str
    measure: str  # e.g. rbo@10(p=0.9)
    value: float | None  # None: no user with a value
    users: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "measure": self.measure,
            "value": self.value,
            "users": self.users,
        }
