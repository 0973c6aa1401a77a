"""`receval compare`'s comparison (report/report_comparison.py) as text: the terminal
table, JSON, markdown and csv.
"""

from __future__ import annotations

import csv
import io
import json

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from receval_cli.console import plain_text, shown
from receval_cli.escaping import csv_cell, markdown_code, markdown_text
from receval_cli.formats import COMPARISON_FORMATS
from receval_cli.report.renderers import render_as
from receval_cli.report.report_comparison import Cell, ReportComparison, comparison_warnings
from receval_cli.report.table import format_value, titled_table
from receval_cli.results.comparison import Comparison

_MISSING = "—"


def render_comparison(comparison: ReportComparison, fmt: str, width: int = 100) -> str:
    """The comparison in `fmt` (a row of COMPARISON_FORMATS), as text."""
    return render_as(COMPARISON_FORMATS, fmt, comparison, width)


def comparison_json(comparison: ReportComparison) -> str:
    return json.dumps(comparison.to_dict(), indent=2, allow_nan=False) + "\n"


def comparison_text(comparison: ReportComparison, width: int) -> str:
    """The terminal's table as plain text, `width` columns wide."""
    return plain_text(comparison_table(comparison), width)


def delta_text(cell: Cell) -> str:
    """`+0.0123 (+2.3%)`; no percentage when the baseline value is 0."""
    if cell.delta is None:
        return ""
    text = f"{cell.delta:+.4f}"
    if cell.relative_delta is not None:
        text += f" ({cell.relative_delta:+.1%})"
    return text


def comparison_table(comparison: ReportComparison) -> RenderableType:
    """The columns side by side, then the baseline line and any conventions warning."""
    grid = Table(title=f"receval compare: {len(comparison.columns)} columns", title_justify="left")
    grid.add_column("metric", no_wrap=True)  # names and values are never cut
    for name in comparison.columns:
        grid.add_column(shown(name), justify="right", no_wrap=True)
    for metric, row in comparison.metrics.items():
        best = comparison.best[metric]
        grid.add_row(
            shown(metric), *(_table_cell(row[name], name in best) for name in comparison.columns)
        )
    parts: list[RenderableType] = [grid, shown(baseline_line(comparison, "* best"))]
    if comparison.has_intervals:
        parts.append(Text("±: half-width of the confidence interval saved in the report"))
    if comparison.tests:
        parts.append(_tests_table(comparison))
    for warning in comparison_warnings(comparison):
        parts.append(shown(f"warning: {warning}", style="bold yellow"))
    return Group(*parts)


def tests_title(comparison: ReportComparison) -> str:
    """What the paired tests are: the test, the correction and the level."""
    assert comparison.test is not None
    test = comparison.test
    return (
        f"paired tests against {comparison.baseline}, user by user ({test['test']}, "
        f"{test['correction']} correction, level {test['level']:g})"
    )


def test_cells(test: Comparison) -> list[str]:
    """column, metric, difference [low, high], users, p (adjusted), verdict."""
    difference = "" if test.difference is None else f"{test.difference:+.4f}"
    if test.low is not None and test.high is not None:
        difference += f" [{test.low:+.4f}, {test.high:+.4f}]"
    p = "" if test.p_adjusted is None else f"{test.p_adjusted:.3g}"
    users = "" if test.users is None else str(test.users)
    detectable = "" if test.detectable is None else f"{test.detectable:.4g}"
    return [test.model, test.metric, difference, users, p, test.verdict, detectable]


_TEST_HEADERS = (
    "column",
    "metric",
    "difference [interval]",
    "users",
    "p (adjusted)",
    "verdict",
    "detectable (power 0.8)",
)


def _tests_table(comparison: ReportComparison) -> Table:
    rows = [test_cells(test) for test in comparison.tests]
    return titled_table(tests_title(comparison), _TEST_HEADERS, rows)


def _table_cell(cell: Cell | None, best: bool) -> Text:
    if cell is None:
        return Text(_MISSING)
    text = Text(format_value(cell.value, cell.interval))
    if best:
        text.stylize("bold")
        text.append("*", style="bold")
    if cell.delta is not None:
        text.append(f"  {delta_text(cell)}")
    return text


def baseline_line(comparison: ReportComparison, best: str) -> str:
    return (
        f"baseline: {comparison.baseline} (the other columns' deltas are against it); "
        f"{best}; {_MISSING} not in that report"
    )


def render_comparison_markdown(comparison: ReportComparison) -> str:
    """A GitHub table: the same cells as the terminal table, best in bold."""
    names = comparison.columns
    lines = [
        "## receval compare",
        "",
        "| metric | " + " | ".join(markdown_text(n) for n in names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for metric, row in comparison.metrics.items():
        best = comparison.best[metric]
        cells = [_markdown_cell(row[name], name in best) for name in names]
        lines.append(f"| {markdown_code(metric)} | " + " | ".join(cells) + " |")
    lines += ["", markdown_text(baseline_line(comparison, "bold: best")) + "."]
    if comparison.tests:
        lines += ["", f"### {markdown_text(tests_title(comparison))}", ""]
        lines += ["| " + " | ".join(_TEST_HEADERS) + " |", "|---|---|---:|---:|---:|---|---:|"]
        for test in comparison.tests:
            cells = test_cells(test)
            cells[:2] = [markdown_text(cells[0]), markdown_code(cells[1])]
            lines.append("| " + " | ".join(cells) + " |")
    for warning in comparison_warnings(comparison):
        lines += ["", f"> **warning: {markdown_text(warning)}**"]
    return "\n".join(lines) + "\n"


def _markdown_cell(cell: Cell | None, best: bool) -> str:
    if cell is None:
        return _MISSING
    text = format_value(cell.value, cell.interval)
    if best:
        text = f"**{text}**"
    if cell.delta is not None:
        text += f" {delta_text(cell)}"
    return text


_CSV_FIELDS = ("column", "metric", "value", "low", "high", "delta", "relative_delta")


def render_comparison_csv(comparison: ReportComparison) -> str:
    """Long format: one line per (column, metric) that has a value; values unrounded,
    empty where there is no interval or no delta (the baseline's own lines). The paired
    tests are in the other formats: the CSV's columns stay, so that appending to an
    earlier CSV keeps one header."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(_CSV_FIELDS), lineterminator="\n")
    writer.writeheader()
    for name in comparison.columns:
        for metric, row in comparison.metrics.items():
            cell = row[name]
            if cell is None:
                continue
            values: dict[str, object] = {"column": name, "metric": metric, **cell.to_dict()}
            writer.writerow({k: "" if v is None else csv_cell(v) for k, v in values.items()})
    return buffer.getvalue()
