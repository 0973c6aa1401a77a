"""Render a run's report (a RunReport, one model or several) in any output format.

table   rich table (terminal, or plain text in a file)
json    every number, never rounded
html    one self-contained page with figures (report/html.py; imports matplotlib)
github  GitHub Actions workflow commands: an error annotation per failed gate, a warning
        annotation per warning, then one plain summary line
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import socket
from typing import TYPE_CHECKING

from receval_cli.console import plain_text, shown
from receval_cli.escaping import (
    csv_cell,
    github_data,
    github_property,
    markdown_code,
    markdown_text,
    xml_text,
)
from receval_cli.formats import RUN_FORMATS
from receval_cli.report.comparison_detail import (
    detail_markdown,
    detail_table,
    detailed,
    lists_markdown,
    lists_table,
)
from receval_cli.report.fairness_view import fairness_markdown, fairness_renderables
from receval_cli.report.renderers import render_as
from receval_cli.report.table import (
    confidence_line,
    format_value,
    gate_cell,
    gates_by_row,
    models_ties,
    one_model_table,
    segment_tables,
    table_footer,
    ties_text,
    users_line,
    variance_line,
)
from receval_cli.results.gates import GateResult, summary
from receval_cli.results.report import RunReport

if TYPE_CHECKING:  # rich loads when a table is drawn, not for JSON or CSV
    from rich.console import RenderableType

    # numpy, imported meanwhile by the evaluation when it runs
    from receval_cli.results.comparison import Comparison

_MARKS = {"win": " ▲", "loss": " ▼"}


def render_json(result: RunReport) -> str:
    return json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n"


def run_table(result: RunReport) -> RenderableType:
    """One model compared with nothing: its metric/value table; else the models side by
    side."""
    return one_model_table(result) if result.alone is not None else models_table(result)


def render_text(result: RunReport, width: int) -> str:
    return plain_text(run_table(result), width)


def render(result: RunReport, fmt: str, width: int = 100) -> str:
    """The result in `fmt` (a row of RUN_FORMATS, whose renderer is imported when it is
    written: matplotlib only for HTML), as text."""
    return render_as(RUN_FORMATS, fmt, result, width)


def models_table(result: RunReport) -> RenderableType:
    """Models side by side: the best value of each metric in bold with *, each model's
    difference from the baseline with ▲ / ▼ for a significant win / loss."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    names = list(result.models)
    title = f"receval: {len(names)} models"
    if result.baseline is not None:
        title += f", baseline {result.baseline}"
    elif result.baseline_report is not None:
        title += f", against {result.baseline_report}"
    grid = Table(title=shown(title), title_justify="left")
    grid.add_column("metric", no_wrap=True)  # names and values are never cut
    for name in names:
        grid.add_column(shown(name), justify="right", no_wrap=True)
    gated = bool(result.gates)
    if gated:
        grid.add_column("gates")
    found = {(c.model, c.metric): c for c in result.comparisons}
    first = next(iter(result.models.values()))
    verdicts = gates_by_row(result.gates)
    for metric in first.metrics:
        row: list[RenderableType] = [shown(metric)]
        for name, report in result.models.items():
            intervals = (report.confidence or {}).get("intervals", {})
            cell = Text(format_value(report.metrics[metric], intervals.get(metric)))
            if name in result.best.get(metric, []) and len(names) > 1:
                cell.stylize("bold")
                cell.append("*")
            comparison = found.get((name, metric))
            if comparison is not None:
                cell.append(f"  {_difference(comparison)}")
            row.append(cell)
        if gated:
            row.append(gate_cell(verdicts.get(metric, [])))
        grid.add_row(*row)
    parts: list[RenderableType] = [grid]
    for name, report in result.models.items():
        parts.append(shown(f"{name}: {users_line(report.users)}"))
    for name, report in result.models.items():
        parts += segment_tables(report, name)
    for name, report in result.models.items():
        parts += fairness_renderables(report, name)
    if first.confidence is not None:
        parts.append(Text(confidence_line(first.confidence)))
    if result.comparison is not None:
        c = result.comparison
        against = result.baseline or "the saved report"
        parts.append(
            shown(
                f"* best; differences against {against}: {result.test_method()}, "
                f"▲/▼ significant win/loss at level {c['level']:g}"
            )
        )
        if detailed(result):
            parts.append(detail_table(result))
        if result.list_comparisons:
            parts.append(lists_table(result))
    parts += table_footer(result.conventions, result.gates, result.warnings)
    return Group(*parts)


def _rows(result: RunReport) -> list[dict[str, object]]:
    """One row per (model, metric): value, interval, and the comparison when there is one."""
    found = {(c.model, c.metric): c for c in result.comparisons}
    rows: list[dict[str, object]] = []
    for name, report in result.models.items():
        intervals = (report.confidence or {}).get("intervals", {})
        for metric, value in report.metrics.items():
            low, high = intervals.get(metric, (None, None))
            row: dict[str, object] = {"model": name, "metric": metric, "value": value}
            row.update(low=low, high=high)
            comparison = found.get((name, metric))
            row.update(
                difference=None if comparison is None else comparison.difference,
                p_adjusted=None if comparison is None else comparison.p_adjusted,
                verdict=None if comparison is None else comparison.verdict,
            )
            rows.append(row)
    return rows


def _difference(comparison: Comparison) -> str:
    """A comparison's difference and its verdict's mark, e.g. "+0.0123▲"; "no difference"
    where a side has no value."""
    if comparison.difference is None:
        return "no difference"
    return f"{comparison.difference:+.4f}{_MARKS.get(comparison.verdict, '')}"


def render_csv(result: RunReport) -> str:
    """One line per (model, metric): model, metric, value, low, high, difference,
    p_adjusted, verdict (empty where not computed), and gate: the verdict of each gate on
    it (`passed >= 0.3`, `FAILED >= 0.3`, `waived: 3 of 7 past runs`, `; ` between).
    A gate on no metric row (a segment's, unknown_items) gets a line of its own. Values
    unrounded."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(_CSV_FIELDS), lineterminator="\n")
    writer.writeheader()
    rows = _rows(result)
    alone = next(iter(result.models)) if len(result.models) == 1 else None
    placed: dict[tuple[object, object], dict[str, object]] = {
        (row["model"], row["metric"]): row for row in rows
    }
    for gate in result.gates:
        key = (gate.model or alone, gate.metric)
        row = placed.get(key)
        if row is None:
            row = dict.fromkeys(_CSV_FIELDS)
            row.update(model=key[0], metric=gate.metric, value=_measured(gate))
            placed[key] = row
            rows.append(row)
        text = gate.cell("passed", "FAILED")
        row["gate"] = text if row.get("gate") is None else f"{row['gate']}; {text}"
    for row in rows:
        writer.writerow({k: ("" if row.get(k) is None else csv_cell(row[k])) for k in _CSV_FIELDS})
    return buffer.getvalue()


def _measured(gate: GateResult) -> float | None:
    """The value a gate read: the metric's (a drop's gate: the model's value, not the
    drop)."""
    if gate.bound in ("min", "max"):
        return gate.value
    value = gate.detail.get("model_value")
    return None if value is None else float(value)


_CSV_FIELDS = (
    "model",
    "metric",
    "value",
    "low",
    "high",
    "difference",
    "p_adjusted",
    "verdict",
    "gate",
)


def render_markdown(result: RunReport) -> str:
    """A GitHub-flavoured summary (fits $GITHUB_STEP_SUMMARY): verdict, table, failures."""
    failed = [g for g in result.gates if g.state == "failed"]
    waived = [g for g in result.gates if g.state == "waived"]
    lines = ["## receval", ""]
    run = result.run
    if run is not None:
        about = f"Run {run.started_at:%Y-%m-%d %H:%M:%S} UTC, id {markdown_code(run.id)}"
        about += "" if run.label is None else f", label {markdown_code(run.label)}"
        tags = ", ".join(markdown_code(f"{k}={v}") for k, v in run.tags.items())
        lines += [about + (f", tags {tags}" if tags else "") + ".", ""]
    if result.gates:
        judged = any(g.state == "passed" for g in result.gates)
        mark = "❌" if failed else "✅" if judged else "⚠️"
        lines += [f"{mark} {summary(result.gates)}", ""]
    alone = result.alone
    if alone is not None:
        intervals = (alone.confidence or {}).get("intervals", {})
        lines += ["| metric | value |", "|---|---:|"]
        for metric, value in alone.metrics.items():
            shown_value = format_value(value, intervals.get(metric))
            lines.append(f"| {markdown_code(metric)} | {shown_value} |")
        lines += ["", f"Users: {users_line(alone.users).removeprefix('users: ')}."]
        if alone.logged is not None and variance_line(alone.logged):
            lines += ["", markdown_text(variance_line(alone.logged).capitalize()) + "."]
    else:
        names = list(result.models)
        header = " | ".join(markdown_text(n) for n in names)
        lines += [f"| metric | {header} |", "|---|" + "---:|" * len(names)]
        found = {(c.model, c.metric): c for c in result.comparisons}
        first = next(iter(result.models.values()))
        for metric in first.metrics:
            cells = []
            for name, report in result.models.items():
                intervals = (report.confidence or {}).get("intervals", {})
                cell = format_value(report.metrics[metric], intervals.get(metric))
                if name in result.best.get(metric, []) and len(names) > 1:
                    cell = f"**{cell}**"
                comparison = found.get((name, metric))
                if comparison is not None:
                    cell += f" ({_difference(comparison)})"
                cells.append(cell)
            lines.append(f"| {markdown_code(metric)} | " + " | ".join(cells) + " |")
        if result.comparison is not None:
            c = result.comparison
            lines += [
                "",
                f"Bold: best. In parentheses: the difference from "
                f"{markdown_text(result.baseline or 'the saved report')}; ▲/▼ a significant "
                "win/loss "
                f"({result.test_method()}, level {c['level']:g}).",
            ]
            lines += detail_markdown(result) + lists_markdown(result)
    lines += fairness_markdown(result.models)
    if result.warnings:
        lines += ["", "### Warnings", ""]
        lines += [f"- ⚠️ {markdown_text(warning)}" for warning in result.warnings]
    if failed:
        lines += ["", "### Failed gates", ""]
        lines += [f"- {markdown_text(gate.describe())}" for gate in failed]
    if waived:
        lines += ["", "### Waived gates", ""]
        lines += [
            f"- {markdown_text(gate.name)}: waived: {markdown_text(gate.waived_briefly)} "
            f"({markdown_text(gate.waived or '')})"
            for gate in waived
        ]
    return "\n".join(lines) + "\n"


def render_junit(result: RunReport) -> str:
    """JUnit XML as Ant writes it (read by Jenkins, GitLab, Azure DevOps, ...): one test
    suite, one test case per gate, a failure element for each failed gate."""
    from xml.etree import ElementTree  # imported for JUnit alone

    failures = sum(g.state == "failed" for g in result.gates)
    skipped = sum(g.state == "waived" for g in result.gates)
    moment = datetime.datetime.now(datetime.UTC) if result.run is None else result.run.started_at
    now = moment.strftime("%Y-%m-%dT%H:%M:%S")
    root = ElementTree.Element("testsuites")
    suite = ElementTree.SubElement(
        root,
        "testsuite",
        name="gates",
        package="receval",
        id="0",
        timestamp=now,
        hostname=socket.gethostname() or "localhost",
        tests=str(len(result.gates)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
        time=f"{result.elapsed_seconds:.3f}",
    )
    properties = ElementTree.SubElement(suite, "properties")
    facts = [("receval_version", result.version), ("passed", str(result.passed))]
    if result.run is not None:
        run = result.run.to_dict()
        facts += [(f"run_{key}", str(run[key])) for key in ("id", "started_at", "config_hash")]
        facts += [("run_label", run["label"])] if run["label"] is not None else []
        facts += [(f"run_tag_{key}", value) for key, value in run["tags"].items()]
    for name, report in result.models.items():
        ties = ties_text(report.users)
        if ties is not None:
            facts.append(("ties" if len(result.models) == 1 else f"ties_{name}", ties))
    for name, value in facts:
        value = xml_text(value)
        ElementTree.SubElement(properties, "property", name=name, value=value)
    for gate in result.gates:
        case = ElementTree.SubElement(
            suite, "testcase", name=xml_text(gate.name), classname="receval.gates", time="0"
        )
        if gate.state == "waived":  # passed without judging: a skipped test, with the reason
            message = f"waived: {gate.waived_briefly} ({gate.waived})"
            ElementTree.SubElement(case, "skipped", message=xml_text(message))
        elif gate.state == "failed":
            failure = ElementTree.SubElement(
                case, "failure", message=xml_text(gate.describe()), type="GateFailed"
            )
            failure.text = xml_text(json.dumps(gate.to_dict(), indent=2, ensure_ascii=False))
    ElementTree.SubElement(suite, "system-out").text = summary(result.gates)
    ElementTree.SubElement(suite, "system-err").text = ""
    ElementTree.indent(root)
    text = ElementTree.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{text}\n'


def render_github(result: RunReport) -> str:
    """Workflow commands GitHub Actions turns into annotations on the run's summary page
    (as `ruff --output-format github` does): `::error title=...::...` for each failed
    gate, `::notice title=...::...` for each waived one, `::warning title=...::...` for
    each warning, and a plain summary line."""
    lines = []
    for gate in result.gates:
        if gate.state == "failed":
            title = f"receval gate failed: {gate.name}"
            lines.append(f"::error title={github_property(title)}::{github_data(gate.describe())}")
    for gate in result.gates:
        if gate.state == "waived":
            title = f"receval gate waived: {gate.name}"
            text = f"waived: {gate.waived_briefly} ({gate.waived})"
            lines.append(f"::notice title={github_property(title)}::{github_data(text)}")
    for warning in result.warnings:
        lines.append(f"::warning title=receval::{github_data(warning)}")
    for text in models_ties(result.models):
        lines.append(f"::notice title=receval ties::{github_data(text)}")
    metrics = next(iter(result.models.values())).metrics
    verdict = summary(result.gates)
    lines.append(f"receval: {len(metrics)} metrics, {verdict}, {len(result.warnings)} warnings")
    return "\n".join(lines) + "\n"
