"""The `receval` process ends without the interpreter's teardown (launch._run_then_exit):
what a normal exit does that matters must still happen (exit code, flushed output, exit
handlers, threads that still work), in a real process each time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

DRIVER = """
import atexit, sys, threading, time
from pathlib import Path
from receval_cli.launch import _run_then_exit

how, marker = sys.argv[1], Path(sys.argv[2])
atexit.register(lambda: marker.write_text("exit handler ran"))

def command():
    sys.stdout.write("buffered output")  # no newline, no flush: the exit must flush it
    if how == "thread":
        def late():
            time.sleep(0.3)
            Path(str(marker) + ".thread").write_text("thread finished")
        threading.Thread(target=late).start()
    if how.startswith("exit:"):
        value = how[5:]
        code = None if value == "none" else value
        sys.exit(int(value) if value.isdigit() else code)

_run_then_exit(command)
"""


def _run(how: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", DRIVER, how, str(tmp_path / "marker")],
        env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("how", "code", "stderr"),
    [
        ("return", 0, ""),
        ("exit:none", 0, ""),
        ("exit:0", 0, ""),
        ("exit:1", 1, ""),
        ("exit:2", 2, ""),
        ("exit:141", 141, ""),
        ("exit:256", 0, ""),  # as Python's own exit: the status is taken modulo 256
        ("exit:a message", 1, "a message\n"),
    ],
)
def test_the_exit_status_output_and_handlers_are_python_s(
    tmp_path: Path, how: str, code: int, stderr: str
) -> None:
    result = _run(how, tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (code, "buffered output", stderr)
    assert (tmp_path / "marker").read_text() == "exit handler ran"


def test_a_thread_still_working_is_waited_for(tmp_path: Path) -> None:
    """A non-daemon thread still running: Python's own exit, which joins it."""
    result = _run("thread", tmp_path)
    assert (result.returncode, result.stdout) == (0, "buffered output"), result.stderr
    assert (tmp_path / "marker.thread").read_text() == "thread finished"
    assert (tmp_path / "marker").read_text() == "exit handler ran"


def test_a_closed_stdout_ends_as_before(tmp_path: Path) -> None:
    """stdout's reader gone: the flush fails and Python's exit decides (its own message and
    status 120), as without the fast exit."""
    script = DRIVER.replace('sys.stdout.write("buffered output")', 'sys.stdout.write("x" * 10)')
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    reader = subprocess.Popen(
        [sys.executable, "-c", script, "return", str(tmp_path / "marker")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=buffered,  # the write stays in the buffer until the exit flushes it
    )
    assert reader.stdout is not None
    reader.stdout.close()  # nobody reads: the final flush meets EPIPE
    _, err = reader.communicate(timeout=60)
    assert reader.returncode == 120, err
    assert b"BrokenPipeError" in err


def test_a_profiler_still_gets_its_results(tmp_path: Path) -> None:
    """`python -m cProfile -o FILE`: the profile is written after the command returns, so
    the process ends the ordinary way."""
    out = tmp_path / "run.prof"
    script = tmp_path / "driver.py"
    script.write_text(DRIVER, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(out), str(script), "return", str(out) + "m"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size > 0
