"""The choices the command line offers (engines, paired tests, corrections) and their
defaults; the output formats are receval_cli/formats.py's tables.

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
