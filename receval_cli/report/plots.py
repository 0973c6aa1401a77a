"""The HTML report's figures: matplotlib's object API (no pyplot state), saved as SVG text.

Only `--format html` imports this module, so other runs never pay for matplotlib. The SVG
is deterministic: text stays text (svg.fonttype none), ids come from a fixed salt and are
prefixed per figure (unique in the page), and there is no date, no metadata, no namespace
URL: the markup is meant to be inlined in an HTML page.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

from receval_cli.escaping import printable

# matplotlib's tab10, in a fixed order: one colour per model
COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
_VERDICT_COLORS = {"win": "#2ca02c", "loss": "#d62728", "tie": "#7f7f7f", "untested": "#000000"}
_RC: dict[Any, Any] = {  # Any: matplotlib types the keys as a Literal of every rcParam
    "svg.fonttype": "none",
    "svg.hashsalt": "receval",
    "font.size": 9.0,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
}
_SIZE = (4.6, 2.9)  # inches: two figures side by side on a laptop screen
_TAG = re.compile(r"<[^>]*>")

# one curve: (cutoff, value, interval or None) for each cutoff
Curve = Sequence[tuple[int, float, tuple[float, float] | None]]


def color(index: int) -> str:
    return COLORS[index % len(COLORS)]


def label(text: str) -> str:
    """Text shown as it is: no mathtext ($), not hidden from legends (a leading _),
    control characters as printable() writes them."""
    text = printable(text).replace("$", r"\$")
    return "\u200b" + text if text.startswith("_") else text


def to_svg(figure: Figure, prefix: str) -> str:
    """The figure as an <svg> element; every id (and reference to it) starts with prefix."""
    buffer = io.StringIO()
    metadata = {"Date": None, "Creator": None, "Format": None, "Type": None}
    with mpl.rc_context(_RC):
        FigureCanvasSVG(figure)
        figure.savefig(buffer, format="svg", metadata=metadata)
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = re.sub(r"<style[^>]*>.*?</style>\s*", "", text, flags=re.S)

    def fix(tag: re.Match[str]) -> str:
        markup = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", tag.group(0))
        markup = re.sub(r'\bid="', f'id="{prefix}', markup)
        markup = markup.replace('href="#', f'href="#{prefix}')
        return markup.replace("url(#", f"url(#{prefix}")

    return _TAG.sub(fix, text).strip() + "\n"


def new_figure(size: tuple[float, float] = _SIZE) -> tuple[Figure, Axes]:
    with mpl.rc_context(_RC):
        figure = Figure(figsize=size, layout="constrained")
        axes = figure.add_subplot()
    axes.grid(True, color="#dddddd", linewidth=0.6)
    axes.set_axisbelow(True)
    return figure, axes


# the legend of the trend plots' marker of a run that failed a gate
FAILED_RUN = "run failed a gate"


def legend(axes: Axes, names: Sequence[str]) -> None:
    if len(names) > 1:
        axes.legend(fontsize=8, frameon=False)


def curve_figure(family: str, curves: Mapping[str, Curve], prefix: str) -> str:
    """family@k against k, one line per model, with a band for the intervals; the y
    axis fits the values (_fitted_axis: values of 0.01 to 0.2 are not flattened on [0, 1])
    and its label states the span when it is not [0, 1]."""
    figure, axes = new_figure()
    for index, (name, points) in enumerate(curves.items()):
        ks = [k for k, _, _ in points]
        axes.plot(ks, [v for _, v, _ in points], marker="o", color=color(index), label=label(name))
        bands = [b for _, _, b in points]
        if all(b is not None for b in bands):
            lows = [b[0] for b in bands if b is not None]
            highs = [b[1] for b in bands if b is not None]
            axes.fill_between(ks, lows, highs, color=color(index), alpha=0.15, linewidth=0)
    cutoffs = sorted({k for points in curves.values() for k, _, _ in points})
    axes.set_xticks(cutoffs)
    axes.set_xlabel("k (cutoff)")
    found = [v for points in curves.values() for _, v, b in points for v in (v, *(b or ()))]
    axes.set_ylabel(label(family) + _fitted_axis(axes, found), fontsize=8)
    legend(axes, list(curves))
    return to_svg(figure, prefix)


def histogram_figure(
    metric: str,
    values: Mapping[str, Sequence[float]],
    prefix: str,
    means: Mapping[str, float] | None = None,
) -> str:
    """The per-user values of one metric: one step histogram per model, shared bins, and a
    dashed line at each model's mean (`means`, default the arithmetic mean of the values:
    a geometric mean is given)."""
    found = [v for series in values.values() for v in series]
    low, high = min(found), max(found)
    if low >= 0.0 and high <= 1.0:
        low, high = 0.0, 1.0
    elif low == high:
        low, high = low - 0.5, high + 0.5
    bins = [low + (high - low) * i / 20 for i in range(21)]
    figure, axes = new_figure()
    several = len(values) > 1
    for index, (name, series) in enumerate(values.items()):
        axes.hist(
            list(series),
            bins=bins,
            histtype="step" if several else "stepfilled",
            color=color(index),
            alpha=1.0 if several else 0.6,
            linewidth=1.4,
            label=label(name),
        )
        if series:
            mean = means[name] if means is not None else math.fsum(series) / len(series)
            axes.axvline(mean, color=color(index), linestyle="--")
    axes.set_xlabel(f"{label(metric)} per user")
    axes.set_ylabel("users")
    legend(axes, list(values))
    return to_svg(figure, prefix)


def long_tail_figure(
    exposures: Mapping[str, Sequence[tuple[int, int]]], depth: str, prefix: str
) -> str:
    """Each item's exposure (the lists holding it), most exposed first, one line per
    model; `exposures`: per model, (lists, items) pairs: how many items are in that many
    lists. Drawn as the steps where the exposure changes: exact, and small however many
    items there are."""
    figure, axes = new_figure()
    for index, (name, histogram) in enumerate(exposures.items()):
        xs: list[int] = []
        ys: list[int] = []
        position = 0
        for count, items in sorted(histogram, reverse=True):
            xs.append(position + 1)
            ys.append(count)
            position += items
        if ys:
            xs.append(position)
            ys.append(ys[-1])
        axes.step(xs, ys, where="post", color=color(index), label=label(name))
    axes.set_xlabel("items, most exposed first")
    axes.set_ylabel(f"{depth} lists holding the item")
    axes.set_ylim(bottom=0)
    legend(axes, list(exposures))
    return to_svg(figure, prefix)


def lorenz_figure(
    exposures: Mapping[str, Sequence[tuple[int, int]]],
    ginis: Mapping[str, float],
    prefix: str,
) -> str:
    """The Lorenz curve of exposure (items ascending), the diagonal of an even exposure;
    `exposures` as long_tail_figure's (the curve bends only where the exposure changes)."""
    figure, axes = new_figure((4.0, 3.4))
    axes.plot([0, 1], [0, 1], color="#999999", linestyle=":", label="even exposure")
    for index, (name, histogram) in enumerate(exposures.items()):
        ordered = sorted(histogram)
        n = sum(items for _, items in ordered)
        total = sum(count * items for count, items in ordered) or 1
        xs, ys = [0.0], [0.0]
        running, position = 0, 0
        for count, items in ordered:
            running += count * items
            position += items
            xs.append(position / n)
            ys.append(running / total)
        shown = f"{name} (Gini {ginis[name]:.4f})"
        axes.plot(xs, ys, color=color(index), label=label(shown))
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.set_xlabel("share of items (least exposed first)")
    axes.set_ylabel("share of exposure")
    axes.legend(fontsize=8, frameon=False, loc="upper left")
    return to_svg(figure, prefix)


def comparison_figure(
    rows: Sequence[tuple[str, float, float | None, float | None, str]],
    prefix: str,
    small: bool = False,
) -> str:
    """Each (model, metric) difference from the baseline with its interval, coloured by
    the verdict (win, loss, tie, untested); `small`: a figure of a grid (one metric
    family, whose scale the x axis fits)."""
    if small:
        figure, axes = new_figure((3.4, max(1.4, 0.2 * len(rows) + 0.8)))
    else:
        figure, axes = new_figure((6.4, max(1.8, 0.28 * len(rows) + 1.0)))
    for position, (_, difference, low, high, verdict) in enumerate(reversed(rows)):
        shade = _VERDICT_COLORS.get(verdict, "#000000")
        if low is not None and high is not None:
            axes.plot([low, high], [position, position], color=shade, linewidth=2)
        axes.plot([difference], [position], marker="o", color=shade)
    axes.axvline(0.0, color="#555555", linewidth=0.8)
    axes.set_yticks(range(len(rows)), [label(r[0]) for r in reversed(rows)])
    axes.set_ylim(-0.7, len(rows) - 0.3)
    axes.set_xlabel("difference from the baseline")
    return to_svg(figure, prefix)


# one model's series over the runs: (run position, value, interval or None)
Series = Sequence[tuple[int, float | None, tuple[float, float] | None]]


def trend_figure(
    metric: str,
    series: Mapping[str, Series],
    runs: Sequence[str],
    bounds: Mapping[str, float],
    prefix: str,
    failed: Sequence[int] = (),
) -> str:
    """A metric over the runs (x: the runs in time order, labelled by `runs`), one line
    per model, a band for the intervals, the gates' bounds as dashed lines (`bounds`:
    {"min": 0.3}), a red x at the foot of each run in `failed` (positions: runs that
    failed a gate), named in the legend. The y axis spans the values (_trend_range) and
    its label states the span, so a change of 0.003 is never drawn as a full-height
    climb unannounced."""
    figure, axes = new_figure((6.2, 3.2))
    found: list[float] = list(bounds.values())
    for index, (name, points) in enumerate(series.items()):
        valued = [(x, v, b) for x, v, b in points if v is not None]
        xs = [x for x, _, _ in valued]
        ys = [v for _, v, _ in valued if v is not None]
        found += ys
        axes.plot(xs, ys, marker="o", markersize=3, color=color(index), label=label(name))
        banded = [(x, b) for x, _, b in valued if b is not None]
        if banded:
            found += [v for _, b in banded for v in b]
            axes.fill_between(
                [x for x, _ in banded],
                [b[0] for _, b in banded],
                [b[1] for _, b in banded],
                color=color(index),
                alpha=0.15,
                linewidth=0,
            )
    for bound, value in bounds.items():
        axes.axhline(value, color="#a11d1d", linestyle="--", linewidth=1)
        axes.annotate(
            f"gate {bound} {value:g}",
            (0, value),
            xycoords=("axes fraction", "data"),
            xytext=(2, 2),
            textcoords="offset points",
            fontsize=7,
            color="#a11d1d",
        )
    axes.set_ylim(*_trend_range(found))
    low, high = axes.get_ylim()
    axes.set_ylabel(label(metric) + f" (axis {low:.3g} to {high:.3g})", fontsize=8)
    step = max(1, math.ceil(len(runs) / 12))  # at most about 12 labels
    ticks = list(range(0, len(runs), step))
    axes.set_xticks(ticks)
    axes.set_xticklabels([label(runs[i]) for i in ticks], rotation=30, ha="right", fontsize=7)
    axes.set_xlim(-0.5, max(len(runs) - 0.5, 0.5))
    axes.set_xlabel("run")
    if failed:
        axes.scatter(
            list(failed),
            [0.04] * len(failed),
            transform=axes.get_xaxis_transform(),  # x: the run; y: the axes' foot
            marker="x",
            color="#a11d1d",
            label=FAILED_RUN,
        )
        axes.legend(fontsize=8, frameon=False)
    else:
        legend(axes, list(series))
    return to_svg(figure, prefix)


def _trend_range(found: Sequence[float]) -> tuple[float, float]:
    """The y span of a trend: the values and bounds with 10% margins, at least 0.05 wide
    (a metric still within noise stays flat), and inside [0, 1] when they all are."""
    if not found:
        return 0.0, 1.0
    low, high = min(found), max(found)
    span = max(high - low, 0.05)
    middle = (low + high) / 2
    low, high = middle - span * 0.6, middle + span * 0.6
    if min(found) >= 0.0 and max(found) <= 1.0:
        low, high = max(low, 0.0), min(high, 1.0)
    return low, high


def _fitted_axis(axes: Axes, found: Sequence[float]) -> str:
    """A y axis that fits the values (_trend_range: 10% margins, at least 0.05 wide,
    inside [0, 1] when they are); the span, as the label's suffix, unless it is [0, 1]."""
    if not found:
        return ""
    low, high = _trend_range(found)
    axes.set_ylim(low, high)
    return "" if (low, high) == (0.0, 1.0) else f" (axis {low:.3g} to {high:.3g})"


def _honest_axis(axes: Axes, found: Sequence[float]) -> str:
    """Values that all lie in [0, 1] are drawn on [0, 1], so a change of 0.003 looks like
    one; others on their own range, which the axis label then states (returned)."""
    if found and min(found) >= 0.0 and max(found) <= 1.0:
        axes.set_ylim(0.0, 1.0)
        return ""
    low, high = axes.get_ylim()
    return f" (axis {low:.3g} to {high:.3g})"


# per model: one (value, interval or None) per group on the x axis (None: no value)
Bars = Mapping[str, Sequence[tuple[float | None, tuple[float, float] | None]]]


def bars_figure(
    groups: Sequence[str],
    bars: Bars,
    prefix: str,
    ylabel: str = "value",
    size: tuple[float, float] | None = None,
) -> str:
    """Grouped bars: one group per entry of `groups` (metrics, or segments), one bar per
    model with its interval as an error bar; the y axis as _honest_axis draws it."""
    width = max(4.6, 0.9 * len(groups) * max(1, len(bars)) ** 0.5 + 1.5)
    figure, axes = new_figure(size or (min(width, 9.0), 2.9))
    models = list(bars)
    step = 0.8 / max(len(models), 1)
    found: list[float] = []
    for index, (name, values) in enumerate(bars.items()):
        offset = (index - (len(models) - 1) / 2) * step
        xs, heights, lows, highs = [], [], [], []
        for position, (value, interval) in enumerate(values):
            if value is None:
                continue
            xs.append(position + offset)
            heights.append(value)
            low, high = interval if interval is not None else (value, value)
            # a bootstrap interval of a constant can miss the value by a rounding error
            lows.append(max(value - low, 0.0))
            highs.append(max(high - value, 0.0))
            found += [value, low, high]
        axes.bar(xs, heights, width=step * 0.9, color=color(index), label=label(name))
        if any(lows) or any(highs):
            axes.errorbar(
                xs, heights, yerr=[lows, highs], fmt="none", ecolor="#333333", capsize=2, lw=0.8
            )
    axes.set_xticks(range(len(groups)), [label(g) for g in groups])
    if len(groups) > 4:
        for tick in axes.get_xticklabels():
            tick.set_rotation(30)
            tick.set_horizontalalignment("right")
    axes.set_ylabel(label(ylabel) + _honest_axis(axes, found), fontsize=8)
    legend(axes, models)
    return to_svg(figure, prefix)
