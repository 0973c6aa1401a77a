"""A library some tests use, imported when a test first reads one of its names.

Every pytest process, and each of its workers, imports every test module to collect it,
the modules of deselected (slow) tests included. A library used by a few tests (scipy's
statistics, xmlschema, duckdb) is therefore bound with `lazy` instead of a module-level
import: `stats = lazy("scipy.stats")` is a stand-in whose first name read (`stats.norm`)
imports the library; a private or special name (pytest's collection asks every
module-level object for `_mock_name` and dunders) imports nothing. (importlib's LazyLoader
does not serve: any attribute read, `__class__` included, loads its module.) Libraries whose
package itself is heavy to import (scikit-learn, matplotlib) are imported inside the tests
that use them.
"""

from __future__ import annotations

import importlib
from typing import Any


class lazy:  # lower case: read as a function, `stats = lazy("scipy.stats")`
    """The module `name`, imported on the first read of one of its names."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):  # what collection asks of any object (`_mock_name`,
            raise AttributeError(attribute)  # dunders); the tests read public names only
        return getattr(importlib.import_module(self._name), attribute)

    def __repr__(self) -> str:
        return f"lazy({self._name!r})"
