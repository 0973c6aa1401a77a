"""The README's set-up promise, kept true: the quick-start block is what CI runs, the
install lines name only what exists, the README stays a short guide that links every page
of docs/, every relative link resolves, every Markdown table renders whole, and everything
the tests import is declared in the `dev` group."""

from __future__ import annotations

import ast
import importlib.metadata
import itertools
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DOCS = sorted((ROOT / "docs").glob("*.md"))
MARKDOWN_FILES = [ROOT / "README.md", ROOT / "benchmarks" / "README.md", *DOCS]


def quickstart(readme: str) -> subprocess.CompletedProcess[str]:
    """Run CI's extractor on a README text, as .ci/run does."""
    return subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "quickstart_commands.py"), "/dev/stdin"],
        input=readme,
        capture_output=True,
        text=True,
        check=False,
    )


def test_quickstart_block_is_the_two_documented_commands() -> None:
    found = quickstart(README)
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines() == [
        "uv run --no-dev receval run configs/quickstart.yaml",
        "uv run pytest",
    ]


def test_ci_runs_the_extracted_block_in_a_fresh_environment_before_the_extras() -> None:
    """.ci/run takes the commands from the README (not a copy of them), with no extras and
    an empty uv cache, and installs the spark extra only afterwards."""
    extract = CI.index(".ci/quickstart_commands.py README.md")
    spark = CI.index("--extra spark")
    assert extract < spark
    assert "--extra" not in CI[:extract]
    readme_step = CI[extract:spark]
    assert "UV_CACHE_DIR=" in readme_step
    assert "UV_PROJECT_ENVIRONMENT=" in readme_step
    assert "RECEVAL_REQUIRE_SPARK=1" in CI[spark:]
    assert "-m spark" in CI[spark:]


def test_extractor_fails_without_the_marker() -> None:
    """A README that lost its marker stops CI instead of running nothing."""
    found = quickstart(README.replace("<!-- quickstart -->", ""))
    assert found.returncode == 2
    assert "no fenced code block" in found.stderr


def test_extractor_drops_comments_and_blank_lines() -> None:
    text = "<!-- quickstart -->\n```bash\n\nuv run a b   # why\n  uv run c\n```\n"
    assert quickstart(text).stdout.splitlines() == ["uv run a b", "uv run c"]


def test_development_section_tests_the_same_way() -> None:
    development = README.split("## Development")[1]
    assert "uv run pytest " in development


# A count of tests or packages, a size or a duration in the README goes stale with the next
# commit (it said "1,888 tests" where 2,287 ran, "2 to 2.3 minutes" and "about 3 min"): the
# README states none (a fenced block's sample output aside), nor do the command lines of
# docs/development.md.
STALE_FIGURE = re.compile(
    r"\b\d[\d,.]*\s*(?:tests?|packages|[KMG]i?B|min|minutes|s|sec|seconds|hours?)\b"
)


def stale_figures(markdown: str) -> list[str]:
    """The figures that go stale in a Markdown text, fenced blocks' output left out (a
    fenced block's comment, after `#`, is prose and counts)."""
    found = []
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        text = line.split("#", 1)[1] if fenced and "#" in line else ("" if fenced else line)
        found += [match.group(0) for match in STALE_FIGURE.finditer(text)]
    return found


def test_the_readme_states_no_figure_that_goes_stale() -> None:
    development = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    commands = development.split("```bash", 1)[1].split("```", 1)[0]
    assert stale_figures(README) == []
    assert stale_figures("```bash" + commands + "```") == []


def test_the_stale_figure_check_finds_them() -> None:
    assert stale_figures(
        "runs 1,888 tests in 2 to 2.3 minutes, a 252 MB environment of 17 packages\n"
        "```bash\nuv run pytest   # the quick tests (about 3 min on 2)\n"
        "│ ndcg@5 │ 0.5526 │ 12 s │\n```\n"
    ) == ["1,888 tests", "2.3 minutes", "252 MB", "17 packages", "3 min"]


@pytest.mark.parametrize("path", MARKDOWN_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_install_line_names_an_unpublished_package(path: Path) -> None:
    """receval is not on a package index: install lines take the clone's folder."""
    name = PYPROJECT["project"]["name"]
    for line in path.read_text(encoding="utf-8").splitlines():
        for command in re.findall(r"(?:pip|pipx|uv pip|uv tool) install ([^`#\n]*)", line):
            for target in command.split():
                if target.startswith("-"):
                    continue
                bare = target.strip("'\"").split("[")[0].split("==")[0]
                assert bare != name, line


def test_pip_install_into_a_system_python_is_not_the_first_line() -> None:
    """`pip install uv` fails on Debian/Ubuntu's system Python (PEP 668); the README
    leads with a line that works there."""
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    first = blocks[0].splitlines()[0]
    assert first.startswith("pipx install uv")


def test_bare_receval_commands_follow_the_tool_install() -> None:
    """A command written `receval ...` (not `uv run receval ...`) only appears after the
    section that installs the `receval` command."""
    install = README.index("### Installing `receval` as a command")
    for found in re.finditer(r"```bash\n(.*?)```", README, re.S):
        lines = [line.strip() for line in found[1].splitlines()]
        if any(line.startswith("receval ") for line in lines):
            assert found.start() > install, found[1]


def test_the_readme_is_a_guide_under_400_lines() -> None:
    """The README is a guide (what receval is, the quick start, a tour, where to
    go next); the reference lives in docs/."""
    assert len(README.splitlines()) < 400


def _links(text: str) -> list[str]:
    """The targets of every link and image of a Markdown text (code spans and fenced code
    hold none)."""
    found: list[str] = []

    def walk(tokens: list[Any]) -> None:
        for token in tokens:
            if token.type == "link_open":
                found.append(str(token.attrs["href"]))
            elif token.type == "image":
                found.append(str(token.attrs["src"]))
            if token.children:
                walk(token.children)

    walk(MarkdownIt("commonmark").enable("table").parse(text))
    return found


def test_every_docs_page_is_linked_from_the_readme() -> None:
    assert DOCS, "docs/ has no page"
    linked = {
        (ROOT / link.split("#")[0]).resolve()
        for link in _links(README)
        if not re.match(r"[a-z]+:", link)
    }
    assert [p.name for p in DOCS if p.resolve() not in linked] == []


def _anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings: the heading's text in lower case, with
    every character but letters, digits, spaces, hyphens and underscores removed, spaces
    as hyphens; a repeated one gets -1, -2, ..."""
    anchors: set[str] = set()
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    for opening, inline in itertools.pairwise(tokens):
        if opening.type != "heading_open":
            continue
        words = "".join(
            c.content for c in inline.children or [] if c.type in ("text", "code_inline")
        )
        slug = re.sub(r"[^\w\- ]", "", words.strip().lower()).replace(" ", "-")
        anchor, number = slug, 0
        while anchor in anchors:
            number += 1
            anchor = f"{slug}-{number}"
        anchors.add(anchor)
    return anchors


def test_anchors_are_githubs() -> None:
    text = "# A\n## Starting a config: `receval init`\n## A\n"
    assert _anchors(text) == {"a", "starting-a-config-receval-init", "a-1"}


@pytest.mark.parametrize("path", MARKDOWN_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(path: Path) -> None:
    """Each link to a file of the repository names one that exists, and each #anchor one of
    that page's headings."""
    broken = []
    for link in _links(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", link):  # https:, mailto:
            continue
        target, _, anchor = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        missing = not file.exists()
        if missing or (anchor and anchor not in _anchors(file.read_text(encoding="utf-8"))):
            broken.append(link)
    assert broken == [], f"{path.name}: links to nothing: {broken}"


def _table_ranges(text: str) -> list[tuple[int, int]]:
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    return [tuple(t.map) for t in tokens if t.type == "table_open" and t.map]  # type: ignore[misc]


def _table_lines(text: str) -> list[int]:
    """The source lines that look like table rows, outside fenced code."""
    rows, fenced = [], False
    for number, line in enumerate(text.splitlines()):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("|"):
            rows.append(number)
    return rows


@pytest.mark.parametrize("path", MARKDOWN_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_table_keeps_all_its_rows(path: Path) -> None:
    """Every `| ... |` line renders inside a table: a blank line inside a table would end
    it and show the rest as a paragraph of pipes."""
    text = path.read_text(encoding="utf-8")
    ranges = _table_ranges(text)
    assert ranges or not _table_lines(text), "no table rendered"
    lost = [n + 1 for n in _table_lines(text) if not any(start <= n < end for start, end in ranges)]
    assert lost == [], f"{path.name}: lines {lost} are outside every rendered table"


def test_table_check_catches_a_table_cut_by_a_blank_line() -> None:
    text = "| a | b |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |\n"
    ranges = _table_ranges(text)
    lost = [n for n in _table_lines(text) if not any(s <= n < e for s, e in ranges)]
    assert lost == [4]


def _imported_modules() -> set[str]:
    """Every top-level module the test suite imports (the golden files' generators beside
    the peers' tests in tests/peers run in each peer library's own environment, not here)."""
    found: set[str] = set()
    for path in (ROOT / "tests").rglob("*.py"):
        in_peers = path.relative_to(ROOT / "tests").parts[0] == "peers"
        if in_peers and not path.name.startswith("test_"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
            elif (  # lazy("scipy.stats"): an import on first use (tests/support/lazy_modules.py)
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "lazy"
                and isinstance(node.args[0], ast.Constant)
            ):
                found.add(str(node.args[0].value).split(".")[0])
    return found


def _requirement_name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


@pytest.mark.slow
def test_everything_the_tests_import_is_declared_in_core_or_dev() -> None:
    """A fresh `uv sync` (core + dev group, no extras) can import every test module; only
    pyspark, which the Spark tests import through their fixture, comes from an extra."""
    declared = {_requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    declared |= {_requirement_name(r) for r in PYPROJECT["dependency-groups"]["dev"]}
    local = {p.stem for p in (ROOT / "tests").rglob("*.py")} | {"receval_cli", "receval", "tests"}
    distributions = importlib.metadata.packages_distributions()
    missing = []
    for module in sorted(_imported_modules() - local - set(sys.stdlib_module_names)):
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        if module != "pyspark" and not names & declared:
            missing.append(f"{module} ({', '.join(sorted(names))})")
    assert missing == [], "imported by the tests but not in the dev group: " + ", ".join(missing)


def _marker_expression(arguments: str) -> str:
    """The -m expression of a pytest command line (the last one wins, as in pytest)."""
    import shlex

    words = shlex.split(arguments)
    found = [words[i + 1] for i, word in enumerate(words[:-1]) if word == "-m"]
    assert found, arguments
    return found[-1]


def _selects(node: ast.expr, marks: dict[str, bool]) -> bool:
    """A -m expression (names, not, and, or) evaluated for a test with these marks."""
    if isinstance(node, ast.Name):
        return marks[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _selects(node.operand, marks)
    if isinstance(node, ast.BoolOp):
        values = [_selects(value, marks) for value in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    raise AssertionError(f"an -m expression this test does not read: {ast.unparse(node)}")


def test_the_quick_slow_and_spark_runs_leave_no_test_out() -> None:
    """`uv run pytest` skips the marks conftest.py leaves out of the quick run; .ci/run
    runs the slow and the Spark tests after it: every combination of the two marks is run
    by one of the three."""
    from conftest import LEFT_OUT_OF_THE_QUICK_RUN

    addopts = PYPROJECT["tool"]["pytest"]["ini_options"]["addopts"]
    assert " -m" not in f" {addopts}", addopts  # conftest's skip applies without a -m
    runs = [" and ".join(f"not {mark}" for mark in LEFT_OUT_OF_THE_QUICK_RUN)]
    for line in CI.splitlines():
        if line.lstrip().startswith(("uv run", "RECEVAL_REQUIRE_SPARK")) and " pytest " in line:
            runs.append(_marker_expression(line.split(" pytest ", 1)[1]))
    assert len(runs) == 3, runs
    for slow in (False, True):
        for spark in (False, True):
            marks = {"slow": slow, "spark": spark}
            chosen = [run for run in runs if _selects(ast.parse(run, mode="eval").body, marks)]
            assert chosen, f"no run selects a test with slow={slow}, spark={spark}: {runs}"


def test_no_file_holds_a_merge_conflict_marker() -> None:
    """A merge left half-resolved shows in the README or a module as `<<<<<<<` lines."""
    markers = re.compile(r"^(<{7} |>{7} |={7}$)", re.M)
    folders = ("receval_cli", "receval", "tests", "docs", "configs", "benchmarks", ".ci")
    paths = [ROOT / "README.md", ROOT / "pyproject.toml"]
    paths += [p for folder in folders for p in (ROOT / folder).rglob("*") if p.is_file()]
    found = []
    for path in paths:
        if path.suffix in {".py", ".md", ".yaml", ".yml", ".toml", ".c", ""} | {".txt"}:
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            found += [f"{path.relative_to(ROOT)}:{m.group(0)!r}" for m in markers.finditer(text)]
    assert not found
