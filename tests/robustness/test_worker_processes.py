"""The processes the worker starts end with the command (supervisor.py).

Spark's JVM, which pyspark launches from receval's worker, holds the pipe of the worker's
native stderr and ends when its stdin closes; one stopped while it starts never reads its
stdin and ran on, holding the `receval` process open for 90 s and more, then orphaned.
Here the worker (through a stage listener, without Spark) starts a process that behaves
so: it holds the worker's stderr, ignores SIGINT and outlives the worker. A stop (SIGTERM
to the process, SIGINT to its group) ends the command with its one line and code, and
that process with it; a run that completes ends too, with exit 0, once the process has
had its time to end by itself (`_Worker.LINGER`), and leaves nothing running.
"""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path
from subprocess import Popen

import pytest
from child_processes import alive, finish, send, start
from cli_helpers import hand_case
from fault_cases import NOTHING_WRITTEN

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it

# the `receval` command, its worker made to start (at the config stage) a process that
# holds its stderr, ignores SIGINT and does not end with it, then to wait there (WAIT) or
# to go on with the run
LEAVES_A_PROCESS = """
import os, subprocess, sys, time
from receval_cli import console

def leave(stage):
    if stage == "config":
        code = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(600)"
        mark = os.environ["RECEVAL_TEST_MARK"]
        subprocess.Popen([sys.executable, "-c", code, mark], stdin=subprocess.PIPE)
        if WAIT:
            while True:
                time.sleep(1)

console.STAGE_LISTENERS.append(leave)
sys.argv = ["receval", *sys.argv[1:]]
from receval_cli.launch import main
main()
"""


def _start(folder: Path, wait: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Popen[str], str]:
    """The run, and the mark in the command line of the process its worker starts (given
    through the environment: the script's own text does not hold it)."""
    mark = f"receval-left-{uuid.uuid4().hex}"
    monkeypatch.setenv("RECEVAL_TEST_MARK", mark)
    script = LEAVES_A_PROCESS.replace("WAIT", str(wait))
    return start("run", hand_case(folder), cwd=folder, script=script), mark


def _marked(mark: str) -> list[int]:
    """The living processes whose command line holds `mark`."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if mark.encode() in command and alive(int(entry)):
            found.append(int(entry))
    return found


def _ignoring_sigint(pids: list[int]) -> bool:
    """Whether one of `pids` ignores SIGINT already (/proc's SigIgn mask)."""
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
        except OSError:
            continue
        mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn"))
        if int(mask, 16) & 1 << (signal.SIGINT - 1):
            return True
    return False


def _end(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


@pytest.mark.parametrize(
    ("signum", "to"),
    [(signal.SIGTERM, "process"), (signal.SIGINT, "group")],
    ids=["SIGTERM-process", "SIGINT-group"],
)
def test_a_stop_ends_what_the_worker_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int, to: str
) -> None:
    process, mark = _start(tmp_path, True, monkeypatch)
    try:
        while not _ignoring_sigint(_marked(mark)):  # the worker's process is set up
            assert process.poll() is None, process.communicate()
        send(process, signum, to)
        code, stderr = finish(process)
        left = _marked(mark)
    finally:
        _end(_marked(mark))
    name = signal.Signals(signum).name
    assert (code, stderr) == (128 + signum, f"interrupted by {name}: {NOTHING_WRITTEN}\n")
    assert left == []


def test_a_complete_run_ends_what_the_worker_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    process, mark = _start(tmp_path, False, monkeypatch)
    try:
        code, stderr = finish(process)
        left = _marked(mark)
    finally:
        _end(_marked(mark))
    assert (code, stderr) == (0, "")
    assert left == []
