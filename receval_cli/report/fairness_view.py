"""The `fairness` block (analysis/fairness_report.py) as every format shows it: one table of the
item groups, and per segment_by attribute one table of the compared metrics' segments
with their gaps to the best segment, each with the lines that sum it up. The cells are
text, made once here; table, Markdown and HTML only lay them out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from receval_cli.escaping import html_text, markdown_code, markdown_text
from receval_cli.report.html_parts import table_html
from receval_cli.results.report import Report

if TYPE_CHECKING:  # rich loads when a table is drawn, not for JSON or CSV
    from rich.console import RenderableType


ITEM_HEADERS = (
    "group",
    "items",
    "item share",
    "slot share",
    "exposure share",
    "P(recommended)",
    "relevant",
    "found",
    "recall",
)
SEGMENT_HEADERS = ("metric", "segment", "users", "value", "gap to best", "interval")


@dataclass
class FairnessTable:
    """A titled table of text cells, and the lines under it."""

    title: str
    headers: tuple[str, ...]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


def _number(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{value:.4f}"


def _plus_minus(value: float | None, interval: list[float] | None) -> str:
    """The value, with +- its interval's half-width when it has one."""
    if value is None or interval is None:
        return _number(value)
    return f"{value:.4f} ± {(interval[1] - interval[0]) / 2:.4f}"


def _interval(interval: list[float] | None, level: float) -> str:
    if interval is None:
        return "-"
    return f"[{interval[0]:.4f}, {interval[1]:.4f}] ({level:.0%})"


def fairness_tables(block: dict[str, Any], model: str | None = None) -> list[FairnessTable]:
    """The block's tables: the item groups (when the run has the state), then each
    segment_by attribute's comparisons."""
    prefix = f"{model}: " if model else ""
    level = float(block["level"])
    found: list[FairnessTable] = []
    items = block.get("items")
    about = f"k={block['k']}, groups={block['groups']}"
    if "pop_ratio" in block:
        about += f", pop_ratio={block['pop_ratio']:g}"
    if items is not None:
        rows = [
            [
                str(g["group"]),
                *(_number(g[c]) for c in ("items", "item_share", "slot_share", "exposure_share")),
                _plus_minus(g["recommended"], g.get("recommended_interval")),
                _number(g["relevant"]),
                _number(g["found"]),
                _plus_minus(g["recall"], g.get("recall_interval")),
            ]
            for g in items["groups"]
        ]
        notes = [
            f"{name} = {_number(value)} (lower is fairer)"
            for name, value in items["disparity"].items()
        ]
        notes.append(
            f"P(recommended) and recall ± the half-width of their {level:.0%} intervals over "
            "users (the delta method)"
        )
        found.append(
            FairnessTable(f"{prefix}fairness: item groups ({about})", ITEM_HEADERS, rows, notes)
        )
    for attribute, metrics in (block.get("segments") or {}).items():
        rows, notes = [], []
        for metric, compared in metrics.items():
            for segment, row in compared["segments"].items():
                rows.append(
                    [
                        metric,
                        segment,
                        _number(row["users"]),
                        _number(row["value"]),
                        _number(row["gap"]),
                        _interval(row["interval"], level),
                    ]
                )
            if "worst" in compared:
                notes.append(
                    f"{metric}: max - min {_number(compared['max_min'])} "
                    f"{_interval(compared['interval'], level)}, {compared['worst']} below "
                    f"{compared['best']}"
                )
            if "miss_rate_equality_difference" in compared:
                notes.append(
                    f"{metric}: miss rate {_number(compared['miss_rate'])}; RecList's miss-rate "
                    f"equality difference {_number(compared['miss_rate_equality_difference'])}"
                )
        title = f"{prefix}fairness: segments by {attribute} ({about})"
        found.append(FairnessTable(title, SEGMENT_HEADERS, rows, notes))
    return found


def fairness_renderables(report: Report, model: str | None = None) -> list[RenderableType]:
    """The terminal's tables and lines (none without a fairness block)."""
    from rich.table import Table
    from rich.text import Text

    if report.fairness is None:
        return []
    parts: list[RenderableType] = []
    for table in fairness_tables(report.fairness, model):
        grid = Table(title=Text(table.title), title_justify="left")
        for header in table.headers:
            grid.add_column(header, no_wrap=True)
        for row in table.rows:
            grid.add_row(*(Text(cell) for cell in row))
        parts.append(grid)
        parts += [Text(note) for note in table.notes]
    return parts


def fairness_markdown(models: dict[str, Report]) -> list[str]:
    """The Markdown lines: a heading, each table and its notes."""
    several = len(models) > 1
    lines: list[str] = []
    for name, report in models.items():
        if report.fairness is None:
            continue
        for table in fairness_tables(report.fairness, name if several else None):
            lines += ["", f"### {markdown_text(table.title)}", ""]
            lines.append("| " + " | ".join(table.headers) + " |")
            lines.append("|---|" + "---:|" * (len(table.headers) - 1))
            for row in table.rows:
                cells = [markdown_code(row[0]), *(markdown_text(c) for c in row[1:])]
                lines.append("| " + " | ".join(cells) + " |")
            lines += [""] + [f"- {markdown_text(note)}" for note in table.notes]
    return lines


def fairness_html(models: dict[str, Report]) -> str:
    """The HTML report's Fairness section ('' without a fairness block)."""
    several = len(models) > 1
    parts: list[str] = []
    for name, report in models.items():
        if report.fairness is None:
            continue
        for table in fairness_tables(report.fairness, name if several else None):
            head = "".join(f"<th>{html_text(h)}</th>" for h in table.headers)
            rows = [
                "<tr>"
                + f"<td><code>{html_text(row[0])}</code></td>"
                + "".join(f'<td class="num">{html_text(c)}</td>' for c in row[1:])
                + "</tr>"
                for row in table.rows
            ]
            notes = "".join(f"<li>{html_text(n)}</li>" for n in table.notes)
            parts.append(
                f"<h3>{html_text(table.title)}</h3>\n{table_html(head, rows)}"
                + (f"<ul>{notes}</ul>\n" if notes else "")
            )
    return "".join(parts)
