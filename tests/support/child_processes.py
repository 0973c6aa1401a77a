"""Starting receval as a child process, signalling it and waiting for it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import REPO, hand_case

# these helpers wait on the clock and serve only slow tests: the mark says so to
# tests/test_clock_free.py, which reads a module's pytestmark
pytestmark = pytest.mark.slow


TIMEOUT = 180


STOPS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def _default_stops() -> None:
    """In the child before exec: the stops at their default, as a shell gives them to a
    command, even where the test runner was started with them ignored."""
    for signum in STOPS:
        signal.signal(signum, signal.SIG_DFL)


def start(
    *args: str | Path, cwd: Path, script: str | None = None, **streams: object
) -> subprocess.Popen[str]:
    """`receval ARGS` (or `python -c script ARGS`), in a session of its own."""
    paths = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "COLUMNS": "80"}
    environment.pop("RECEVAL_UNSUPERVISED", None)
    options: dict[str, object] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
    options.update(streams)
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        [sys.executable, *(["-c", script] if script else ["-m", "receval_cli"]), *map(str, args)],
        cwd=cwd,
        env=environment,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
        preexec_fn=_default_stops,
        **options,
    )


def send(process: subprocess.Popen[str], signum: int, to: str) -> None:
    if to == "group":
        os.killpg(process.pid, signum)
    else:
        os.kill(process.pid, signum)


def wait_for_stage(process: subprocess.Popen[str], stage: str) -> list[str]:
    """Read stderr until the --verbose line of `stage` (the work has started)."""
    assert process.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + TIMEOUT
    for line in process.stderr:
        seen.append(line)
        if stage in line or time.monotonic() > deadline:
            break
    assert stage in seen[-1], "".join(seen)
    return seen


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        _, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"receval did not stop within {TIMEOUT} s")
    return process.returncode, stderr


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    except OSError:
        return False
    return state[0] not in ("Z", "X")


def children(pid: int) -> list[int]:
    return [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text(encoding="ascii").split()
    ]


# the run's work replaced by a stand-in for a polars query that does not return to Python
# for a long time: no stop can act on it (the signals are blocked), only SIGKILL
STUCK = """
import runpy, signal, sys, time
import receval_cli.config.loading as loading
import receval_cli.supervisor as supervisor
from receval_cli import console

if sys.argv[1] == "no-prctl":  # the portable way: a thread sees the watcher's pipe close
    supervisor._parent_death_signal = lambda signum: False

def stuck(*args, **kwargs):
    with console.stage("read, rank, join, metrics"):
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
        time.sleep(120)

loading.load_config = stuck
sys.argv = ["receval", *sys.argv[2:]]
runpy.run_module("receval_cli", run_name="__main__")
"""


# what the `receval` console script runs (`python -m` would first import runpy, a longer
# start-up of Python's own)
CONSOLE_SCRIPT = "import sys; from receval_cli.launch import main; sys.exit(main())"


def frames_in_receval(stderr: str) -> list[str]:
    """The traceback lines that name a file of receval's package. (Not a plain search for
    the package's name: when the stop lands while Python's import machinery looks for the
    package, Python's own traceback names the package's folder, `KeyError: '.../receval_cli'`
    from its path cache, with no frame of receval's code.)"""
    return re.findall(r'File "[^"]*receval_cli[/\\\\][^"]*"', stderr)


def run_with_shadow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shadow: Path
) -> tuple[int, str, Path]:
    """`receval run` on the hand case with the modules in `shadow` ahead of Python's own
    (a module that sends the stop at a chosen moment); its exit code, stderr and output."""
    monkeypatch.setenv("PYTHONPATH", str(shadow))
    out = tmp_path / "r.json"
    config = hand_case(tmp_path)
    process = start("run", config, "-q", "-o", out, cwd=tmp_path, script=CONSOLE_SCRIPT)
    code, stderr = finish(process)
    return code, stderr, out


STOPPED_IN = """
import sys
import typer.main
from receval_cli.cli import app

def stopped(*args, **kwargs):
    raise KeyboardInterrupt  # Ctrl-C at that moment

if sys.argv[1] == "parsing":
    app._Commands.make_context = stopped
else:
    typer.main.get_command = stopped
del sys.argv[1]
from receval_cli.launch import main
main()
"""


def run_with(
    command: str, tmp_path: Path, redirect: str, timeout: int = TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """`command` (receval's arguments) in sh with a redirection (`>&-`, `2>&-`, `| head`);
    `; echo $?` style: the exit code of receval itself is printed last on fd 3."""
    paths = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    script = f'"$PY" -m receval_cli {command} {redirect}'
    if "|" in redirect:
        script = f'{{ "$PY" -m receval_cli {command} {redirect.split("|")[0]}; echo $? >&3; }}'
        script += f" 3>code | {redirect.split('|', 1)[1]}"
    else:
        script += "; echo $? > code"
    return subprocess.run(
        ["sh", "-c", script],
        cwd=tmp_path,
        env={**os.environ, "PY": sys.executable, "PYTHONPATH": os.pathsep.join(paths)},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def code_of(tmp_path: Path) -> int:
    return int((tmp_path / "code").read_text(encoding="ascii"))


STDOUT_ONLY = [
    "run config.yaml",
    "run config.yaml -f json -o -",
    "history runs",
    "compare a.json b.json",
    "compare a.json b.json -f json",
]
