"""`receval metrics`: the registry's metrics, listed or one in detail."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from receval_cli import console
from receval_cli.cli.common import error_exit
from receval_cli.errors import (
    UsageError,
)
from receval_cli.formats import LISTING_FORMATS, ListingFormat, choices_text

_TABLE = ListingFormat("table")  # the default format


def list_metrics(
    name: Annotated[str | None, typer.Argument(help="Show this one metric in full.")] = None,
    format: Annotated[
        ListingFormat,
        typer.Option(
            "--format",
            "-f",
            help=f"{choices_text(LISTING_FORMATS)}.",
        ),
    ] = _TABLE,
) -> None:
    """List every metric with its formula and parameters, or show one in full."""
    from receval_cli.metrics import SpecError
    from receval_cli.report.metric_listing import metric_detail, metric_listing, metric_table

    try:
        if format != "table":
            sys.stdout.write(metric_listing(format, name))
            return
        shown = metric_table() if name is None else metric_detail(name)
    except SpecError as error:
        raise error_exit(UsageError(str(error), key=name, found=name)) from None
    console.show(shown)
