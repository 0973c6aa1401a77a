"""`receval init`: the command's options, the starter config written."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from receval_cli import console
from receval_cli.errors import RecEvalError, UsageError
from receval_cli.report.destinations import guard, is_stdout


def init_command(
    predictions: Annotated[
        Path | None,
        typer.Option("--predictions", "-p", help="A predictions file to guess the columns from."),
    ] = None,
    ground_truth: Annotated[
        Path | None,
        typer.Option(
            "--ground-truth", "-g", help="The ground-truth file to guess the columns from."
        ),
    ] = None,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="The config file to write; - for stdout."),
    ] = Path("receval.yaml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print no summary of the guesses.")
    ] = False,
    no_color: console.NoColorOption = False,
) -> None:
    """Write a starter config guessed from your files, or (no files) a documented template."""
    from receval_cli.inputs.sniffing import guess_ground_truth, guess_predictions, sniff
    from receval_cli.inputs.starter import guess_summary, starter_config, template
    from receval_cli.report.writing import write_atomic

    console.configure(no_color=no_color, quiet=quiet)
    to_stdout = is_stdout(output)
    summary: list[str] = []
    try:
        if (predictions is None) != (ground_truth is None):
            raise UsageError(
                "give both --predictions and --ground-truth (to guess a config from them), "
                "or neither (for a documented template).",
                key="--ground-truth" if ground_truth is None else "--predictions",
                found=str(predictions or ground_truth),
            )
        if not to_stdout:
            check_init_destination(output, force)
            inputs = {predictions: "--predictions file", ground_truth: "--ground-truth file"}
            files = {p: role for p, role in inputs.items() if p is not None and not p.is_dir()}
            guard([output], files)  # a folder given as an input is sniff's error
        folder = Path.cwd() if to_stdout else output.parent
        if predictions is not None and ground_truth is not None:
            guessed = guess_predictions(sniff(predictions, "predictions"))
            truth = guess_ground_truth(sniff(ground_truth, "ground truth"), guessed)
            name = "CONFIG" if to_stdout else output.name
            text = starter_config(guessed, truth, folder, name)
            summary = [*guess_summary(guessed), *guess_summary(truth)]
        else:
            text = template()
        if to_stdout:
            sys.stdout.write(text)
        else:
            write_atomic(output, text)
    except RecEvalError as error:
        raise console.fail(error, error.exit_code) from None
    done = [] if to_stdout else [f"wrote {output}; run it with: receval run {output}"]
    for line in [*summary, *done]:
        console.note(line)


def check_init_destination(output: Path, force: bool) -> None:
    if output.is_dir():
        fix = f"name a file, e.g. {output / 'receval.yaml'}."
        raise UsageError(f"output {output} is a folder; {fix}", path=output, fix=fix)
    if output.exists() and not force:
        fix = "pass --force to overwrite it, or name another file with --output."
        raise UsageError(f"output {output} already exists; {fix}", path=output, fix=fix)
    from receval_cli.report.writing import check_destination

    check_destination(output)
