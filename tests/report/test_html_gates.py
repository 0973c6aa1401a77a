"""The HTML report's gates table keeps every number whole: a p-value such as 7.6e-10 is
never broken after its minus ("p = 7.6e-" / "10"), in the value cell or in the sentence
of the detail cell, and the page's style says so (white-space: nowrap)."""

from __future__ import annotations

import re

from receval_cli.report.html_gates import gates_table
from receval_cli.report.html_page import standalone_page
from receval_cli.report.pvalues import p_html
from receval_cli.results.gates import GateResult

P = 7.6e-10
DETAIL = {
    "baseline": 0.41,
    "difference": -0.0312,
    "low": -0.04,
    "high": -0.02,
    "p_value": 3.1e-11,
    "p_adjusted": P,
}


def significance_gate() -> GateResult:
    return GateResult("ndcg@10", "no_significant_drop", 0.05, P, "new", DETAIL, True)


def style_rules(page: str) -> dict[str, str]:
    """The page's CSS rules, selector by selector."""
    style = page.split("<style>")[1].split("</style>")[0]
    rules: dict[str, str] = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", style):
        for selector in selectors.split(","):
            rules[selector.strip()] = rules.get(selector.strip(), "") + body
    return rules


def unwrappable(page: str, selector: str) -> bool:
    return "white-space: nowrap" in style_rules(page).get(selector, "")


def test_a_p_value_is_kept_whole_in_the_gates_table() -> None:
    table = gates_table([significance_gate()], several=True)
    page = standalone_page("r", "0", "", table)
    cells = re.findall(r"<td([^>]*)>(.*?)</td>", table)
    value_class, value = cells[4]
    assert value_class == ' class="num"'
    assert value == f'p = <span title="{P!r}" class="whole">7.6e-10</span>'
    assert unwrappable(page, "td.num")  # the whole cell, "p = " with its number
    _, detail = cells[6]
    assert "adjusted p = " in detail
    # every number in scientific notation in the sentence sits in a span that keeps it whole
    assert '<span class="whole">7.6e-10</span>' in detail
    assert re.sub(r'<span class="whole">[^<]*</span>', "", detail).count("e-") == 0
    assert unwrappable(page, ".whole")


def test_the_comparisons_p_values_are_whole_too() -> None:
    assert p_html(P) == f'<span title="{P!r}" class="whole">7.6e-10</span>'
    assert p_html(None) == "&ndash;"
