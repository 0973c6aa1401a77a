"""`receval history --format html` shows which runs failed their gate: a red x at the
foot of each trend plot for every run whose `passed` is false (named in the legend and
the caption), a mark after the latest run's name in the table when it failed, and a note
saying what the mark means. A store where every run passed shows none of them."""

from __future__ import annotations

import html
import re
from pathlib import Path

from cli_helpers import invoke
from history_runs import run_day

from receval_cli.report.history_pages import FAILED_MARK
from receval_cli.report.plots import FAILED_RUN

# precision@1 of the nights (test_history.DAYS): better 1.0, hand 0.5, worse 0.0
GATES = {"precision@1": {"min": 0.4}}


def nights(tmp_path: Path, days: list[str]) -> Path:
    """One run a night into a store, each gated on precision@1 >= 0.4 (worse fails)."""
    store = tmp_path / "history"
    for number, day in enumerate(days, start=1):
        expect = 1 if day == "worse" else 0
        args = ("--history", store, "--label", f"night{number}")
        run_day(tmp_path / "job", day, *args, expect=expect, gates=GATES)
    return store


def page_of(store: Path) -> str:
    result = invoke("history", store, "--format", "html", "--metric", "precision@1")
    assert result.exit_code == 0, result.stderr
    return result.stdout


def figure(page: str) -> tuple[str, str]:
    """The one trend plot's SVG and caption."""
    (found,) = re.findall(r'<figure class="plot" data-kind="trend"[^>]*>(.*?)</figure>', page, re.S)
    svg, caption = found.split("<figcaption>")
    return svg, html.unescape(caption.split("</figcaption>")[0])


def svg_texts(svg: str) -> list[str]:
    return [html.unescape(t).strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def latest_run_cell(page: str) -> str:
    (row,) = re.findall(r"<tbody>\n(<tr>.*?</tr>)", page, re.S)
    cells = re.findall(r"<td[^>]*>.*?</td>", row)
    head = re.findall(r"<th>([^<]*)</th>", page.split("<tbody>")[0])
    return cells[head.index("run")]


def test_the_page_marks_the_runs_that_failed_their_gate(tmp_path: Path) -> None:
    store = nights(tmp_path, ["better", "worse", "hand", "worse"])
    page = page_of(store)
    svg, caption = figure(page)
    assert caption.endswith("failed a gate: night2, night4"), caption
    assert FAILED_MARK in caption
    assert FAILED_RUN in svg_texts(svg)  # the legend names the marker
    assert 'class="note failed-runs"' in page
    note = html.unescape(page.split('class="note failed-runs">')[1].split("</p>")[0])
    assert note.startswith(f"{FAILED_MARK}: a run that failed a gate")
    cell = latest_run_cell(page)  # night4 failed: marked in the table, in red
    assert cell == f'<td class="fail">night4 {FAILED_MARK}</td>', cell


def test_a_store_of_passed_runs_marks_none(tmp_path: Path) -> None:
    store = nights(tmp_path, ["better", "hand"])
    page = page_of(store)
    svg, caption = figure(page)
    assert "failed a gate" not in caption
    assert FAILED_RUN not in svg_texts(svg)
    assert "failed-runs" not in page
    assert FAILED_MARK not in page
    assert latest_run_cell(page) == "<td>night2</td>"
