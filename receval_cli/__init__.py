"""receval: exact, fast offline evaluation of recommender systems.

`receval_cli.evaluate(predictions, ground_truth, metrics=[...])` is the Python API
(receval_cli/api.py); the `receval` command is receval_cli/cli/app.py.

This module imports nothing when it loads: the `receval` command imports the package
before anything else, and each module loaded before its stop handling is in place is
time in which Ctrl-C would print a traceback (launch.py). So `__version__` and the API
are imported on first use, and typing.TYPE_CHECKING is a constant here.
"""

__all__ = ["__version__", "evaluate", "relstrings"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from receval_cli.api import evaluate, relstrings
    from receval_cli.version import __version__


def __getattr__(name: str) -> "Any":
    """`__version__`, `evaluate` and `relstrings`, imported on first use."""
    if name == "__version__":
        from receval_cli.version import __version__

        return __version__
    if name == "evaluate":
        from receval_cli.api import evaluate

        return evaluate
    if name == "relstrings":
        from receval_cli.api import relstrings

        return relstrings
    raise AttributeError(f"module 'receval_cli' has no attribute {name!r}")
