"""Every output format of every document receval writes, one table per document: each
format's renderer, the file extensions that pick it, the extra it needs, and what the
help says of it.

The documents: the run's report (`receval run`), the comparison of saved reports
(`receval compare`), the history's trends (`receval history`), the validation's health
summary (`receval validate`), the inspection of a few users (`receval inspect`) and the
metric listing (`receval metrics`). Everything else reads the formats here: the command
line's `--format` choices (the StrEnums below), the config's `output.format` type
(config/model.py), the extension map of `-o` (report/destinations.py), the help texts,
the generated table of formats in docs/reports.md (cli/doc_blocks.py), and the dispatch
(report/renderers.py imports a format's renderer when it is written).

Kept to the standard library, with each renderer named by its import path, so that
`receval --version`, `--help` and completion build the command line without loading
polars, rich or the metric registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, TypeAlias, cast

_REPORT = "receval_cli.report."


@dataclass(frozen=True)
class FormatSpec:
    """One format of one document.

    `renderer` is "module:function" under receval_cli.report: the function takes the
    document (and, for a `terminal` format, the width in columns) and returns the text
    written. `extensions` are the file extensions that pick this format for `-o`; `extra`
    is the optional dependencies' extra it needs (pyproject.toml), None for none; `note`
    is what the `--format` help says after its name."""

    name: str
    renderer: str
    extensions: tuple[str, ...] = ()
    extra: str | None = None
    note: str = ""
    terminal: bool = False  # what the terminal shows; the renderer takes the width


def _table(*specs: FormatSpec) -> Mapping[str, FormatSpec]:
    """A document's formats by name, in the order `--format` lists them (the first is the
    default)."""
    return {spec.name: spec for spec in specs}


def _row(
    name: str,
    module: str,
    function: str,
    *extensions: str,
    extra: str | None = None,
    note: str = "",
    terminal: bool = False,
) -> FormatSpec:
    return FormatSpec(name, f"{_REPORT}{module}:{function}", extensions, extra, note, terminal)


# `receval run`: a RunReport
RUN_FORMATS = _table(
    _row("table", "render", "render_text", ".txt", terminal=True),
    _row("json", "render", "render_json", ".json"),
    _row("markdown", "render", "render_markdown", ".md", ".markdown"),
    _row("csv", "render", "render_csv", ".csv"),
    _row("junit", "render", "render_junit", ".xml"),
    _row("html", "html", "render_html", ".html", ".htm", extra="html"),
    _row("github", "render", "render_github", note="workflow annotations"),
    _row("latex", "latex", "render_latex", ".tex", note="a table for a paper"),
)

# `receval compare`: a ReportComparison
COMPARISON_FORMATS = _table(
    _row("table", "report_comparison_render", "comparison_text", ".txt", terminal=True),
    _row("json", "report_comparison_render", "comparison_json", ".json"),
    _row("markdown", "report_comparison_render", "render_comparison_markdown", ".md", ".markdown"),
    _row("csv", "report_comparison_render", "render_comparison_csv", ".csv"),
)

# `receval history`: a HistoryPage (results/series.py)
HISTORY_FORMATS = _table(
    _row("table", "history_pages", "history_text", ".txt", terminal=True),
    _row("json", "history_pages", "history_json", ".json"),
    _row("markdown", "history_pages", "history_markdown", ".md", ".markdown"),
    _row("csv", "history_pages", "history_csv", ".csv"),
    _row("html", "history_pages", "history_html", ".html", ".htm", extra="html"),
)

# `receval validate`: the health summary (a dict, analysis/validate.py)
VALIDATION_FORMATS = _table(
    _row("table", "validation_tables", "health_text", terminal=True, note="a summary"),
    _row("json", "validation_tables", "health_json", note="for scripts"),
)

# `receval inspect`: an Inspection (results/inspection.py)
INSPECTION_FORMATS = _table(
    _row("table", "inspection_panels", "panels_text", terminal=True, note="panels"),
    _row("json", "inspection_panels", "render_inspection_json"),
)

# `receval metrics`: the registry's metrics (the document: one metric's name, or None)
LISTING_FORMATS = _table(
    _row("table", "metric_listing", "listing_text", terminal=True, note="default"),
    _row("json", "metric_listing", "listing_json", note="one document, for tools"),
    _row("markdown", "metric_listing", "listing_markdown", note="a GFM table"),
)

# each command that takes --format, in the order the docs list them, and its document's table
DOCUMENTS: Mapping[str, Mapping[str, FormatSpec]] = {
    "run": RUN_FORMATS,
    "compare": COMPARISON_FORMATS,
    "history": HISTORY_FORMATS,
    "validate": VALIDATION_FORMATS,
    "inspect": INSPECTION_FORMATS,
    "metrics": LISTING_FORMATS,
}

# what each extra installs (pyproject.toml's optional dependencies) that a format or the
# MLflow tracking needs
EXTRA_MODULES = {
    "html": ("matplotlib",),
    # not a format's: `tracking: {mlflow: ...}` (report/mlflow_target.py)
    "mlflow": ("mlflow", "sqlalchemy", "alembic"),
}


def extensions(table: Mapping[str, FormatSpec]) -> dict[str, str]:
    """A document's file extensions, each with the format it picks."""
    return {extension: spec.name for spec in table.values() for extension in spec.extensions}


def choices_text(table: Mapping[str, FormatSpec]) -> str:
    """The formats as the help lists them: "table, json (for scripts) or csv"."""
    named = [f"{s.name} ({s.note})" if s.note else s.name for s in table.values()]
    return named[0] if len(named) == 1 else f"{', '.join(named[:-1])} or {named[-1]}"


def _choice(name: str, table: Mapping[str, FormatSpec]) -> type[StrEnum]:
    return cast(type[StrEnum], StrEnum(name, [(each, each) for each in table]))


# The `--format` choices (typer takes an Enum), one member per row of the table. mypy
# cannot read members made at run time: to it each is a StrEnum.
if TYPE_CHECKING:
    Format: TypeAlias = StrEnum
    CompareFormat: TypeAlias = StrEnum
    HistoryFormat: TypeAlias = StrEnum
    ValidateFormat: TypeAlias = StrEnum
    InspectFormat: TypeAlias = StrEnum
    ListingFormat: TypeAlias = StrEnum
else:
    Format = _choice("Format", RUN_FORMATS)
    CompareFormat = _choice("CompareFormat", COMPARISON_FORMATS)
    HistoryFormat = _choice("HistoryFormat", HISTORY_FORMATS)
    ValidateFormat = _choice("ValidateFormat", VALIDATION_FORMATS)
    InspectFormat = _choice("InspectFormat", INSPECTION_FORMATS)
    ListingFormat = _choice("ListingFormat", LISTING_FORMATS)
