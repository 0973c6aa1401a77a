"""The command line: parsing and rendering only; the work is in plain functions.

Exit codes: 0 ok, 1 a gate failed, 2 bad usage, config or input, 3 internal error,
130 / 143 stopped by SIGINT / SIGTERM.
"""

from __future__ import annotations

import dataclasses
import re
import signal
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.text import Text
from typer.core import TyperGroup

from receval_cli import __version__, console, signals
from receval_cli.catalog import metric_detail, metric_table
from receval_cli.config import ConfidenceConfig, LoadedConfig, PredictionsConfig, load_config
from receval_cli.conventions import Conventions
from receval_cli.convert import trec_run, write_trec_run
from receval_cli.errors import EXIT_GATE_FAILED, RecEvalError, UsageError
from receval_cli.init_config import init_command
from receval_cli.input_changes import input_files, watching
from receval_cli.inspect_users import inspect_command
from receval_cli.io import read_predictions
from receval_cli.metrics import SpecError
from receval_cli.models import evaluate_config
from receval_cli.output import (
    check_destination,
    forget_written,
    text_writer,
    write_all_atomic,
    write_atomic,
    written,
)
from receval_cli.render import Result, per_user_values, render, table
from receval_cli.saved_reports import (
    CompareFormat,
    choose_format,
    compare_reports,
    comparison_table,
    conventions_warning,
    render_comparison,
)
from receval_cli.schema import schema_command
from receval_cli.validate import validate_command


class _Commands(TyperGroup):
    """The commands; a KeyboardInterrupt (SIGINT) leaves them as `Interrupted`, which
    `main` reports (Typer would turn it into a silent exit 130)."""

    def invoke(self, ctx: Any) -> Any:  # a click Context
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise signals.interrupted(signal.SIGINT) from None


app = typer.Typer(
    cls=_Commands,
    name="receval",
    help="Exact, fast offline evaluation of recommender systems.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


class Engine(StrEnum):
    auto = "auto"
    in_memory = "in_memory"
    streaming = "streaming"
    spark = "spark"
    gpu = "gpu"


class Format(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"
    csv = "csv"
    junit = "junit"
    html = "html"


# an output file's format from its extension (--output may be given several times)
_EXTENSIONS = {
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".csv": "csv",
    ".xml": "junit",
    ".txt": "table",
    ".html": "html",
    ".htm": "html",
}


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
    no_color: console.NoColorOption = False,
) -> None:
    """Exact, fast offline evaluation of recommender systems."""
    console.reset()
    console.configure(no_color=no_color)


def _fail(error: RecEvalError) -> typer.Exit:
    message = Text("error: ", style="bold red") + Text(str(error))
    console.err().print(message)
    return typer.Exit(error.exit_code)


@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="The YAML config file.")],
    format: Annotated[
        Format | None,
        typer.Option(
            "--format",
            "-f",
            help="table, json, markdown, csv, junit or html (default: the config's output.format).",
        ),
    ] = None,
    output: Annotated[
        list[Path] | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the report to this file (atomically). Repeat it for several files; "
            "each file's format then comes from its extension (.json, .md, .csv, .xml for "
            "JUnit, .txt for the table, .html).",
        ),
    ] = None,
    per_user: Annotated[
        Path | None,
        typer.Option(
            "--per-user",
            help="Write every per-user metric value (with the model) to this Parquet file.",
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Print nothing when writing to --output, and no progress display.",
        ),
    ] = False,
    verbose: console.VerboseOption = False,
    no_color: console.NoColorOption = False,
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            help="Conventions of a well-known tool (e.g. trec_eval); the config's other "
            "conventions still override single settings.",
        ),
    ] = None,
    ci: Annotated[
        bool,
        typer.Option(
            "--ci",
            help="Confidence intervals for every per-user metric (the config's confidence "
            "settings, else 95% bootstrap, 1000 resamples).",
        ),
    ] = False,
    engine: Annotated[
        Engine | None,
        typer.Option(
            "--engine",
            help="auto, in_memory, streaming, spark or gpu (default: the config's engine).",
        ),
    ] = None,
    baseline_report: Annotated[
        Path | None,
        typer.Option(
            "--baseline-report",
            help="Compare with the metrics of a saved JSON report instead of a baseline model.",
        ),
    ] = None,
) -> None:
    """Evaluate the predictions in CONFIG; exit 1 when a gate fails."""
    console.configure(no_color=no_color, quiet=quiet, verbose=verbose)
    try:
        with console.live_stages():
            report, table_shown = _run(
                config, format, output, per_user, quiet, preset, ci, engine, baseline_report
            )
    except RecEvalError as error:
        raise _fail(error) from None
    if table_shown:
        _print_table(report)
    elif not quiet:  # the table shows them; other formats go to files or pipes
        for warning in report.warnings:
            console.err().print(f"warning: {warning}", markup=False, style="yellow")
    if not report.passed:
        if not table_shown:  # the table already lists the failures
            stderr = console.err()
            for gate in report.gates:
                if not gate.passed:
                    stderr.print(f"gate failed: {gate.describe()}", markup=False)
        raise typer.Exit(EXIT_GATE_FAILED)


def _run(
    config: Path,
    format: Format | None,
    output: list[Path] | None,
    per_user: Path | None,
    quiet: bool,
    preset: str | None,
    ci: bool,
    engine: Engine | None,
    baseline_report: Path | None,
) -> tuple[Result, bool]:
    """Evaluate, write the output files, print any non-table report on stdout; return the
    report and whether the table is still to be shown."""
    with console.stage("config"):
        loaded = load_config(config, preset)
        if engine is not None:
            chosen_engine = loaded.config.model_copy(update={"engine": engine.value})
            loaded = dataclasses.replace(loaded, config=chosen_engine)
        chosen = format.value if format is not None else loaded.config.output.format
        destinations = _destinations(output or [], loaded, format)
        for destination in [*destinations, *([per_user] if per_user else [])]:
            check_destination(destination)
    confidence = None
    if ci:
        confidence = loaded.config.confidence or ConfidenceConfig()
    with watching(input_files(loaded)):  # a file rewritten meanwhile: exit 2, no report
        report = evaluate_config(loaded, confidence, baseline_report)
    with console.stage("report"):
        writers: dict[Path, Callable[[Path], None]] = {}
        if per_user is not None:
            writers[per_user] = per_user_values(report).write_parquet
        for path, fmt in destinations.items():
            writers[path] = text_writer(render(report, fmt, width=100))
        write_all_atomic(writers)  # every file or none
        for path in writers:
            console.log(f"wrote {path}")
        if not destinations and chosen != "table":
            sys.stdout.write(render(report, chosen))
    table_shown = chosen == "table" if not destinations else not quiet
    return report, table_shown


def _destinations(
    outputs: list[Path], loaded: LoadedConfig, given: Format | None
) -> dict[Path, str]:
    """Each output file and its format: with one file, --format (else the extension, else
    the config's output.format); with several, each file's extension."""
    if not outputs and loaded.config.output.path is not None:
        outputs = [loaded.resolve_path(loaded.config.output.path)]
    if len(outputs) == 1:
        (path,) = outputs
        by_extension = _EXTENSIONS.get(path.suffix.lower())
        fmt = given.value if given is not None else by_extension or loaded.config.output.format
        return {path: fmt}
    formats: dict[Path, str] = {}
    for path in outputs:
        found = _EXTENSIONS.get(path.suffix.lower())
        if found is None:
            raise UsageError(
                f"output {path}: with several --output files each format comes from the "
                f"extension, and '{path.suffix or '(none)'}' is not one of "
                f"{', '.join(_EXTENSIONS)}. Rename the file."
            )
        formats[path] = found
    return formats


def _print_table(report: Result) -> None:
    console.out().print(table(report))


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
    console.err().print(
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


@app.command()
def compare(
    reports: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Two or more saved JSON reports (receval run CONFIG --format json --output PATH).",
            show_default=False,
        ),
    ] = None,
    format: Annotated[
        CompareFormat | None,
        typer.Option(
            "--format",
            "-f",
            help="table, json, markdown or csv (default: the --output file's extension, "
            "else table).",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the comparison to this file (atomically)."),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="The column the deltas are against (default: the first). A report's column "
            "is its file stem, or STEM:MODEL for each model of a several-model report.",
        ),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option("--metric", "-m", help="Show only this metric (repeat it for several)."),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print nothing when writing to --output.")
    ] = False,
) -> None:
    """Saved reports side by side, with deltas against a baseline (nothing is re-evaluated)."""
    try:
        chosen = choose_format(format, output)
        if output is not None:
            check_destination(output)
        comparison = compare_reports(reports or [], baseline, metric or [])
        if output is not None:
            write_atomic(output, render_comparison(comparison, chosen))
    except RecEvalError as error:
        raise _fail(error) from None
    table_shown = not quiet if output is not None else chosen == CompareFormat.table
    if table_shown:
        console.out().print(comparison_table(comparison))
    elif output is None:
        sys.stdout.write(render_comparison(comparison, chosen))
    warning = conventions_warning(comparison)
    if warning and not table_shown:  # the table shows it below; the other formats may not
        console.err().print(warning, markup=False)


@app.command("metrics")
def list_metrics(
    name: Annotated[str | None, typer.Argument(help="Show this one metric in full.")] = None,
) -> None:
    """List every metric with its formula and parameters, or show one in full."""
    try:
        shown = metric_table() if name is None else metric_detail(name)
    except SpecError as error:
        raise _fail(UsageError(str(error))) from None
    console.out().print(shown)


# commands defined in their own modules: one registration line each, below this one
app.command("init")(init_command)
app.command("schema")(schema_command)
app.command("validate")(validate_command)
app.command("inspect")(inspect_command)


def main() -> None:
    """The `receval` command. SIGINT and SIGTERM stop it with exit 130 or 143 and one line
    on stderr, leaving no partial output file."""
    signals.install()
    forget_written()
    try:
        app()
    except signals.Interrupted as stop:
        console.err().print(_interrupted(stop), markup=False)
        sys.exit(stop.exit_code)


def _interrupted(stop: signals.Interrupted) -> str:
    files = written()
    if not files:
        return (
            f"interrupted by {stop.name}: stopped; no output file was written (an earlier "
            "report at the same path is unchanged)."
        )
    return f"interrupted by {stop.name}: stopped after writing {', '.join(map(str, files))}."
