"""The comparisons in detail, as every format states them: per user, the wins, ties and
losses; Cohen's d with its interval; and the power (analysis/power.py): the smallest
difference each comparison detects, and the users a target difference needs. And how
alike the models' lists are to the baseline's (comparison.lists)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from receval_cli.escaping import markdown_code, markdown_text
from receval_cli.report.table import titled_table
from receval_cli.results.comparison import Comparison
from receval_cli.results.report import RunReport

if TYPE_CHECKING:  # rich loads when a table is drawn, not for JSON or CSV
    from rich.table import Table


def detailed(result: RunReport) -> list[Comparison]:
    """The comparisons tested on per-user values (the others have no detail)."""
    return [c for c in result.comparisons if c.wins is not None]


def detail_heading(result: RunReport) -> str:
    """What the figures are: the per-user outcomes, the effect size's interval, the power
    at the level of one test, and the target difference if any."""
    assert result.comparison is not None
    c = result.comparison
    text = (
        f"per user: wins/ties/losses against the baseline; Cohen's d of the differences "
        f"[{c['level']:.0%} interval]; the smallest difference detected with power "
        f"{c['power']:g} (the {result.design} t-test at level {c['level']:g}, one test)"
    )
    if c.get("target_difference") is not None:
        text += f"; the users a difference of {c['target_difference']:g} needs"
    return text


def detail_cells(comparison: Comparison) -> list[str]:
    """model, metric, users, wins/ties/losses, Cohen's d [low, high], detectable
    difference, users needed ("" where none)."""
    outcomes = f"{comparison.wins}/{comparison.ties}/{comparison.losses}"
    effect = ""
    if comparison.effect_size is not None:
        effect = f"{comparison.effect_size:+.3f}"
        if comparison.effect_low is not None and comparison.effect_high is not None:
            effect += f" [{comparison.effect_low:+.3f}, {comparison.effect_high:+.3f}]"
    detectable = "" if comparison.detectable is None else f"{comparison.detectable:.4g}"
    needed = "" if comparison.users_needed is None else f"{comparison.users_needed:,}"
    users = "" if comparison.users is None else f"{comparison.users:,}"
    return [comparison.model, comparison.metric, users, outcomes, effect, detectable, needed]


DETAIL_HEADERS = (
    "model",
    "metric",
    "users",
    "wins/ties/losses",
    "Cohen's d [interval]",
    "detectable difference",
    "users needed",
)


def detail_table(result: RunReport) -> Table:
    """The terminal's table of the detailed comparisons."""
    rows = [detail_cells(comparison) for comparison in detailed(result)]
    return titled_table(detail_heading(result), DETAIL_HEADERS, rows)


def detail_markdown(result: RunReport) -> list[str]:
    """The Markdown report's lines of the detailed comparisons (none without them)."""
    if not detailed(result):
        return []
    lines = ["", f"### {markdown_text(detail_heading(result))}", ""]
    lines += ["| " + " | ".join(DETAIL_HEADERS) + " |", "|---|---|---:|---:|---:|---:|---:|"]
    for comparison in detailed(result):
        cells = detail_cells(comparison)
        cells[:2] = [markdown_text(cells[0]), markdown_code(cells[1])]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


LIST_HEADERS = ("model", "measure", "mean", "users")
LISTS_HEADING = (
    "lists against the baseline's, user by user (the mean over the users with a list in "
    "both files and a value)"
)


def list_cells(result: RunReport) -> list[list[str]]:
    """model, measure, mean, users: one row per list comparison."""
    return [
        [c.model, c.measure, "" if c.value is None else f"{c.value:.4f}", f"{c.users:,}"]
        for c in result.list_comparisons
    ]


def lists_table(result: RunReport) -> Table:
    return titled_table(LISTS_HEADING, LIST_HEADERS, list_cells(result))


def lists_markdown(result: RunReport) -> list[str]:
    """The Markdown report's lines of the list comparisons (none without them)."""
    if not result.list_comparisons:
        return []
    lines = ["", f"### {markdown_text(LISTS_HEADING)}", ""]
    lines += ["| " + " | ".join(LIST_HEADERS) + " |", "|---|---|---:|---:|"]
    for row in list_cells(result):
        lines.append(f"| {markdown_text(row[0])} | {markdown_code(row[1])} | {row[2]} | {row[3]} |")
    return lines
