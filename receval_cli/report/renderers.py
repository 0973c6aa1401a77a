"""A document written in a format: the format's row in its document's table
(receval_cli/formats.py) names the renderer, imported here when it is first written (so
matplotlib loads only for HTML, rich only for the terminal's formats)."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from typing import Any, cast

from receval_cli.formats import EXTRA_MODULES, FormatSpec


def renderer(spec: FormatSpec) -> Callable[..., str]:
    """The function the row names ("module:function")."""
    module, _, name = spec.renderer.partition(":")
    return cast(Callable[..., str], getattr(importlib.import_module(module), name))


def render_as(table: Mapping[str, FormatSpec], fmt: str, document: Any, width: int = 100) -> str:
    """`document` in format `fmt` of its table, as text; a terminal format `width`
    columns wide."""
    spec = table[fmt]
    function = renderer(spec)
    return function(document, width) if spec.terminal else function(document)


def missing_extra(spec: FormatSpec) -> str | None:
    """The extra a format needs that is not installed (None: nothing missing)."""
    if spec.extra is None:
        return None
    for module in EXTRA_MODULES[spec.extra]:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # an import hook that refuses it, a stand-in
            found = False
        if not found:
            return spec.extra
    return None
