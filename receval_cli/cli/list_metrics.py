"""`receval metrics`: the registry's metrics, listed or one in detail."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from receval_cli import console
from receval_cli.choices import ListingFormat
from receval_cli.cli.common import fail
from receval_cli.errors import (
    UsageError,
)


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
    from receval_cli.cli.metrics_listing import metric_detail, metric_listing, metric_table
    from receval_cli.metrics import SpecError

    try:
        if format is not ListingFormat.table:
            sys.stdout.write(metric_listing(format, name))
            return
        shown = metric_table() if name is None else metric_detail(name)
    except SpecError as error:
        raise fail(UsageError(str(error), key=name, found=name)) from None
    console.show(shown)
