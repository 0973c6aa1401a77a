"""`receval compare`: saved JSON reports side by side, with deltas against a baseline.

Nothing is evaluated again: each report's metric values (and confidence intervals) are
read from the JSON that `receval run --format json` wrote. A report of one model gives one
column named by its file stem; of several models, one column per model, `STEM:MODEL`. Both
JSON shapes are read: `models.NAME.metrics` (every report since 0.2) and the flat `metrics`
of a one-model report written before.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from receval_cli.choices import CompareFormat
from receval_cli.console import plain_text, shown
from receval_cli.errors import InputError, UsageError, did_you_mean
from receval_cli.escaping import csv_cell, markdown_code, markdown_text
from receval_cli.evaluation.fingerprints import truth_identity
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.report.comparability import (
    conventions_differ,
    conventions_error,
    describe_differences,
    truths_warning,
)
from receval_cli.report.table import format_value

_HOW_TO_WRITE = "Write one with `receval run CONFIG --format json --output PATH`."
_MISSING = "—"


@dataclass(frozen=True)
class Column:
    """One model's numbers from one saved report."""

    name: str
    path: Path
    metrics: dict[str, float | None]
    intervals: dict[str, tuple[float, float]]
    conventions: dict[str, Any] | None
    truth: dict[str, Any] | None = None  # fingerprints.truth_identity of its report


@dataclass(frozen=True)
class Cell:
    """One column's value of one metric and its difference from the baseline's."""

    value: float | None  # None: no value (null in the report)
    low: float | None = None
    high: float | None = None
    delta: float | None = None
    relative_delta: float | None = None

    @property
    def interval(self) -> list[float] | None:
        if self.low is None or self.high is None:
            return None
        return [self.low, self.high]

    def to_dict(self) -> dict[str, float | None]:
        return {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "delta": self.delta,
            "relative_delta": self.relative_delta,
        }


@dataclass
class ReportComparison:
    """Every metric's cells by column (None where the column lacks the metric)."""

    baseline: str
    columns: list[str]
    metrics: dict[str, dict[str, Cell | None]]
    best: dict[str, list[str]] = field(default_factory=dict)
    conventions_differ: dict[str, dict[str, Any]] = field(default_factory=dict)
    truths_differ: str | None = None  # the warning when the ground truths differ

    @property
    def has_intervals(self) -> bool:
        cells = [c for row in self.metrics.values() for c in row.values() if c is not None]
        return any(c.interval is not None for c in cells)

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "columns": self.columns,
            "metrics": {
                metric: {
                    name: None if cell is None else cell.to_dict() for name, cell in row.items()
                }
                for metric, row in self.metrics.items()
            },
            "best": self.best,
            "conventions_differ": self.conventions_differ,
            "warnings": comparison_warnings(self),
        }


# ---------------------------------------------------------------------------- loading


def compare_reports(
    paths: list[Path],
    baseline: str | None,
    metrics: list[str],
    allow_different_conventions: bool = False,
) -> ReportComparison:
    """Read the reports and compare every column with the baseline column; reports of
    different conventions are refused unless `allow_different_conventions`."""
    if len(paths) < 2:
        given = f" ({paths[0]})" if paths else ""
        fix = "Pass two or more JSON reports: receval compare A.json B.json"
        raise UsageError(
            f"compare needs at least two saved reports, got {len(paths)}{given}. {fix}",
            key=None if paths else "compare",  # no report: the command's arguments
            path=paths[0] if paths else None,
            found=[str(path) for path in paths],
            fix=fix,
        )
    columns = unique_names([column for path in paths for column in load_columns(path)])
    chosen = _baseline(columns, baseline)
    shown = _metrics(columns, metrics)
    differ = conventions_differ({c.name: c.conventions for c in columns})
    if differ and not allow_different_conventions:
        raise conventions_error(differ, "the reports", paths[0])
    rows = {metric: _row(metric, columns, chosen) for metric in shown}
    return ReportComparison(
        baseline=chosen.name,
        columns=[c.name for c in columns],
        metrics=rows,
        best={metric: best_columns(metric, row) for metric, row in rows.items()},
        conventions_differ=differ,
        truths_differ=truths_warning({c.name: c.truth for c in columns}),
    )


def load_columns(path: Path) -> list[Column]:
    """The columns of one saved report: one, or one per model."""
    saved = read_saved_report(path)
    several = len(saved.blocks()) > 1
    return [
        Column(
            f"{path.stem}:{name}" if several else path.stem,
            path,
            dict(block.metrics),
            dict(block.confidence.intervals) if block.confidence is not None else {},
            saved.conventions,
            truth_identity(block.inputs),
        )
        for name, block in saved.blocks().items()
    ]


FiniteNumber = Annotated[float, Field(strict=True, allow_inf_nan=False)]


class SavedConfidence(BaseModel):
    """A saved report's confidence block: what compare reads of it (the intervals)."""

    model_config = ConfigDict(extra="ignore")
    intervals: dict[str, tuple[FiniteNumber, FiniteNumber]] = {}


class SavedModel(BaseModel):
    """One model's part of a saved report: its metric values and intervals."""

    model_config = ConfigDict(extra="ignore")
    metrics: dict[str, FiniteNumber | None]  # null: no value (auc with one class)
    confidence: SavedConfidence | None = None
    inputs: dict[str, Any] | None = None  # the fingerprints (the ground truth's hash)


class SavedReport(BaseModel):
    """A saved JSON report, as `receval compare` and `--baseline-report` read it: its
    models' blocks (`models.NAME.metrics`), or the flat `metrics` of a one-model report
    written before receval 0.2. Everything else a report holds is ignored; conventions of
    another shape than a mapping count as none."""

    model_config = ConfigDict(extra="ignore")
    metrics: dict[str, FiniteNumber | None] | None = None
    confidence: SavedConfidence | None = None
    models: dict[str, SavedModel] | None = None
    inputs: dict[str, Any] | None = None  # a flat report's (before 0.2)
    conventions: dict[str, Any] | None = None
    baseline: str | None = None  # comparisons.baseline of a several-model report

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not ("metrics" in data or "models" in data):
            raise ValueError("no 'metrics' (nor 'models')")
        found = dict(data)
        if not isinstance(found.get("conventions"), dict):
            found.pop("conventions", None)
        models = found.get("models")
        for block in [found, *(models.values() if isinstance(models, dict) else [])]:
            if isinstance(block, dict) and not isinstance(block.get("inputs"), dict):
                block.pop("inputs", None)  # fingerprints of another shape: none
        comparisons = found.get("comparisons")
        baseline = comparisons.get("baseline") if isinstance(comparisons, dict) else None
        found["baseline"] = baseline if isinstance(baseline, str) else None
        if "models" in found:
            if isinstance(found["models"], dict) and not found["models"]:
                raise ValueError("'models' holds no model")
            found.pop("metrics", None)
        return found

    def blocks(self) -> dict[str, SavedModel]:
        """Each model's block (a flat report of before 0.2: one, named "model")."""
        if self.models is not None:
            return self.models
        assert self.metrics is not None
        flat = SavedModel(metrics=self.metrics, confidence=self.confidence, inputs=self.inputs)
        return {"model": flat}


def _saved_error(error: ValidationError, path: Path, role: str) -> InputError:
    """A saved report that does not fit SavedReport, named by the first key at fault."""
    first = error.errors()[0]
    location = [str(part) for part in first["loc"]]
    kind = first["type"]
    fix = _HOW_TO_WRITE
    if not location:  # the shape check of the whole document
        reason = str(first.get("ctx", {}).get("error", first["msg"]))
        if "holds no model" in reason:
            return InputError(f"{role} {path}: {reason}. {fix}", key="models", path=path, fix=fix)
        return InputError(
            f"{role} {path} has {reason}: it is not a receval JSON report. {fix}",
            key="metrics",
            path=path,
            fix=fix,
        )
    if "intervals" in location and len(location) >= 3:
        key = ".".join(location[:3])
        if kind in ("tuple_type", "too_short", "too_long", "list_type", "missing"):
            found = first.get("input")
            return InputError(
                f"{role} {path}: {key} is {json.dumps(found)}, not a [low, high] pair. {fix}",
                key=key,
                path=path,
                found=_json_safe(found),
                fix=fix,
            )
        location = location[:3]
    key = ".".join(location)
    if location[-1] == "metrics" or kind in ("dict_type", "missing"):
        return InputError(
            f"{role} {path}: {key} is missing or not a mapping of metric names to values; "
            f"it is not a receval JSON report. {fix}",
            key=key,
            path=path,
            found=None if kind == "missing" else _json_safe(first.get("input")),
            fix=fix,
        )
    found = first.get("input")
    return InputError(
        f"{role} {path}: {key} is {json.dumps(found)}, not a finite number; it "
        f"is not a receval JSON report. {fix}",
        key=key,
        path=path,
        found=_json_safe(found),
        fix=fix,
    )


def _json_safe(value: Any) -> Any:
    """A value read from a saved report, as a field: NaN and infinities (which JSON
    does not hold) as the text the report wrote them with."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return json.dumps(value)
    return value


def read_saved_report(path: Path, role: str = "report") -> SavedReport:
    """A saved JSON report (for `compare` and `--baseline-report`), read through the
    SavedReport model, or an InputError naming `role`, the path and the key at fault.
    Nesting too deep for Python and numbers too long to convert are refused as not a
    report."""
    fix = _HOW_TO_WRITE
    if path.is_dir():
        fix = f"name a JSON report file, e.g. {path / 'report.json'}."
        raise InputError(f"{role} {path} is a folder; {fix}", path=path, found="a folder", fix=fix)
    if not path.exists():
        raise InputError(
            f"{role} {path} does not exist. Check the path. {fix}",
            path=path,
            found="no such file",
            fix=fix,
        )
    try:
        with path.open("rb") as handle:
            raw = handle.read(_MAX_REPORT_BYTES + 1)
    except OSError as error:
        raise InputError(
            f"{role} {path} cannot be read: {error.strerror}.", path=path, found=error.strerror
        ) from None
    if len(raw) > _MAX_REPORT_BYTES:
        raise InputError(
            f"{role} {path} is larger than {_MAX_REPORT_BYTES // 1_000_000} MB: not a receval "
            f"JSON report. {fix}",
            path=path,
            found=len(raw),
            fix=fix,
        )
    try:
        data = json.loads(raw.decode("utf-8"))  # NaN parses; saved_number names its key
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(
            f"{role} {path} is not JSON ({error}). {fix}", path=path, found=str(error), fix=fix
        ) from None
    except (ValueError, RecursionError) as error:  # a 5000-digit number, deep nesting
        reason = "it nests too deeply" if isinstance(error, RecursionError) else str(error)
        raise InputError(
            f"{role} {path}: {reason[:200]}; it is not a receval JSON report. {fix}",
            path=path,
            found=reason[:200],
            fix=fix,
        ) from None
    try:
        return SavedReport.model_validate(data)
    except ValidationError as error:
        raise _saved_error(error, path, role) from None


_MAX_REPORT_BYTES = 100_000_000


def unique_names(columns: list[Column]) -> list[Column]:
    """Rename repeated column names: the second `a` becomes `a#2`, the third `a#3`."""
    taken: set[str] = set()
    renamed: list[Column] = []
    for column in columns:
        name, count = column.name, 1
        while name in taken:
            count += 1
            name = f"{column.name}#{count}"
        taken.add(name)
        renamed.append(dataclasses.replace(column, name=name))
    return renamed


def _baseline(columns: list[Column], name: str | None) -> Column:
    if name is None:
        return columns[0]
    for column in columns:
        if column.name == name:
            return column
    names = [c.name for c in columns]
    raise UsageError(
        f"--baseline {name} names no column; the columns are {', '.join(names)}."
        f"{did_you_mean(name, names)}",
        key="--baseline",
        found=name,
    )


def _metrics(columns: list[Column], wanted: list[str]) -> list[str]:
    """Every metric of any report in first-seen order, or only the wanted ones."""
    present = list(dict.fromkeys(m for column in columns for m in column.metrics))
    for metric in wanted:
        if metric not in present:
            raise UsageError(
                f"--metric {metric}: no report has it; the reports' metrics are "
                f"{', '.join(present)}.{did_you_mean(metric, present)}",
                key="--metric",
                found=metric,
            )
    return [m for m in present if m in wanted] if wanted else present


# -------------------------------------------------------------------------- comparing


def _row(metric: str, columns: list[Column], baseline: Column) -> dict[str, Cell | None]:
    reference = baseline.metrics.get(metric)
    row: dict[str, Cell | None] = {}
    for column in columns:
        value = column.metrics.get(metric)
        if value is None:
            row[column.name] = None
            continue
        low, high = column.intervals.get(metric, (None, None))
        delta = relative = None
        if column is not baseline and reference is not None:
            delta = value - reference
            relative = delta / abs(reference) if reference != 0 else None
        row[column.name] = Cell(value, low, high, delta, relative)
    return row


def higher_is_better(metric: str) -> bool:
    """The metric's direction from the registry; a name it does not know: higher."""
    try:
        return lookup(MetricSpec.parse(metric).name).higher_is_better
    except ValueError:  # not a spec, or not a known metric
        return True


def best_columns(metric: str, row: dict[str, Cell | None]) -> list[str]:
    """The column(s) with the best value; none when fewer than two columns have one."""
    values = {
        name: cell.value
        for name, cell in row.items()
        if cell is not None and cell.value is not None
    }
    if len(values) < 2:
        return []
    target = max(values.values()) if higher_is_better(metric) else min(values.values())
    return [name for name, value in values.items() if value == target]


# -------------------------------------------------------------------------- rendering


def render_comparison(comparison: ReportComparison, fmt: CompareFormat, width: int = 100) -> str:
    if fmt == CompareFormat.json:
        return json.dumps(comparison.to_dict(), indent=2, allow_nan=False) + "\n"
    if fmt == CompareFormat.markdown:
        return render_markdown(comparison)
    if fmt == CompareFormat.csv:
        return render_csv(comparison)
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
    for warning in comparison_warnings(comparison):
        parts.append(shown(f"warning: {warning}", style="bold yellow"))
    return Group(*parts)


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


def comparison_warnings(comparison: ReportComparison) -> list[str]:
    """The comparison's warnings: conventions that differ (allowed with
    --allow-different-conventions) and ground truths that differ."""
    found = []
    if comparison.conventions_differ:
        listed = describe_differences(comparison.conventions_differ)
        found.append(
            f"the reports' conventions differ ({listed}); deltas across different "
            "conventions are not comparable."
        )
    if comparison.truths_differ is not None:
        found.append(comparison.truths_differ)
    return found


def render_markdown(comparison: ReportComparison) -> str:
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


def render_csv(comparison: ReportComparison) -> str:
    """Long format: one line per (column, metric) that has a value; values unrounded,
    empty where there is no interval or no delta (the baseline's own lines)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(_CSV_FIELDS), lineterminator="\n")
    writer.writeheader()
    for name in comparison.columns:
        for metric, row in comparison.metrics.items():
            cell = row[name]
            if cell is None:
                continue
            values = {"column": name, "metric": metric, **cell.to_dict()}
            writer.writerow({k: "" if v is None else csv_cell(v) for k, v in values.items()})
    return buffer.getvalue()
