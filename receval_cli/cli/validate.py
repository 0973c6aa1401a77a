"""`receval validate`: the command's options, the check, the summary printed. The check
is run's without the evaluation: the config read as run reads it, the outputs the config
names checked as run checks them (cli/run_outputs.py), the run planned and the inputs
read and checked (analysis/validate.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from receval_cli import console
from receval_cli.cli.common import AllowDifferentConventions, SetOption
from receval_cli.errors import RecEvalError
from receval_cli.formats import VALIDATION_FORMATS, ValidateFormat, choices_text

_TABLE = ValidateFormat("table")  # the default format


def validate_command(
    config: Annotated[Path, typer.Argument(help="The YAML config file.")],
    format: Annotated[
        ValidateFormat,
        typer.Option("--format", "-f", help=f"{choices_text(VALIDATION_FORMATS)}."),
    ] = _TABLE,
    preset: Annotated[
        str | None,
        typer.Option("--preset", help="As for run: the conventions of a well-known tool."),
    ] = None,
    baseline_report: Annotated[
        Path | None,
        typer.Option("--baseline-report", help="As for run: a saved JSON report to compare with."),
    ] = None,
    allow_different_conventions: AllowDifferentConventions = False,
    no_color: console.NoColorOption = False,
    verbose: console.VerboseOption = False,
    settings: SetOption = None,
) -> None:
    """Check CONFIG and its inputs without computing a metric; exit 2 where run would fail."""
    from receval_cli.analysis.validate import validate_config
    from receval_cli.cli.run_outputs import RunRequest, checked_outputs
    from receval_cli.config.loading import load_config
    from receval_cli.inputs.change_watch import input_files, watching
    from receval_cli.report.renderers import render_as
    from receval_cli.report.validation_tables import render_health

    console.configure(no_color=no_color, verbose=verbose)
    try:
        loaded = load_config(config, preset, settings or ())
        # the outputs the config names (output.path and format, history), as run checks them
        request = RunRequest(config, None, [], False, None, quiet=True)
        checked_outputs(request, loaded, baseline_report)
        with watching(input_files(loaded)):  # a file rewritten meanwhile: exit 2
            health = validate_config(loaded, baseline_report, allow_different_conventions)
    except RecEvalError as error:
        raise console.fail(error, error.exit_code) from None
    if format != "table":  # the terminal's table goes through the console, in colour
        sys.stdout.write(render_as(VALIDATION_FORMATS, format, health))
    else:
        console.show(render_health(health))
