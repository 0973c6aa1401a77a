"""The compiled extensions (`_kernel.c`, `_list_sums.c`), where they were built.

They are optional (pyproject.toml's ext-modules): a machine without a compiler installs
receval without them, and every caller then takes its polars or numpy path, which gives
the same values. `RECEVAL_CORE=polars` in the environment turns them off here too.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def extension(name: str = "receval_cli._kernel") -> ModuleType | None:
    """A compiled extension (the kernel, or evaluation/list_sums.py's walk), or None (not
    built here, or RECEVAL_CORE=polars)."""
    if os.environ.get("RECEVAL_CORE", "").strip().lower() == "polars":
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
