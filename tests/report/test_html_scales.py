"""The HTML report compares like with like where metrics of different scales meet.

Three models (the sample model, the popularity baseline and a random model drawn here
over the catalog for the same users), accuracy and beyond-accuracy metrics at three
cutoffs, intervals, comparisons and gates (one on a significance test, one against an
empty history store: waived). Every expectation is computed here from the JSON report of
the same run, with this file's own list of the beyond-accuracy metrics.
"""

from __future__ import annotations

import html
import json
import math
import random
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import invoke, write_config

from receval_cli.metrics import MetricSpec

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it

ROOT = Path(__file__).parents[2]
SAMPLE = ROOT / "sample_data"
REPRODUCIBLE: dict[str, str | None] = {"SOURCE_DATE_EPOCH": "1764000000"}
# the beyond-accuracy metrics, written out (not read from the code under test)
BEYOND = {
    "catalog_coverage",
    "prediction_coverage",
    "user_coverage",
    "inter_list_diversity",
    "gini",
    "entropy",
    "novelty",
    "arp",
    "long_tail_share",
    "unexpectedness",
    "intersection",
    "serendipity",
    "intra_list_diversity",
    "categorical_diversity",
    "sufficient_reco",
}
SIGNIFICANT = ("win", "loss")
MINUS = "\u2212"  # matplotlib's minus sign


def is_beyond(metric: str) -> bool:
    return MetricSpec.parse(metric).name in BEYOND


def family(metric: str) -> str:
    spec = MetricSpec.parse(metric)
    return f"{spec.name}@k" + str(spec).removeprefix(f"{spec.name}@{spec.k}")


def text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def section(page: str, key: str) -> str:
    found = re.search(rf'<section id="{key}">(.*?)</section>', page, re.S)
    assert found, f"the page has no {key} section"
    return found.group(1)


def figures(page: str, kind: str) -> dict[str, str]:
    pattern = rf'<figure class="plot" data-kind="{kind}" data-name="([^"]*)">(.*?)</figure>'
    return {html.unescape(name): body for name, body in re.findall(pattern, page, re.S)}


def svg_texts(svg: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def random_predictions(path: Path) -> Path:
    """30 catalog items in random order for each user of the sample predictions."""
    users = sorted(pl.read_csv(SAMPLE / "predictions.csv")["user_id"].unique())
    items = pl.read_ndjson(SAMPLE / "catalog.jsonl")["item_id"].to_list()
    draw = random.Random(33)
    rows = [
        (user, item, float(30 - rank))
        for user in users
        for rank, item in enumerate(draw.sample(items, 30))
    ]
    pl.DataFrame(rows, schema=["user_id", "item_id", "score"], orient="row").write_csv(path)
    return path


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """The page and the JSON report of the three-model run."""
    folder = tmp_path_factory.mktemp("scales")
    config = write_config(
        folder,
        {
            "predictions": {
                "columns": {"user": "user_id", "item": "item_id", "score": "score"},
                "models": {
                    "popular": str(SAMPLE / "popular_predictions.csv"),
                    "itemknn": str(SAMPLE / "predictions.csv"),
                    "random": str(random_predictions(folder / "random.csv")),
                },
            },
            "ground_truth": {
                "path": str(SAMPLE / "ground_truth.parquet"),
                "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
            },
            "catalog": {
                "path": str(SAMPLE / "catalog.jsonl"),
                "columns": {"item": "item_id", "category": "genre"},
            },
            "interactions": {
                "path": str(SAMPLE / "interactions.csv"),
                "columns": {"user": "user_id", "item": "item_id", "timestamp": "timestamp"},
            },
            "cutoffs": [5, 10, 20],
            "metrics": [
                "ndcg",
                "precision",
                "recall",
                "map",
                "catalog_coverage",
                "arp",
                "novelty",
                "gini",
                {"name": "intra_list_diversity", "feature": "category"},
            ],
            "conventions": {"relevance_threshold": 4},
            "confidence": {"level": 0.95, "method": "bootstrap", "resamples": 200, "seed": 7},
            "comparison": {"baseline": "popular", "test": "t", "correction": "holm"},
            "gates": {
                "ndcg@10": {"no_significant_drop": True},
                "precision@10": {"min": 0.05},
                "recall@10": {"max_drop": {"vs": "history", "runs": 5, "absolute": 0.01}},
            },
        },
    )
    # each its own empty history store: the history gate is waived in both alike
    page = invoke("run", config, "-f", "html", "--history", folder / "a", env=REPRODUCIBLE)
    assert page.exit_code == 0, page.stderr
    report = invoke("run", config, "-f", "json", "--history", folder / "b", env=REPRODUCIBLE)
    assert report.exit_code == 0, report.stderr
    return page.stdout, json.loads(report.stdout)


def test_differences_are_drawn_one_metric_family_per_axis(three: tuple[str, Any]) -> None:
    """arp's differences of about -90 and ndcg's of 0.01 never share an axis: one figure
    per metric family, holding that family's rows only (model and cutoff), its x axis
    fitting their differences and intervals."""
    page, report = three
    results = [r for r in report["comparisons"]["results"] if r["difference"] is not None]
    expected: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        expected.setdefault(family(result["metric"]), []).append(result)
    shown = figures(section(page, "comparisons"), "comparison")
    assert set(shown) == set(expected)
    for name, rows in expected.items():
        texts = svg_texts(shown[name])
        labels = {f"{r['model']} @{MetricSpec.parse(r['metric']).k}" for r in rows}
        assert labels <= set(texts), name
        others = {t for t in texts if re.fullmatch(r"\w+ @\d+", t)}
        assert others == labels, name  # no other family's row
        ticks = [float(t.replace(MINUS, "-")) for t in texts if re.fullmatch(rf"{MINUS}?[\d.]+", t)]
        found = [
            v for r in rows for v in (r["difference"], r["low"], r["high"], 0.0) if v is not None
        ]
        extent = max(abs(v) for v in found)
        # the ticks stay near the family's own values (matplotlib pads to a round tick)
        assert max(abs(t) for t in ticks) <= 2.5 * extent, (name, ticks, extent)
    arp = max(abs(r["difference"]) for r in expected["arp@k"])
    ndcg = max(abs(r["difference"]) for r in expected["ndcg@k"])
    assert arp > 50 * ndcg  # the case the figures are drawn apart for


def strength(result: dict[str, Any]) -> tuple[bool, float, float]:
    """Significant first, then |difference| in half-widths of its interval, then p."""
    half = (result["high"] - result["low"]) / 2
    widths = abs(result["difference"]) / half if half > 0 else math.inf
    return result["verdict"] not in SIGNIFICANT, -widths, result["p_adjusted"]


def listed_changes(item: str) -> list[str]:
    return [
        text(re.sub(r"</code>.*", "", line)).strip()
        for line in re.findall(r"<li>([^<]*<code>[^<]+</code>.*?)</li>", item)
    ]


def test_largest_differences_rank_by_significance_and_interval(three: tuple[str, Any]) -> None:
    """Per kind, the three strongest differences from the baseline: not catalog
    coverage's +2000% (one value over all users, untested, no interval), but the
    significant ones the most half-widths of their interval away."""
    page, report = three
    shown = section(page, "summary")
    results = [r for r in report["comparisons"]["results"] if r["difference"]]
    for kind, beyond in (("accuracy", False), ("beyond-accuracy", True)):
        ranked = sorted(
            (r for r in results if is_beyond(r["metric"]) == beyond and r["low"] is not None),
            key=strength,
        )[:3]
        item = re.search(rf'<li data-kind="{kind}">Largest differences.*?</ul></li>', shown, re.S)
        assert item, kind
        assert listed_changes(item.group(0)) == [f"{r['model']}: {r['metric']}" for r in ranked]
        top = ranked[0]
        half = (top["high"] - top["low"]) / 2
        assert f"{abs(top['difference']) / half:.1f} half-widths of its interval" in text(
            item.group(0)
        )
    coverage = [r for r in results if r["metric"].startswith("catalog_coverage")]
    assert max(abs(r["difference"] / r["baseline"]) for r in coverage) > 10  # over +1000%
    assert "catalog_coverage" not in text(shown).split("Largest differences", 1)[1]
    untested = sum(r["low"] is None and r["p_value"] is None for r in results)
    assert f"{untested} differences are one value over all users" in text(shown)


def test_best_counts_accuracy_metrics_only_and_names_ties(three: tuple[str, Any]) -> None:
    page, report = three
    shown = text(section(page, "summary"))
    for kind, beyond in (("accuracy", False), ("beyond-accuracy", True)):
        best = {m: w for m, w in report["best"].items() if is_beyond(m) == beyond}
        wins = dict.fromkeys(report["models"], 0)
        ties: dict[tuple[str, ...], list[str]] = {}
        for metric, winners in best.items():
            if len(winners) == 1:
                wins[winners[0]] += 1
            else:
                ties.setdefault(tuple(winners), []).append(metric)
        leader = max(wins, key=lambda name: wins[name])
        line = f"{leader}, on {wins[leader]} of {len(best)} {kind} metrics"
        if not beyond:
            assert f"Best on accuracy: {line}" in shown
        else:
            assert f"{leader} best, on {wins[leader]} of {len(best)} {kind} metrics" in shown
        for models, metrics in ties.items():
            names = ", ".join(models[:-1]) + f" and {models[-1]}"
            assert f"tied: {names} on {', '.join(metrics)}" in shown
    accuracy = [m for m in report["best"] if not is_beyond(m)]
    # the random model is best on no accuracy metric, though on some beyond-accuracy ones
    assert all("random" not in report["best"][m] for m in accuracy)
    assert any("random" in w for m, w in report["best"].items() if is_beyond(m))
    assert "random on 0" in shown.split("Beyond accuracy")[0]


def gate_rows(page: str) -> list[list[str]]:
    table = section(page, "gates")
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S)
    return [[text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)] for row in rows]


def p_written(value: float) -> str:
    """A p-value as the page must write it: 3 significant digits, below 0.001 in
    scientific notation (3.2e-07)."""
    return f"{value:.1e}" if value < 1e-3 else f"{value:.3g}"


def test_a_significance_gate_shows_its_p_value(three: tuple[str, Any]) -> None:
    page, report = three
    gates = report["gates"]["results"]
    rows = gate_rows(page)
    assert len(rows) == len(gates)
    tested = [
        (g, r) for g, r in zip(gates, rows, strict=True) if g["bound"] == "no_significant_drop"
    ]
    assert tested
    assert any(g["value"] < 1e-6 for g, _ in tested)  # a tiny p: not to be shown as 0
    for gate, (_, model, metric, _, value, margin, _) in tested:
        assert (model, metric) == (gate["model"], gate["metric"])
        assert value == f"p = {p_written(gate['value'])}"
        assert margin == "\u2013"  # an en dash: no margin
    # the comparisons table writes p-values the same way
    table = section(page, "comparisons").split("<tbody>")[1]
    for result in report["comparisons"]["results"]:
        if result["p_adjusted"] is not None:
            p = result["p_adjusted"]
            assert f'<span title="{p!r}" class="whole">{p_written(p)}</span>' in table


def test_a_waived_gate_reads_waived(three: tuple[str, Any]) -> None:
    """The history gate with no past run: "waived: <reason>", counted apart from the
    passed ones in the verdict and the summary."""
    page, report = three
    gates = report["gates"]["results"]
    waived = [g for g in gates if "waived" in g]
    assert len(waived) == 2  # a model each: itemknn and random
    rows = gate_rows(page)
    for gate, row in zip(gates, rows, strict=True):
        if "waived" in gate:
            assert row[0] == "waived"
            assert row[-1] == f"waived: {gate['waived']}"
        else:
            assert row[0] == ("pass" if gate["passed"] else "FAIL")
    passed = sum(g["passed"] and "waived" not in g for g in gates)
    tally = f"{passed} of {len(gates)} gates passed, {len(waived)} waived"
    assert f'<p class="verdict waived">passed: {tally}</p>' in page
    assert tally in text(section(page, "summary"))


def test_cutoff_curves_fit_their_values(three: tuple[str, Any]) -> None:
    """Each family's curve: the y axis holds its values and intervals and is not much
    wider than they are; a span other than [0, 1] is stated on the axis."""
    page, report = three
    models = report["models"]
    shown = figures(page, "curve")
    assert shown
    for name, body in shown.items():
        values = [
            v
            for model in models.values()
            for metric, value in model["metrics"].items()
            if family(metric) == name
            for v in (value, *model.get("confidence", {}).get("intervals", {}).get(metric, ()))
        ]
        low, high = min(values), max(values)
        axis = re.search(r"\(axis ([-\d.e]+) to ([-\d.e]+)\)", " ".join(svg_texts(body)))
        if axis is None:  # drawn on [0, 1]: the values must fill most of it
            assert high - low >= 0.5, name
            continue
        start, end = float(axis.group(1)), float(axis.group(2))
        assert start <= low * (1 + 1e-3), name
        assert end >= high * (1 - 1e-3), name
        assert end - start <= 1.25 * max(high - low, 0.05), name
    precision = [
        v for m in models.values() for k, v in m["metrics"].items() if k.startswith("map@")
    ]
    assert max(precision) - min(precision) < 0.5  # a family that [0, 1] would flatten


def test_metrics_tables_keep_beyond_accuracy_apart(three: tuple[str, Any]) -> None:
    page, report = three
    metrics = section(page, "metrics")
    parts = re.split(r'<h3 data-kind="([\w-]+)">', metrics)
    tables = dict(zip(parts[1::2], parts[2::2], strict=True))
    assert list(tables) == ["accuracy", "beyond-accuracy"]
    first = next(iter(report["models"].values()))["metrics"]
    for kind, beyond in (("accuracy", False), ("beyond-accuracy", True)):
        rows = re.findall(r"<tr><td><code>([^<]+)</code>", tables[kind])
        assert [html.unescape(r) for r in rows] == [m for m in first if is_beyond(m) == beyond]


def test_the_page_folds_what_is_there_to_look_up(three: tuple[str, Any]) -> None:
    """The config, conventions, inputs, the full comparisons table and the comparisons'
    per-user detail are closed <details>: the page opens on the summary, the tables and
    the figures; a metric's cell is two lines."""
    page, report = three
    for key in ("config", "conventions", "inputs"):
        body = section(page, key)
        assert body.split("</h2>", 1)[1].lstrip().startswith("<details>\n<summary>"), key
    config = section(page, "config")
    assert "<details open" not in page
    inside = html.unescape(config.split("<pre>")[1].split("</pre>")[0])
    assert json.loads(inside)["metrics"] == report["config"]["metrics"]  # the whole config
    assert "<pre>" not in page.replace(config, "")
    comparisons = section(page, "comparisons")
    assert comparisons.count("<details>") == 2  # every comparison; their per-user detail
    # a metric's cell: the value, then its interval and difference on one line
    cells = re.findall(r'<td class="num[^"]*">(.*?)</td>', section(page, "metrics"))
    assert cells
    assert max(cell.count("<br>") for cell in cells) == 1
    assert "<table>" not in comparisons.split("<details>")[0]


def test_bars_take_an_interval_that_misses_its_value_by_a_rounding_error() -> None:
    """A bootstrap interval of a constant per-user value (popular's intra-list diversity)
    can lie 1e-15 beside the value: its error bar is 0, not a crash (negative yerr)."""
    from receval_cli.report.plots import bars_figure

    value = 0.7111111111111111
    bars = {"popular": [(value, (value + 1e-15, value + 2e-15))], "other": [(0.5, (0.4, 0.6))]}
    assert "<svg" in bars_figure(["intra_list_diversity@10"], bars, "fig1-")


def test_the_bars_keep_beyond_accuracy_apart(three: tuple[str, Any]) -> None:
    """Two bar charts of the models: the accuracy metrics, and apart the beyond-accuracy
    ones in [0, 1] (one cutoff per family: the gated one, else the deepest)."""
    page, report = three
    first = next(iter(report["models"].values()))["metrics"]
    gated = {g["metric"] for g in report["gates"]["results"]}
    chosen: dict[str, str] = {}
    for metric in first:  # per family: the gated cutoff, else the deepest
        rank = (metric in gated, MetricSpec.parse(metric).k or 0)
        current = chosen.get(family(metric))
        if current is None or rank > (current in gated, MetricSpec.parse(current).k or 0):
            chosen[family(metric)] = metric
    in_unit = [
        m
        for m in chosen.values()
        if all(0 <= b["metrics"][m] <= 1 for b in report["models"].values())
    ]
    shown = figures(section(page, "metrics"), "bars")
    assert set(shown) == {"models", "models: beyond-accuracy"}
    for name, beyond in (("models", False), ("models: beyond-accuracy", True)):
        texts = set(svg_texts(shown[name]))
        expected = {m for m in in_unit if is_beyond(m) == beyond}
        assert expected
        assert {m for m in in_unit if m in texts} == expected, name
