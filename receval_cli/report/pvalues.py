"""How the HTML report writes a p-value: results/gates.p_text (never a tiny one as 0),
with the exact value as a tooltip."""

from __future__ import annotations

from receval_cli.escaping import html_text
from receval_cli.results.gates import p_text


def p_html(value: float | None, none: str = "&ndash;") -> str:
    """A p-value as p_text, the exact value as a tooltip."""
    if value is None:
        return none
    return f'<span title="{value!r}">{html_text(p_text(value))}</span>'
