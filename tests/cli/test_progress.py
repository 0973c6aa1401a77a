"""Progress, logging and colour: what `receval run` prints besides the report.

Off a terminal (cron, CI, pipes) stderr stays empty unless --verbose asks for plain log
lines; on a terminal a transient progress display is drawn on stderr (tested through a
pseudo-terminal); --quiet silences it; NO_COLOR and --no-color drop the colours.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import hand_case, invoke

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-9]|9[0-7]|38|4[0-9])[;m]")


_COMMAND = "from receval_cli.cli.app import receval_command; receval_command()"


def test_off_a_terminal_only_the_report(tmp_path: Path) -> None:
    result = invoke("run", hand_case(tmp_path), "--format", "json")
    assert result.exit_code == 0
    assert result.stderr == ""
    assert json.loads(result.stdout)["models"]["model"]["metrics"]["precision@1"] == 0.5


def test_verbose_logs_each_stage_as_plain_lines(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = invoke("run", hand_case(tmp_path), "--output", out, "--verbose")
    assert result.exit_code == 0
    lines = result.stderr.splitlines()
    assert lines, "no log lines"
    assert not ANSI.search(result.stderr)
    # the local time in ISO 8601 with milliseconds and its offset, then the level
    stamped = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d INFO (.+)$")
    messages = [stamped.match(line).group(1) for line in lines]  # type: ignore[union-attr]
    done = [m for m in messages if ": done in " in m]
    assert [m.split(": done in ")[0] for m in done] == [
        "config",
        "read, rank, join, metrics",
        "report",
    ]
    assert all(re.fullmatch(r".+: done in \d+\.\d\d s", m) for m in done)
    assert f"wrote {out}" in messages
    assert json.loads(out.read_text())["models"]["model"]["metrics"]["precision@1"] == 0.5


def test_verbose_names_the_models_of_a_several_model_run(tmp_path: Path) -> None:
    config = hand_case(
        tmp_path, predictions={"models": {"a": "predictions.csv", "b": "predictions.csv"}}
    )
    result = invoke("run", config, "--format", "json", "--verbose")
    assert result.exit_code == 0, result.stderr
    assert "model a: read, rank, join, metrics: done in" in result.stderr
    assert "model b: read, rank, join, metrics: done in" in result.stderr
    assert "intervals and comparisons: done in" in result.stderr
    json.loads(result.stdout)  # stdout is the report alone


def test_quiet_with_an_output_file_prints_nothing(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = invoke("run", hand_case(tmp_path), "--output", out, "--quiet")
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == ""
    assert out.exists()


def _on_a_terminal(*args: str | Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run receval with stdout and stderr on a pseudo-terminal; its exit code and output."""
    controller, terminal = pty.openpty()
    environment = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", **(env or {})}
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        if name not in (env or {}):
            environment.pop(name, None)
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from receval_cli.cli.app import receval_command; receval_command()",
            *map(str, args),
        ],
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
        env=environment,
    )
    os.close(terminal)
    chunks = []
    while True:
        ready, _, _ = select.select([controller], [], [], 60)
        if not ready:
            process.kill()
            raise AssertionError("receval did not finish within 60 s")
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal closed: the process has exited
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    return process.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.slow
def test_on_a_terminal_a_progress_display_and_coloured_table(tmp_path: Path) -> None:
    code, shown = _on_a_terminal("run", hand_case(tmp_path))
    assert code == 0
    # the live display: its first stage line with the elapsed-time column, then erased
    plain = ANSI.sub("", shown)
    assert re.search(r"(starting|config|read, rank, join, metrics|report) 0:00:0\d", plain)
    assert "\x1b[2K" in shown  # a line cleared (the transient display)
    assert COLOUR.search(shown)  # the table's colours
    assert "precision@1" in shown


@pytest.mark.slow
def test_quiet_on_a_terminal_draws_no_progress(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code, shown = _on_a_terminal("run", hand_case(tmp_path), "--output", out, "--quiet")
    assert code == 0
    assert shown == ""
    assert out.exists()


@pytest.mark.slow
def test_no_color_flag_and_environment_drop_the_colours(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    for args, env in [(("--no-color",), None), ((), {"NO_COLOR": "1"})]:
        code, shown = _on_a_terminal("run", config, *args, env=env)
        assert code == 0, shown
        assert "precision@1" in shown, shown
        assert not COLOUR.search(shown), (args, env, shown)
    code, shown = _on_a_terminal("--no-color", "run", config)  # the global option
    assert code == 0, shown
    assert not COLOUR.search(shown), shown
