"""`receval history` shown: a rich table with sparklines on a terminal, JSON, Markdown,
CSV, or a self-contained HTML page with one trend plot per metric.

Each row is a series (model, segment, metric): its runs, the latest value, the change
against the previous run and against the median of up to --window runs before it, and a
flag where the latest run is worse than the previous one beyond both intervals.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from receval_cli.console import plain_text
from receval_cli.escaping import (
    csv_cell,
    html_text,
    json_text,
    markdown_code,
    markdown_text,
    printable,
)
from receval_cli.formats import HISTORY_FORMATS
from receval_cli.report.renderers import render_as
from receval_cli.results.series import HistoryPage, Selection, Trend
from receval_cli.version import __version__

SIGNIFICANT = "significant drop"
_NONE = "—"
_FLAG_NOTE = (
    "significant drop: the latest run's confidence interval lies entirely on the worse side "
    "of the previous run's (a conservative reading of two intervals)."
)
FAILED_MARK = "\u2717"  # ✗: the HTML page's mark of a run that failed a gate
_FAILED_NOTE = (
    f"{FAILED_MARK}: a run that failed a gate (receval run exited 1; the store's `passed` "
    "is false), after the latest run's name in the table and as a red x at the foot of "
    "each trend plot."
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


def _value(value: float | None, signed: bool = False) -> str:
    if value is None:
        return _NONE
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def _change(trend: Trend, change: float | None, reference: float | None) -> str:
    if change is None:
        return _NONE
    text = _value(change, signed=True)
    if reference:
        text += f" ({change / abs(reference):+.1%})"
    return text


def _flag(trend: Trend) -> str:
    return SIGNIFICANT if trend.significant_drop else ""


def _segment(trend: Trend) -> str:
    return "all users" if trend.segment is None else trend.segment


def _columns(trend: Trend) -> dict[str, str]:
    """A series' row as text (Markdown and the table share it)."""
    previous = None if trend.previous is None else trend.previous.value
    return {
        "model": trend.model,
        "segment": _segment(trend),
        "metric": trend.metric,
        "runs": str(len(trend.points)),
        "latest": _value(trend.latest.value),
        "run": trend.latest.name,
        "vs previous": _change(trend, trend.change_previous, previous),
        f"vs median of {trend.window}": _change(trend, trend.change_median, trend.median),
        "trend": sparkline([p.value for p in trend.points]),
        "flag": _flag(trend),
    }


def _has_segments(found: list[Trend]) -> bool:
    return any(t.segment is not None for t in found)


def history_table(store: Path, found: list[Trend], selection: Selection) -> Table | Text:
    if not found:
        return Text(printable(f"history {store}: no runs match."))
    table = Table(title=printable(f"history {store}"), title_justify="left")
    columns = list(_columns(found[0]))
    if not _has_segments(found):
        columns.remove("segment")
    for name in columns:
        numeric = name in ("runs", "latest") or name.startswith("vs ")
        table.add_column(
            name,
            justify="right" if numeric else "left",
            no_wrap=name == "trend",
            overflow="fold",  # a long segment or metric name folds, never cut
        )
    for trend in found:
        cells = _columns(trend)
        row: list[str | Text] = []
        for name in columns:
            worse = (name == "vs previous" and trend.worse(trend.change_previous)) or (
                name.startswith("vs median") and trend.worse(trend.change_median)
            )
            style = "red" if worse or (name == "flag" and cells[name]) else ""
            row.append(Text(printable(cells[name]), style=style))
        table.add_row(*row)
    if any(t.significant_drop for t in found):
        table.caption = _FLAG_NOTE
    return table


def render_history(store: Path, found: list[Trend], selection: Selection, fmt: str) -> str:
    """The trends in `fmt` (a row of HISTORY_FORMATS), as text."""
    return render_as(HISTORY_FORMATS, fmt, HistoryPage(store, found, selection))


def history_text(page: HistoryPage, width: int) -> str:
    """The terminal's table as plain text, `width` columns wide."""
    return plain_text(history_table(page.store, page.trends, page.selection), width)


def history_json(page: HistoryPage) -> str:
    data = {
        "store": str(page.store),
        "window": page.selection.window,
        "last": page.selection.last,
        "series": [t.to_dict() for t in page.trends],
    }
    return json_text(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"


def history_csv(page: HistoryPage) -> str:
    return _csv(page.trends)


def history_markdown(page: HistoryPage) -> str:
    return _markdown(page.store, page.trends)


def history_html(page: HistoryPage) -> str:
    return _html(page.store, page.trends, page.selection)


_CSV_FIELDS = (
    "model",
    "segment",
    "metric",
    "runs",
    "latest",
    "latest_run_id",
    "latest_started_at",
    "latest_label",
    "previous",
    "change_previous",
    "median",
    "median_runs",
    "change_median",
    "significant_drop",
)


def _csv(found: list[Trend]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(_CSV_FIELDS), lineterminator="\n")
    writer.writeheader()
    for trend in found:
        data = trend.to_dict()
        row: dict[str, Any] = {
            "model": trend.model,
            "segment": trend.segment,
            "metric": trend.metric,
            "runs": data["runs"],
            "latest": trend.latest.value,
            "latest_run_id": trend.latest.run_id,
            "latest_started_at": data["latest"]["started_at"],
            "latest_label": trend.latest.label,
            "previous": None if trend.previous is None else trend.previous.value,
            "change_previous": trend.change_previous,
            "median": trend.median,
            "median_runs": trend.median_runs,
            "change_median": trend.change_median,
            "significant_drop": trend.significant_drop,
        }
        writer.writerow({k: "" if v is None else csv_cell(v) for k, v in row.items()})
    return buffer.getvalue()


def _markdown(store: Path, found: list[Trend]) -> str:
    lines = [f"## receval history: {markdown_code(store)}", ""]
    if not found:
        return "\n".join([*lines, "No runs match.", ""])
    columns = list(_columns(found[0]))
    if not _has_segments(found):
        columns.remove("segment")
    lines.append("| " + " | ".join(columns) + " |")
    numeric = [c in ("runs", "latest") or c.startswith("vs ") for c in columns]
    lines.append("|" + "|".join("---:" if n else "---" for n in numeric) + "|")
    for trend in found:
        cells = _columns(trend)
        shown = [
            cells[c] if n else markdown_text(cells[c])
            for c, n in zip(columns, numeric, strict=True)
        ]
        lines.append("| " + " | ".join(shown) + " |")
    if any(t.significant_drop for t in found):
        lines += ["", _FLAG_NOTE]
    return "\n".join(lines) + "\n"


def _html(store: Path, found: list[Trend], selection: Selection) -> str:
    from receval_cli.report import plots
    from receval_cli.report.html_page import standalone_page
    from receval_cli.report.html_parts import number_html, table_html

    title = f"receval history: {store}"
    if not found:
        return standalone_page(title, __version__, "", "<p>No runs match.</p>\n")
    columns = [c for c in _columns(found[0]) if c != "trend"]
    if not _has_segments(found):
        columns.remove("segment")
    head = "".join(f"<th>{html_text(c)}</th>" for c in columns)
    rows = []
    for trend in found:
        cells = _columns(trend)
        cells["latest"] = number_html(trend.latest.value)
        failed_latest = trend.latest.passed is False
        if failed_latest:
            cells["run"] += f" {FAILED_MARK}"
        tds = []
        for name in columns:
            worse = (name == "vs previous" and trend.worse(trend.change_previous)) or (
                name.startswith("vs median") and trend.worse(trend.change_median)
            )
            numeric = name in ("runs", "latest") or name.startswith("vs ")
            worse = worse or (name == "run" and failed_latest)
            classes = " ".join(c for c in ("num" if numeric else "", "fail" if worse else "") if c)
            text = cells[name] if name == "latest" else html_text(cells[name])
            tds.append(f'<td class="{classes}">{text}</td>' if classes else f"<td>{text}</td>")
        rows.append("<tr>" + "".join(tds) + "</tr>")
    note = f'<p class="note">{html_text(_FLAG_NOTE)}</p>\n' if any(_flag(t) for t in found) else ""
    if any(p.passed is False for t in found for p in t.points):
        note += f'<p class="note failed-runs">{html_text(_FAILED_NOTE)}</p>\n'
    figures = []
    groups: dict[tuple[str | None, str], list[Trend]] = {}
    for trend in found:
        groups.setdefault((trend.segment, trend.metric), []).append(trend)
    for number, ((segment, metric), trends) in enumerate(groups.items(), start=1):
        runs = sorted(
            {(p.started_at, p.run_id, p.name) for t in trends for p in t.points},
            key=lambda r: (r[0], r[1]),
        )
        position = {run_id: i for i, (_, run_id, _) in enumerate(runs)}
        series = {
            t.model: [
                (
                    position[p.run_id],
                    p.value,
                    None if p.low is None or p.high is None else (p.low, p.high),
                )
                for p in t.points
            ]
            for t in trends
        }
        bounds = {}
        if trends[-1].gate_min is not None:
            bounds["min"] = trends[-1].gate_min
        if trends[-1].gate_max is not None:
            bounds["max"] = trends[-1].gate_max
        name = metric if segment is None else f"{metric} [{segment}]"
        failed_ids = {p.run_id for t in trends for p in t.points if p.passed is False}
        failed = [i for i, (_, run_id, _) in enumerate(runs) if run_id in failed_ids]
        labels = [r[2] for r in runs]
        svg = plots.trend_figure(name, series, labels, bounds, f"fig{number}-", failed)
        caption = f"{html_text(name)} over the last {len(runs)} runs"
        if any(p.low is not None for t in trends for p in t.points):
            caption += "; bands: confidence intervals"
        if bounds:
            caption += "; dashed: the gate's bounds"
        if failed:
            names = ", ".join(labels[i] for i in failed)
            caption += f"; red x ({FAILED_MARK}): failed a gate: {html_text(names)}"
        figures.append(
            f'<figure class="plot" data-kind="trend" data-name="{html_text(name)}">\n{svg}'
            f"<figcaption>{caption}</figcaption>\n</figure>\n"
        )
    latest = max((t.latest for t in found), key=lambda p: (p.started_at, p.run_id))
    header = (
        f'<p class="about">{len(groups)} metrics; latest run {html_text(latest.name)} '
        f"(id {html_text(latest.run_id)}); change against the median of up to "
        f"{selection.window} runs before the latest</p>\n"
    )
    body = (
        f'<section id="trends">\n<h2>Latest values and changes</h2>\n'
        f"{table_html(head, rows)}{note}</section>\n"
        f'<section id="plots">\n<h2>Trends</h2>\n<div class="plots trends">\n'
        f"{''.join(figures)}</div>\n</section>\n"
    )
    return standalone_page(title, __version__, header, body)
