"""The HTML report's figures need matplotlib, an optional part of receval (the `html` extra).

A run or history command that writes HTML checks for it before any work, so that a
missing library is said up front (exit 2, nothing written), not after a long evaluation.
"""

from __future__ import annotations

import importlib.util

from receval_cli.errors import UsageError

INSTALL = (
    "Install receval's html extra: `uv sync --extra html` (or `pip install '.[html]'`) in "
    "receval's folder; or choose another format."
)


def require_figures(page: str, where: str) -> None:
    """Raise a UsageError when matplotlib is absent: `page` ("the HTML report") cannot be
    written to `where` (a path or "standard output")."""
    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError(
            f"cannot write {page} to {where}: its figures are drawn with matplotlib, which "
            f"is not installed. {INSTALL}",
            key="format",
            found="html, without matplotlib",
            fix=INSTALL,
        )
