"""A one-model run as a rich table: metric values with gate verdicts, the users' line, the
segments, the footer; and the value and line formats the other renderers share.

Values are never rounded in the Report; only these renderings round, when printing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from receval_cli.console import shown
from receval_cli.escaping import printable
from receval_cli.report.fairness_view import fairness_renderables
from receval_cli.results.blocks import ConventionsBlock, UsersBlock
from receval_cli.results.gates import GateResult
from receval_cli.results.report import Report, RunReport
from receval_cli.wording import possessive

if TYPE_CHECKING:  # rich loads when a table is drawn, not for JSON or CSV
    from rich.console import RenderableType
    from rich.table import Table
    from rich.text import Text


def one_model_table(result: RunReport) -> RenderableType:
    """A one-model run (RunReport.alone): the metric table with gate verdicts, then the
    user counts and the conventions."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    report = result.alone
    assert report is not None
    verdicts = gates_by_row(result.gates)
    table = Table(title="receval", title_justify="left")
    table.add_column("metric", no_wrap=True)  # names and values are never cut
    table.add_column("value", justify="right", no_wrap=True)
    if result.gates:
        table.add_column("gate")
    intervals = (report.confidence or {}).get("intervals", {})
    for name, value in report.metrics.items():
        row: list[RenderableType] = [shown(name), format_value(value, intervals.get(name))]
        if result.gates:
            row.append(gate_cell(verdicts.get(name, [])))
        table.add_row(*row)
    parts: list[RenderableType] = [table, Text(users_line(report.users))]
    if report.pairs is not None:
        pairs = report.pairs
        parts.append(
            Text(
                f"rating pairs: {pairs['used']} scored; {pairs['unrated']['count']} unrated "
                f"({pairs['unrated']['rule']}), {pairs['unpredicted']['count']} unpredicted "
                f"({pairs['unpredicted']['rule']})"
            )
        )
    if report.logged is not None:
        logged = report.logged
        parts.append(
            Text(
                f"logged: {logged['matched']} of {logged['recommendations']} recommendations "
                f"matched in {logged['logged_rows']} logged rows (propensity: "
                f"{logged['propensity']})"
            )
        )
        line = variance_line(logged)
        if line:
            parts.append(shown(line))
    if report.items is not None:
        parts.append(Text(_items_line(report.items)))
    parts += segment_tables(report)
    parts += fairness_renderables(report)
    if report.confidence is not None:
        parts.append(Text(confidence_line(report.confidence)))
    parts += table_footer(result.conventions, result.gates, result.warnings)
    return Group(*parts)


def titled_table(title: str, headers: tuple[str, ...], rows: list[list[str]]) -> Table:
    """A table of text cells under a title, its columns never wrapped."""
    from rich.table import Table

    grid = Table(title=shown(title), title_justify="left")
    for header in headers:
        grid.add_column(header, no_wrap=True)
    for row in rows:
        grid.add_row(*(shown(cell) for cell in row))
    return grid


def variance_line(logged: dict[str, Any]) -> str:
    """Each ctr estimate's variance (its round terms' over their number), "" without any."""
    found = {k: v for k, v in (logged.get("variance") or {}).items() if v is not None}
    if not found:
        return ""
    listed = ", ".join(f"{name} {value:.3g}" for name, value in found.items())
    return f"variance of each estimate: {listed}"


def by_metric_lines(conventions: ConventionsBlock) -> list[str]:
    """One line per tool and its conventions: the metrics written in that tool's names,
    and where its conventions differ from the run's (config/convention_groups.py: stated)."""
    lines: dict[str, list[str]] = {}
    for name, about in (conventions.get("by_metric") or {}).items():
        differs = ", ".join(
            f"{k}={'none' if v is None else v}" for k, v in about["differs"].items()
        )
        head = f"{possessive(about['tool'])} conventions (preset {about['preset']})"
        lines.setdefault(f"{head}{': ' + differs if differs else ''}", []).append(name)
    return [f"{', '.join(names)}: {text}" for text, names in lines.items()]


def table_footer(
    conventions: ConventionsBlock, gates: list[GateResult], warnings: list[str]
) -> list[RenderableType]:
    """The conventions in force, then every warning, every failed gate and every waived
    gate."""
    settings = {k: v for k, v in conventions.items() if k not in ("preset", "by_metric")}
    listed = ", ".join(f"{k}={'none' if v is None else v}" for k, v in settings.items())
    preset = conventions.get("preset")
    heading = f"conventions (preset {preset})" if preset else "conventions"
    parts: list[RenderableType] = [shown(f"{heading}: {listed}", style="dim")]
    parts += [shown(line, style="dim") for line in by_metric_lines(conventions)]
    parts += [shown(f"warning: {warning}", style="yellow") for warning in warnings]
    for gate in gates:
        if gate.state == "failed":
            parts.append(shown(f"gate failed: {gate.describe()}", style="bold red"))
    for gate in gates:
        if gate.state == "waived":
            parts.append(shown(f"gate waived: {gate.describe()}", style="yellow"))
    return parts


def segment_tables(report: Report, model: str | None = None) -> list[RenderableType]:
    """One table per segment_by attribute: metrics down, its segments across (with their
    evaluated users); then the segments that could not be evaluated."""
    from rich.table import Table

    by_attribute: dict[str, list[str]] = {}
    for name in report.segments:
        by_attribute.setdefault(name.split("=", 1)[0], []).append(name)
    parts: list[RenderableType] = []
    for attribute, names in by_attribute.items():
        title = f"by {attribute}" if model is None else f"{model} by {attribute}"
        grid = Table(title=shown(title), title_justify="left")
        grid.add_column("metric", no_wrap=True)
        for name in names:
            users = report.segments[name].users["evaluated"]
            header = shown(f"{name.split('=', 1)[1]}\n({users} users)")
            grid.add_column(header, justify="right", no_wrap=True)
        for metric in report.metrics:
            cells: list[RenderableType] = [shown(metric)]
            for name in names:
                part = report.segments[name]
                interval = (part.confidence or {}).get("intervals", {}).get(metric)
                cells.append(format_value(part.metrics[metric], interval))
            grid.add_row(*cells)
        parts.append(grid)
    for name, reason in report.segments_skipped.items():
        parts.append(shown(f"segment {name} not evaluated: {reason}", style="dim"))
    return parts


def format_value(value: float | None, interval: list[float] | None = None) -> str:
    """The value to 4 decimals, with +- the half-width of its interval when there is one;
    "null" for no value (auc with one class of pairs: the report's warning says why)."""
    if value is None:
        return "null"
    if interval is None:
        return f"{value:.4f}"
    return f"{value:.4f} ± {(interval[1] - interval[0]) / 2:.4f}"


def gates_by_row(gates: list[GateResult]) -> dict[str, list[GateResult]]:
    """The gates by the metric row that shows them (a segment's gate on its metric's)."""
    found: dict[str, list[GateResult]] = {}
    for gate in gates:
        found.setdefault(gate.row, []).append(gate)
    return found


def gate_cell(gates: list[GateResult]) -> Text:
    """`ok >= 0.4`, `FAIL <= 0.2`, `waived: 3 of 7 past runs`, one per gate (with its
    model), `; ` between (GateResult.cell words each)."""
    from rich.text import Text

    styles = {"passed": "green", "failed": "bold red", "waived": "yellow"}
    cell = Text()
    for index, gate in enumerate(gates):
        if index:
            cell.append("; ")
        if gate.model is not None:
            cell.append(f"{printable(gate.model)} ")
        if gate.segment is not None:
            cell.append(f"{printable(gate.segment)}: ")
        verdict, _, rest = gate.cell().partition(" ")
        cell.append(verdict, style=styles[gate.state])
        cell.append(f" {rest}")
    return cell


def confidence_line(confidence: dict[str, Any]) -> str:
    method = confidence["method"]
    how = (
        f"bootstrap over users, {confidence['resamples']} resamples, seed {confidence['seed']}"
        if method == "bootstrap"
        else "normal approximation"
    )
    return f"±: half-width of the {confidence['level']:.0%} confidence interval ({how})"


def users_line(users: UsersBlock) -> str:
    line = f"users: {users['evaluated']} evaluated"
    zeros = users["counted_as_zero"]
    if zeros["no_recommendations"]:
        line += f" ({zeros['no_recommendations']} with no recommendation, counted as 0)"
    skipped = users["skipped"]
    reasons = [
        f"{skipped['no_relevant']} with no relevant item" if skipped["no_relevant"] else "",
        f"{skipped['no_recommendations']} with no recommendation"
        if skipped["no_recommendations"]
        else "",
    ]
    reasons = [r for r in reasons if r]
    if reasons:
        line += "; skipped: " + ", ".join(reasons)
    if users["only_in_predictions"]:
        line += f"; {users['only_in_predictions']} only in predictions (not evaluated)"
    found = ties_text(users)
    return line if found is None else f"{line}; {found}"


def ties_text(users: UsersBlock) -> str | None:
    """The users block's tied positions (tie_break expected), as every format states
    them; None without the count."""
    ties = users.get("ties")
    if ties is None:
        return None
    return (
        f"tie_break expected: {ties['tied_positions']} tied positions in "
        f"{ties['tied_groups']} ties ({ties['users_with_ties']} users), each metric "
        "averaged over every order of them"
    )


def models_ties(models: Mapping[str, Report]) -> list[str]:
    """Each model's tied positions (ties_text), its name first where there are several."""
    found = []
    for name, report in models.items():
        text = ties_text(report.users)
        if text is not None:
            found.append(text if len(models) == 1 else f"{name}: {text}")
    return found


def _items_line(items: dict[str, Any]) -> str:
    line = f"items: {items['recommended']} recommended"
    if "universe" in items:
        line += f"; {items['universe']}: {items['universe_size']} items"
        if items["outside_universe"]:
            shown = ", ".join(map(repr, items["outside_examples"]))
            line += (
                f"; {items['outside_universe']} recommended items are not in the "
                f"{items['universe']} (e.g. {shown}) and count for no coverage"
            )
    return line
