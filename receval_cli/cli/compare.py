"""`receval compare`: saved JSON reports side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from receval_cli import console
from receval_cli.choices import Correction, PairedTest
from receval_cli.cli.common import AllowDifferentConventions, AppendOption, error_exit, option_order
from receval_cli.cli.output_pairs import NamedOutput, one_output
from receval_cli.errors import (
    RecEvalError,
)
from receval_cli.formats import COMPARISON_FORMATS, CompareFormat, choices_text, extensions
from receval_cli.report.destinations import (
    Destination,
    check_append,
    format_of,
    guard,
    is_stdout,
)


def compare_command(
    ctx: typer.Context,
    reports: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Two or more saved JSON reports (receval run CONFIG --format json --output PATH).",
            show_default=False,
        ),
    ] = None,
    format: Annotated[
        list[CompareFormat] | None,
        typer.Option(
            "--format",
            "-f",
            help=f"{choices_text(COMPARISON_FORMATS)} (default: the --output file's "
            "extension, else table).",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the comparison to this file (atomically; its format from the "
            "extension: .json, .md, .csv, .txt); - for standard output; FORMAT:PATH names "
            "its format (markdown:-).",
        ),
    ] = None,
    append: AppendOption = False,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="The column the deltas are against (default: the first). A report's column "
            "is its file stem, or STEM:MODEL for each model of a several-model report.",
        ),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option("--metric", "-m", help="Show only this metric (repeat it for several)."),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="No table beside --output; warnings still go to stderr."
        ),
    ] = False,
    allow_different_conventions: AllowDifferentConventions = False,
    test: Annotated[
        PairedTest,
        typer.Option(
            "--test",
            help="Where the reports hold per-user values (receval run --with-per-user): the "
            "paired test of each column against the baseline, user by user.",
        ),
    ] = PairedTest.t,
    correction: Annotated[
        Correction,
        typer.Option("--correction", help="Multiple-comparison correction of the p-values."),
    ] = Correction.holm,
    level: Annotated[
        float,
        typer.Option(
            "--level",
            min=0.5,
            max=0.999999,
            help="1 - the significance level, and the level of the differences' intervals.",
        ),
    ] = 0.95,
) -> None:
    """Saved reports side by side, with deltas against a baseline (nothing is re-evaluated)."""
    from receval_cli.analysis.saved_tests import with_paired_tests
    from receval_cli.config.model import ComparisonConfig
    from receval_cli.report.report_comparison import compare_reports, comparison_warnings
    from receval_cli.report.report_comparison_render import comparison_table, render_comparison
    from receval_cli.report.writing import write_outputs

    try:
        named = one_output(option_order(ctx), format or [], output, list(COMPARISON_FORMATS))
        destination = _comparison_destination(named, append, reports or [])
        comparison = compare_reports(
            reports or [], baseline, metric or [], allow_different_conventions
        )
        settings = ComparisonConfig(test=test.value, correction=correction.value, level=level)
        comparison = with_paired_tests(comparison, settings)
        if destination.path is not None or destination.format != "table":
            rendered = render_comparison(comparison, destination.format)
            write_outputs({destination: rendered})
    except RecEvalError as error:
        raise error_exit(error) from None
    table_shown = not quiet if destination.path is not None else destination.format == "table"
    if table_shown:
        console.show(comparison_table(comparison))
    if not table_shown:  # the table shows them below; the other formats may not
        for warning in comparison_warnings(comparison):
            console.warn(warning)


def _comparison_destination(named: NamedOutput, append: bool, reports: list[Path]) -> Destination:
    """Where the comparison goes (standard output without --output) and in which format;
    the output is checked against the saved reports it reads."""
    output, chosen = named
    if output is None or is_stdout(output):
        check_append([], append, "the comparison")
        return Destination(None, chosen or "table")
    from receval_cli.report.writing import check_destination

    guard([output], dict.fromkeys(reports, "saved report"))
    check_destination(output)
    allowed = list(COMPARISON_FORMATS)
    destination = Destination(
        output, format_of(output, chosen, extensions(COMPARISON_FORMATS), allowed=allowed), append
    )
    check_append([destination], append, "the comparison")
    return destination
