"""Hostile values, names and destinations: every case either works or gives one
`error:` line with its documented exit code (2 for bad input, 3 for a bug), never a
traceback and never exit 1, which means a failed gate and nothing else. What data or a
config says is shown, never obeyed: no markup, no terminal control sequence, no Markdown,
HTML, spreadsheet formula or malformed XML reaches an output.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
import yaml
from cli_helpers import (
    PREDICTIONS_CSV,
    TRUTH_CSV,
    assert_no_traceback,
    assert_user_error,
    invoke,
    write,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from receval_cli.escaping import (
    csv_cell,
    html_text,
    json_text,
    markdown_code,
    markdown_text,
    printable,
    xml_text,
)
from receval_cli.formats import CompareFormat, Format, HistoryFormat

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it

ESC = "\x1b"
# the config of the hand case (tests/support/cli_helpers.py), on predictions.csv and truth.csv
HAND_CONFIG: dict[str, Any] = {
    "predictions": {"path": "predictions.csv"},
    "ground_truth": {"path": "truth.csv"},
    "metrics": ["precision@1"],
}


def two_models(folder: Path, first: str, second: str, **extra: Any) -> Path:
    """Two models (the same predictions) named `first` and `second`."""
    write(folder / "predictions.csv", PREDICTIONS_CSV)
    write(folder / "truth.csv", TRUTH_CSV)
    config = {
        "predictions": {
            "models": {first: {"path": "predictions.csv"}, second: {"path": "predictions.csv"}}
        },
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1"],
        **extra,
    }
    return write(folder / "config.yaml", yaml.safe_dump(config))


# ---------------------------------------------------------------- item 7: the terminal


def test_model_names_are_shown_not_obeyed(tmp_path: Path) -> None:
    """`[/x]` would be a rich markup error, `[bold]` would be eaten, an ESC sequence would
    clear the screen and an OSC one set the window title."""
    names = ["[/x]", f"b{ESC}]0;title\a"]
    config = two_models(tmp_path, *names, gates={"precision@1": {"min": 0.1, "model": "[/x]"}})
    result = invoke("run", config)
    assert_no_traceback(result)
    assert result.exit_code == 0, result.stderr
    assert ESC not in result.stdout
    assert "\a" not in result.stdout
    assert "[/x]" in result.stdout  # shown as written
    assert "b\\x1b]0;title\\x07" in result.stdout  # escaped as repr() writes it


def test_segment_values_are_shown_not_obeyed(tmp_path: Path) -> None:
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    write(tmp_path / "truth.csv", f'user,item,country\nu1,b,"[/red]"\nu2,d,"{ESC}[2J[bold]"\n')
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1"],
        "segment_by": ["country"],
    }
    result = invoke("run", write(tmp_path / "config.yaml", yaml.safe_dump(config)))
    assert result.exit_code == 0, result.stderr
    assert ESC not in result.stdout
    assert "[/red]" in result.stdout
    assert "\\x1b[2J[bold]" in result.stdout


def test_error_messages_escape_control_characters(tmp_path: Path) -> None:
    write(tmp_path / "predictions.csv", f"user,item,sc{ESC}[2Jore\nu1,a,1\n")
    write(tmp_path / "truth.csv", TRUTH_CSV)
    config = HAND_CONFIG
    result = invoke("run", write(tmp_path / "config.yaml", yaml.safe_dump(config)))
    message = assert_user_error(result)
    assert ESC not in message


# ------------------------------------------------------------ item 10: the other formats


def test_markdown_csv_and_junit_show_hostile_names_as_text(tmp_path: Path) -> None:
    image = "![t](http://x.test/a.png)"
    formula = '=HYPERLINK("http://x.test")'
    control = "m\x01"
    config = two_models(
        tmp_path, image, formula, gates={"precision@1": {"min": 0.9, "model": image}}
    )
    markdown = invoke("run", config, "-o", tmp_path / "r.md", "-q")
    assert markdown.exit_code == 1  # the gate fails: that is what exit 1 means
    text = (tmp_path / "r.md").read_text()
    assert image not in text
    assert markdown_text(image) in text
    rows = list(csv.reader(io.StringIO(invoke("run", config, "-f", "csv").stdout)))
    assert ["model" in r[0] for r in rows[:1]] == [True]
    assert all(not cell.startswith(("=", "+", "@")) for row in rows for cell in row)
    assert any(row[0] == "'" + formula for row in rows)
    control_config = two_models(
        tmp_path / "c", control, "other", gates={"precision@1": {"min": 0.9, "model": control}}
    )
    junit = invoke("run", control_config, "-f", "junit")
    assert junit.exit_code == 1
    ElementTree.fromstring(junit.stdout.encode())  # well-formed XML
    assert "\x01" not in junit.stdout


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("![t](http://x)", "\\!\\[t\\]\\(http://x\\)"),
        ("<img src=x>", "\\<img src=x\\>"),
        ("a|b\nc", "a\\|b c"),
    ],
)
def test_markdown_text(text: str, expected: str) -> None:
    assert markdown_text(text) == expected


def test_markdown_code_falls_back_to_text_for_backticks_and_pipes() -> None:
    assert markdown_code("ndcg@10") == "`ndcg@10`"
    assert markdown_code("a`b") == "a\\`b"
    assert markdown_code("a|b") == "a\\|b"


def test_csv_cell_and_xml_text_and_printable() -> None:
    assert csv_cell("=1+1") == "'=1+1"
    assert csv_cell("-cmd") == "'-cmd"
    assert csv_cell(-0.5) == -0.5  # numbers stay numbers
    assert csv_cell("model") == "model"
    assert xml_text("a\x01b\x0bc\td") == "a\\x01b\\x0bc\td"
    assert printable(f"{ESC}[2J\a\r\nx\ty") == "\\x1b[2J\\x07\\r\nx\ty"


# ------------------------------------------------- item 5: what used to be a traceback


def test_baseline_report_with_text_or_nan_values(tmp_path: Path) -> None:
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    write(tmp_path / "truth.csv", TRUTH_CSV)
    config = HAND_CONFIG
    path = write(tmp_path / "config.yaml", yaml.safe_dump(config))
    text = write(tmp_path / "text.json", '{"metrics": {"precision@1": "high"}}')
    nan = write(tmp_path / "nan.json", '{"metrics": {"precision@1": NaN}}')
    for saved in (text, nan):
        result = invoke("run", path, "--baseline-report", saved)
        assert_user_error(result, saved.name, "metrics.precision@1", "not a finite number")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("[" * 100_000 + "]" * 100_000, ("nests too deeply",)),
        ('{"metrics": {"x": ' + "9" * 5000 + "}}", ("digits",)),
    ],
    ids=["deeply-nested", "5000-digits"],
)
def test_compare_refuses_reports_python_cannot_load(
    tmp_path: Path, content: str, words: tuple[str, ...]
) -> None:
    bad = write(tmp_path / "bad.json", content)
    good = write(tmp_path / "good.json", '{"metrics": {"x": 0.5}}')
    assert_user_error(invoke("compare", bad, good), "bad.json", *words)


def test_compare_shows_a_markup_metric_name(tmp_path: Path) -> None:
    report = write(tmp_path / "r.json", '{"metrics": {"[/x]": 0.5}}')
    result = invoke("compare", report, report)
    assert result.exit_code == 0, result.stderr
    assert "[/x]" in result.stdout


def _run_to(stdout: Any, *args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "receval_cli", *args],
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.PIPE,
        check=False,
        timeout=120,
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_stdout_full_is_exit_2_and_closed_is_a_quiet_141(tmp_path: Path, fmt: str) -> None:
    """A full stdout loses the report: exit 2 and why. A reader that went away (`| head`)
    read what it wanted: exit 141 (128 + SIGPIPE, as `git log | head`), nothing said."""
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    write(tmp_path / "truth.csv", TRUTH_CSV)
    config = HAND_CONFIG
    write(tmp_path / "c.yaml", yaml.safe_dump(config))
    with open("/dev/full", "wb") as full:
        done = _run_to(full, "run", "c.yaml", "-f", fmt, cwd=tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert stderr.startswith("error: standard output could not be written: No space left")
    assert "Traceback" not in stderr
    read, write_end = os.pipe()
    os.close(read)  # a reader that has gone away
    with os.fdopen(write_end, "wb") as closed:
        done = _run_to(closed, "run", "c.yaml", "-f", fmt, cwd=tmp_path)
    assert (done.returncode, done.stderr.decode()) == (141, "")


def test_an_unexpected_exception_is_one_line_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug anywhere in a command: exit 3, one `error: internal error` line, no traceback
    (never 1, the code of a failed gate)."""
    import receval_cli.analysis.runs

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("a bug")

    monkeypatch.setattr(receval_cli.analysis.runs, "evaluate_config", broken)
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    write(tmp_path / "truth.csv", TRUTH_CSV)
    config = HAND_CONFIG
    result = invoke("run", write(tmp_path / "c.yaml", yaml.safe_dump(config)))
    assert_no_traceback(result)
    assert result.exit_code == 3
    assert result.stderr.startswith("error: internal error: KeyError: 'a bug'. This is a bug")
    assert result.stderr.count("\n") == 1


# ------------------------------------------- a walk over the CLI with hostile values

HOSTILE_TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["[/x]", "[bold]", f"{ESC}[2J", "=1+1", "\x00", "\u202e", "a\nb", " "]),
)
HOSTILE_NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.booleans(),
    HOSTILE_TEXT,
)


@st.composite
def hostile_configs(draw: st.DrawFn) -> dict[str, Any]:
    model = draw(HOSTILE_TEXT)
    metric = draw(st.sampled_from(["precision@1", "ndcg@2", "map", "mrr", "rmse", "bogus@x"]))
    gate = {draw(st.sampled_from(["min", "max", "max_drop"])): draw(HOSTILE_NUMBER)}
    if draw(st.booleans()):
        gate["model"] = draw(st.one_of(st.just(model), HOSTILE_TEXT))
    config: dict[str, Any] = {
        "predictions": {"models": {model or "m": {"path": "predictions.csv"}}},
        "ground_truth": {"path": "truth.csv"},
        "metrics": [metric],
        "gates": {metric: gate},
        "cutoffs": draw(st.lists(HOSTILE_NUMBER, max_size=2)) or None,
        "conventions": {
            draw(st.sampled_from(["relevance_threshold", "max_depth", "default_rating"])): (
                draw(HOSTILE_NUMBER)
            )
        },
    }
    return {k: v for k, v in config.items() if v is not None}


@settings(max_examples=60, derandomize=True)
@given(config=hostile_configs(), output=HOSTILE_TEXT)
def test_hostile_values_never_crash_the_cli(
    tmp_path: Path, config: dict[str, Any], output: str
) -> None:
    """Random hostile model names, gate bounds, cutoffs, conventions and output names:
    exit 0, 1 only with a failed gate in the report, 2 or 3 with exactly one `error:` line;
    never a traceback."""
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    write(tmp_path / "truth.csv", "user,item,rating\nu1,b,4\nu2,d,5\nu2,f,3\n")
    text = yaml.safe_dump(config, allow_unicode=True)
    path = write(tmp_path / "config.yaml", text)
    name = output.replace("/", "_").replace("\x00", "")
    target = "-" if not name.strip() else str(tmp_path / "out" / name)  # never the cwd
    (tmp_path / "out").mkdir(exist_ok=True)
    result = invoke("run", path, "-f", "json", "-o", target)
    assert_no_traceback(result)
    assert result.exit_code in (0, 1, 2, 3), (result.exit_code, result.stderr)
    if result.exit_code in (2, 3):
        assert result.stderr.startswith("error: "), result.stderr
        assert result.stderr.count("error: ") == 1, result.stderr
    if result.exit_code == 1:
        assert "gate failed" in result.stderr or "FAIL" in result.stdout, result.stderr
    if result.exit_code == 0 and target == "-":
        json.loads(result.stdout)


# ---------------------------------------------------- item 9: messages stay bounded


@pytest.mark.parametrize(
    "content",
    [
        ",".join(f"c{i}" for i in range(200_000)) + "\n1\n",  # a 200,000-column header
        "user,item,score\n" + "x" * 2_000_000 + "\n",  # a 2 MB line
        "user,item,score\n" + "\x00" * 100_000 + "\n",  # NUL bytes
    ],
    ids=["wide-header", "long-line", "nul-bytes"],
)
def test_messages_about_unbounded_input_stay_short(tmp_path: Path, content: str) -> None:
    write(tmp_path / "predictions.csv", content)
    write(tmp_path / "truth.csv", TRUTH_CSV)
    config = HAND_CONFIG
    result = invoke("run", write(tmp_path / "c.yaml", yaml.safe_dump(config)))
    message = assert_user_error(result, "predictions.csv")
    assert len(message) < 2_200
    assert message.rstrip().endswith(".")  # the fix at the end survives the cut


def test_examples_in_warnings_are_cut(tmp_path: Path) -> None:
    long_id = "i" * 5_000
    write(tmp_path / "predictions.csv", f"user,item,score\nu1,{long_id},1\n")
    write(tmp_path / "truth.csv", TRUTH_CSV)
    config = HAND_CONFIG
    result = invoke("run", write(tmp_path / "c.yaml", yaml.safe_dump(config)), "-f", "json")
    assert result.exit_code == 0, result.stderr
    (warning,) = json.loads(result.stdout)["warnings"]
    assert "(4,962 more characters)" in warning
    assert len(warning) < 1_000


def test_inspect_shows_ids_and_titles_as_text(tmp_path: Path) -> None:
    """`inspect` printed ids and catalog titles raw."""
    write(tmp_path / "predictions.csv", f"user,item,score\nu{ESC}[2J,a,0.9\nu2,d,0.9\n")
    write(tmp_path / "truth.csv", f"user,item\nu{ESC}[2J,a\nu2,d\n")
    write(tmp_path / "catalog.csv", f"item,title\na,{ESC}]0;pwned\a[bold]A\nd,D\n")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "catalog": {"path": "catalog.csv", "columns": {"title": "title"}},
        "metrics": ["precision@1"],
    }
    result = invoke("inspect", write(tmp_path / "c.yaml", yaml.safe_dump(config)), "--users", "2")
    assert result.exit_code == 0, result.stderr
    assert ESC not in result.stdout
    assert "\a" not in result.stdout
    assert "u\\x1b[2J" in result.stdout
    assert "\\x1b]0;pwned\\x07[bold]A" in result.stdout


def test_normal_intervals_of_one_user_segments_are_left_out(tmp_path: Path) -> None:
    """A normal interval needs two users; a one-user segment used to put NaN bounds in
    the report, and the JSON then failed (exit 3)."""
    write(tmp_path / "predictions.csv", "user,item,score\nu1,a,0.9\nu2,b,0.5\nu3,c,0.5\n")
    write(tmp_path / "truth.csv", "user,item,country\nu1,a,DE\nu2,b,FR\nu3,x,FR\n")
    config = {
        **HAND_CONFIG,
        "segment_by": ["country"],
        "confidence": {"method": "normal"},
    }
    result = invoke("run", write(tmp_path / "c.yaml", yaml.safe_dump(config)), "--ci", "-f", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (
        report["models"]["model"]["segments"]["country=DE"]["intervals"] == {}
    )  # one user: no interval
    low, high = report["models"]["model"]["segments"]["country=FR"]["intervals"]["precision@1"]
    assert low < 0.5 < high  # two users, values 1 and 0


# ---------------------------------------- messages: no raw control byte on any format

# ESC (an OSC that sets the title, a CSI that clears), BEL, and U+009B (a C1 CSI)
HOSTILE = f"m{ESC}]0;t\a{ESC}[2J\u009b2J"
_RAW_CONTROL = ("\x1b", "\x07", "\u009b")


def _raw(text: str) -> list[str]:
    return [c for c in _RAW_CONTROL if c in text]


def _hostile_run(folder: Path) -> Path:
    """Two models, one named HOSTILE, a segment value and a history store."""
    write(folder / "predictions.csv", PREDICTIONS_CSV)
    write(folder / "truth.csv", f"user,item,grp\nu1,b,{HOSTILE}\nu2,d,y\nu2,f,y\n")
    config = {
        "predictions": {"models": {HOSTILE: "predictions.csv", "b": "predictions.csv"}},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1", "ndcg@2"],
        "segment_by": ["grp"],
        "history": "store",
        "gates": {"ndcg@2": {"min": 0.1, "model": HOSTILE}},
    }
    return write(folder / "config.yaml", yaml.safe_dump(config))


@pytest.mark.parametrize("fmt", [f.value for f in Format])
def test_run_shows_no_raw_control_byte_in_any_format(tmp_path: Path, fmt: str) -> None:
    """The HTML report's text and its plots (matplotlib's SVG, and its missing-glyph
    warnings on stderr) used to carry them raw."""
    config = _hostile_run(tmp_path)
    result = invoke("run", config, "-f", fmt, "--label", HOSTILE, "--tag", f"k={HOSTILE}")
    assert result.exit_code == 0, result.stderr
    assert _raw(result.stdout) == []
    assert _raw(result.stderr) == []


@pytest.mark.parametrize("fmt", [f.value for f in HistoryFormat])
def test_history_shows_no_raw_control_byte_in_any_format(tmp_path: Path, fmt: str) -> None:
    """The table, the JSON (U+009B raw: ensure_ascii=False) and the HTML used to."""
    config = _hostile_run(tmp_path)
    assert invoke("run", config, "-q", "--label", HOSTILE).exit_code == 0
    result = invoke("history", tmp_path / "store", "-f", fmt)
    assert result.exit_code == 0, result.stderr
    assert _raw(result.stdout) == []
    assert _raw(result.stderr) == []


@pytest.mark.parametrize("fmt", [f.value for f in CompareFormat])
def test_compare_shows_no_raw_control_byte_in_any_format(tmp_path: Path, fmt: str) -> None:
    """A hostile report (a model, a metric and a label with ESC/OSC bytes) and a hostile
    file name: `-f csv` used to print them raw."""
    config = _hostile_run(tmp_path)
    assert invoke("run", config, "-q", "-o", tmp_path / "a.json").exit_code == 0
    report = json.loads((tmp_path / "a.json").read_text())
    block = report["models"]["b"]
    block["metrics"][HOSTILE] = block["metrics"].pop("ndcg@2")
    write(tmp_path / "hostile.json", json.dumps(report))
    named = write(tmp_path / f"b{ESC}[31m.json", (tmp_path / "a.json").read_text())
    result = invoke("compare", tmp_path / "a.json", tmp_path / "hostile.json", named, "-f", fmt)
    assert result.exit_code == 0, result.stderr
    assert _raw(result.stdout) == []
    assert _raw(result.stderr) == []


def test_the_format_escapers_leave_no_control_byte() -> None:
    assert csv_cell(f"{ESC}]0;t\a") == "\\x1b]0;t\\x07"
    assert csv_cell("\ra") == "'\\ra"
    assert xml_text("a\u009bb") == "a\\x9bb"
    assert html_text(f"<{ESC}>") == "&lt;\\x1b&gt;"
    assert json.loads(json_text(json.dumps("a\u009b", ensure_ascii=False))) == "a\u009b"
    assert "\u009b" not in json_text(json.dumps("a\u009b", ensure_ascii=False))
