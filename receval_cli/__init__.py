"""receval: exact, fast offline evaluation of recommender systems.

`receval_cli.evaluate(predictions, ground_truth, metrics=[...])` is the Python API
(receval_cli/api.py); the `receval` command is receval_cli/cli/app.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from receval_cli.version import __version__

__all__ = ["__version__", "evaluate", "relstrings"]

if TYPE_CHECKING:
    from receval_cli.api import evaluate, relstrings


def __getattr__(name: str) -> Any:
    """`evaluate` is imported on first use, so the CLI's start-up does not pay for it."""
    if name == "evaluate":
        from receval_cli.api import evaluate

        return evaluate
    if name == "relstrings":
        from receval_cli.api import relstrings

        return relstrings
    raise AttributeError(f"module 'receval_cli' has no attribute {name!r}")
