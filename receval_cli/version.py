"""receval's version (one place; the package and the reports read it from here)."""

__version__ = "0.2.0"
