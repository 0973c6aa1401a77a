"""A test module imported by its name, wherever it sits under tests/ (the registry's
coverage and the engine matrix read other test modules' constants and test functions)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parents[1]


def load_test_module(name: str) -> ModuleType:
    """The module `name` (e.g. "test_fairness"), imported as pytest imports it: by its
    name, its folder on sys.path (pytest's prepend import mode)."""
    if name not in sys.modules:
        found = sorted(TESTS.rglob(f"{name}.py"))
        assert len(found) == 1, f"{name}.py: {len(found)} files under tests/ ({found})"
        folder = str(found[0].parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
    return importlib.import_module(name)
