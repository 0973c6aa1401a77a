"""How the HTML report writes a p-value: results/gates.p_text (never a tiny one as 0),
with the exact value as a tooltip, kept whole on one line (class `whole`: a browser
would break 7.6e-10 after its minus)."""

from __future__ import annotations

import re

from receval_cli.escaping import html_text
from receval_cli.results.gates import p_text


def p_html(value: float | None, none: str = "&ndash;") -> str:
    """A p-value as p_text, the exact value as a tooltip, on one line."""
    if value is None:
        return none
    return f'<span title="{value!r}" class="whole">{html_text(p_text(value))}</span>'


# a number in scientific notation as p_text and the gates' sentences write it (7.6e-10)
_SCIENTIFIC = re.compile(r"[-+]?\d+(?:\.\d+)?e[-+]\d+")


def whole_numbers(text: str) -> str:
    """HTML text (escaped) with each number in scientific notation kept on one line."""
    return _SCIENTIFIC.sub(lambda m: f'<span class="whole">{m.group(0)}</span>', text)
