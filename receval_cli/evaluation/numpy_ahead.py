"""numpy, imported on another thread while polars works.

numpy is imported on first use (it takes 0.1-0.4 s), by the exact sums and the compiled
core; a run starts its import while polars reads or computes, which releases the GIL.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading


def import_numpy_meanwhile() -> threading.Thread | None:
    """Start importing numpy (the exact sums need it, and it takes about 0.1 s) on another
    thread while polars runs the bucket's queries, which release the GIL; the caller joins
    it when they end (None: numpy was already imported)."""
    if "numpy" in sys.modules:
        return None
    thread = threading.Thread(target=_import_quietly, args=("numpy",))
    thread.start()
    return thread


def _import_quietly(name: str) -> None:
    """Import a module ahead of need; a failure (no memory left for its threads) is left
    to the main thread's own import, which reports it."""
    with contextlib.suppress(BaseException):
        importlib.import_module(name)
