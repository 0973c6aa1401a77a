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


def installed(extra: str) -> bool:
    """Whether every library the extra installs (EXTRA_MODULES) can be imported."""
    for module in EXTRA_MODULES[extra]:
        try:
            if importlib.util.find_spec(module) is None:
                return False
        except (ImportError, ValueError):  # an import hook that refuses it, a stand-in
            return False
    return True


def missing_extra(spec: FormatSpec) -> str | None:
    """The extra a format needs that is not installed (None: nothing missing)."""
    return spec.extra if spec.extra is not None and not installed(spec.extra) else None
