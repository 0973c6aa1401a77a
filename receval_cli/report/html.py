"""`--format html`: one self-contained page for a run's report (one model or several).
Over 400 lines: one page builder, a method per section of the page; its shell is
html_page.py, its numbers html_numbers.py, its comparisons and gates html_comparisons.py
and html_gates.py.

Inline CSS, figures as inline SVG (plots.py, imported only where a figure is drawn: the
notebook views, report_tables_html and run_tables_html, need no matplotlib), no script,
and a Content-Security-Policy that forbids every fetch (the shell: html_page.py): the page
shows the same offline, in a CI artefact or an email. Every string from the data or the
config is escaped. The numbers the page works out beside the report's own (a histogram's
mean, the lists' depth, the families' cutoffs drawn) are html_numbers.py's. The same
result gives the same bytes (the elapsed time is left out).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import polars as pl

from receval_cli.escaping import html_text
from receval_cli.metrics import MetricSpec
from receval_cli.metrics.dialects import spec_of
from receval_cli.metrics.exposure import gini_of_histogram
from receval_cli.metrics.registry import is_geometric, ratio_of
from receval_cli.report.comparison_detail import (
    DETAIL_HEADERS,
    LIST_HEADERS,
    LISTS_HEADING,
    detail_cells,
    detail_heading,
    detailed,
    list_cells,
)
from receval_cli.report.fairness_view import fairness_html
from receval_cli.report.figures_library import NO_FIGURES, figures_installed
from receval_cli.report.headline import headline_html
from receval_cli.report.html_comparisons import comparisons_table, difference_figures
from receval_cli.report.html_gates import gate_cells, gates_table, tally
from receval_cli.report.html_numbers import (
    exposed,
    family_label,
    interval_of,
    lists_depth,
    representatives,
    segment_bar,
    siblings,
    users_mean,
)
from receval_cli.report.html_page import standalone_page
from receval_cli.report.html_parts import number_html, table_html
from receval_cli.report.metric_kinds import ACCURACY, kind_of, split_kinds
from receval_cli.report.per_user_table import per_user_values
from receval_cli.report.table import by_metric_lines, confidence_line, users_line
from receval_cli.results.gates import GateResult
from receval_cli.results.report import HTML_VIEW, RUN_HTML_VIEW, Report, RunReport

_MARKS = {"win": " ▲", "loss": " ▼"}


def render_html(result: RunReport) -> str:
    """The whole page, as text."""
    page = _Page(result)
    sections = [
        ("summary", "Summary", headline_html(result)),
        ("metrics", "Metrics", page.metrics()),
        ("gates", "Gates", page.gates()),
        ("users", "Users and items", page.users()),
        ("comparisons", "Intervals and comparisons", page.comparisons()),
        ("curves", "Metrics by cutoff", page.curves()),
        ("pr_curve", "Precision-recall curve", page.pr_curves()),
        ("distributions", "Per-user distributions", page.distributions()),
        ("ratings", "Predicted against actual ratings", page.ratings()),
        ("clicks", "Logged clicks: propensity weights", page.clicks()),
        ("exposure", "Item exposure", page.exposure()),
        ("segments", "Segments", page.segments()),
        ("fairness", "Fairness", fairness_html(result.models)),
        ("conventions", "Conventions", page.conventions()),
        ("inputs", "Inputs", page.inputs()),
        ("config", "Config", _folded_config(result.config)),
    ]
    shown = [(key, title, body) for key, title, body in sections if body]
    nav = " · ".join(f'<a href="#{key}">{html_text(title)}</a>' for key, title, _ in shown)
    body = "".join(
        f'<section id="{key}">\n<h2>{html_text(title)}</h2>\n{content}</section>\n'
        for key, title, content in shown
    )
    return standalone_page(page.title, result.version, f"{page.verdict()}<nav>{nav}</nav>\n", body)


def report_tables_html(report: Report) -> str:
    """One model's metrics table and users line, as the HTML report shows them: a Report's
    view in a notebook (Report._repr_html_)."""
    page = _Page(RunReport({"model": report}, [], {}, report.conventions), draws=False)
    line = f"<p>{html_text(users_line(report.users))}</p>\n"
    return f'<div class="receval-report">\n{page.metrics()}{line}</div>\n'


def run_tables_html(result: RunReport) -> str:
    """A run's metrics table (a column per model), its gates and its comparisons, as the
    HTML report shows them: a RunReport's view in a notebook. Its figures (the models'
    bars, the differences) need matplotlib: without it, the tables alone and a note."""
    page = _Page(result, draws=figures_installed())
    parts = [page.metrics(), page.gates(), page.comparisons()]
    if not page.draws and (page.several or result.comparison is not None):
        parts.append(f'<p class="note">{html_text(NO_FIGURES)}</p>\n')
    return '<div class="receval-report">\n' + "".join(p for p in parts if p) + "</div>\n"


HTML_VIEW[:] = [report_tables_html]  # a Report in a notebook (Report._repr_html_)
RUN_HTML_VIEW[:] = [run_tables_html]


class _Page:
    """The page's parts; counts the figures so that each one's SVG ids are its own."""

    def __init__(self, result: RunReport, draws: bool = True) -> None:
        self.result = result
        self.draws = draws  # the figures too (matplotlib), else the tables alone
        self.models = result.models
        self.several = result.alone is None  # a column (and a name) per model
        self.first = next(iter(self.models.values()))
        self.figures = 0
        self.title = "receval report"
        if self.several:
            self.title += f": {len(self.models)} models"

    def _figure(self, kind: str, name: str, svg: str, caption: str) -> str:
        return (
            f'<figure class="plot" data-kind="{kind}" data-name="{html_text(name)}">\n{svg}'
            f"<figcaption>{caption}</figcaption>\n</figure>\n"
        )

    def _prefix(self) -> str:
        self.figures += 1
        return f"fig{self.figures}-"

    def verdict(self) -> str:
        text, kind = tally(self.result.gates)
        if kind != "none":
            text = ("FAILED: " if kind == "fail" else "passed: ") + text
        about = f"receval {self.result.version}"
        if self.result.run is not None:
            about += f"; {self.result.run.describe()}"
        if self.several:
            names = ", ".join(self.result.models)
            about += f"; models {names}"
            if self.result.baseline is not None:
                about += f"; baseline {self.result.baseline}"
            elif self.result.baseline_report is not None:
                about += f"; against {self.result.baseline_report}"
        warnings = "".join(
            f'<p class="verdict fail">warning: {html_text(w)}</p>\n' for w in self.result.warnings
        )
        return (
            f'<p class="verdict {kind}">{html_text(text)}</p>\n{warnings}'
            f'<p class="about">{html_text(about)}</p>\n'
        )

    def metrics(self) -> str:
        gates: dict[str, list[GateResult]] = {}
        for gate in self.result.gates:
            gates.setdefault(gate.metric, []).append(gate)
        found = {(c.model, c.metric): c for c in self.result.comparisons}
        best = self.result.best
        names = list(self.models)
        head = "<th>metric</th>" + "".join(
            f"<th>{html_text(n)}</th>" if self.several else "<th>value</th>" for n in names
        )
        rows: dict[str, list[str]] = {}
        for metric in self.first.metrics:
            cells = [f"<td><code>{html_text(metric)}</code></td>"]
            for name, report in self.models.items():
                value = report.metrics[metric]
                interval = (report.confidence or {}).get("intervals", {}).get(metric)
                text = number_html(value)
                kind = "num"
                if len(names) > 1 and name in best.get(metric, []):
                    text, kind = f"<strong>{text}*</strong>", "num best"
                if interval is not None:
                    low, high = number_html(interval[0]), number_html(interval[1])
                    text += f"<br><small>[{low}, {high}]</small>"
                comparison = found.get((name, metric))
                if comparison is not None:
                    arrow = _MARKS.get(comparison.verdict, "")
                    # on the interval's line: two lines a cell, not three
                    text += "" if interval is not None else "<br>"
                    text += (
                        f' <small class="{html_text(comparison.verdict)}">'
                        f"{number_html(comparison.difference, signed=True)}{arrow}</small>"
                    )
                cells.append(f'<td class="{kind}">{text}</td>')
            if self.result.gates:
                cells.append(f"<td>{gate_cells(gates.get(metric, []))}</td>")
            rows.setdefault(kind_of(metric), []).append("<tr>" + "".join(cells) + "</tr>")
        if self.result.gates:
            head += "<th>gates</th>"
        tables = ""
        for group in sorted(rows, key=lambda name: name != ACCURACY):  # accuracy first
            if len(rows) > 1:
                tables += (
                    f'<h3 data-kind="{html_text(group)}">{html_text(group.capitalize())}</h3>\n'
                )
            tables += table_html(head, rows[group])
        notes = []
        if len(names) > 1:
            notes.append("* and bold: the best value of the metric.")
        if self.first.confidence is not None:
            notes.append("In brackets: the confidence interval (see below).")
        if self.result.comparison is not None:
            notes.append("Signed: the difference from the baseline; ▲/▼ a significant win/loss.")
        note = f'<p class="note">{html_text(" ".join(notes))}</p>\n' if notes else ""
        figure = ""
        if self.several and self.draws:
            chosen = list(representatives(list(self.first.metrics), self._gated()).values())
            for group, metrics in split_kinds(chosen).items():  # accuracy, then beyond it
                svg = self._bars(metrics, self.models, self._prefix())
                if not svg:
                    continue
                caption = (
                    f"{html_text(group.capitalize())} metrics: one cutoff per metric family (the "
                    "gated one, else the deepest), the metrics in [0, 1] drawn on [0, 1]"
                )
                if self.first.confidence is not None:
                    caption += "; error bars: the confidence intervals"
                name = "models" if group == ACCURACY else f"models: {group}"
                figure += f'<div class="wide">{self._figure("bars", name, svg, caption)}</div>'
        return tables + note + figure

    def gates(self) -> str:
        if not self.result.gates:
            return '<p class="note">No gates in this config.</p>\n'
        return gates_table(self.result.gates, self.several)

    def users(self) -> str:
        parts = []
        for name, report in self.models.items():
            line = users_line(report.users)
            parts.append(f"<p>{html_text(f'{name}: {line}' if self.several else line)}</p>\n")
        for block in ("users", "pairs", "logged", "items"):
            data = {n: getattr(r, block) for n, r in self.models.items()}
            if all(v is None for v in data.values()):
                continue
            parts.append(f"<h3>{html_text(block)}</h3>\n" + self._flat_table(data))
        return "".join(parts)

    def _flat_table(self, data: Mapping[str, Mapping[str, Any] | None]) -> str:
        """Nested blocks flattened to dotted keys: one row per key, one column per model."""
        flat = {n: dict(_flatten(block or {})) for n, block in data.items()}
        keys = list(dict.fromkeys(k for values in flat.values() for k in values))
        head = "<th>key</th>" + "".join(
            f"<th>{html_text(n)}</th>" if self.several else "<th>value</th>" for n in flat
        )
        rows = [
            f"<tr><td>{html_text(key)}</td>"
            + "".join(_cell(values.get(key)) for values in flat.values())
            + "</tr>"
            for key in keys
        ]
        return table_html(head, rows)

    def comparisons(self) -> str:
        parts = []
        if self.first.confidence is not None:
            line = confidence_line(self.first.confidence).removeprefix("±: half-width of the ")
            parts.append(f"<p>{html_text('In brackets: the ' + line)}</p>\n")
        result = self.result
        if result.comparison is None:
            return "".join(parts)
        c = result.comparison
        against = result.baseline or result.baseline_report or "the baseline"
        how = f"Every model against {against}: {result.test_method()}, level {c['level']:g}."
        parts.append(f"<p>{html_text(how)}</p>\n")
        if self.draws:
            parts.append(difference_figures(result, self._figure, self._prefix))
        parts.append(comparisons_table(result))
        if detailed(result):
            rows = [
                "<tr>" + "".join(f"<td>{html_text(x)}</td>" for x in detail_cells(c)) + "</tr>"
                for c in detailed(result)
            ]
            head = "".join(f"<th>{html_text(h)}</th>" for h in DETAIL_HEADERS)
            summary = "Per-user outcomes, effect sizes and power"
            about = f"<p>{html_text(detail_heading(result).capitalize())}.</p>\n"
            parts.append(_folded(summary, about + table_html(head, rows)))
        if result.list_comparisons:
            rows = [
                "<tr>" + "".join(f"<td>{html_text(x)}</td>" for x in row) + "</tr>"
                for row in list_cells(result)
            ]
            head = "".join(f"<th>{html_text(h)}</th>" for h in LIST_HEADERS)
            parts.append(_folded(LISTS_HEADING.capitalize(), table_html(head, rows)))
        return "".join(parts)

    def curves(self) -> str:
        from receval_cli.report import plots

        families: dict[str, list[tuple[int, str]]] = {}
        for metric in self.first.metrics:
            spec = spec_of(metric)
            if spec.k is not None:
                family = str(MetricSpec(spec.name, None, spec.params))
                families.setdefault(family, []).append((spec.k, metric))
        figures = []
        for family, members in families.items():
            if len({k for k, _ in members}) < 2:
                continue
            members.sort()
            curves = {
                name: [
                    (k, value, interval_of(report, m))
                    for k, m in members
                    if (value := report.metrics[m]) is not None  # no value: no point
                ]
                for name, report in self.models.items()
            }
            label = family_label(family)
            svg = plots.curve_figure(label, curves, self._prefix())
            ks = ", ".join(str(k) for k, _ in members)
            caption = f"<code>{html_text(label)}</code> for k = {html_text(ks)}"
            if self.first.confidence is not None:
                caption += "; bands: confidence intervals"
            figures.append(self._figure("curve", label, svg, caption))
        return _grid(figures)

    def pr_curves(self) -> str:
        """The interpolated precision-recall curve of each iprec_at_recall family (the same
        cutoff and parameters) the run computed at two or more recall levels (`pr_curve:
        true` adds the 11 standard ones): the mean at each level, models as lines."""
        families: dict[str, list[tuple[float, str]]] = {}
        for metric in self.first.metrics:
            spec = spec_of(metric)
            if spec.name != "iprec_at_recall":
                continue
            params = spec.param_dict()
            level = float(params.pop("level", 0.0))
            family = str(MetricSpec(spec.name, spec.k, tuple(params.items())))
            families.setdefault(family, []).append((level, metric))
        from receval_cli.report import story_plots

        figures = []
        for family, members in families.items():
            if len(members) < 2:
                continue
            members.sort()
            curves = {
                name: [
                    (level, value, interval_of(report, m))
                    for level, m in members
                    if (value := report.metrics.get(m)) is not None
                ]
                for name, report in self.models.items()
            }
            svg = story_plots.pr_curve_figure(curves, self._prefix())
            levels = ", ".join(f"{level:g}" for level, _ in members)
            caption = (
                f"<code>{html_text(family)}</code>: the mean interpolated precision at the recall "
                f"levels {html_text(levels)}"
            )
            if self.first.confidence is not None:
                caption += "; bands: confidence intervals"
            figures.append(self._figure("pr_curve", family, svg, caption))
        return _grid(figures)

    def distributions(self) -> str:
        from receval_cli.report import plots

        if any(r.per_user is None or r.counted is None for r in self.models.values()):
            return (
                '<p class="note">This run kept no per-user values, so there is no '
                "distribution to show.</p>\n"
            )
        values: dict[str, dict[str, list[float]]] = {}
        # null where a user is not in the metric's mean
        table = per_user_values(self.result).collect()
        for name, report in self.models.items():
            rows = table.filter(pl.col("model") == name)
            assert report.counted is not None
            for metric in (c for c in report.counted.columns if c != "user"):
                if ratio_of(spec_of(metric)) is not None:
                    continue  # a ratio of sums: its users' values do not average to it
                column = rows.get_column(metric).cast(pl.Float64)
                values.setdefault(metric, {})[name] = column.filter(column.is_finite()).to_list()
        figures = []
        binary = []
        shown = representatives([m for m in values if any(values[m].values())], self._gated())
        for family, metric in shown.items():
            by_model = values[metric]
            if all(v in (0.0, 1.0) for series in by_model.values() for v in series):
                binary.append(metric)  # 0 or 1 per user: the mean says it all
                continue
            geometric = is_geometric(spec_of(metric))
            means = {name: users_mean(series, geometric) for name, series in by_model.items()}
            svg = plots.histogram_figure(metric, by_model, self._prefix(), means)
            summaries = []
            for name, series in by_model.items():
                kind = "geometric mean" if geometric else "mean"
                text = f"{len(series)} users, {kind} {number_html(means[name])}"
                summaries.append(f"{html_text(name)}: {text}" if self.several else text)
            caption = f"<code>{html_text(metric)}</code>: " + "; ".join(summaries)
            others = siblings(self.first.metrics, family, metric)
            if others:
                caption += (
                    f"; one cutoff of {html_text(family_label(family))} ({html_text(others)})"
                )
            figures.append(self._figure("histogram", metric, svg, caption + "; dashed: the mean"))
        note = ""
        if binary:
            listed = ", ".join(binary)
            note = (
                f'<p class="note">Not drawn: {html_text(listed)}, 0 or 1 for every user (the '
                "mean is the share of users with 1).</p>\n"
            )
        return _grid(figures) + note

    def _bars(self, metrics: list[str], reports: Mapping[str, Report], prefix: str) -> str:
        """Grouped bars of `metrics` (those in [0, 1]) for each of `reports`, intervals as
        error bars; "" when none of them can be drawn on [0, 1]."""
        from receval_cli.report import plots

        unit = [
            m
            for m in metrics
            if all((v := r.metrics.get(m)) is None or 0.0 <= v <= 1.0 for r in reports.values())
            and any(r.metrics.get(m) is not None for r in reports.values())
        ]
        if not unit:
            return ""
        bars = {
            name: [(report.metrics.get(m), interval_of(report, m)) for m in unit]
            for name, report in reports.items()
        }
        return plots.bars_figure(unit, bars, prefix)

    def ratings(self) -> str:
        """Rating runs: the calibration (mean actual per bin of predicted) and the
        residuals, from each model's (predicted, actual) pair counts."""
        tables = {n: r.calibration for n, r in self.models.items() if r.calibration is not None}
        tables = {n: t for n, t in tables.items() if t.height}
        if not tables:
            return ""
        from receval_cli.report import story_plots

        pairs = "; ".join(
            f"{html_text(n) + ': ' if self.several else ''}{int(t['pairs'].sum())} pairs"
            for n, t in tables.items()
        )
        figures = [
            self._figure(
                "calibration",
                "calibration",
                story_plots.calibration_figure(tables, self._prefix()),
                f"Calibration: the mean actual rating of the pairs in each of 12 bins of the "
                f"predicted rating (points sized by their pairs); dashed: perfect calibration. "
                f"{pairs}",
            ),
            self._figure(
                "residuals",
                "residuals",
                story_plots.residual_figure(tables, self._prefix()),
                "Residuals: predicted minus actual rating, over every scored pair",
            ),
        ]
        note = (
            '<p class="note">Predicted and actual ratings are counted to 3 significant '
            "digits for these figures; the metrics use the exact values.</p>\n"
        )
        return _grid(figures) + note

    def clicks(self) -> str:
        """Click runs: the matched recommendations' inverse-propensity weights, and the
        effective sample size of each estimate."""
        tables = {n: r.weights for n, r in self.models.items() if r.weights is not None}
        tables = {n: t for n, t in tables.items() if t.height}
        if not tables:
            return ""
        from receval_cli.report import story_plots

        rows = []
        for name, report in self.models.items():
            logged = report.logged or {}
            for metric, size in (logged.get("effective_sample_size") or {}).items():
                cells = [
                    *([html_text(name)] if self.several else []),
                    f"<code>{html_text(metric)}</code>",
                ]
                variance = (logged.get("variance") or {}).get(metric)
                cells += [number_html(logged.get("matched")), number_html(size)]
                cells.append(number_html(variance))
                rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        head = ("<th>model</th>" if self.several else "") + (
            "<th>estimate</th><th>matched</th><th>effective sample size</th><th>variance</th>"
        )
        figure = self._figure(
            "weights",
            "weights",
            story_plots.weights_figure(tables, self._prefix()),
            "The inverse propensity 1/p of each recommendation matched in the log "
            "(unclipped; max_weight clips it in its estimate). A few large weights make an "
            "IPS or DR estimate rest on few clicks: the effective sample size "
            "(sum w)^2 / sum w^2 says on how many."
            + (
                " Here every weight is the same (a uniform logging policy)."
                if all(t.height == 1 for t in tables.values())
                and len({t.item(0, "weight") for t in tables.values()}) == 1
                else ""
            ),
        )
        return _grid([figure]) + table_html(head, rows)

    def _popularity_bias(self) -> str:
        tables = {
            n: r.popularity_bias for n, r in self.models.items() if r.popularity_bias is not None
        }
        if not tables or not any(int(t["recommendations"].sum()) for t in tables.values()):
            return ""
        from receval_cli.report import story_plots

        first = next(iter(tables.values()))
        unlogged = first.filter(pl.col("group").is_null())
        extra = ""
        if unlogged.height:
            extra = (
                f"; {int(unlogged['items'].sum())} recommended items are not in the log (left out)"
            )
        caption = (
            "Popularity bias: the log's items ranked by their rows in the log, in ten groups "
            "of equal size; each group's share of the log (grey) and of the recommended "
            f"slots in the {html_text(self._depth())} lists{html_text(extra)}"
        )
        svg = story_plots.popularity_bias_figure(tables, self._prefix())
        return f'<div class="wide">{self._figure("popularity", "popularity", svg, caption)}</div>'

    def exposure(self) -> str:
        from receval_cli.report import plots

        exposures: dict[str, list[tuple[int, int]]] = {}
        universes: dict[str, str] = {}
        for name, report in self.models.items():
            if report.exposure is None:
                continue
            rows = report.exposure.select("lists", "items").iter_rows()
            exposures[name] = [(int(count), int(items)) for count, items in rows]
            universes[name] = (report.items or {}).get("universe", "recommended items")
        if not exposures or not any(exposed(h) for h in exposures.values()):
            return ""
        depth = self._depth()
        ginis = {
            name: gini_of_histogram(pl.DataFrame(h, schema=["lists", "items"], orient="row"))
            for name, h in exposures.items()
            if exposed(h)
        }
        exposures = {name: exposures[name] for name in ginis}
        figures = [
            self._figure(
                "long_tail",
                "exposure",
                plots.long_tail_figure(exposures, depth, self._prefix()),
                "; ".join(self._tail_caption(n, h) for n, h in exposures.items()),
            ),
            self._figure(
                "lorenz",
                "gini",
                plots.lorenz_figure(exposures, ginis, self._prefix()),
                "; ".join(
                    f"{html_text(name + ': ' if self.several else '')}Gini "
                    f"{number_html(ginis[name])} of the exposure in the {html_text(depth)} "
                    "lists over "
                    f"the {html_text(universes[name])} ({sum(i for _, i in histogram)} items)"
                    for name, histogram in exposures.items()
                ),
            ),
        ]
        return (
            f'<p class="note">Exposure: how many of the {html_text(depth)} lists hold each item'
            "; items never recommended count 0 when there is a catalog or a log.</p>\n"
            + _grid(figures)
            + self._popularity_bias()
        )

    def _tail_caption(self, name: str, histogram: list[tuple[int, int]]) -> str:
        text = (
            f"{sum(items for _, items in histogram)} items, the most exposed in "
            f"{max(count for count, _ in histogram)} lists, "
            f"{sum(items for count, items in histogram if count == 0)} never recommended"
        )
        return html_text(f"{name}: {text}" if self.several else text)

    def _depth(self) -> str:
        return lists_depth(self.first.metrics, self.result.conventions.get("max_depth"))

    def _gated(self) -> set[str]:
        return {gate.metric for gate in self.result.gates}

    def segments(self) -> str:
        parts = [self._segment_multiples()]
        for name, report in self.models.items():
            if not report.segments and not report.segments_skipped:
                continue
            title = f"{name}: " if self.several else ""
            names = list(report.segments)
            head = "<th>metric</th>" + "".join(
                f"<th>{html_text(s)}<br><small>{report.segments[s].users['evaluated']} users"
                "</small></th>"
                for s in names
            )
            rows = [
                f"<tr><td><code>{html_text(metric)}</code></td>"
                + "".join(
                    f'<td class="num">{number_html(report.segments[s].metrics[metric])}</td>'
                    for s in names
                )
                + "</tr>"
                for metric in report.metrics
            ]
            parts.append(f"<h3>{html_text(title)}by segment</h3>\n" + table_html(head, rows))
            for segment, reason in report.segments_skipped.items():
                parts.append(f"<p>{html_text(f'{segment} not evaluated: {reason}')}</p>\n")
        return "".join(parts)

    def _segment_multiples(self) -> str:
        """Small multiples: for each attribute and each metric family, one small figure
        of the metric in each of the attribute's segments, a bar per model (intervals as
        error bars): the models compared within each segment."""
        from receval_cli.report import plots

        names = list(dict.fromkeys(s for r in self.models.values() for s in r.segments))
        if not names:
            return ""
        attributes: dict[str, list[str]] = {}
        for name in names:
            attributes.setdefault(name.split("=", 1)[0], []).append(name)
        chosen = list(representatives(list(self.first.metrics), self._gated()).values())
        parts = []
        for attribute, segments in attributes.items():
            figures = []
            for metric in chosen:
                bars = {
                    model: [segment_bar(report.segments.get(s), metric) for s in segments]
                    for model, report in self.models.items()
                }
                values = [v for series in bars.values() for v, _ in series if v is not None]
                if not values or min(values) < 0.0 or max(values) > 1.0:
                    continue
                labels = [s.split("=", 1)[1] for s in segments]
                svg = plots.bars_figure(
                    labels, bars, self._prefix(), ylabel=metric, size=(3.4, 2.4)
                )
                figures.append(
                    self._figure(
                        "segment",
                        f"{attribute}:{metric}",
                        svg,
                        f"<code>{html_text(metric)}</code> by {html_text(attribute)}",
                    )
                )
            if figures:
                parts.append(
                    f"<h3>{html_text(attribute)}: {len(segments)} segments</h3>\n"
                    f'<div class="plots small">\n{"".join(figures)}</div>\n'
                )
        return "".join(parts)

    def conventions(self) -> str:
        rows = [
            f"<tr><td><code>{html_text(key)}</code></td><td>{html_text(_plain(value))}</td></tr>"
            for key, value in self.result.conventions.items()
            if key != "by_metric"
        ]
        table = table_html("<th>convention</th><th>value</th>", rows)
        tools = by_metric_lines(self.result.conventions)  # other tools' names, each tool's
        if tools:
            table += "".join(f"<p>{html_text(line)}</p>\n" for line in tools)
        return _folded(f"Every convention of the run ({len(rows)})", table)

    def inputs(self) -> str:
        table = self._flat_table({name: report.inputs for name, report in self.models.items()})
        return _folded("The input files: paths, rows, columns and checks", table)


def _flatten(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        if isinstance(value, Mapping):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _cell(value: Any) -> str:
    """A table cell: numbers right-aligned."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return (
        f'<td class="num">{number_html(value)}</td>' if number else f"<td>{number_html(value)}</td>"
    )


def _plain(value: Any) -> str:
    return "none" if value is None else str(value)


def _grid(figures: list[str]) -> str:
    return f'<div class="plots">\n{"".join(figures)}</div>\n' if figures else ""


def _pre(text: str) -> str:
    return f"<pre>{html_text(text)}</pre>\n"


def _folded(summary: str, content: str) -> str:
    """Content that is there to look up, not to read: closed until clicked."""
    return f"<details>\n<summary>{html_text(summary)}</summary>\n{content}</details>\n"


def _folded_config(config: Mapping[str, Any]) -> str:
    text = json.dumps(config, indent=2, default=str)
    lines = text.count("\n") + 1
    return _folded(f"The resolved config ({lines} lines of JSON)", _pre(text))
