"""Rendering the HTML report's page and reading it (tests/report/test_html.py and the tests that
render a page in Chromium).
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from receval_cli.metrics import MetricSpec

ROOT = Path(__file__).parents[2]


SAMPLE = ROOT / "sample_data"


CONFIGS = ("quickstart", "compare", "beyond", "segments")


FIGURE = re.compile(
    r'<figure class="plot" data-kind="(\w+)" data-name="([^"]*)">(.*?)</figure>', re.S
)


EXACT = re.compile(r'<span title="([^"]+)">')


@dataclass
class Run:
    page: str  # --output page.html
    printed: str  # the same run's page on stdout
    report: dict[str, Any]  # --format json
    per_user_metrics: list[str]  # the per-user metric columns of --per-user
    per_user: pl.DataFrame  # the --per-user file


REPRODUCIBLE: dict[str, str | None] = {"SOURCE_DATE_EPOCH": "1764000000"}


def models_of(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    models: dict[str, dict[str, Any]] = report["models"]
    return models


def figures(page: str) -> list[tuple[str, str, str]]:
    """Each figure: kind, name (unescaped) and its markup."""
    return [(kind, html.unescape(name), body) for kind, name, body in FIGURE.findall(page)]


def exact(value: float, signed: bool = False) -> str:
    """How the page shows a float: 4 decimals, the exact value as the tooltip."""
    shown = f"{value:+.4f}" if signed else f"{value:.4f}"
    return f'<span title="{value!r}">{shown}</span>'


def expected_figures(run: Run) -> dict[str, set[str]]:
    """The figures the page must hold, from the JSON report and the per-user file."""
    families: dict[str, set[int]] = {}
    for metric in next(iter(models_of(run.report).values()))["metrics"]:
        spec = MetricSpec.parse(metric)
        if spec.k is not None:
            label = f"{spec.name}@k" + str(spec).removeprefix(f"{spec.name}@{spec.k}")
            families.setdefault(label, set()).add(spec.k)
    beyond = "items" in next(iter(models_of(run.report).values()))
    models = models_of(run.report)
    # one histogram per family: the gated cutoff, else the deepest; not for 0/1 values
    gated = {g["metric"] for g in run.report["gates"]["results"]}
    chosen: dict[str, str] = {}
    for metric in run.per_user_metrics:
        if run.per_user.get_column(metric).drop_nulls().is_empty():
            continue
        spec = MetricSpec.parse(metric)
        family = spec.name + str(spec).removeprefix(f"{spec.name}@{spec.k}")
        ranked = (metric in gated, spec.k or 0)
        current = chosen.get(family)
        if current is None or ranked > (current in gated, MetricSpec.parse(current).k or 0):
            chosen[family] = metric
    histograms = {
        m
        for m in chosen.values()
        if not run.per_user.get_column(m).drop_nulls().cast(pl.Float64).is_in([0.0, 1.0]).all()
    }
    in_unit = {
        m
        for m in chosen.values()
        if all(
            0 <= (b["metrics"][m] if b["metrics"][m] is not None else 0) <= 1
            for b in models.values()
        )
    }
    segments: set[str] = set()
    for model in models.values():
        for segment in model.get("segments", {}):
            segments |= {f"{segment.split('=')[0]}:{m}" for m in in_unit}
    return {
        "curve": {family for family, ks in families.items() if len(ks) >= 2},
        "histogram": histograms,
        "bars": {"models"} if len(models) > 1 and in_unit else set(),
        "segment": segments,
        "long_tail": {"exposure"} if beyond else set(),
        "popularity": {"popularity"} if beyond and run.report["config"]["interactions"] else set(),
        "lorenz": {"gini"} if beyond else set(),
        # one figure per metric family (its own axis), of the differences that have a value
        "comparison": {
            family_label(r["metric"])
            for r in run.report.get("comparisons", {}).get("results", [])
            if r["difference"] is not None
        },
    }


def family_label(metric: str) -> str:
    """ndcg@10 -> ndcg@k; intra_list_diversity@10(feature=tags) -> ...@k(feature=tags)."""
    spec = MetricSpec.parse(metric)
    if spec.k is None:
        return metric
    return f"{spec.name}@k" + str(spec).removeprefix(f"{spec.name}@{spec.k}")


def top_10_exposure() -> pl.DataFrame:
    """How many users' top-10 lists hold each item, from the sample predictions by plain
    polars: score descending, ties by item descending (the default tie_break)."""
    predictions = pl.read_csv(SAMPLE / "predictions.csv")
    top = (
        predictions.sort(["user_id", "score", "item_id"], descending=[False, True, True])
        .group_by("user_id", maintain_order=True)
        .head(10)
    )
    return top.group_by("item_id").agg(pl.len().alias("lists"))


HOSTILE = "<script>alert(1)</script>"


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (CI installs Debian's chromium); the pages are still "
    "checked as text above",
)


CONSOLE = re.compile(r"^\[[^\]]*:CONSOLE\b[^\]]*\]\s*(.*)$", re.M)


WINDOW = (1280, 2000)


def render_in_chromium(page: Path, screenshot: Path, profile: Path) -> list[str]:
    """Open the page in headless Chromium (no network: every host name fails to resolve),
    take a screenshot, and return every console message it logged (errors, uncaught
    exceptions, blocked fetches: a page without script should log none)."""
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
            f"--screenshot={screenshot}",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return CONSOLE.findall(done.stderr)
