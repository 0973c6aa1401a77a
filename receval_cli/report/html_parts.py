"""The HTML report's small parts: numbers as text with their exact value, tables."""

from __future__ import annotations

import math
from typing import Any

from receval_cli.escaping import html_text

NONE = "&ndash;"  # a value not computed


def number_html(value: Any, signed: bool = False) -> str:
    """A value as escaped text: floats to 4 decimals, with the exact value as a tooltip."""
    if value is None:
        return NONE
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return html_text(str(value))
        shown = f"{value:+.4f}" if signed else f"{value:.4f}"
        return f'<span title="{value!r}">{shown}</span>'
    if isinstance(value, list | tuple):
        return html_text(", ".join(map(str, value)))
    return html_text(str(value))


def table_html(head: str, rows: list[str]) -> str:
    body = "\n".join(rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>\n"
