"""The command line: parsing and rendering only; the work is in plain functions.

Exit codes: 0 ok, 1 a gate failed, 2 bad usage, config or input, 3 internal error.
"""

from __future__ import annotations

import io
import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from receval_cli import __version__
from receval_cli.catalog import metric_detail, metric_table
from receval_cli.config import PredictionsConfig, load_config
from receval_cli.conventions import Conventions
from receval_cli.convert import trec_run, write_trec_run
from receval_cli.errors import EXIT_GATE_FAILED, RecEvalError, UsageError
from receval_cli.evaluate import evaluate
from receval_cli.io import read_predictions
from receval_cli.metrics import SpecError
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


@app.command()
def convert(
    source: Annotated[Path, typer.Argument(help="A predictions file (CSV, Parquet, JSONL, ...).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The TREC run to write.")],
    file_format: Annotated[
        str | None, typer.Option("--format", help="csv, tsv, parquet, jsonl or trec.")
    ] = None,
    user: Annotated[str, typer.Option(help="The user (query) column.")] = "user",
    item: Annotated[str, typer.Option(help="The item (document) column.")] = "item",
    score: Annotated[str | None, typer.Option(help="The score column.")] = None,
    rank: Annotated[str | None, typer.Option(help="The rank column.")] = None,
    items: Annotated[str | None, typer.Option(help="A list column of ranked items.")] = None,
    separator: Annotated[str | None, typer.Option(help="CSV field separator.")] = None,
    tie_break: Annotated[
        str, typer.Option(help="item_desc, item_asc or input_order.")
    ] = "item_desc",
    tag: Annotated[str, typer.Option(help="The run tag (last field).")] = "receval",
) -> None:
    """Write a predictions file as a TREC run (`query Q0 doc rank score tag`)."""
    try:
        config = PredictionsConfig.model_validate(
            {
                "path": str(source),
                "format": file_format,
                "separator": separator,
                "columns": {
                    "user": user,
                    "item": item,
                    "score": score,
                    "rank": rank,
                    "items": items,
                },
            }
        )
        tie = Conventions.model_validate({"tie_break": tie_break}).tie_break
        check_destination(output)
        run = trec_run(read_predictions(config, source), tie, tag)
        write_atomic(output, lambda handle: write_trec_run(run, handle))
    except ValidationError as error:
        raise _fail(UsageError(_option_error(error))) from None
    except RecEvalError as error:
        error.args = (_as_options(str(error)),)
        raise _fail(error) from None
    Console(stderr=True, highlight=False).print(
        f"wrote {run.height} lines for {run.get_column('user').n_unique()} users to {output}",
        markup=False,
    )


_CONFIG_TO_OPTIONS = (
    (re.compile(r"Fix predictions\.path in the config \([^)]*\)\."), "Check the path."),
    (re.compile(r"predictions\.path"), "the SOURCE argument"),
    (re.compile(r"predictions\.columns\.(\w+)"), r"--\1"),
    (re.compile(r"predictions\.columns"), "--score, --rank or --items"),
    (re.compile(r"predictions\.(format|separator)"), r"--\1"),
)


def _as_options(message: str) -> str:
    """A reader's message names config keys; `convert` takes command-line options."""
    for pattern, replacement in _CONFIG_TO_OPTIONS:
        message = pattern.sub(replacement, message)
    return message


def _option_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"option {where}: {str(first['msg']).removeprefix('Value error, ')}"


@app.command("metrics")
def list_metrics(
    name: Annotated[str | None, typer.Argument(help="Show this one metric in full.")] = None,
) -> None:
    """List every metric with its formula and parameters, or show one in full."""
    try:
        shown = metric_table() if name is None else metric_detail(name)
    except SpecError as error:
        raise _fail(UsageError(str(error))) from None
    Console(highlight=False).print(shown)


def main() -> None:
    app()
