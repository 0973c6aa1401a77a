"""Each --output its own format.

`-o FORMAT:PATH` names an output's format; with several `--format`, each names the format
of the `--output` after it; one `--format` keeps its meaning (the format of `-` and of a
name without a known extension). An output whose format the command line leaves open is
exit 2 with the fix, and nothing is written. The matrix is built from the code's own list
of formats (formats.Format), so a new format joins it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_user_error, hand_case, invoke, run_process, write

from receval_cli.formats import Format

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it

FORMATS = [f.value for f in Format]


def looks_like(fmt: str, text: str) -> bool:
    """Whether `text` is a report in `fmt` (the hand case: precision@1 and ndcg@2)."""
    stripped = text.lstrip()
    checks = {
        "json": lambda: "models" in json.loads(text),
        "markdown": lambda: stripped.startswith("## receval"),
        "csv": lambda: stripped.startswith("model,metric,value"),
        "junit": lambda: stripped.startswith("<?xml") and "<testsuite" in text,
        "table": lambda: "┃ metric" in text and "precision@1" in text,
        "html": lambda: "<html" in text.lower(),
        "github": lambda: text.splitlines()[-1].startswith("receval: 2 metrics"),
        "latex": lambda: "\\begin{tabular}" in text and "\\texttt{precision@1}" in text,
    }
    assert set(checks) == set(FORMATS), "a new format needs its check here"
    return checks[fmt]()


def other(fmt: str) -> str:
    """A format that is not `fmt` (to tell the two outputs of a pair apart)."""
    return next(f for f in FORMATS if f not in (fmt, "table"))


def files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


@pytest.mark.parametrize("fmt", FORMATS)
def test_prefix_names_a_file_format(tmp_path: Path, fmt: str) -> None:
    config = hand_case(tmp_path)
    result = invoke("run", config, "-o", f"{fmt}:{tmp_path / 'out'}", "-q")
    assert result.exit_code == 0, result.stderr
    assert looks_like(fmt, (tmp_path / "out").read_text())
    assert not (tmp_path / f"{fmt}:out").exists()


@pytest.mark.parametrize("fmt", FORMATS)
def test_prefix_names_the_format_of_standard_output(tmp_path: Path, fmt: str) -> None:
    config = hand_case(tmp_path)
    result = invoke("run", config, "-o", f"{fmt}:-")
    assert result.exit_code == 0, result.stderr
    assert looks_like(fmt, result.stdout)


@pytest.mark.parametrize("fmt", FORMATS)
def test_one_format_names_an_output_without_extension(tmp_path: Path, fmt: str) -> None:
    config = hand_case(tmp_path)
    result = invoke("run", config, "-f", fmt, "-o", tmp_path / "out", "-q")
    assert result.exit_code == 0, result.stderr
    assert looks_like(fmt, (tmp_path / "out").read_text())


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_pairs_with_the_output_after_it(tmp_path: Path, fmt: str) -> None:
    """`-f A -o first -f B -o second`, and with standard output second."""
    config = hand_case(tmp_path)
    second = other(fmt)
    args = ["-f", fmt, "-o", tmp_path / "first", "-f", second, "-o", tmp_path / "second"]
    result = invoke("run", config, *args, "-q")
    assert result.exit_code == 0, result.stderr
    assert looks_like(fmt, (tmp_path / "first").read_text())
    assert looks_like(second, (tmp_path / "second").read_text())
    result = invoke("run", config, "-f", second, "-o", tmp_path / "third", "-f", fmt, "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert looks_like(second, (tmp_path / "third").read_text())
    assert looks_like(fmt, result.stdout)


def test_the_step_summary_and_the_annotations(tmp_path: Path) -> None:
    """The issue's command: markdown appended to the summary, annotations on stdout."""
    config = hand_case(tmp_path, gates={"precision@1": {"min": 0.4}})
    summary = write(tmp_path / "step_summary", "earlier step\n")
    args = ["-f", "markdown", "-o", summary, "--append", "-f", "github", "-o", "-"]
    done = run_process("run", config, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert summary.read_text().startswith("earlier step\n## receval\n")
    assert "::" not in summary.read_text()
    assert done.stdout.decode().splitlines()[-1].startswith("receval: 2 metrics, 1 gate passed")
    done = run_process(
        "run", config, "-o", f"markdown:{summary}", "--append", "-o", "github:-", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr.decode()
    assert summary.read_text().count("## receval") == 2


@pytest.mark.parametrize("name", ["C:x.json", "a:b.json", "s3:x.json"])
def test_a_prefix_that_is_no_format_stays_a_path(tmp_path: Path, name: str) -> None:
    config = hand_case(tmp_path)
    result = invoke("run", config, "-o", tmp_path / name, "-q")
    assert result.exit_code == 0, result.stderr
    assert looks_like("json", (tmp_path / name).read_text())


def test_the_common_forms_keep_working(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    assert looks_like("json", invoke("run", config, "-f", "json", "-o", "-").stdout)
    result = invoke("run", config, "-o", tmp_path / "a.json", "-o", tmp_path / "b.md", "-q")
    assert result.exit_code == 0, result.stderr
    assert looks_like("json", (tmp_path / "a.json").read_text())
    assert looks_like("markdown", (tmp_path / "b.md").read_text())
    result = invoke("run", config, "-o", "-", "-o", tmp_path / "c.md", "-f", "csv")
    assert looks_like("csv", result.stdout)
    assert looks_like("markdown", (tmp_path / "c.md").read_text())
    result = invoke("run", config, "-f", "csv", "-o", "-", "-f", "json", "-o", tmp_path / "d.json")
    assert result.exit_code == 0, result.stderr
    assert looks_like("csv", result.stdout)


AMBIGUOUS = {
    "two formats before one output": (
        ["-f", "json", "-f", "csv", "-o", "out"],
        ["--output out", "--format json and --format csv", "-o csv:out"],
    ),
    "a format after the last output": (
        ["-f", "json", "-o", "out", "-f", "csv"],
        ["--format csv", "after the last --output", "-o csv:PATH"],
    ),
    "an output no format pairs with": (
        ["-f", "markdown", "-o", "out", "-f", "github", "-o", "-", "-o", "other"],
        ["--output other", "no --format paired with it", "-f markdown for -o out", "-o FORMAT:"],
    ),
    "standard output no format pairs with": (
        ["-o", "-", "-f", "markdown", "-o", "out", "-f", "csv", "-o", "x.csv"],
        ["--output -", "standard output", "ambiguous"],
    ),
    "a paired format against the extension": (
        ["-f", "markdown", "-o", "r.json", "-f", "csv", "-o", "-"],
        ["r.json", ".json means json", "markdown"],
    ),
    "a paired format against the prefix": (
        ["-f", "markdown", "-o", "json:out", "-f", "csv", "-o", "-"],
        ["json:out", "--format markdown"],
    ),
    "several formats and no output": (["-f", "json", "-f", "csv"], ["--format json csv"]),
}


@pytest.mark.parametrize(("args", "words"), AMBIGUOUS.values(), ids=AMBIGUOUS.keys())
def test_an_ambiguous_output_is_refused(tmp_path: Path, args: list[str], words: list[str]) -> None:
    """Exit 2, the output named, what was found and the fix; nothing written."""
    config = hand_case(tmp_path)
    before = files(tmp_path)
    done = run_process("run", config, *args, cwd=tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert done.stdout == b""
    assert stderr.startswith("error: "), stderr
    missing = [w for w in words if w not in stderr]
    assert not missing, (missing, stderr)
    assert files(tmp_path) == before


def test_compare_and_history_take_the_prefix(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    store = tmp_path / "store"
    args = ["-o", tmp_path / "a.json", "--history", store, "-q"]
    assert invoke("run", config, *args).exit_code == 0
    write(tmp_path / "b.json", (tmp_path / "a.json").read_text())
    reports = [tmp_path / "a.json", tmp_path / "b.json"]
    result = invoke("compare", *reports, "-o", "markdown:-")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("## receval compare")
    result = invoke("compare", *reports, "-o", f"csv:{tmp_path / 'c'}")
    assert (tmp_path / "c").read_text().startswith("column,metric,value")
    assert_user_error(invoke("compare", *reports, "-o", "junit:x"), "does not write junit")
    assert_user_error(invoke("compare", *reports, "-f", "json", "-f", "csv"), "--format json csv")
    result = invoke("history", store, "-o", "json:-")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["store"]
    assert_user_error(
        invoke("history", store, "-f", "json", "-f", "csv", "-o", tmp_path / "h"),
        "--format json and --format csv",
    )
    assert not (tmp_path / "h").exists()
