"""A library some tests use, imported when a test first reads one of its names.

Every pytest process, and each of its workers, imports every test module to collect it,
the modules of deselected (slow) tests included. A library used by a few tests (scipy's
statistics, xmlschema, duckdb) is therefore bound with `lazy` instead of a module-level
import: the module object is made at once, and the library is loaded on the first
attribute read (importlib's LazyLoader). For a submodule, its parent package is imported
at once (`lazy("scipy.stats")` imports scipy, which is light); libraries whose package
itself is heavy (scikit-learn, matplotlib) are imported inside the tests that use them.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy(name: str) -> ModuleType:
    """The module `name`, loaded on its first attribute read."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
