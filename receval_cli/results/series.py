"""A history series: one run's value of a metric (Point), a (model, segment, metric)
series over the store's runs with its changes (Trend), what `receval history` is asked
to show (Selection) and its page (HistoryPage). history/trends.py builds them from the
store; report/history_pages.py renders them.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from receval_cli.results.gates import statistic
from receval_cli.results.run_info import timestamp_text


@dataclass(frozen=True)
class Point:
    """One run's value of a series."""

    run_id: str
    started_at: datetime.datetime
    label: str | None
    value: float | None
    low: float | None = None
    high: float | None = None
    passed: bool | None = None  # every gate of the run passed (None: not recorded)

    @property
    def name(self) -> str:
        """How a run is labelled on an axis: its --label, else its start (UTC)."""
        return self.label if self.label else f"{self.started_at:%m-%d %H:%M}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "started_at": timestamp_text(self.started_at),
            "label": self.label,
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "passed": self.passed,
        }


@dataclass(frozen=True)
class Trend:
    model: str
    segment: str | None
    metric: str
    higher_is_better: bool
    points: list[Point]  # oldest first; the latest is the last
    window: int
    gate_min: float | None = None  # the latest run's absolute gate bounds
    gate_max: float | None = None
    earlier: list[float] = field(default_factory=list)  # values before the latest, latest first

    @property
    def latest(self) -> Point:
        return self.points[-1]

    @property
    def previous(self) -> Point | None:
        return self.points[-2] if len(self.points) > 1 else None

    @property
    def median(self) -> float | None:
        """The median of up to `window` valued runs before the latest."""
        values = self.earlier[: self.window]
        return statistic(values, "median") if values else None

    @property
    def median_runs(self) -> int:
        return len(self.earlier[: self.window])

    def change(self, reference: float | None) -> float | None:
        value = self.latest.value
        return None if value is None or reference is None else value - reference

    @property
    def change_previous(self) -> float | None:
        return self.change(None if self.previous is None else self.previous.value)

    @property
    def change_median(self) -> float | None:
        return self.change(self.median)

    def worse(self, change: float | None) -> bool:
        """A change (latest minus reference) that makes the metric worse."""
        if change is None or change == 0:
            return False
        return change < 0 if self.higher_is_better else change > 0

    @property
    def significant_drop(self) -> bool | None:
        """The latest interval entirely on the worse side of the previous one; None
        without both intervals."""
        if self.previous is None:
            return None
        low, high = self.latest.low, self.latest.high
        before_low, before_high = self.previous.low, self.previous.high
        if low is None or high is None or before_low is None or before_high is None:
            return None
        return high < before_low if self.higher_is_better else low > before_high

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "segment": self.segment,
            "metric": self.metric,
            "higher_is_better": self.higher_is_better,
            "runs": len(self.points),
            "latest": self.latest.to_dict(),
            "previous": None if self.previous is None else self.previous.to_dict(),
            "change_previous": self.change_previous,
            "relative_change_previous": _relative(
                self.change_previous, None if self.previous is None else self.previous.value
            ),
            "median": self.median,
            "median_runs": self.median_runs,
            "change_median": self.change_median,
            "relative_change_median": _relative(self.change_median, self.median),
            "significant_drop": self.significant_drop,
            "gate_min": self.gate_min,
            "gate_max": self.gate_max,
            "points": [p.to_dict() for p in self.points],
        }


def _relative(change: float | None, reference: float | None) -> float | None:
    if change is None or not reference:
        return None
    return change / abs(reference)


@dataclass(frozen=True)
class Selection:
    """What `receval history` shows: --metric, --model and --segment (names or shell
    patterns, e.g. ndcg@*), --since, --last N runs, the median over --window runs."""

    metrics: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    segments: list[str] = field(default_factory=list)  # none: all users only
    since: datetime.datetime | None = None
    last: int = 30
    window: int = 7


@dataclass(frozen=True)
class HistoryPage:
    """`receval history`'s document: the store, the trends read from it, what was asked."""

    store: Path
    trends: list[Trend]
    selection: Selection
