"""`receval convert`: a predictions file written as a TREC run, or a ground-truth file
as TREC qrels (--qrels)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from receval_cli import console
from receval_cli.cli.common import error_exit
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
    import polars as pl
    from pydantic import ValidationError

C = TypeVar("C")  # what a conversion's options are read into


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
    intent: Annotated[
        str | None,
        typer.Option(
            help="--qrels: the intent (subtopic) column: write TREC diversity qrels "
            "(`query intent docno grade`)."
        ),
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
    from receval_cli.config.conventions import Conventions
    from receval_cli.config.model import GroundTruthConfig, PredictionsConfig
    from receval_cli.inputs.convert import trec_qrels, trec_run
    from receval_cli.inputs.readers import read_ground_truth, read_predictions

    file = {"path": str(source), "format": file_format, "separator": separator}
    if qrels:
        runs_only = {"--score": score is not None, "--rank": rank is not None}
        runs_only |= {"--tie-break": tie_break != "item_desc", "--tag": tag != "receval"}
        columns = {"user": user, "item": item, "items": items}
        columns |= {"relevance": relevance, "relevances": relevances, "intent": intent}

        def qrels_config() -> GroundTruthConfig:
            for name, value in runs_only.items():
                if value:
                    fix = f"leave {name} out: qrels have no scores, ranks or tag."
                    raise UsageError(f"{name} is for runs, not --qrels; {fix}", key=name, fix=fix)
            given = {key: value for key, value in columns.items() if value is not None}
            return GroundTruthConfig.model_validate(file | {"columns": given})

        _write_trec(
            source, output, qrels_config, lambda c: trec_qrels(read_ground_truth(c, source))
        )
        return
    qrels_only = {"--relevance": relevance, "--relevances": relevances, "--intent": intent}
    if any(value is not None for value in qrels_only.values()):
        name = next(key for key, value in qrels_only.items() if value is not None)
        fix = "add --qrels to write a ground truth as qrels, or leave it out."
        raise error_exit(UsageError(f"{name} is for --qrels only; {fix}", key=name, fix=fix))
    columns = {"user": user, "item": item, "score": score, "rank": rank, "items": items}

    def run_config() -> tuple[PredictionsConfig, str]:
        config = PredictionsConfig.model_validate(file | {"columns": columns})
        if tie_break == "expected":  # a run file holds one order
            fix = "choose the order the run should hold: item_desc, item_asc, item_text_desc, ..."
            raise UsageError(
                "--tie-break expected averages metrics over every order of tied items; a TREC "
                f"run writes one order. {fix}",
                key="--tie-break",
                found=tie_break,
                fix=fix,
            )
        return config, Conventions.model_validate({"tie_break": tie_break}).tie_break

    def run_lines(chosen: tuple[PredictionsConfig, str]) -> tuple[pl.DataFrame, list[str]]:
        return trec_run(read_predictions(chosen[0], source), chosen[1], tag), []

    _write_trec(source, output, run_config, run_lines)


def _write_trec(
    source: Path,
    output: Path,
    parse: Callable[[], C],
    lines: Callable[[C], tuple[pl.DataFrame, list[str]]],
) -> None:
    """Both conversions: the options read (`parse`), the destination checked, the file
    read and its TREC lines made (`lines`: the frame, and what to tell the user),
    written atomically; an error names the option or the file (exit 2)."""
    from pydantic import ValidationError

    from receval_cli.inputs.convert import write_trec_run
    from receval_cli.report.writing import check_destination, write_outputs

    try:
        with audience("convert"):  # messages name the options, not config keys
            chosen = parse()
            destination = Destination(None if is_stdout(output) else output, "trec")
            guard([output], {source: "SOURCE file"})
            if destination.path is not None:
                check_destination(destination.path)
            found, notes = lines(chosen)
            text = io.StringIO()
            write_trec_run(found, text)
            write_outputs({destination: text.getvalue()})
    except ValidationError as error:
        raise error_exit(_option_error(error)) from None
    except RecEvalError as error:
        raise error_exit(error) from None
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
