"""The choices the command line offers (output formats, engines) and their defaults.

Kept apart from the code that uses them, with no import beyond the standard library, so
that `receval --version`, `--help` and shell completion build the command line without
loading polars, pydantic or the metric registry (the commands import those when they run).
"""

from __future__ import annotations

from enum import StrEnum


class Engine(StrEnum):
    """`receval run --engine`."""

    auto = "auto"
    in_memory = "in_memory"
    streaming = "streaming"
    spark = "spark"
    gpu = "gpu"


class Format(StrEnum):
    """`receval run --format`: the report's formats."""

    table = "table"
    json = "json"
    markdown = "markdown"
    csv = "csv"
    junit = "junit"
    html = "html"
    github = "github"
    latex = "latex"


class CompareFormat(StrEnum):
    """`receval compare --format`."""

    table = "table"
    json = "json"
    markdown = "markdown"
    csv = "csv"


class HistoryFormat(StrEnum):
    """`receval history --format`."""

    table = "table"
    json = "json"
    markdown = "markdown"
    csv = "csv"
    html = "html"


class ValidateFormat(StrEnum):
    """`receval validate --format`."""

    table = "table"
    json = "json"


class InspectFormat(StrEnum):
    """`receval inspect --format`."""

    table = "table"
    json = "json"


class ListingFormat(StrEnum):
    """What `receval metrics --format` prints."""

    table = "table"  # rich, for reading: metric_table / metric_detail
    json = "json"
    markdown = "markdown"


INSPECTED_USERS = 3  # `receval inspect` samples this many users by default


class PairedTest(StrEnum):
    """`receval compare --test`: the paired test over users (config comparison.test)."""

    t = "t"
    wilcoxon = "wilcoxon"
    permutation = "permutation"


class Correction(StrEnum):
    """`receval compare --correction`: the multiple-comparison correction."""

    holm = "holm"
    bonferroni = "bonferroni"
    none = "none"
