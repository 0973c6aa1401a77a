"""Signals as job runners send them, and closed or full standard streams.

Every test runs the real `receval` command (`python -m receval_cli`: the watching process
and its worker, supervisor.py) in a session of its own, so that a signal can go to the
process alone (`kill -INT PID`, `Popen.send_signal`) or to its whole group (Ctrl-C at a
terminal, `kill -- -PGID`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from child_processes import (
    CONSOLE_SCRIPT,
    STDOUT_ONLY,
    STOPPED_IN,
    STOPS,
    STUCK,
    TIMEOUT,
    alive,
    children,
    code_of,
    finish,
    frames_in_receval,
    run_with,
    run_with_shadow,
    send,
    start,
    wait_for_stage,
)
from cli_helpers import REPO, hand_case
from fault_cases import NOTHING_WRITTEN, earlier_reports, folder_bytes

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it


@pytest.mark.parametrize("to", ["process", "group"])
@pytest.mark.parametrize("signum", STOPS, ids=[s.name for s in STOPS])
def test_a_stop_mid_run_to_the_process_or_its_group(
    big_config: Path, tmp_path: Path, signum: signal.Signals, to: str
) -> None:
    """SIGINT, SIGTERM and SIGHUP, sent to the watching process alone or to the whole
    group (where the worker gets it twice: from the sender and passed on), stop the work:
    exit 128 + signal, one line naming the signal, no traceback, the earlier report and
    per-user file byte for byte, no temporary file."""
    out = tmp_path / "out"
    before = earlier_reports(out, "report.json", "users.parquet")
    process = start(
        *("run", big_config, "--verbose", "-o", out / "report.json"),
        *("--per-user", out / "users.parquet"),
        cwd=tmp_path,
    )
    seen = wait_for_stage(process, "read, rank, join, metrics ...")
    send(process, signum, to)
    code, rest = finish(process)
    stderr = "".join(seen) + rest
    assert code == 128 + signum, (code, stderr)
    assert "Traceback" not in stderr, stderr
    stopped = [line for line in stderr.splitlines() if " INFO " not in line]
    assert stopped == [f"interrupted by {signum.name}: {NOTHING_WRITTEN}"], stderr
    assert folder_bytes(out) == before


def test_another_signal_keeps_its_default_action(big_config: Path, tmp_path: Path) -> None:
    """SIGUSR1 is no stop: the watching process ends as the signal ends it, and its worker
    with it, without a word about a SIGTERM nobody sent; the earlier report stays."""
    out = tmp_path / "out"
    before = earlier_reports(out, "report.json")
    process = start("run", big_config, "--verbose", "-o", out / "report.json", cwd=tmp_path)
    wait_for_stage(process, "read, rank, join, metrics ...")
    worker = children(process.pid)
    send(process, signal.SIGUSR1, "process")
    assert process.wait(timeout=TIMEOUT) == -signal.SIGUSR1
    deadline = time.monotonic() + 1
    while any(map(alive, worker)) and time.monotonic() < deadline:
        time.sleep(0.01)
    running = [pid for pid in worker if alive(pid)]
    for pid in running:
        os.kill(pid, signal.SIGKILL)
    _, stderr = finish(process)
    assert not running, worker
    assert "SIGTERM" not in stderr, stderr
    assert folder_bytes(out) == before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("way", ["prctl", "no-prctl"])
def test_the_worker_dies_with_its_watcher(tmp_path: Path, way: str) -> None:
    """A SIGKILL to the watching process (a job runner's timeout) leaves no worker running
    a second later, even one inside a long query (it ran on for half an hour, holding
    gigabytes)."""
    process = start(way, "run", "config.yaml", "--verbose", cwd=tmp_path, script=STUCK)
    wait_for_stage(process, "read, rank, join, metrics ...")
    worker = children(process.pid)
    assert len(worker) == 1, worker
    process.kill()
    process.wait(timeout=TIMEOUT)  # the watcher only: the worker holds stderr's pipe open
    deadline = time.monotonic() + 1
    while alive(worker[0]) and time.monotonic() < deadline:
        time.sleep(0.01)
    running = alive(worker[0])
    if running:
        os.kill(worker[0], signal.SIGKILL)
    process.communicate(timeout=TIMEOUT)
    assert not running, "the worker still runs a second after its watcher was killed"


def test_frames_in_receval_tells_receval_frames_from_a_named_folder() -> None:
    """The check above can fail: a frame in a receval module is found; the folder named by
    Python's own import traceback (seen on CI) is not."""
    ours = 'Traceback (most recent call last):\n  File "/x/receval_cli/launch.py", line 3\n'
    python_own = "KeyError: '/check/work/main/receval_cli'\n  File \"<string>\", line 1\n"
    assert frames_in_receval(ours) == ['File "/x/receval_cli/launch.py"']
    assert frames_in_receval(python_own) == []


def test_a_stop_during_start_up_is_one_line_or_the_run_done(tmp_path: Path) -> None:
    """SIGINT at 0 to 150 ms after the start, to the process and to the group: every outcome
    is exit 130 with its one line, or a complete run; never a traceback through receval's
    code nor exit 0 without the report. (Before Python runs any of receval's code, the
    signal ends it as it ends any Python program: killed with nothing printed, or Python's
    own message: outside receval's reach, and never a traceback through receval_cli.)"""
    config = hand_case(tmp_path)
    stopped = 0
    # past 150 ms too: on a loaded machine Python's own start-up can take that long, and a
    # send after it must reach receval's handler
    for delay in [*range(0, 151, 10), 400, 800]:
        for to in ("process", "group"):
            out = tmp_path / f"r-{delay}-{to}.json"
            process = start("run", config, "-q", "-o", out, cwd=tmp_path, script=CONSOLE_SCRIPT)
            time.sleep(delay / 1000)
            send(process, signal.SIGINT, to)
            code, stderr = finish(process)
            seen = (delay, to, code, stderr)
            assert not frames_in_receval(stderr), seen  # no traceback through receval's code
            if code == 130:
                stopped += 1
                assert stderr == f"interrupted by SIGINT: {NOTHING_WRITTEN}\n", seen
                assert not out.exists(), seen
            elif code == 0:
                assert json.loads(out.read_text(encoding="utf-8"))["models"], seen
            else:  # Python's own start-up: killed by the signal, or Python's message
                assert code in (-signal.SIGINT, 1), seen
                assert not out.exists(), seen
    assert stopped >= 2  # the sends after Python's start-up reach receval's handler


def test_a_stop_while_a_module_before_the_handler_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The moment CI once hit by chance, made certain: SIGINT while `__future__` loads (a
    file Python finds and reads, imported by the first `from __future__ import
    annotations` the command runs). launch.py once had that line before its `try`, and the
    stop printed a KeyboardInterrupt traceback through launch.py."""
    import __future__

    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "__future__.py").write_text(
        "import os, signal\n"
        f"exec(compile(open({__future__.__file__!r}).read(), {__future__.__file__!r}, 'exec'))\n"
        "if not os.environ.get('SHADOW_SENT'):  # once: loading again after the stop is fine\n"
        "    os.environ['SHADOW_SENT'] = '1'\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n",
        encoding="utf-8",
    )
    code, stderr, out = run_with_shadow(tmp_path, monkeypatch, shadow)
    assert (code, stderr) == (130, f"interrupted by SIGINT: {NOTHING_WRITTEN}\n"), stderr
    assert not out.exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_while_a_module_creates_a_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int
) -> None:
    """The moment CI hit by chance at 50 ms, made certain: the stop arrives while Python
    creates a class whose attributes get __set_name__ (ipaddress's cached_property, loaded
    by pathlib after the handler is in place). Python 3.11 turns any exception raised there
    into RuntimeError("Error calling __set_name__"), its cause the stop: a traceback and
    exit 1 before; the one line and the signal's exit code now."""
    import ipaddress

    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "ipaddress.py").write_text(
        "import functools, os, signal\n"
        "class _Stopping(functools.cached_property):\n"
        "    def __set_name__(self, owner, name):\n"
        "        if not os.environ.get('SHADOW_SENT'):  # once\n"
        "            os.environ['SHADOW_SENT'] = '1'\n"
        f"            os.kill(os.getpid(), {int(signum)})\n"
        "        super().__set_name__(owner, name)\n"
        "class _Shadow:\n"
        "    value = _Stopping(lambda self: 1)\n"
        f"exec(compile(open({ipaddress.__file__!r}).read(), {ipaddress.__file__!r}, 'exec'))\n",
        encoding="utf-8",
    )
    code, stderr, out = run_with_shadow(tmp_path, monkeypatch, shadow)
    name = signal.Signals(signum).name
    assert (code, stderr) == (128 + signum, f"interrupted by {name}: {NOTHING_WRITTEN}\n"), stderr
    assert not out.exists()


@pytest.mark.parametrize("moment", ["parsing", "building"])
def test_a_stop_while_typer_sets_the_command_up(tmp_path: Path, moment: str) -> None:
    """Typer turns a KeyboardInterrupt outside a command (its arguments being parsed) into
    a silent exit 130, and lets one escape while it builds the command from the app; CI
    once sent SIGINT at the first moment (400 ms after the start, on a loaded machine) and
    got exit 130 with no line."""
    config = hand_case(tmp_path)
    process = subprocess.run(
        [sys.executable, "-c", STOPPED_IN, moment, "run", str(config)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert (process.returncode, process.stderr) == (
        130,
        f"interrupted by SIGINT: {NOTHING_WRITTEN}\n",
    )


@pytest.fixture(scope="module")
def made_reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a config, two reports of it and a history store of their two runs."""
    folder = tmp_path_factory.mktemp("reports")
    config = hand_case(folder)
    for name in ("a.json", "b.json"):
        run = ["run", config, "-q", "-o", name, "--history", "runs"]
        subprocess.run(
            [sys.executable, "-m", "receval_cli", *map(str, run)],
            cwd=folder,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            check=True,
            timeout=TIMEOUT,
        )
    return folder


@pytest.fixture
def reports(made_reports: Path, tmp_path: Path) -> Path:
    """That folder's files, copied into this test's own folder."""
    shutil.copytree(made_reports, tmp_path, dirs_exist_ok=True)
    return tmp_path


@pytest.mark.parametrize("command", STDOUT_ONLY)
def test_a_closed_stdout_is_exit_141(reports: object, tmp_path: Path, command: str) -> None:
    """`>&-`: the output meant for stdout cannot be written: exit 141, as when its reader
    went away (not exit 3, not exit 0 as if shown)."""
    result = run_with(command, tmp_path, ">&-")
    assert code_of(tmp_path) == 141, result.stderr
    assert result.stderr == ""


def test_a_closed_stdout_beside_output_files_is_a_run(reports: object, tmp_path: Path) -> None:
    """With the report going to a file, the table on stdout only accompanies it: the run
    succeeds, writes the file, and leaves the table out."""
    result = run_with("run config.yaml -o out.json", tmp_path, ">&-")
    assert code_of(tmp_path) == 0, result.stderr
    assert result.stderr == ""
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["models"]


@pytest.mark.parametrize(
    "command",
    [
        "run config.yaml -o out.json",
        "run config.yaml -o out.json -v",
        "run config.yaml -q -f json -o -",
    ],
)
def test_a_closed_stderr_never_fails_a_run(reports: object, tmp_path: Path, command: str) -> None:
    """`2>&-`: warnings and logs cannot be printed, the run does its work all the same."""
    result = run_with(command, tmp_path, "2>&-")
    assert code_of(tmp_path) == 0, result.stdout
    if "-o out.json" in command:
        assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["models"]
    else:
        assert json.loads(result.stdout)["models"]


def test_a_closed_stderr_keeps_exit_codes(reports: object, tmp_path: Path) -> None:
    """A bad input is still exit 2 (its message has nowhere to go), and writes nothing."""
    result = run_with("run missing.yaml -o out.json", tmp_path, "2>&-")
    assert code_of(tmp_path) == 2, result.stdout
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("run config.yaml --verbose", 141),  # the table meets the closed pipe: 141
        ("run config.yaml -q -o out.json --verbose", 0),  # only logs: dropped, the run done
    ],
)
def test_logs_to_a_reader_that_went_away(
    reports: object, tmp_path: Path, command: str, expected: int
) -> None:
    """`--verbose 2>&1 | head -1`: stderr's reader goes away after one line; the logs are
    dropped, never exit 120 nor Python's "Exception ignored ... BrokenPipeError"."""
    result = run_with(command, tmp_path, "2>&1 | head -1")
    assert code_of(tmp_path) == expected, result.stdout
    assert len(result.stdout.splitlines()) == 1
    assert result.stderr == ""
    if "out.json" in command:
        assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["models"]
