"""The command line: parsing and rendering only; the work is in plain functions.

Exit codes: 0 ok, 1 a gate failed, 2 bad usage, config or input, 3 internal error.
"""

from __future__ import annotations

import io
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from receval_cli import __version__
from receval_cli.config import load_config
from receval_cli.errors import EXIT_GATE_FAILED, RecEvalError
from receval_cli.evaluate import evaluate
from receval_cli.metrics import REGISTRY
from receval_cli.output import check_destination, write_atomic
from receval_cli.report import Report, render_json, render_table

app = typer.Typer(
    name="receval",
    help="Exact, fast offline evaluation of recommender systems.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


class Format(StrEnum):
    table = "table"
    json = "json"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"receval {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Exact, fast offline evaluation of recommender systems."""


def _fail(error: RecEvalError) -> typer.Exit:
    message = Text("error: ", style="bold red") + Text(str(error))
    Console(stderr=True, highlight=False, soft_wrap=True, emoji=False).print(message)
    return typer.Exit(error.exit_code)


@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="The YAML config file.")],
    format: Annotated[
        Format | None,
        typer.Option("--format", "-f", help="table or json (default: the config's output.format)."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the report to this file (atomically)."),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print nothing when writing to --output.")
    ] = False,
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            help="Conventions of a well-known tool (e.g. trec_eval); the config's other "
            "conventions still override single settings.",
        ),
    ] = None,
) -> None:
    """Evaluate the predictions in CONFIG; exit 1 when a gate fails."""
    try:
        loaded = load_config(config, preset)
        chosen = format.value if format is not None else loaded.config.output.format
        destination = output
        if destination is None and loaded.config.output.path is not None:
            destination = loaded.resolve_path(loaded.config.output.path)
        if destination is not None:
            check_destination(destination)
        report = evaluate(loaded)
        table_shown = False
        if destination is not None:
            write_atomic(destination, _render(report, chosen, width=100))
            table_shown = not quiet
        elif chosen == "json":
            sys.stdout.write(render_json(report))
        else:
            table_shown = True
        if table_shown:
            _print_table(report)
    except RecEvalError as error:
        raise _fail(error) from None
    if not report.passed:
        if not table_shown:  # the table already lists the failures
            stderr = Console(stderr=True, highlight=False, soft_wrap=True)
            for gate in report.gates:
                if not gate.passed:
                    stderr.print(f"gate failed: {gate.describe()}", markup=False)
        raise typer.Exit(EXIT_GATE_FAILED)


def _print_table(report: Report) -> None:
    Console(highlight=False).print(render_table(report))


def _render(report: Report, chosen: str, width: int) -> str:
    if chosen == "json":
        return render_json(report)
    buffer = io.StringIO()
    Console(file=buffer, width=width, no_color=True, highlight=False).print(render_table(report))
    return buffer.getvalue()


@app.command("metrics")
def list_metrics() -> None:
    """List every metric with its formula and parameters."""
    table = Table(title="receval metrics", title_justify="left", show_lines=True)
    table.add_column("name")
    table.add_column("definition")
    table.add_column("parameters (default)")
    for definition in REGISTRY.values():
        name = definition.name + ("@k" if definition.takes_cutoff else "")
        if definition.aliases:
            name += "\n(" + ", ".join(definition.aliases) + ")"
        params = "\n".join(
            f"{p.name}: {p.doc} ({'conventions.' + p.convention if p.convention else 'required'})"
            for p in definition.params
        )
        table.add_row(Text(name), Text(f"{definition.summary}\n{definition.formula}"), Text(params))
    Console(highlight=False).print(table)


def main() -> None:
    app()
