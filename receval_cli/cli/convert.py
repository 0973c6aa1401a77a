"""`receval convert`: a predictions file written as a TREC run, or a ground-truth file
as TREC qrels (--qrels)."""

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
    source: Annotated[
        Path,
        typer.Argument(
            help="A predictions file (CSV, Parquet, JSONL, ...), or with --qrels "
            "a ground-truth file."
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", help="The TREC run (or qrels) to write; - for standard output."
        ),
    ],
    qrels: Annotated[
        bool,
        typer.Option(
            "--qrels",
            help="SOURCE is a ground truth: write TREC qrels (`query 0 docno grade`) from "
            "--user, --item and --relevance (or --items and --relevances).",
        ),
    ] = False,
    relevance: Annotated[
        str | None,
        typer.Option(
            help="--qrels: the grade column (default: relevance if the file has one, "
            "else every listed item has grade 1)."
        ),
    ] = None,
    relevances: Annotated[
        str | None,
        typer.Option(help="--qrels: with --items, a list column of grades."),
    ] = None,
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
    """Write a predictions file as a TREC run (`query Q0 doc rank score tag`), or with
    --qrels a ground-truth file as TREC qrels (`query 0 doc grade`)."""
    from pydantic import ValidationError

    from receval_cli.config.conventions import Conventions
    from receval_cli.config.model import PredictionsConfig
    from receval_cli.inputs.convert import trec_run, write_trec_run
    from receval_cli.inputs.readers import read_predictions
    from receval_cli.report.writing import check_destination, write_outputs

    if qrels:
        runs_only = {"--score": score is not None, "--rank": rank is not None}
        runs_only |= {"--tie-break": tie_break != "item_desc", "--tag": tag != "receval"}
        columns = {"user": user, "item": item, "items": items}
        columns |= {"relevance": relevance, "relevances": relevances}
        _convert_qrels(source, output, file_format, separator, columns, runs_only)
        return
    if relevance is not None or relevances is not None:
        name = "--relevance" if relevance is not None else "--relevances"
        fix = "add --qrels to write a ground truth as qrels, or leave it out."
        raise fail(UsageError(f"{name} is for --qrels only; {fix}", key=name, fix=fix))
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


def _convert_qrels(
    source: Path,
    output: Path,
    file_format: str | None,
    separator: str | None,
    columns: dict[str, str | None],
    runs_only: dict[str, bool],
) -> None:
    """`convert --qrels`: the ground truth read as `receval run` reads one, written as
    qrels (inputs/convert.py, trec_qrels)."""
    from pydantic import ValidationError

    from receval_cli.config.model import GroundTruthConfig
    from receval_cli.inputs.convert import trec_qrels, write_trec_run
    from receval_cli.inputs.readers import read_ground_truth
    from receval_cli.report.writing import check_destination, write_outputs

    try:
        for name, value in runs_only.items():
            if value:
                fix = f"leave {name} out: qrels have no scores, ranks or tag."
                raise UsageError(f"{name} is for runs, not --qrels; {fix}", key=name, fix=fix)
        with audience("convert"):  # messages name the options, not config keys
            given = {key: value for key, value in columns.items() if value is not None}
            config = GroundTruthConfig.model_validate(
                {"path": str(source), "format": file_format, "separator": separator}
                | {"columns": given}
            )
            destination = Destination(None if is_stdout(output) else output, "trec")
            guard([output], {source: "SOURCE file"})
            if destination.path is not None:
                check_destination(destination.path)
            found, notes = trec_qrels(read_ground_truth(config, source))
            text = io.StringIO()
            write_trec_run(found, text)
            write_outputs({destination: text.getvalue()})
    except ValidationError as error:
        raise fail(_option_error(error)) from None
    except RecEvalError as error:
        raise fail(error) from None
    for note in notes:
        console.warn(note)
    users = found.get_column("user").n_unique()
    console.note(f"wrote {found.height} lines for {users} users to {destination.name}")


def _option_error(error: ValidationError) -> UsageError:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    found = first.get("input")
    return UsageError(
        f"option {where}: {str(first['msg']).removeprefix('Value error, ')}",
        key=where or None,
        found=found if isinstance(found, str | int | float | bool) else None,
    )
