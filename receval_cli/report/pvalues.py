"""How the HTML report writes a p-value: never a tiny one as 0."""

from __future__ import annotations

from html import escape

SMALLEST = 1e-300  # a p of 0.0 underflowed: it is below every float this shows


def p_text(value: float) -> str:
    """0.001 and above to 3 significant digits (0.0512, 0.5); below 0.001 in scientific
    notation to 2 (3.2e-07); an underflowed 0 as "< 1e-300"."""
    if value == 0.0:
        return f"< {SMALLEST:.0e}"
    if abs(value) < 1e-3:
        return f"{value:.1e}"
    return f"{value:.3g}"


def p_html(value: float | None, none: str = "&ndash;") -> str:
    """A p-value as p_text, the exact value as a tooltip."""
    if value is None:
        return none
    return f'<span title="{value!r}">{escape(p_text(value))}</span>'
