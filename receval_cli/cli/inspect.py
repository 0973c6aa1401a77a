"""`receval inspect`: the command's options, the sampled users, the panels printed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from receval_cli import console
from receval_cli.choices import INSPECTED_USERS
from receval_cli.cli.common import SetOption
from receval_cli.errors import RecEvalError
from receval_cli.formats import INSPECTION_FORMATS, InspectFormat, choices_text

_TABLE = InspectFormat("table")  # the default format


def inspect_command(
    config: Annotated[Path, typer.Argument(help="The YAML config file.")],
    users: Annotated[
        int | None,
        typer.Option(
            "--users",
            help=f"How many evaluated users to sample (default {INSPECTED_USERS}).",
            show_default=False,
        ),
    ] = None,
    user: Annotated[str | None, typer.Option("--user", help="Show this one user (its id).")] = None,
    k: Annotated[int, typer.Option("--k", help="How many recommendations to show.")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="The sample's seed.")] = 0,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", help="The model to inspect (default: the baseline, else the first)."
        ),
    ] = None,
    history: Annotated[
        int,
        typer.Option("--history", help="How many of the user's latest interactions to show."),
    ] = 10,
    format: Annotated[
        InspectFormat, typer.Option("--format", "-f", help=f"{choices_text(INSPECTION_FORMATS)}.")
    ] = _TABLE,
    no_color: console.NoColorOption = False,
    settings: SetOption = None,
) -> None:
    """Show a few users' history, top-k recommendations (hits marked), the relevant items
    missed, and their per-user metrics."""
    from receval_cli.analysis.inspect import inspect_config
    from receval_cli.config.loading import load_config
    from receval_cli.inputs.change_watch import input_files, watching
    from receval_cli.report.inspection_panels import panels
    from receval_cli.report.renderers import render_as

    console.configure(no_color=no_color)
    try:
        loaded = load_config(config, settings=settings or ())
        with watching(input_files(loaded)):  # a file rewritten meanwhile: exit 2
            inspection = inspect_config(loaded, model, users, user, k, seed, history)
    except RecEvalError as error:
        raise console.fail(error, error.exit_code) from None
    if format != "table":  # the terminal's panels go through the console, in colour
        sys.stdout.write(render_as(INSPECTION_FORMATS, format, inspection))
        return
    out = console.out()
    out.print(panels(inspection, min(out.width, 120)))
