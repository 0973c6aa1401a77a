"""The HTML report's figures need matplotlib, an optional part of receval (the `html` extra).

A run or history command that writes HTML checks for it before any work, so that a
missing library is said up front (exit 2, nothing written), not after a long evaluation.
A report's view in a notebook (`_repr_html_`) needs no figure: without matplotlib it
shows its tables alone, with NO_FIGURES as a note where figures were left out.
"""

from __future__ import annotations

from receval_cli.errors import UsageError
from receval_cli.report.renderers import installed

INSTALL = (
    "Install receval's html extra: `uv sync --extra html` (or `pip install '.[html]'`) in "
    "receval's folder; or choose another format."
)

NO_FIGURES = (
    "Figures left out: they are drawn with matplotlib, which is not installed. Receval's "
    "html extra installs it: `uv sync --extra html` (or `pip install '.[html]'`) in "
    "receval's folder."
)


def figures_installed() -> bool:
    """Whether matplotlib, which draws the figures, is installed (the html extra's
    libraries, receval_cli/formats.py's EXTRA_MODULES)."""
    return installed("html")


def require_figures(page: str, where: str) -> None:
    """Raise a UsageError when matplotlib is absent: `page` ("the HTML report") cannot be
    written to `where` (a path or "standard output")."""
    if not figures_installed():
        raise UsageError(
            f"cannot write {page} to {where}: its figures are drawn with matplotlib, which "
            f"is not installed. {INSTALL}",
            key="format",
            found="html, without matplotlib",
            fix=INSTALL,
        )
