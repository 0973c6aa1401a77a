"""The HTML report's figures for rating, click and popularity runs: calibration and
residuals of predicted ratings, the distribution of inverse-propensity weights, and the
popularity bias of the recommendations against the interactions log.

Each reads a small integer table of the Report (counts by rounded value, or by
popularity group), so the figures are the same bytes on every engine.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import polars as pl
from matplotlib.axes import Axes

from receval_cli.report.plots import color, label, legend, new_figure, to_svg


def _bins(low: float, high: float, count: int) -> list[float]:
    if low == high:
        low, high = low - 0.5, high + 0.5
    return [low + (high - low) * i / count for i in range(count + 1)]


def calibration_figure(tables: Mapping[str, pl.DataFrame], prefix: str) -> str:
    """Mean actual rating against the predicted one, in 12 equal-width bins of the
    prediction (points sized by their pairs), one line per model, and the diagonal."""
    figure, axes = new_figure()
    found = [v for t in tables.values() for c in ("predicted", "actual") for v in t[c]]
    low, high = min(found), max(found)
    axes.plot([low, high], [low, high], color="#999999", linestyle="--", linewidth=1)
    edges = _bins(
        min(min(t["predicted"]) for t in tables.values()),
        max(max(t["predicted"]) for t in tables.values()),
        12,
    )
    for index, (name, table) in enumerate(tables.items()):
        xs, ys, sizes = [], [], []
        for left, right in itertools.pairwise(edges):
            last = right == edges[-1]
            inside = table.filter(
                (pl.col("predicted") >= left)
                & ((pl.col("predicted") <= right) if last else (pl.col("predicted") < right))
            )
            pairs = int(inside["pairs"].sum())
            if not pairs:
                continue
            xs.append(
                math.fsum(p * n for p, n in zip(inside["predicted"], inside["pairs"], strict=True))
                / pairs
            )
            ys.append(
                math.fsum(a * n for a, n in zip(inside["actual"], inside["pairs"], strict=True))
                / pairs
            )
            sizes.append(pairs)
        biggest = max(sizes, default=1)
        axes.scatter(xs, ys, s=[12 + 60 * n / biggest for n in sizes], color=color(index))
        axes.plot(xs, ys, color=color(index), linewidth=1, label=label(name))
    axes.set_xlabel("predicted rating (bin mean)")
    axes.set_ylabel("actual rating (mean)")
    legend(axes, list(tables))
    return to_svg(figure, prefix)


def _step_histograms(
    axes: Axes,
    values: Mapping[str, Sequence[float]],
    weights: Mapping[str, Sequence[int]],
    edges: Sequence[float],
) -> None:
    """One weighted histogram per model on shared `edges`: filled for one model, steps
    for several."""
    several = len(values) > 1
    for index, (name, series) in enumerate(values.items()):
        axes.hist(
            list(series),
            bins=list(edges),
            weights=list(weights[name]),
            histtype="step" if several else "stepfilled",
            alpha=1.0 if several else 0.6,
            color=color(index),
            linewidth=1.4,
            label=label(name),
        )


def residual_figure(tables: Mapping[str, pl.DataFrame], prefix: str) -> str:
    """The residuals predicted - actual, weighted by their pairs, one step histogram
    per model, and a line at 0."""
    residuals = {name: (t["predicted"] - t["actual"]).to_list() for name, t in tables.items()}
    found = [r for values in residuals.values() for r in values]
    edges = _bins(min(found), max(found), 24)
    figure, axes = new_figure()
    weights = {name: t["pairs"].to_list() for name, t in tables.items()}
    _step_histograms(axes, residuals, weights, edges)
    axes.axvline(0.0, color="#555555", linewidth=0.8)
    axes.set_xlabel("predicted - actual")
    axes.set_ylabel("pairs")
    legend(axes, list(tables))
    return to_svg(figure, prefix)


def weights_figure(tables: Mapping[str, pl.DataFrame], prefix: str) -> str:
    """The matched recommendations' inverse-propensity weights, on a log scale when they
    span more than a factor of 20; one step histogram per model."""
    found = [w for t in tables.values() for w in t["weight"] if w > 0]
    low, high = min(found), max(found)
    logarithmic = high / low > 20
    if logarithmic:
        edges = [10**v for v in _bins(math.log10(low), math.log10(high), 20)]
    else:
        edges = _bins(low, high, 20)
    figure, axes = new_figure()
    values = {name: t["weight"].to_list() for name, t in tables.items()}
    counts = {name: t["recommendations"].to_list() for name, t in tables.items()}
    _step_histograms(axes, values, counts, edges)
    if logarithmic:
        axes.set_xscale("log")
    axes.set_xlabel("1 / propensity" + (" (log scale)" if logarithmic else ""))
    axes.set_ylabel("matched recommendations")
    legend(axes, list(tables))
    return to_svg(figure, prefix)


def popularity_bias_figure(tables: Mapping[str, pl.DataFrame], prefix: str) -> str:
    """Per popularity group of the log's items (1: the most popular tenth), its share
    of the log's rows (grey) and of each model's recommendations (a bar per model)."""
    first = next(iter(tables.values()))
    groups = [g for g in first["group"].to_list() if g is not None]
    figure, axes = new_figure((6.2, 3.0))
    shares: dict[str, Sequence[float]] = {}
    log_total = max(int(first["log_rows"].sum()), 1)
    shares["interactions log"] = [
        int(first.filter(pl.col("group") == g)["log_rows"].sum()) / log_total for g in groups
    ]
    for name, table in tables.items():
        total = max(int(table["recommendations"].sum()), 1)
        shares[name] = [
            int(table.filter(pl.col("group") == g)["recommendations"].sum()) / total for g in groups
        ]
    step = 0.8 / len(shares)
    for index, (name, values) in enumerate(shares.items()):
        offset = (index - (len(shares) - 1) / 2) * step
        shade = "#aaaaaa" if index == 0 else color(index - 1)
        axes.bar(
            [g + offset for g in groups], values, width=step * 0.9, color=shade, label=label(name)
        )
    axes.set_xticks(groups, [str(g) for g in groups])
    axes.set_xlabel("items by popularity in the log, in ten equal groups (1: most popular)")
    axes.set_ylabel("share")
    top = max(v for values in shares.values() for v in values)
    axes.set_ylim(0.0, min(1.0, max(0.1, top * 1.15)))
    axes.legend(fontsize=8, frameon=False)
    return to_svg(figure, prefix)


# one model's curve: (recall level, interpolated precision, interval or None) per level
PrCurve = Sequence[tuple[float, float, tuple[float, float] | None]]


def pr_curve_figure(curves: Mapping[str, PrCurve], prefix: str) -> str:
    """The interpolated precision-recall curve: the mean iprec_at_recall at each recall
    level, one line per model, a band for the intervals; both axes [0, 1]."""
    figure, axes = new_figure((4.0, 3.4))
    for index, (name, points) in enumerate(curves.items()):
        levels = [level for level, _, _ in points]
        axes.plot(
            levels, [v for _, v, _ in points], marker="o", color=color(index), label=label(name)
        )
        bands = [b for _, _, b in points]
        if bands and all(b is not None for b in bands):
            lows = [b[0] for b in bands if b is not None]
            highs = [b[1] for b in bands if b is not None]
            axes.fill_between(levels, lows, highs, color=color(index), alpha=0.15, linewidth=0)
    axes.set_xlim(0.0, 1.0)
    axes.set_ylim(0.0, 1.0)
    axes.set_xlabel("recall")
    axes.set_ylabel("interpolated precision")
    legend(axes, list(curves))
    return to_svg(figure, prefix)
