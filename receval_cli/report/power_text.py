"""The comparisons' power as every format states it (analysis/power.py computes it): the
smallest difference each comparison can detect, and the users a target difference needs."""

from __future__ import annotations

from receval_cli.results.comparison import Comparison
from receval_cli.results.report import RunReport


def powered(result: RunReport) -> list[Comparison]:
    """The comparisons with a detectable difference (those tested on per-user values)."""
    return [c for c in result.comparisons if c.detectable is not None]


def power_heading(result: RunReport) -> str:
    """What the figures are: the power, the level, and the target difference if any."""
    assert result.comparison is not None
    c = result.comparison
    text = (
        f"power: the smallest difference each comparison detects with power {c['power']:g} "
        f"(the {result.design} t-test at level {c['level']:g}, one test)"
    )
    if c.get("target_difference") is not None:
        text += f", and the users a difference of {c['target_difference']:g} needs"
    return text


def power_cells(comparison: Comparison) -> list[str]:
    """model, metric, users, detectable difference, users needed ("" where none)."""
    detectable = "" if comparison.detectable is None else f"{comparison.detectable:.4g}"
    needed = "" if comparison.users_needed is None else f"{comparison.users_needed:,}"
    users = "" if comparison.users is None else f"{comparison.users:,}"
    return [comparison.model, comparison.metric, users, detectable, needed]


POWER_HEADERS = ("model", "metric", "users", "detectable difference", "users needed")
