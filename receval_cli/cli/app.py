"""The command line: parsing and rendering only; the work is in plain functions.

Exit codes: 0 ok, 1 a gate failed, 2 bad usage, config or input, 3 internal error,
130 / 143 stopped by SIGINT / SIGTERM.
"""

from __future__ import annotations

import dataclasses
import errno
import io
import signal
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from typer._click.exceptions import ClickException  # typer's own click: usage errors
from typer.core import TyperCommand, TyperGroup

from receval_cli import console, signals
from receval_cli.analysis.runs import evaluate_config
from receval_cli.cli.init import init_command
from receval_cli.cli.inspect import inspect_command
from receval_cli.cli.metrics_listing import (
    ListingFormat,
    metric_detail,
    metric_listing,
    metric_table,
)
from receval_cli.cli.schema import schema_command
from receval_cli.cli.validate import validate_command
from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import LoadedConfig, load_config
from receval_cli.config.model import ConfidenceConfig, PredictionsConfig
from receval_cli.errors import (
    EXIT_BAD_INPUT,
    EXIT_GATE_FAILED,
    EXIT_INTERNAL,
    RecEvalError,
    UsageError,
)
from receval_cli.inputs.change_watch import input_files, watching
from receval_cli.inputs.convert import trec_run, write_trec_run
from receval_cli.inputs.readers import read_predictions
from receval_cli.metrics import SpecError
from receval_cli.report.destinations import (
    REPORT_EXTENSIONS,
    TABLE_EXTENSIONS,
    Destination,
    check_append,
    format_of,
    guard,
    is_stdout,
)
from receval_cli.report.per_user_table import per_user_values
from receval_cli.report.render import Result, render, table
from receval_cli.report.saved import (
    CompareFormat,
    compare_reports,
    comparison_table,
    conventions_warning,
    render_comparison,
)
from receval_cli.report.writing import (
    Content,
    check_destination,
    forget_written,
    frame_writer,
    stdout_failed,
    write_outputs,
    written,
)
from receval_cli.version import __version__
from receval_cli.wording import audience


def plain_metavars(params: list[Any], ctx: Any) -> None:
    """Help as shells show it: `--quiet` (a flag) with no `<bool>`, `--output PATH`,
    `--format FORMAT` (the choices are in its help), `CONFIG PATH`, `REPORTS PATH...`."""
    for param in params:
        if param.metavar is not None:
            continue
        shown = _plain_type(str(param.display_type_rich(ctx)))
        if getattr(param, "param_type_name", "") == "argument":
            param.metavar = str(param.name).upper()
            # typer shows an argument's type from its annotation, not from its metavar
            param.display_type_rich = lambda ctx, shown=shown: shown
        elif param.is_flag:
            param.metavar = ""
        elif "|" in shown:  # choices: the help text lists them
            param.metavar = str(param.name).upper()
        else:
            param.metavar = shown


def _plain_type(shown: str) -> str:
    """`<path>` -> PATH, `<list[Path]>` -> PATH..., `<int>` -> INTEGER."""
    bare = shown.strip("<>")
    several = bare.startswith("list[")
    name = bare.removeprefix("list[").removesuffix("]")
    if "|" not in name:
        name = _METAVARS.get(name.lower(), name.upper())
    return name + ("..." if several else "")


_METAVARS = {"path": "PATH", "str": "TEXT", "int": "INTEGER", "float": "NUMBER"}


class _PlainHelp:
    """Help with plain metavars (see plain_metavars), for a command and the group."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        plain_metavars(self.get_params(ctx), ctx)  # type: ignore[attr-defined]
        super().format_help(ctx, formatter)  # type: ignore[misc]


class _Command(_PlainHelp, TyperCommand):
    """A command whose help shows plain metavars."""


class _Commands(_PlainHelp, TyperGroup):
    """The commands; a KeyboardInterrupt (SIGINT) leaves them as `Interrupted`, which
    `main` reports (Typer would turn it into a silent exit 130)."""

    def invoke(self, ctx: Any) -> Any:  # a click Context
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise signals.interrupted(signal.SIGINT) from None
        except (typer.Exit, typer.Abort, ClickException):
            raise
        except OSError as error:
            if error.errno not in (errno.EPIPE, errno.ENOSPC):
                raise console.fail(_unexpected(error), EXIT_INTERNAL) from None
            raise console.fail(stdout_failed(error), EXIT_BAD_INPUT) from None
        except Exception as error:  # a bug: one line and exit 3, never a traceback or 1
            raise console.fail(_unexpected(error), EXIT_INTERNAL) from None


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
    github = "github"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"receval {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_version, is_eager=True, help="Print the version."
        ),
    ] = False,
    no_color: console.NoColorOption = False,
    log_format: console.LogFormatOption = None,
) -> None:
    """Exact, fast offline evaluation of recommender systems."""
    console.reset()
    console.configure(no_color=no_color, log_format=log_format)


def _unexpected(error: Exception) -> str:
    """An exception receval did not expect, as one line for the user and the bug report."""
    text = " ".join(str(error).split())
    if len(text) > 300:
        text = text[:300] + "..."
    return (
        f"internal error: {type(error).__name__}: {text or '(no message)'}. This is a bug in "
        "receval; please report it with the command, the config and a sample of the data."
    )


def _fail(error: RecEvalError) -> typer.Exit:
    return console.fail(error, error.exit_code)


OutputOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the report here (atomically); - for standard output. Repeat it for "
        "several files: each file's format comes from its extension (.json, .md, .csv, "
        ".xml for JUnit, .txt for the table, .html); --format names the format of - and of "
        "a name without a known extension.",
    ),
]
AppendOption = Annotated[
    bool,
    typer.Option(
        "--append",
        help="Add the report to the end of the --output files instead of replacing them "
        '(table, markdown, csv and github; e.g. -o "$GITHUB_STEP_SUMMARY" --append).',
    ),
]


@app.command(cls=_Command)
def run(
    config: Annotated[Path, typer.Argument(help="The YAML config file.")],
    format: Annotated[
        Format | None,
        typer.Option(
            "--format",
            "-f",
            help="table, json, markdown, csv, junit, html or github (workflow annotations); "
            "default: the --output file's extension, else the config's output.format.",
        ),
    ] = None,
    output: OutputOption = None,
    append: AppendOption = False,
    per_user: Annotated[
        Path | None,
        typer.Option(
            "--per-user",
            help="Write every per-user metric value (with the model) to this file: .parquet, "
            ".csv, .tsv or .jsonl.",
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="No progress display and no table; warnings and failed gates still go to "
            "stderr, and a report asked for with --format or --output is still written.",
        ),
    ] = False,
    verbose: console.VerboseOption = False,
    log_format: console.LogFormatOption = None,
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
    console.configure(no_color=no_color, quiet=quiet, verbose=verbose, log_format=log_format)
    request = _Request(config, format, output or [], append, per_user, quiet)
    try:
        with console.live_stages():
            report, table_shown = _run(request, preset, ci, engine, baseline_report)
    except RecEvalError as error:
        raise _fail(error) from None
    if table_shown:
        console.show(table(report))
    else:  # the table shows them; without it they go to stderr, even with --quiet
        for warning in report.warnings:
            console.warn(warning)
    if not report.passed:
        if not table_shown:  # the table already lists the failures
            for gate in report.gates:
                if not gate.passed:
                    console.emit("gate", gate.describe())
        raise typer.Exit(EXIT_GATE_FAILED)


@dataclasses.dataclass(frozen=True)
class _Request:
    """What `run` was asked to write, and where."""

    config: Path
    format: Format | None
    outputs: list[Path]
    append: bool
    per_user: Path | None
    quiet: bool


def _run(
    request: _Request,
    preset: str | None,
    ci: bool,
    engine: Engine | None,
    baseline_report: Path | None,
) -> tuple[Result, bool]:
    """Evaluate, write the outputs (files, then standard output); return the report and
    whether the table is still to be shown on stdout."""
    with console.stage("config"):
        loaded = load_config(request.config, preset)
        if engine is not None:
            chosen_engine = loaded.config.model_copy(update={"engine": engine.value})
            loaded = dataclasses.replace(loaded, config=chosen_engine)
        inputs = {request.config: "config file", **input_files(loaded)}
        if baseline_report is not None:
            inputs[baseline_report] = "--baseline-report file"
        settings = loaded.config.output
        reports = request.outputs or ([loaded.resolve_path(settings.path)] if settings.path else [])
        named = [*reports, *([request.per_user] if request.per_user else [])]
        guard(named, inputs)  # first: an input is never overwritten, whatever else is wrong
        destinations = _destinations(request, loaded)
        per_user = None
        if request.per_user is not None:
            check_destination(request.per_user)
            fmt = format_of(request.per_user, None, TABLE_EXTENSIONS, option="--per-user")
            per_user = Destination(request.per_user, fmt)
    confidence = None
    if ci:
        confidence = loaded.config.confidence or ConfidenceConfig()
    with watching(input_files(loaded)):  # a file rewritten meanwhile: exit 2, no report
        report = evaluate_config(loaded, confidence, baseline_report, per_user is not None)
    with console.stage("report"):
        contents: dict[Destination, Content] = {}
        if per_user is not None:
            contents[per_user] = frame_writer(per_user_values(report), per_user.format)
        for destination in destinations:
            if destination.path is not None or destination.format != "table":
                contents[destination] = render(report, destination.format, width=100)
        write_outputs(contents)  # every file or none, then standard output
        for destination in contents:
            if destination.path is not None:
                console.log(f"wrote {destination.path}")
    return report, _table_shown(request, destinations)


def _table_shown(request: _Request, destinations: list[Destination]) -> bool:
    """The table goes to stdout (through the console) when stdout is a table destination,
    or beside files only; --quiet drops it, except when asked for with `-o -`."""
    on_stdout = [d for d in destinations if d.path is None]
    if not on_stdout:
        return not request.quiet
    if on_stdout[0].format != "table":
        return False
    return bool(request.outputs) or not request.quiet


def _destinations(request: _Request, loaded: LoadedConfig) -> list[Destination]:
    """Each output and its format (see destinations.py): the --output files, else the
    config's output.path, else standard output in --format or the config's format."""
    given = request.format.value if request.format is not None else None
    settings = loaded.config.output
    default = given or settings.format
    if not request.outputs:
        check_append([], request.append, "the report")
        if settings.path is None:
            return [Destination(None, default)]
        configured = settings.format if "format" in settings.model_fields_set else None
        path = loaded.resolve_path(settings.path)
        check_destination(path)
        return [Destination(path, format_of(path, given or configured, REPORT_EXTENSIONS))]
    found = []
    for path in request.outputs:
        if is_stdout(path):
            found.append(Destination(None, default))
        else:
            check_destination(path)  # a folder, a missing folder: said before the format
            strict = len(request.outputs) == 1
            fmt = format_of(path, given, REPORT_EXTENSIONS, strict=strict)
            found.append(Destination(path, fmt, request.append))
    if sum(d.path is None for d in found) > 1:
        raise UsageError("--output -: standard output is named more than once; name it once.")
    check_append(found, request.append, "the report")
    return found


@app.command(cls=_Command)
def convert(
    source: Annotated[Path, typer.Argument(help="A predictions file (CSV, Parquet, JSONL, ...).")],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="The TREC run to write; - for standard output."),
    ],
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
        with audience("convert"):  # messages name the options, not config keys
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
            destination = Destination(None if is_stdout(output) else output, "trec")
            guard([output], {source: "SOURCE file"})
            if destination.path is not None:
                check_destination(destination.path)
            run = trec_run(read_predictions(config, source), tie, tag)
            text = io.StringIO()
            write_trec_run(run, text)
            write_outputs({destination: text.getvalue()})
    except ValidationError as error:
        raise _fail(UsageError(_option_error(error))) from None
    except RecEvalError as error:
        raise _fail(error) from None
    users = run.get_column("user").n_unique()
    console.note(f"wrote {run.height} lines for {users} users to {destination.name}")


def _option_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"option {where}: {str(first['msg']).removeprefix('Value error, ')}"


@app.command(cls=_Command)
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
        typer.Option(
            "--output",
            "-o",
            help="Write the comparison to this file (atomically; its format from the "
            "extension: .json, .md, .csv, .txt); - for standard output.",
        ),
    ] = None,
    append: AppendOption = False,
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
        bool,
        typer.Option(
            "--quiet", "-q", help="No table beside --output; warnings still go to stderr."
        ),
    ] = False,
) -> None:
    """Saved reports side by side, with deltas against a baseline (nothing is re-evaluated)."""
    try:
        destination = _comparison_destination(output, format, append, reports or [])
        comparison = compare_reports(reports or [], baseline, metric or [])
        if destination.path is not None or destination.format != CompareFormat.table:
            rendered = render_comparison(comparison, CompareFormat(destination.format))
            write_outputs({destination: rendered})
    except RecEvalError as error:
        raise _fail(error) from None
    if destination.path is not None:
        table_shown = not quiet
    else:
        table_shown = destination.format == CompareFormat.table
    if table_shown:
        console.show(comparison_table(comparison))
    warning = conventions_warning(comparison)
    if warning and not table_shown:  # the table shows it below; the other formats may not
        console.warn(warning.removeprefix("warning: "))


def _comparison_destination(
    output: Path | None, given: CompareFormat | None, append: bool, reports: list[Path]
) -> Destination:
    """Where the comparison goes (standard output without --output) and in which format;
    the output is checked against the saved reports it reads."""
    chosen = given.value if given is not None else None
    if output is None or is_stdout(output):
        check_append([], append, "the comparison")
        return Destination(None, chosen or CompareFormat.table)
    guard([output], dict.fromkeys(reports, "saved report"))
    check_destination(output)
    allowed = [f.value for f in CompareFormat]
    destination = Destination(
        output, format_of(output, chosen, REPORT_EXTENSIONS, allowed=allowed), append
    )
    check_append([destination], append, "the comparison")
    return destination


@app.command("metrics", cls=_Command)
def list_metrics(
    name: Annotated[str | None, typer.Argument(help="Show this one metric in full.")] = None,
    format: Annotated[
        ListingFormat,
        typer.Option(
            "--format",
            "-f",
            help="table (default), json (one document, for tools) or markdown (a GFM table).",
        ),
    ] = ListingFormat.table,
) -> None:
    """List every metric with its formula and parameters, or show one in full."""
    try:
        if format is not ListingFormat.table:
            sys.stdout.write(metric_listing(format, name))
            return
        shown = metric_table() if name is None else metric_detail(name)
    except SpecError as error:
        raise _fail(UsageError(str(error))) from None
    console.show(shown)


# commands defined in their own modules: one registration line each, below this one
app.command("init", cls=_Command)(init_command)
app.command("schema", cls=_Command)(schema_command)
app.command("validate", cls=_Command)(validate_command)
app.command("inspect", cls=_Command)(inspect_command)


def main() -> None:
    """The `receval` command. SIGINT and SIGTERM stop it with exit 130 or 143 and one line
    on stderr, leaving no partial output file."""
    signals.install()
    forget_written()
    try:
        app()
    except signals.Interrupted as stop:
        console.emit("error", _interrupted(stop), prefixed=False)
        sys.exit(stop.exit_code)


def _interrupted(stop: signals.Interrupted) -> str:
    files = written()
    if not files:
        return (
            f"interrupted by {stop.name}: stopped; no output file was written (an earlier "
            "report at the same path is unchanged)."
        )
    return f"interrupted by {stop.name}: stopped after writing {', '.join(map(str, files))}."
