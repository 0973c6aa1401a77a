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
from typing import Any

import polars as pl

from receval_cli.errors import UsageError
from receval_cli.results.series import Point, Selection, Trend

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
