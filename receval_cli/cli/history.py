"""`receval history PATH`: the trends of a history store (`receval run --history PATH`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from receval_cli import console
from receval_cli.cli.common import error_exit, option_order
from receval_cli.cli.output_pairs import one_output
from receval_cli.errors import RecEvalError, UsageError
from receval_cli.formats import HISTORY_FORMATS, HistoryFormat, choices_text, extensions
from receval_cli.report.destinations import Destination, format_of, is_stdout


def history_command(
    ctx: typer.Context,
    store: Annotated[
        Path,
        typer.Argument(help="The history store: the folder `receval run --history` appends to."),
    ],
    format: Annotated[
        list[HistoryFormat] | None,
        typer.Option(
            "--format",
            "-f",
            help=f"{choices_text(HISTORY_FORMATS)} (default: the --output file's "
            "extension, else table).",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write to this file (atomically; the format from its extension); - for "
            "standard output; FORMAT:PATH names its format (json:-).",
        ),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric", "-m", help="Only this metric (a name or a pattern, e.g. 'ndcg@*'); repeat."
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", help="Only this model (a name or a pattern); repeat."),
    ] = None,
    segment: Annotated[
        list[str] | None,
        typer.Option(
            "--segment",
            help="Also this segment (a name such as country=DE, or a pattern: '*' for all); "
            "without it, all users only.",
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", help="Only runs from then on: a date or time (UTC), or an age: 7d, 12h."
        ),
    ] = None,
    last: Annotated[
        int,
        typer.Option("--last", min=1, help="Show the last N runs of each series."),
    ] = 30,
    window: Annotated[
        int,
        typer.Option(
            "--window",
            min=1,
            help="Compare the latest value with the median of up to this many runs before it.",
        ),
    ] = 7,
    prune: Annotated[
        bool,
        typer.Option("--prune", help="Remove all but the latest --keep runs from the store."),
    ] = False,
    keep: Annotated[
        int | None,
        typer.Option("--keep", min=0, help="With --prune: how many of the latest runs to keep."),
    ] = None,
) -> None:
    """Trends of a history store: per model and metric the latest value, the change
    against the previous run and the recent median, and a sparkline."""
    from receval_cli.history.store import read_store, refuse_outputs_inside
    from receval_cli.history.trends import parse_since, trends
    from receval_cli.report.figures_library import require_figures
    from receval_cli.report.history_pages import history_table, render_history
    from receval_cli.report.writing import check_destination, write_outputs
    from receval_cli.results.series import Selection

    try:
        if prune or keep is not None:
            _prune(store, prune, keep)
            return
        if not store.exists():
            fix = "Append runs to it with `receval run CONFIG --history PATH`."
            raise UsageError(
                f"history store {store} does not exist. {fix}", path=store, found=None, fix=fix
            )
        allowed = list(HISTORY_FORMATS)
        output, chosen = one_output(option_order(ctx), format or [], output, allowed)
        if output is None or is_stdout(output):
            destination = Destination(None, chosen or "table")
        else:
            check_destination(output)
            refuse_outputs_inside(store, [("--output", output)])
            fmt = format_of(output, chosen, extensions(HISTORY_FORMATS), allowed=allowed)
            destination = Destination(output, fmt)
        if HISTORY_FORMATS[destination.format].extra == "html":
            require_figures("the HTML history page", destination.name)
        selection = Selection(
            metrics=metric or [],
            models=model or [],
            segments=segment or [],
            since=None if since is None else parse_since(since),
            last=last,
            window=window,
        )
        found = trends(read_store(store), selection)
        if destination.path is not None or destination.format != "table":
            write_outputs(
                {destination: render_history(store, found, selection, destination.format)}
            )
    except RecEvalError as error:
        raise error_exit(error) from None
    if destination.path is None and destination.format == "table":
        console.show(history_table(store, found, selection))


def _prune(store: Path, prune: bool, keep: int | None) -> None:
    """--prune --keep N: the store's latest N runs kept, the others' files removed."""
    from rich.text import Text

    from receval_cli.history.store import prune as prune_store

    if not prune or keep is None:
        fix = "Give both: --prune --keep N."
        raise UsageError(
            f"{'--prune needs --keep N' if prune else '--keep works with --prune'}. {fix}",
            key="--prune" if prune else "--keep",
            found=None,
            fix=fix,
        )
    if not store.is_dir():
        fix = "Name the folder `receval run --history` appends to."
        raise UsageError(f"history store {store} is not a folder. {fix}", path=store, fix=fix)
    done = prune_store(store, keep)
    removed = len(done.removed)
    console.show(Text(f"history {store}: kept {done.kept} runs, removed {removed} run file(s)."))
