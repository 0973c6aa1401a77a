"""The HTML report's headline: what to take from the run before reading the tables.

The verdict, each failed gate with its margin, the best model (with several: counted
among the accuracy metrics, the beyond-accuracy ones apart, ties named), and the largest
changes: against the baseline (the comparisons) and against the history store's recent
runs (the run's `history` block, when it has a store). Differences from the baseline are
ranked by their significance, then by their size in half-widths of their interval (a
+2000% of catalog coverage is one value over all users, untested: it is not ranked); the
history's by their size relative to the reference. At most three of each kind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from receval_cli.escaping import html_text
from receval_cli.metrics.dialects import spec_of
from receval_cli.report.html_gates import tally
from receval_cli.report.metric_kinds import ACCURACY, BEYOND, kind_of
from receval_cli.report.table import users_line
from receval_cli.results.gates import GateResult, p_text
from receval_cli.results.report import RunReport

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
    half_width: float | None = None  # the difference's interval's half-width, if any
    p: float | None = None  # the comparison's adjusted p, if tested

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

    @property
    def widths(self) -> float | None:
        """The difference in half-widths of its interval (inf for a 0-wide interval)."""
        if self.half_width is None:
            return None
        if self.half_width <= 0.0:
            return math.inf
        return abs(self.difference) / self.half_width

    def strength(self) -> tuple[bool, float, float]:
        """For ranking differences from the baseline, strongest first: significant ones,
        then the most half-widths, then the smallest p."""
        widths = self.widths
        return (
            not self.significant,
            -(widths if widths is not None else 0.0),
            self.p if self.p is not None else 1.0,
        )


@dataclass(frozen=True)
class Leaders:
    """The best model(s) of one kind of metric: each model's metrics where it alone is
    best, and the metrics where several tie, grouped by the tied models."""

    kind: str  # accuracy or beyond accuracy
    metrics: int
    wins: list[tuple[str, int]]  # every model, most wins first (then in run order)
    ties: list[tuple[list[str], list[str]]]  # (tied models, their metrics)


@dataclass(frozen=True)
class Headline:
    passed: bool
    gates: int
    failed: list[GateResult]
    best: list[Leaders]  # with several models: per kind of metric, accuracy first
    baseline_changes: dict[str, list[Change]]  # per kind of metric, accuracy first
    unranked: int  # differences from the baseline with neither interval nor test
    history_changes: list[Change]
    history_runs: int  # the store's past runs (0: no store or an empty one)


def headline(result: RunReport) -> Headline:
    best = _leaders(result) if len(result.models) > 1 else []
    changes = [c for c in _baseline_changes(result) if c.difference != 0]
    ranked = [c for c in changes if c.half_width is not None or c.p is not None]
    by_kind: dict[str, list[Change]] = {ACCURACY: [], BEYOND: []}
    for change in sorted(ranked, key=Change.strength):
        by_kind[kind_of(change.metric)].append(change)
    return Headline(
        passed=result.passed,
        gates=len(result.gates),
        failed=[g for g in result.gates if not g.passed],
        best=best,
        baseline_changes={k: found[:SHOWN] for k, found in by_kind.items() if found},
        unranked=len(changes) - len(ranked),
        history_changes=_largest(_history_changes(result.history)),
        history_runs=0 if result.history is None else int(result.history["past_runs"]),
    )


def _leaders(result: RunReport) -> list[Leaders]:
    """Per kind of metric: how many metrics each model alone is best on, and the ties."""
    found = []
    for kind in (ACCURACY, BEYOND):
        metrics = {m: w for m, w in result.best.items() if w and kind_of(m) == kind}
        if not metrics:
            continue
        wins = dict.fromkeys(result.models, 0)
        ties: dict[tuple[str, ...], list[str]] = {}
        for metric, winners in metrics.items():
            if len(winners) == 1:
                wins[winners[0]] += 1
            else:
                ties.setdefault(tuple(winners), []).append(metric)
        ranked = sorted(wins.items(), key=lambda item: -item[1])
        found.append(Leaders(kind, len(metrics), ranked, [(list(m), ms) for m, ms in ties.items()]))
    return found


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
                half_width=None if c.low is None or c.high is None else (c.high - c.low) / 2,
                p=c.p_adjusted if c.p_adjusted is not None else c.p_value,
            )
        )
    return found


def _worse(comparison: Any) -> bool:
    from receval_cli.metrics import lookup

    higher = lookup(spec_of(comparison.metric).name).higher_is_better
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
        verdict, kind = tally(result.gates)
        items.append(f'<li class="{kind}">{html_text(verdict)}</li>')
    for gate in found.failed:
        items.append(f'<li class="fail">{html_text(gate.describe())}</li>')
    for gate in result.gates:
        if gate.waived is not None:
            waived = f"{gate.label}: waived: {gate.waived}"
            items.append(f'<li class="waived">{html_text(waived)}</li>')
    items += [_leaders_html(leaders) for leaders in found.best]
    several = len(result.models) > 1
    for kind, changes in found.baseline_changes.items():
        title = "Largest differences from the baseline"
        if len(found.baseline_changes) > 1 or kind != ACCURACY:
            title += f" ({kind})"
        shown = "</li><li>".join(_change_html(c, several) for c in changes)
        items.append(
            f'<li data-kind="{html_text(kind)}">{html_text(title)}, by significance and by size '
            f"in half-widths of the interval:<ul><li>{shown}</li></ul></li>"
        )
    if found.unranked:
        items.append(
            f"<li>{found.unranked} differences are one value over all users (untested, no "
            "interval): not ranked, see the comparisons table.</li>"
        )
    if found.history_changes:
        shown = "</li><li>".join(_change_html(c, several) for c in found.history_changes)
        items.append(f"<li>Largest changes against the history:<ul><li>{shown}</li></ul></li>")
    if len(result.models) == 1:
        (report,) = result.models.values()
        items.append(f"<li>{html_text(users_line(report.users).capitalize())}</li>")
    for warning in result.warnings:
        items.append(f'<li class="fail">warning: {html_text(warning)}</li>')
    history = result.history
    if history is not None and not found.history_changes:
        runs = found.history_runs
        text = (
            f"History {history['store']}: no past run to compare with yet."
            if runs == 0
            else f"History {history['store']}: no change against its {runs} past runs."
        )
        items.append(f"<li>{html_text(text)}</li>")
    if not items:
        return ""
    return f'<ul class="headline">\n{"".join(items)}\n</ul>\n'


def _leaders_html(leaders: Leaders) -> str:
    """E.g. "Best on accuracy: itemknn, on 17 of 18 metrics (popular on 1, random on 0);
    tied: itemknn and random on hit_rate@20"."""
    (leader, count), others = leaders.wins[0], leaders.wins[1:]
    if leaders.kind == ACCURACY:
        text = f"Best on accuracy: <strong>{html_text(leader)}</strong>"
    else:
        text = (
            "Beyond accuracy (kept apart: a list can be diverse, novel or cover the "
            f"catalog without being relevant): <strong>{html_text(leader)}</strong> best"
        )
    text += f", on {count} of {leaders.metrics} {html_text(leaders.kind)} metrics"
    if others:
        text += f" ({', '.join(f'{html_text(name)} on {n}' for name, n in others)})"
    for models, metrics in leaders.ties:
        names = ", ".join(models[:-1]) + f" and {models[-1]}"
        listed = ", ".join(f"<code>{html_text(m)}</code>" for m in metrics)
        text += f"; tied: {html_text(names)} on {listed}"
    return f'<li data-kind="{html_text(leaders.kind)}">{text}</li>'


def _change_html(change: Change, several: bool) -> str:
    relative = "" if change.relative is None else f", {change.relative:+.1%}"
    kind = "fail" if change.worse else "pass"
    tested = ""
    widths = change.widths
    if widths is not None:
        tested += (
            ", a 0-wide interval"
            if math.isinf(widths)
            else f", {widths:.1f} half-widths of its interval"
        )
    if change.p is not None:
        tested += f", p = {p_text(change.p)}"
    if change.significant is not None:
        tested += ", significant" if change.significant else ", not significant"
    model = f"{change.model}: " if several else ""
    return (
        f"{html_text(model)}<code>{html_text(change.metric)}</code> "
        f'<span title="{change.value!r}">{change.value:.4f}</span> against '
        f'<span title="{change.reference!r}">{change.reference:.4f}</span> '
        f"({html_text(change.against)}): "
        f'<span class="{kind}">{change.difference:+.4f}{html_text(relative)}</span>'
        f"{html_text(tested)}"
    )
