"""receval's Python API, under the distribution's name: `import receval`.

    >>> import polars as pl
    >>> import receval
    >>> preds = pl.DataFrame({"user": [1, 1], "item": [10, 11], "score": [0.9, 0.8]})
    >>> truth = pl.DataFrame({"user": [1], "item": [11]})
    >>> receval.evaluate(preds, truth, metrics=["precision@2", "mrr"]).metrics
    {'precision@2': 0.5, 'mrr': 0.5}

The same objects as `receval_cli`'s (the package the `receval` command runs from, which
stays importable): `evaluate`, `relstrings`, `run` and `compare` (receval_cli/api.py),
the `Report`, `RunReport` and `ReportComparison` they return (receval_cli/results/report.py,
receval_cli/report/report_comparison.py), and the errors they raise (receval_cli/errors.py).
Each is imported on first use, so `import receval` itself loads nothing.
"""

from typing import TYPE_CHECKING, Any

__all__ = [
    "ArgumentTypeError",
    "ConfigError",
    "InputError",
    "RecEvalError",
    "Report",
    "ReportComparison",
    "RunReport",
    "UsageError",
    "__version__",
    "compare",
    "evaluate",
    "relstrings",
    "run",
]

if TYPE_CHECKING:
    from receval_cli.api import compare, evaluate, relstrings, run
    from receval_cli.errors import (
        ArgumentTypeError,
        ConfigError,
        InputError,
        RecEvalError,
        UsageError,
    )
    from receval_cli.report.report_comparison import ReportComparison
    from receval_cli.results.report import Report, RunReport
    from receval_cli.version import __version__

_HOMES = {
    "evaluate": "receval_cli.api",
    "relstrings": "receval_cli.api",
    "run": "receval_cli.api",
    "compare": "receval_cli.api",
    "ReportComparison": "receval_cli.report.report_comparison",
    "Report": "receval_cli.results.report",
    "RunReport": "receval_cli.results.report",
    "RecEvalError": "receval_cli.errors",
    "ArgumentTypeError": "receval_cli.errors",
    "ConfigError": "receval_cli.errors",
    "InputError": "receval_cli.errors",
    "UsageError": "receval_cli.errors",
    "__version__": "receval_cli.version",
}


def __getattr__(name: str) -> Any:
    """The API's names, imported on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'receval' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    return sorted(__all__)
