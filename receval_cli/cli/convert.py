"""`receval convert`: a predictions file written as a TREC run."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from receval_cli import console
from receval_cli.cli.common import fail
from receval_cli.errors import (
    RecEvalError,
    UsageError,
)
from receval_cli.report.destinations import (
    Destination,
    guard,
    is_stdout,
)
from receval_cli.wording import audience

if TYPE_CHECKING:
    from pydantic import ValidationError


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
        str, typer.Option(help="item_desc, item_asc, item_text_desc, item_text_asc or input_order.")
    ] = "item_desc",
    tag: Annotated[str, typer.Option(help="The run tag (last field).")] = "receval",
) -> None:
    """Write a predictions file as a TREC run (`query Q0 doc rank score tag`)."""
    from pydantic import ValidationError

    from receval_cli.config.conventions import Conventions
    from receval_cli.config.model import PredictionsConfig
    from receval_cli.inputs.convert import trec_run, write_trec_run
    from receval_cli.inputs.readers import read_predictions
    from receval_cli.report.writing import check_destination, write_outputs

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
        raise fail(_option_error(error)) from None
    except RecEvalError as error:
        raise fail(error) from None
    users = run.get_column("user").n_unique()
    console.note(f"wrote {run.height} lines for {users} users to {destination.name}")


def _option_error(error: ValidationError) -> UsageError:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    found = first.get("input")
    return UsageError(
        f"option {where}: {str(first['msg']).removeprefix('Value error, ')}",
        key=where or None,
        found=found if isinstance(found, str | int | float | bool) else None,
    )
