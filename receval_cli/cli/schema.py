"""`receval schema`: the config's JSON Schema printed or written."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from receval_cli import console
from receval_cli.errors import RecEvalError
from receval_cli.report.destinations import is_stdout


def schema_command(
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the schema to this file; - (the default) for stdout."
        ),
    ] = None,
) -> None:
    """Print the JSON Schema of the config file (editor completion and checks)."""
    from receval_cli.config.json_schema import schema_text
    from receval_cli.report.writing import write_atomic

    text = schema_text()
    if output is None or is_stdout(output):
        sys.stdout.write(text)
        return
    try:
        write_atomic(output, text)  # it checks the destination first
    except RecEvalError as error:
        raise console.fail(error, error.exit_code) from None
    console.note(f"wrote {output}")
