"""Every (document, format) pair of receval_cli/formats.py's tables, on a small real input
(the sample data): each renders through its row's renderer, and what it writes is what
the format says (JSON parses, JUnit is XML, CSV has a header row, Markdown a table, HTML
a page, LaTeX a tabular, the terminal's table plain text); a format whose extra is not
installed is refused in one line (exit 2) before anything is written.

A new row in a table is tested here with no edit, as long as its format's name has a
check in CHECKS (a new format name fails until it has one). And only the output layer
(report/, cli/, console.py) imports rich: the other packages return data.
"""

from __future__ import annotations

import ast
import csv
import datetime
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
import typer
from cli_helpers import REPO, invoke

from receval_cli.cli.app import app
from receval_cli.formats import DOCUMENTS, EXTRA_MODULES, choices_text, extensions
from receval_cli.report.renderers import missing_extra, render_as, renderer
from receval_cli.results.series import HistoryPage, Point, Selection, Trend

QUICKSTART = REPO / "configs" / "quickstart.yaml"
PAIRS = [(command, fmt) for command, table in DOCUMENTS.items() for fmt in table]
# an extra's pairs are slow (matplotlib draws the HTML pages' figures)
SLOW_IF_EXTRA = [
    pytest.param(c, f, id=f"{c}-{f}", marks=[pytest.mark.slow] if DOCUMENTS[c][f].extra else [])
    for c, f in PAIRS
]
# a line each terminal table holds (its title or a metric's name)
TITLES = {
    "run": "ndcg@",
    "compare": "receval compare",
    "history": "history",
    "validate": "receval validate",
    "inspect": "receval inspect",
    "metrics": "ndcg",
}


def _history_page(store: Path) -> HistoryPage:
    """Two runs of one series, with intervals: the second worse beyond both."""
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    points = [
        Point("r1", start, "first", 0.5, 0.48, 0.52, True),
        Point("r2", start + datetime.timedelta(days=1), None, 0.4, 0.38, 0.42, False),
    ]
    trend = Trend("model", None, "ndcg@10", True, points, 7, earlier=[0.5])
    return HistoryPage(store, [trend], Selection())


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each command's document, built as the command builds it, on the sample data."""
    from receval_cli.analysis.inspect import inspect_config
    from receval_cli.analysis.validate import validate_config
    from receval_cli.api import compare, run
    from receval_cli.config.loading import load_config
    from receval_cli.report.render import render_json

    folder = tmp_path_factory.mktemp("formats")
    report = run(QUICKSTART)
    saved = [folder / "a.json", folder / "b.json"]
    for path in saved:
        path.write_text(render_json(report), encoding="utf-8")
    loaded = load_config(QUICKSTART)
    return {
        "run": report,
        "compare": compare(*saved),
        "history": _history_page(folder / "store"),
        "validate": validate_config(loaded),
        "inspect": inspect_config(loaded, users=2),
        "metrics": None,  # every metric of the registry
    }


def _json(text: str, command: str) -> None:
    assert isinstance(json.loads(text), dict)


def _csv(text: str, command: str) -> None:
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) >= 2, rows
    assert len(rows[0]) >= 2, rows[0]
    assert all(cell.strip() for cell in rows[0])  # a header row: every column named
    assert len(rows[1]) == len(rows[0])


def _markdown(text: str, command: str) -> None:
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("|") and "---" in line)
    assert lines[rule - 1].startswith("| ")  # the header row
    assert lines[rule + 1].startswith("| ")  # a row of the table


def _junit(text: str, command: str) -> None:
    root = ElementTree.fromstring(text)
    assert root.tag == "testsuites"
    assert root.find("testsuite") is not None


def _html(text: str, command: str) -> None:
    assert text.startswith("<!DOCTYPE html>")
    assert "<html" in text
    assert text.rstrip().endswith("</html>")


def _latex(text: str, command: str) -> None:
    assert "\\begin{tabular}" in text
    assert "\\end{tabular}" in text


def _github(text: str, command: str) -> None:
    """Workflow commands (`::error ...`, `::warning ...`), then the summary line."""
    *commands, last = text.splitlines()
    assert all(line.startswith("::") for line in commands), commands
    assert last.startswith("receval: "), last
    assert "gates passed" in last


def _table(text: str, command: str) -> None:
    assert TITLES[command] in text
    assert "\x1b" not in text  # plain text for a file: no terminal codes


CHECKS: dict[str, Callable[[str, str], None]] = {
    "json": _json,
    "csv": _csv,
    "markdown": _markdown,
    "junit": _junit,
    "html": _html,
    "latex": _latex,
    "github": _github,
    "table": _table,
}

# how each command with a format that needs an extra is run on the sample data
REFUSED_BY = {
    "run": ("run", QUICKSTART, "-q"),
    "history": ("history", REPO / "tests"),  # any folder: the extra is checked first
}


@pytest.mark.parametrize(("command", "fmt"), SLOW_IF_EXTRA)
def test_each_format_renders_or_is_refused_in_one_line(
    command: str, fmt: str, documents: dict[str, Any], tmp_path: Path
) -> None:
    spec = DOCUMENTS[command][fmt]
    if missing_extra(spec) is not None:
        _assert_refused(command, fmt, tmp_path)
        return
    text = render_as(DOCUMENTS[command], fmt, documents[command])
    assert text.endswith("\n")
    CHECKS[fmt](text, command)


def _assert_refused(command: str, fmt: str, tmp_path: Path) -> None:
    output = tmp_path / "out"
    done = invoke(*REFUSED_BY[command], "-f", fmt, "-o", output)
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1, lines
    assert "extra" in lines[0], lines
    assert not output.exists()


def test_a_missing_extra_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With the html extra's library unknown (the table's EXTRA_MODULES), each format
    that needs it is refused."""
    monkeypatch.setitem(EXTRA_MODULES, "html", ("receval_no_such_module",))
    needing = [(c, f) for c, f in PAIRS if DOCUMENTS[c][f].extra is not None]
    assert needing == [("run", "html"), ("history", "html")]
    for command, fmt in needing:
        assert missing_extra(DOCUMENTS[command][fmt]) == "html"
        _assert_refused(command, fmt, tmp_path)


@pytest.mark.parametrize(("command", "fmt"), PAIRS, ids=[f"{c}-{f}" for c, f in PAIRS])
def test_each_row_names_a_renderer_and_a_known_extra(command: str, fmt: str) -> None:
    spec = DOCUMENTS[command][fmt]
    assert spec.name == fmt
    assert callable(renderer(spec))
    assert spec.extra is None or spec.extra in EXTRA_MODULES
    assert all(e.startswith(".") and e == e.lower() for e in spec.extensions)


def test_the_command_line_reads_the_tables() -> None:
    """--format's choices and help, -o's extensions, the config's output.format: each
    from the tables."""
    from receval_cli.cli.doc_blocks import formats_of
    from receval_cli.config.model import OutputConfig
    from receval_cli.report.destinations import REPORT_EXTENSIONS

    commands = {c.name: c for c in typer.main.get_command(app).commands.values()}
    for command, table in DOCUMENTS.items():
        assert formats_of(command) == tuple(table)
        (option,) = [p for p in commands[command].params if p.name == "format"]
        assert choices_text(table) in option.help
    assert extensions(DOCUMENTS["run"]) == REPORT_EXTENSIONS
    assert REPORT_EXTENSIONS[".tex"] == "latex"
    schema = OutputConfig.model_json_schema()["properties"]["format"]
    assert schema["enum"] == list(DOCUMENTS["run"])


# the output layer: the only places that render (rich's renderables, the terminal)
OUTPUT_LAYER = ("receval_cli/report/", "receval_cli/cli/", "receval_cli/console.py")


def rich_importers(root: Path) -> list[str]:
    """The modules under root that import rich (at module level, in a function or under
    TYPE_CHECKING), as paths relative to root's parent."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "rich" not in text:  # parsed only where it may be imported
            continue
        for node in ast.walk(ast.parse(text)):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(name == "rich" or name.startswith("rich.") for name in names):
                found.append(path.relative_to(root.parent).as_posix())
                break
    return found


def test_only_the_output_layer_imports_rich() -> None:
    """analysis/, history/ and the rest return data; report/ renders, cli/ and console.py
    wire it to the terminal."""
    found = rich_importers(REPO / "receval_cli")
    assert any(path.startswith("receval_cli/report/") for path in found)
    assert [path for path in found if not path.startswith(OUTPUT_LAYER)] == []


def test_the_rich_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    """Negative control: an import inside a function and a `from rich...` are found."""
    root = tmp_path / "receval_cli"
    (root / "analysis").mkdir(parents=True)
    (root / "analysis" / "a.py").write_text("def f():\n    import rich.table\n")
    (root / "b.py").write_text("from rich.text import Text\n")
    (root / "c.py").write_text("import richer\n")
    assert rich_importers(root) == ["receval_cli/analysis/a.py", "receval_cli/b.py"]
