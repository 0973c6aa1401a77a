"""The HTML report's gates: the verdict's tally, the gates table and the metrics table's
gate cells.

A waived gate (a history gate with too few past runs) is neither passed nor failed: it
reads "waived: <reason>" and is counted apart. A `no_significant_drop` gate's value is the
comparison's adjusted p, written as a p-value (3.2e-07, never 0.0000), with no margin: its
verdict is the test's, not a distance to a bar. A number is never broken across lines
(`p = 7.6e-` / `10`): the value cells do not wrap, and a p in a sentence is kept whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from receval_cli.escaping import html_text
from receval_cli.report.html_parts import NONE, number_html, table_html
from receval_cli.report.pvalues import p_html, whole_numbers
from receval_cli.results.gates import STATES, GateResult


def state(gate: GateResult) -> str:
    """pass, fail or waived (GateResult.state, as the page's classes name them)."""
    return {"passed": "pass", "failed": "fail"}.get(gate.state, gate.state)


def tally(gates: Sequence[GateResult]) -> tuple[str, str]:
    """The gates' verdict in words and its kind (pass, fail, waived, none), e.g. "2 of 3
    gates passed, 1 waived"."""
    if not gates:
        return "no gates", "none"
    total = len(gates)
    counts = {kind: sum(g.state == kind for g in gates) for kind in STATES}
    failed, waived = counts["failed"], counts["waived"]
    also = f", {waived} waived" if waived else ""
    if failed:
        return f"{failed} of {total} gates failed{also}", "fail"
    if waived:
        return f"{total - waived} of {total} gates passed{also}", "waived"
    return ("the gate passed" if total == 1 else f"all {total} gates passed"), "pass"


def value_html(gate: GateResult) -> tuple[str, str]:
    """The gate's value and margin cells' contents."""
    if gate.waived is not None:
        return NONE, NONE
    if gate.bound == "no_significant_drop":
        return f"p = {p_html(gate.value)}", NONE
    return number_html(gate.value), number_html(gate.margin, signed=True)


def detail(gate: GateResult) -> str:
    if gate.waived is not None:
        return f"waived: {gate.waived}"
    return gate.describe()


def gates_table(gates: Sequence[GateResult], several: bool) -> str:
    rows = []
    for gate in gates:
        kind = state(gate)
        value, margin = value_html(gate)
        cells = [
            f'<td class="{kind}">{ {"pass": "pass", "fail": "FAIL"}.get(kind, kind) }</td>',
            *([f"<td>{html_text(gate.model or '')}</td>"] if several else []),
            f"<td><code>{html_text(gate.metric)}</code></td>",
            f"<td>{html_text(gate.requirement)}</td>",
            f'<td class="num">{value}</td>',
            f'<td class="num">{margin}</td>',
            f"<td>{whole_numbers(html_text(detail(gate)))}</td>",
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head = "<th>verdict</th>" + ("<th>model</th>" if several else "")
    head += "<th>metric</th><th>required</th><th>value</th><th>margin</th><th>detail</th>"
    return table_html(head, rows)


def gate_cells(gates: Sequence[GateResult]) -> str:
    """The metrics table's gate column: each gate on the metric, ok, FAIL or waived."""
    cells = []
    for gate in gates:
        kind = state(gate)
        verdict = {"pass": "ok", "fail": "FAIL"}.get(kind, kind)
        who = f"{gate.model} " if gate.model is not None else ""
        cells.append(
            f'<span class="{kind}">{html_text(who + verdict)}</span> {html_text(gate.requirement)}'
        )
    return "<br>".join(cells)
