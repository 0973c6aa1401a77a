"""`--format latex`: the run's metrics as a LaTeX table for a paper, as ranx's `to_latex`
prints one: booktabs rules, a row per model and a column per metric, the best value of
each metric in bold, and a significant win or loss against the baseline marked
($^{\\dagger}$ / $^{\\ddagger}$), the test named in the caption. What a table in a paper
does not hold (the run, the gates' verdicts, the warnings) follows as LaTeX comments, so
that the file still says whether a gate failed. Needs `\\usepackage{booktabs}`.
"""

from __future__ import annotations

import math

from receval_cli.escaping import printable
from receval_cli.report.table import models_ties
from receval_cli.results.gates import summary
from receval_cli.results.report import RunReport

_MARKS = {"win": "$^{\\dagger}$", "loss": "$^{\\ddagger}$"}
# LaTeX's special characters in text, each as it is written
_ESCAPES = {
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "$": "\\$",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
}


def latex_text(text: str) -> str:
    """Text as LaTeX sets it, every special character escaped (a control character as
    its escape sequence first: escaping.printable)."""
    flat = " ".join(printable(text).split())  # a line break would end a table row
    return "".join(_ESCAPES.get(c, c) for c in flat)


def render_latex(result: RunReport) -> str:
    models = result.models
    metrics = list(next(iter(models.values())).metrics)
    found = {(c.model, c.metric): c for c in result.comparisons}
    several = len(models) > 1
    head = " & ".join(["Model", *(f"\\texttt{{{latex_text(m)}}}" for m in metrics)])
    rows = []
    for name, report in models.items():
        cells = [latex_text(name)]
        for metric in metrics:
            cell = _number(report.metrics[metric])
            if several and name in result.best.get(metric, []):
                cell = f"\\textbf{{{cell}}}"
            comparison = found.get((name, metric))
            if comparison is not None:
                cell += _MARKS.get(comparison.verdict, "")
            cells.append(cell)
        rows.append(" & ".join(cells) + " \\\\")
    lines = _comments(result)
    lines += [
        "\\begin{table}[t]",
        "\\centering",
        f"\\caption{{{_caption(result)}}}",
        "\\label{tab:receval}",
        "\\begin{tabular}{l" + "r" * len(metrics) + "}",
        "\\toprule",
        head + " \\\\",
        "\\midrule",
        *rows,
        "\\bottomrule",
        "\\end{tabular}",
        "\\end{table}",
    ]
    return "\n".join(lines) + "\n"


def _number(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "--" if value is None else latex_text(str(value))
    return f"{value:.4f}"


def _caption(result: RunReport) -> str:
    users = next(iter(result.models.values())).users.get("evaluated")
    parts = [f"Evaluated by receval {latex_text(result.version)} over {users} users."]
    if len(result.models) > 1:
        parts.append("Bold: the best value of each metric.")
    if result.comparison is not None:
        against = latex_text(result.baseline or result.baseline_report or "the baseline")
        how = latex_text(f"{result.test_method()}, level {result.comparison['level']:g}")
        parts.append(
            f"$^{{\\dagger}}$/$^{{\\ddagger}}$: a significant win/loss against {against} ({how})."
        )
    return " ".join(parts)


def _comments(result: RunReport) -> list[str]:
    """The run, the gates' verdicts and the warnings, as LaTeX comment lines."""
    lines = [f"% receval {result.version}"]
    if result.run is not None:
        lines[0] += f": {result.run.describe()}"
    if result.gates:
        lines.append(f"% gates: {summary(result.gates)}")
        for gate in result.gates:
            if gate.state == "waived":
                lines.append(f"% gate waived: {gate.name}: {gate.waived_briefly} ({gate.waived})")
            elif gate.state == "failed":
                lines.append(f"% gate failed: {gate.describe()}")
            else:
                lines.append(f"% gate passed: {gate.describe()}")
    lines += [f"% {text}" for text in models_ties(result.models)]
    lines += [f"% warning: {warning}" for warning in result.warnings]
    return [" ".join(printable(line).split()) for line in lines]  # one line each
