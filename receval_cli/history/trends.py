"""Trends from the history store: per (model, segment, metric), the latest value, the
change against the previous run and against the median of the runs before it.

A series is the metric's values over the store's runs, oldest first, the last `last` of
them shown. The reference of `vs median` is the median of up to `window` runs before the
latest (the same statistic as a `max_drop: {vs: history}` gate's default). A drop is
flagged significant when both the latest and the previous run have confidence intervals
and they do not overlap, the latest on the worse side: a conservative reading (two
intervals can overlap while the difference is significant), stated where it is shown.
"""

from __future__ import annotations

import datetime
import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from receval_cli.errors import UsageError
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


# --since an age older than any date (e.g. 99999999999999d): every run, from the first
BEGINNING = datetime.datetime.min.replace(tzinfo=datetime.UTC)


def parse_since(text: str, now: datetime.datetime | None = None) -> datetime.datetime:
    """--since: a date or time (ISO 8601, UTC unless it says otherwise) or an age such
    as 7d, 12h, 2w."""
    now = now or datetime.datetime.now(datetime.UTC)
    age = re.fullmatch(r"\s*(\d+)\s*([hdw])\s*", text)
    if age:
        digits, unit = age.group(1), age.group(2)
        hours = {"h": 1, "d": 24, "w": 24 * 7}[unit]
        if len(digits.lstrip("0")) > 12:  # more hours than any date holds (int() of
            return BEGINNING  # thousands of digits alone would fail)
        try:
            return now - datetime.timedelta(hours=int(digits) * hours)
        except OverflowError:  # before the year 1: every run
            return BEGINNING
    try:
        moment = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        fix = "Give a date or time (2026-11-01, 2026-11-01T06:00) or an age (7d, 12h, 2w)."
        raise UsageError(
            f"--since {text!r} is not a date, a time or an age. {fix}",
            key="--since",
            found=text,
            fix=fix,
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment


def _matches(value: str | None, patterns: list[str]) -> bool:
    text = "" if value is None else value
    return any(fnmatch.fnmatchcase(text, pattern) for pattern in patterns)


def trends(frame: pl.DataFrame, selection: Selection) -> list[Trend]:
    """The series of the store's rows that the selection keeps, in the order their
    (model, segment, metric) first appear in the latest run."""
    if selection.since is not None:
        frame = frame.filter(pl.col("started_at") >= selection.since)
    rows = frame.sort("started_at", "run_id", maintain_order=True).to_dicts()
    series: dict[tuple[str, str | None, str], list[dict[str, Any]]] = {}
    for row in rows:
        if selection.metrics and not _matches(row["metric"], selection.metrics):
            continue
        if selection.models and not _matches(row["model"], selection.models):
            continue
        segment = row["segment"]
        if segment is not None and not _matches(segment, selection.segments):
            continue
        series.setdefault((row["model"], segment, row["metric"]), []).append(row)
    found = [_trend(key, found, selection) for key, found in series.items()]
    latest_run = rows[-1]["run_id"] if rows else None
    order = {key: i for i, key in enumerate(series)}  # first appearance, oldest run first
    return sorted(
        found,
        key=lambda t: (
            t.latest.run_id != latest_run,
            order[(t.model, t.segment, t.metric)],
        ),
    )


def _trend(
    key: tuple[str, str | None, str], rows: list[dict[str, Any]], selection: Selection
) -> Trend:
    model, segment, metric = key
    points = [
        Point(
            r["run_id"],
            r["started_at"],
            r["label"],
            r["value"],
            r["ci_low"],
            r["ci_high"],
            r.get("passed"),
        )
        for r in rows
    ]
    shown = points[-selection.last :]
    earlier = [p.value for p in reversed(points[:-1]) if p.value is not None]
    last = rows[-1]
    return Trend(
        model,
        segment,
        metric,
        bool(last["higher_is_better"]) if last["higher_is_better"] is not None else True,
        shown,
        selection.window,
        last.get("gate_min"),
        last.get("gate_max"),
        earlier,
    )


SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float | None]) -> str:
    """One character a run, scaled from the series' lowest to its highest value; a run
    without a value is a space."""
    present = [v for v in values if v is not None]
    if not present:
        return " " * len(values)
    low, high = min(present), max(present)
    marks = []
    for value in values:
        if value is None:
            marks.append(" ")
        elif high == low:
            marks.append(SPARKS[3])
        else:
            marks.append(SPARKS[round((value - low) / (high - low) * (len(SPARKS) - 1))])
    return "".join(marks)


def recent_changes(
    past: pl.DataFrame, today: pl.DataFrame, store: str, window: int = 7
) -> dict[str, Any]:
    """The run's `history` block: for each model and metric (all users), today's value
    against the previous run's and the median of up to `window` runs before it, from the
    store's `past` rows and `today`'s (store.history_rows)."""
    rows = pl.concat([past, today], how="diagonal_relaxed") if past.height else today
    run_id = today["run_id"][0] if today.height else None
    found = trends(rows, Selection(window=window, last=window + 1))
    series = []
    for trend in found:
        if trend.segment is not None or trend.latest.run_id != run_id:
            continue
        previous = trend.previous
        series.append(
            {
                "model": trend.model,
                "metric": trend.metric,
                "higher_is_better": trend.higher_is_better,
                "value": trend.latest.value,
                "previous": None if previous is None else previous.value,
                "previous_run_id": None if previous is None else previous.run_id,
                "change_previous": trend.change_previous,
                "median": trend.median,
                "median_runs": trend.median_runs,
                "change_median": trend.change_median,
            }
        )
    past_runs = past["run_id"].n_unique() if past.height else 0
    return {"store": store, "past_runs": past_runs, "window": window, "series": series}
