"""The HTML report's comparisons with the baseline: the differences drawn per metric
scale, and every comparison in a folded table.

One small figure per metric family (name and parameters, every cutoff), each on its own
axis: an arp difference of -350 and an ndcg difference of 0.02 are never on one axis,
where the ndcg one would be a dot. The accuracy families come first, the beyond-accuracy
ones apart.
"""

from __future__ import annotations

from collections.abc import Callable

from receval_cli.escaping import html_text
from receval_cli.metrics.dialects import spec_of
from receval_cli.report.html_parts import NONE, number_html, table_html
from receval_cli.report.metric_kinds import family_of, split_kinds
from receval_cli.report.pvalues import p_html
from receval_cli.results.comparison import Comparison
from receval_cli.results.report import RunReport

MARKS = {"win": " ▲", "loss": " ▼"}
Figure = Callable[[str, str, str, str], str]  # kind, name, svg, caption -> <figure>


def comparisons_table(result: RunReport) -> str:
    head = (
        "<th>model</th><th>metric</th><th>value</th><th>baseline</th><th>difference</th>"
        "<th>interval</th><th>users</th><th>p</th><th>p adjusted</th><th>verdict</th>"
    )
    rows = []
    for comparison in result.comparisons:
        interval = NONE
        if comparison.low is not None and comparison.high is not None:
            interval = f"[{number_html(comparison.low)}, {number_html(comparison.high)}]"
        cells = [
            html_text(comparison.model),
            f"<code>{html_text(comparison.metric)}</code>",
            number_html(comparison.value),
            number_html(comparison.baseline),
            number_html(comparison.difference, signed=True),
            interval,
            number_html(comparison.users),
            p_html(comparison.p_value),
            p_html(comparison.p_adjusted),
            html_text(comparison.verdict + MARKS.get(comparison.verdict, "")),
        ]
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    return (
        f"<details>\n<summary>Every comparison ({len(rows)}): values, intervals and "
        f"p-values</summary>\n{table_html(head, rows)}</details>\n"
    )


def _row_label(comparison: Comparison, several: bool) -> str:
    k = spec_of(comparison.metric).k
    cutoff = f"@{k}" if k is not None else comparison.metric
    return f"{comparison.model} {cutoff}" if several else cutoff


def difference_figures(result: RunReport, figure: Figure, prefix: Callable[[], str]) -> str:
    """Per kind (accuracy, beyond accuracy), a grid of one figure per metric family: each
    model's difference at each cutoff, with its interval, on the family's own axis."""
    from receval_cli.report import plots  # matplotlib: the tables above need none

    drawn = [c for c in result.comparisons if c.difference is not None]
    if not drawn:
        return ""
    several = len({c.model for c in drawn}) > 1
    families: dict[str, list[Comparison]] = {}
    for comparison in drawn:
        families.setdefault(family_of(comparison.metric), []).append(comparison)
    kinds: dict[str, list[str]] = {}
    for kind, metrics in split_kinds(c.metric for c in drawn).items():
        kinds[kind] = list(dict.fromkeys(family_of(m) for m in metrics))
    against = result.baseline or result.baseline_report or "the baseline"
    parts = [
        f'<p class="note">Differences from {html_text(str(against))}, one figure per metric '
        "family on its own axis (the scales of metrics differ), bars: the intervals; green "
        "a significant win, red a significant loss, grey a tie, black untested.</p>\n"
    ]
    for kind, members in kinds.items():
        figures = []
        for family in members:
            rows = sorted(
                families[family],
                key=lambda c: (c.model, spec_of(c.metric).k or 0),
            )
            points = [
                (_row_label(c, several), c.difference or 0.0, c.low, c.high, c.verdict)
                for c in rows
            ]
            svg = plots.comparison_figure(points, prefix(), small=True)
            caption = f"<code>{html_text(family)}</code>: difference from the baseline"
            figures.append(figure("comparison", family, svg, caption))
        parts.append(
            f'<h3 data-kind="{html_text(kind)}">{html_text(kind.capitalize())}</h3>\n'
            f'<div class="plots small">\n{"".join(figures)}</div>\n'
        )
    return "".join(parts)
