"""The HTML report's headline: what to take from the run before reading the tables.

The verdict, each failed gate with its margin, the best model (with several), and the
largest changes: against the baseline (the comparisons) and against the history store's
recent runs (the run's `history` block, when it has a store). Changes are ranked by their
size relative to the reference, at most three of each kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from receval_cli.analysis.gates import GateResult
from receval_cli.report.data import RunReport
from receval_cli.report.table import users_line

SHOWN = 3  # changes of each kind


@dataclass(frozen=True)
class Change:
    """A metric's value against a reference: the baseline's, or the recent past's."""

    model: str
    metric: str
    value: float
    reference: float
    against: str  # what the reference is, in words
    worse: bool
    significant: bool | None = None  # a comparison's verdict (None: untested or history)

    @property
    def difference(self) -> float:
        return self.value - self.reference

    @property
    def relative(self) -> float | None:
        return self.difference / abs(self.reference) if self.reference else None

    def size(self) -> float:
        """How large the change is, for ranking: relative where the reference is not 0."""
        relative = self.relative
        return abs(relative) if relative is not None else abs(self.difference)


@dataclass(frozen=True)
class Headline:
    passed: bool
    gates: int
    failed: list[GateResult]
    best: list[tuple[str, int]]  # with several models: (model, metrics it is best on)
    metrics: int
    baseline_changes: list[Change]
    history_changes: list[Change]
    history_runs: int  # the store's past runs (0: no store or an empty one)


def headline(result: RunReport) -> Headline:
    best: list[tuple[str, int]] = []
    if len(result.models) > 1:
        counts = dict.fromkeys(result.models, 0)
        for winners in result.best.values():
            for name in winners:
                counts[name] += 1
        best = sorted(counts.items(), key=lambda item: -item[1])
    return Headline(
        passed=result.passed,
        gates=len(result.gates),
        failed=[g for g in result.gates if not g.passed],
        best=best,
        metrics=len(result.best),
        baseline_changes=_largest(_baseline_changes(result)),
        history_changes=_largest(_history_changes(result.history)),
        history_runs=0 if result.history is None else int(result.history["past_runs"]),
    )


def _largest(changes: list[Change]) -> list[Change]:
    moved = [c for c in changes if c.difference != 0]
    return sorted(moved, key=lambda c: -c.size())[:SHOWN]


def _baseline_changes(result: RunReport) -> list[Change]:
    against = result.baseline or "the saved report"
    found = []
    for c in result.comparisons:
        if c.value is None or c.baseline is None or c.difference is None:
            continue
        found.append(
            Change(
                c.model,
                c.metric,
                c.value,
                c.baseline,
                f"baseline {against}",
                worse=c.verdict == "loss" or (c.verdict in ("untested", "tie") and _worse(c)),
                significant=None if c.p_value is None else c.verdict in ("win", "loss"),
            )
        )
    return found


def _worse(comparison: Any) -> bool:
    from receval_cli.metrics import MetricSpec, lookup

    higher = lookup(MetricSpec.parse(comparison.metric).name).higher_is_better
    difference = float(comparison.difference)
    return difference < 0 if higher else difference > 0


def _history_changes(history: dict[str, Any] | None) -> list[Change]:
    if history is None:
        return []
    found = []
    for series in history["series"]:
        value = series["value"]
        median, previous = series["median"], series["previous"]
        if value is None or (median is None and previous is None):
            continue
        reference = median if median is not None else previous
        against = (
            f"the median of the last {series['median_runs']} runs"
            if median is not None
            else "the previous run"
        )
        difference = value - reference
        worse = difference < 0 if series["higher_is_better"] else difference > 0
        found.append(Change(series["model"], series["metric"], value, reference, against, worse))
    return found


def headline_html(result: RunReport) -> str:
    """The headline as an HTML list (the report's first section)."""
    found = headline(result)
    items = []
    if found.gates:
        verdict = (
            f"{len(found.failed)} of {found.gates} gates failed"
            if found.failed
            else ("the gate passed" if found.gates == 1 else f"all {found.gates} gates passed")
        )
        items.append(f'<li class="{"fail" if found.failed else "pass"}">{escape(verdict)}</li>')
    for gate in found.failed:
        items.append(f'<li class="fail">{escape(gate.describe())}</li>')
    if found.best:
        leader, count = found.best[0]
        text = f"Best: <strong>{escape(leader)}</strong>, on {count} of {found.metrics} metrics"
        others = [f"{escape(name)} on {n}" for name, n in found.best[1:]]
        items.append(f"<li>{text}" + (f" ({', '.join(others)})" if others else "") + "</li>")
    for title, changes in (
        ("Largest differences from the baseline", found.baseline_changes),
        ("Largest changes against the history", found.history_changes),
    ):
        if changes:
            several = len(result.models) > 1
            shown = "</li><li>".join(_change_html(c, several) for c in changes)
            items.append(f"<li>{escape(title)}:<ul><li>{shown}</li></ul></li>")
    if len(result.models) == 1:
        (report,) = result.models.values()
        items.append(f"<li>{escape(users_line(report.users).capitalize())}</li>")
    for warning in result.warnings:
        items.append(f'<li class="fail">warning: {escape(warning)}</li>')
    history = result.history
    if history is not None and not found.history_changes:
        runs = found.history_runs
        text = (
            f"History {history['store']}: no past run to compare with yet."
            if runs == 0
            else f"History {history['store']}: no change against its {runs} past runs."
        )
        items.append(f"<li>{escape(text)}</li>")
    if not items:
        return ""
    return f'<ul class="headline">\n{"".join(items)}\n</ul>\n'


def _change_html(change: Change, several: bool) -> str:
    relative = "" if change.relative is None else f", {change.relative:+.1%}"
    kind = "fail" if change.worse else "pass"
    tested = ""
    if change.significant is not None:
        tested = ", significant" if change.significant else ", not significant"
    model = f"{change.model}: " if several else ""
    return (
        f"{escape(model)}<code>{escape(change.metric)}</code> "
        f'<span title="{change.value!r}">{change.value:.4f}</span> against '
        f'<span title="{change.reference!r}">{change.reference:.4f}</span> '
        f"({escape(change.against)}): "
        f'<span class="{kind}">{change.difference:+.4f}{escape(relative)}</span>'
        f"{escape(tested)}"
    )
