"""Faults: interrupts, full disks, unwritable folders and inputs rewritten during a run.

In every case receval exits with its code (130 for SIGINT, 143 for SIGTERM, 2 for a
write or read failure), prints one line on stderr and no traceback, and leaves the
output folder as it was: no partial report, no temporary `.NAME.XXXX` file, and an
earlier report at the same path byte for byte.

The signal tests run `receval` in a subprocess (a real process gets the signal); the
others run in-process through the CLI runner.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import assert_no_traceback, assert_user_error, hand_case, invoke, write

import receval_cli.engines.run_plan

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it

REPO = Path(__file__).resolve().parents[2]
EARLIER = "an earlier report: must survive a failed run\n"
NOTHING_WRITTEN = (
    "stopped; no output file was written (an earlier report at the same path is unchanged)."
)
TIMEOUT = 180  # seconds; generous for a loaded 2-core CI machine


# ---------------------------------------------------------------- helpers


def folder_bytes(folder: Path) -> dict[str, bytes]:
    """Every file in `folder` (temporaries included) with its content."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def earlier_reports(folder: Path, *names: str) -> dict[str, bytes]:
    folder.mkdir(exist_ok=True)
    for name in names:
        write(folder / name, f"{EARLIER}({name})\n")
    return folder_bytes(folder)


# First in every process: SIGINT and SIGTERM as a shell gives them to a foreground
# command, even where the test runner was started with them ignored (a background job),
# and before polars is imported (it chains its own hook onto Python's SIGINT handler).
PRELUDE = """
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
"""

MAIN_DRIVER = """
import sys
from receval_cli.cli.app import main

sys.argv = ["receval", *sys.argv[1:]]
main()
"""


def receval(*args: str | Path | int, driver: str = MAIN_DRIVER) -> subprocess.Popen[str]:
    """Start `receval ARGS` in a new process, through a driver script that may patch
    something and then calls `receval_cli.cli.app.main()` (the `receval` command)."""
    command = ["-c", PRELUDE + driver]
    paths = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.Popen(
        [sys.executable, *command, *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Wait for the process (killed after TIMEOUT); its exit code and stderr."""
    try:
        _, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"receval did not stop within {TIMEOUT} s")
    return process.returncode, stderr


def assert_interrupted(code: int, stderr: str, signum: int, message: str) -> None:
    """Exit 128 + signal, the one-line message last on stderr, no traceback."""
    name = signal.Signals(signum).name
    assert code == 128 + signum, (code, stderr)
    assert "Traceback" not in stderr, stderr
    assert stderr.rstrip("\n").splitlines()[-1] == f"interrupted by {name}: {message}", stderr


# ---------------------------------------------------------------- a run big enough to interrupt


@pytest.fixture(scope="module")
def big_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2M prediction rows (20,000 users x 100 items) and 5 relevant items per user, as
    Parquet: `receval run` spends about a second in its polars query on a quiet machine."""
    folder = tmp_path_factory.mktemp("big")
    rows = pl.int_range(0, 2_000_000, eager=True, dtype=pl.Int64)
    pl.DataFrame(
        {"user": rows // 100, "item": (rows * 7919) % 50_000, "score": (rows * 0.618) % 1.0}
    ).write_parquet(folder / "predictions.parquet")
    judged = pl.int_range(0, 100_000, eager=True, dtype=pl.Int64)
    pl.DataFrame({"user": judged // 5, "item": (judged * 13) % 50_000}).write_parquet(
        folder / "truth.parquet"
    )
    return write(
        folder / "config.yaml",
        "predictions: {path: predictions.parquet}\nground_truth: {path: truth.parquet}\n"
        "metrics: [ndcg@10, precision@5, map, recall@20]\n",
    )


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_mid_run(big_config: Path, tmp_path: Path, signum: int) -> None:
    """The signal arrives once the metrics query has started (the --verbose stage line):
    exit 130 / 143, one line, and the earlier report and per-user file are untouched."""
    out = tmp_path / "out"
    before = earlier_reports(out, "report.json", "users.parquet")
    process = receval(
        *("run", big_config, "--verbose", "--output", out / "report.json"),
        *("--per-user", out / "users.parquet"),
    )
    assert process.stderr is not None
    seen: list[str] = []
    watchdog = threading.Timer(TIMEOUT, process.kill)  # never hang the test run
    watchdog.start()
    try:
        for line in process.stderr:
            seen.append(line)
            if "read, rank, join, metrics ..." in line:
                process.send_signal(signum)
                break
        stderr = "".join(seen) + process.stderr.read()
        code = process.wait()
    finally:
        watchdog.cancel()
    assert "read, rank, join, metrics ..." in seen[-1], stderr
    assert_interrupted(code, stderr, signum, NOTHING_WRITTEN)
    assert "metrics: done" not in stderr  # it stopped inside the stage
    assert folder_bytes(out) == before


# the stop a query turns into its own error: SIGTERM's handler raises inside the query,
# and polars hands back a panic (which reads as a damaged file)
PANIC_DRIVER = """
import os, signal, sys, time
import polars as pl
from receval_cli.cli.app import main

real = pl.collect_all
calls = []

def collect_all(*args, **kwargs):
    calls.append(1)
    if len(calls) == 1:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler runs here
        except BaseException as error:
            raise pl.exceptions.PanicException(f"python callback raised {error!r}") from None
    return real(*args, **kwargs)

pl.collect_all = collect_all
sys.argv = ["receval", *sys.argv[1:]]
main()
"""


def test_a_stop_that_a_query_turns_into_an_error_is_a_stop(tmp_path: Path) -> None:
    """A SIGTERM whose handler fires inside a polars query comes back as polars' panic;
    receval reports the stop (exit 143, one line), not a damaged input (exit 2)."""
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    code, stderr = finish(receval("run", config, "--output", out, driver=PANIC_DRIVER))
    assert_interrupted(code, stderr, signal.SIGTERM, NOTHING_WRITTEN)
    assert "damaged" not in stderr
    assert not out.exists()


# a Ctrl-C inside a polars call while the report is written: polars hands the
# KeyboardInterrupt back as its panic, a BaseException that `except Exception` lets pass
# (CI once saw exit 1 and a traceback through report/render.py)
REPORT_PANIC_DRIVER = """
import os, signal, sys, time
import polars as pl
import receval_cli.report.render as rendering
from receval_cli.cli.app import main

real = rendering.render
WHAT = sys.argv.pop(1)

def render(*args, **kwargs):
    if WHAT == "stop":
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # Python's handler raises KeyboardInterrupt here
        except KeyboardInterrupt as error:
            raise pl.exceptions.PanicException(f"python callback raised {error!r}") from None
    raise pl.exceptions.PanicException("index out of bounds")

rendering.render = render
sys.argv = ["receval", *sys.argv[1:]]
main()
"""


def test_a_stop_polars_wraps_while_the_report_is_written_is_a_stop(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    process = receval("stop", "run", config, "--output", out, driver=REPORT_PANIC_DRIVER)
    code, stderr = finish(process)
    assert_interrupted(code, stderr, signal.SIGINT, NOTHING_WRITTEN)
    assert not out.exists()


def test_a_panic_while_the_report_is_written_is_an_internal_error(tmp_path: Path) -> None:
    """The same panic without a stop behind it: a bug, exit 3 and one line."""
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    process = receval("bug", "run", config, "--output", out, driver=REPORT_PANIC_DRIVER)
    code, stderr = finish(process)
    assert code == 3, stderr
    assert "Traceback" not in stderr, stderr
    assert stderr.startswith("error: internal error: PanicException: index out of bounds."), stderr
    assert not out.exists()


# a Ctrl-C that reaches the watching process (supervisor.py) once the child is done
LATE_STOP_DRIVER = """
import signal, sys
from receval_cli import supervisor

real = supervisor._conclude

def conclude(*args):
    code = real(*args)
    signal.raise_signal(signal.SIGINT)
    sys.stderr.write(f"SIGINT here: {signal.getsignal(signal.SIGINT)!r}\\n")
    return code

supervisor._conclude = conclude
sys.argv = ["receval", *sys.argv[1:]]
from receval_cli.launch import main
main()
"""


def test_a_stop_after_the_run_is_done_changes_nothing(tmp_path: Path) -> None:
    """Once the child has exited, the watcher ignores stops: Python's teardown puts the
    default action back on a handled signal, and a SIGINT then killed the watcher (no
    line, -SIGINT) after a complete run, seen on a loaded machine at 400 ms."""
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    code, stderr = finish(receval("run", config, "-q", "--output", out, driver=LATE_STOP_DRIVER))
    assert code == 0, stderr
    assert stderr == "SIGINT here: <Handlers.SIG_IGN: 1>\n"
    assert json.loads(out.read_text(encoding="utf-8"))["models"]


# SIGTERM while polars calls back into Python from Rust (it builds its default cast options
# while it scans a Parquet file): the handler runs inside the query
CALLBACK_DRIVER = """
import os, signal, sys, time
import polars.io.scan_options.cast_options as cast_options
from receval_cli.cli.app import main

real = cast_options.ScanCastOptions._default
sent = []

def _default():
    if not sent:
        sent.append(1)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.5)  # the handler runs here, inside the scan
    return real()

cast_options.ScanCastOptions._default = staticmethod(_default)
sys.argv = ["receval", *sys.argv[1:]]
main()
"""


def test_a_stop_inside_a_polars_callback_is_not_a_panic(tmp_path: Path) -> None:
    """Raising in a callback polars makes from Rust would print a Rust panic message; the
    stop waits until the query returns: exit 143, one line, no panic, no traceback."""
    config = hand_case(tmp_path)
    pl.read_csv(tmp_path / "predictions.csv").write_parquet(tmp_path / "predictions.parquet")
    text = config.read_text(encoding="utf-8").replace("predictions.csv", "predictions.parquet")
    config.write_text(text, encoding="utf-8")
    out = tmp_path / "report.json"
    code, stderr = finish(receval("run", config, "--output", out, driver=CALLBACK_DRIVER))
    assert "panicked" not in stderr, stderr
    assert_interrupted(code, stderr, signal.SIGTERM, NOTHING_WRITTEN)
    assert not out.exists()


# ---------------------------------------------------------------- an interrupt while writing

# Patches one function of `os` so that its n-th call (on an output file) first sends the
# process a signal, then runs receval's `main()` with the remaining arguments.
SIGNAL_DRIVER = """
import os, signal, sys
from receval_cli.cli.app import main

function, signame, nth, folder = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
real = getattr(os, function)
calls = []

def hooked(*args, **kwargs):
    if function != "replace" or str(args[1]).startswith(folder):
        calls.append(args)
        if len(calls) == nth:
            os.kill(os.getpid(), getattr(signal, signame))
    return real(*args, **kwargs)

setattr(os, function, hooked)
sys.argv = ["receval", *sys.argv[5:]]
main()
"""


@pytest.mark.parametrize(
    ("function", "signum", "nth"),
    [("fsync", signal.SIGINT, 1), ("fsync", signal.SIGTERM, 2)],
    ids=["SIGINT-first-file", "SIGTERM-second-file"],
)
def test_interrupt_while_writing(tmp_path: Path, function: str, signum: int, nth: int) -> None:
    """The signal arrives when the n-th of two output files is written to its temporary
    file (before its fsync): neither file is replaced, no temporary file is left."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    before = earlier_reports(out, "report.json", "report.md")
    name = signal.Signals(signum).name
    process = receval(
        *(function, name, nth, out, "run", config),
        *("--output", out / "report.json", "--output", out / "report.md"),
        driver=SIGNAL_DRIVER,
    )
    code, stderr = finish(process)
    assert_interrupted(code, stderr, signum, NOTHING_WRITTEN)
    assert folder_bytes(out) == before


# The signal arrives the moment a temporary output file has been created (mkstemp has
# returned, nothing has noted the file yet): the n-th temporary file of the run.
TEMPORARY_DRIVER = """
import os, signal, sys, tempfile
from receval_cli.cli.app import main

signame, nth = sys.argv[1], int(sys.argv[2])
real = tempfile.mkstemp
made = []

def mkstemp(*args, **kwargs):
    found = real(*args, **kwargs)
    made.append(found[1])
    if len(made) == nth:
        os.kill(os.getpid(), getattr(signal, signame))
    return found

tempfile.mkstemp = mkstemp
sys.argv = ["receval", *sys.argv[3:]]
main()
"""

OUTPUT_KINDS = {
    "json": ("--output", "report.json"),
    "markdown": ("--output", "report.md"),
    "csv": ("--output", "report.csv"),
    "junit": ("--output", "report.xml"),
    "table": ("--output", "report.txt"),
    "html": ("--output", "report.html"),
    "per-user-parquet": ("--per-user", "users.parquet"),
    "per-user-csv": ("--per-user", "users.csv"),
    "per-user-jsonl": ("--per-user", "users.jsonl"),
    "history": ("--history", "runs"),
}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("kind", list(OUTPUT_KINDS))
def test_interrupt_as_a_temporary_file_appears(tmp_path: Path, kind: str, signum: int) -> None:
    """A stop delivered the moment the temporary file of an output appears (every output
    kind, the history store included): one line, exit 128 + signal, and no file left in
    the output folder, the temporary one included."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    option, name = OUTPUT_KINDS[kind]
    process = receval(
        signal.Signals(signum).name, 1, "run", config, option, out / name,
        driver=TEMPORARY_DRIVER,
    )  # fmt: skip
    code, stderr = finish(process)
    assert_interrupted(code, stderr, signum, NOTHING_WRITTEN)
    assert [p.relative_to(out) for p in out.rglob("*") if p.is_file()] == []


# A stop that arrives while the command line's modules load: the signal is sent as the
# import of `typer` begins (receval_cli/launch.py is the `receval` command's entry point)
IMPORT_DRIVER = """
import importlib.abc, os, signal, sys, time

signame = sys.argv[1]

class Stop(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "typer":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), getattr(signal, signame))
            time.sleep(0.2)
        return None

sys.meta_path.insert(0, Stop())
from receval_cli.launch import main

sys.argv = ["receval", *sys.argv[2:]]
main()
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_the_modules_load(tmp_path: Path, signum: int) -> None:
    """The stop arrives before any command runs: one line, exit 128 + signal, no
    traceback, no output."""
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    name = signal.Signals(signum).name
    process = receval(name, "run", config, "--output", out, driver=IMPORT_DRIVER)
    code, stderr = finish(process)
    assert_interrupted(code, stderr, signum, NOTHING_WRITTEN)
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert not out.exists()


# A stop that arrives while Python runs a finalizer (a __del__), where no exception can be
# raised: Python would print "Exception ignored in" and a traceback, and run on
FINALIZER_SCRIPT = """
import os, signal, sys
from receval_cli import signals

signals.install()


class Finalized:
    def __del__(self):
        signal.raise_signal(getattr(signal, sys.argv[1]))


Finalized()  # dropped at once: the stop's handler runs inside __del__
print("ran on")
try:
    signals.check()  # a stage's end
except signals.Interrupted as stop:
    print("stopped", stop.signum)
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_inside_a_finalizer_is_kept_for_the_next_checkpoint(signum: int) -> None:
    """A CI run once saw "Exception ignored in: 'Path'", a traceback through signals.py,
    and then a complete run: a stop that lands in a finalizer is kept and raised at the
    next checkpoint (a stage's end, before the outputs are written), with nothing on
    stderr."""
    name = signal.Signals(signum).name
    found = subprocess.run(
        [sys.executable, "-c", FINALIZER_SCRIPT, name],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (found.returncode, found.stderr) == (0, "")
    assert found.stdout.splitlines() == ["ran on", f"stopped {int(signum)}"]


# A stop that arrives as the interpreter shuts down, after a complete run
LATE_DRIVER = """
import atexit, os, signal, sys, time
from receval_cli.cli.app import main

signame = sys.argv[1]

def late():
    os.kill(os.getpid(), getattr(signal, signame))
    time.sleep(0.2)

atexit.register(late)
sys.argv = ["receval", *sys.argv[2:]]
main()
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_after_the_command_finished_is_ignored(tmp_path: Path, signum: int) -> None:
    """Once the command has written its outputs, a stop has nothing left to stop: the run's
    own exit code, nothing more on stderr (not a process silently killed by the signal)."""
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    name = signal.Signals(signum).name
    code, stderr = finish(receval(name, "run", config, "-q", "--output", out, driver=LATE_DRIVER))
    assert (code, stderr) == (0, "")
    assert json.loads(out.read_text(encoding="utf-8"))["models"]["model"]["metrics"]


def test_interrupt_between_renames_completes_the_set(tmp_path: Path) -> None:
    """A SIGINT just before the first of two renames is held back until both are done:
    the two files are the new reports, whole, and the message names them."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    earlier_reports(out, "report.json", "report.md")
    json_report, markdown = out / "report.json", out / "report.md"
    process = receval(
        *("replace", "SIGINT", 1, out, "run", config),
        *("--output", json_report, "--output", markdown),
        driver=SIGNAL_DRIVER,
    )
    code, stderr = finish(process)
    message = f"stopped after writing {json_report}, {markdown}."
    assert_interrupted(code, stderr, signal.SIGINT, message)
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "report.md"]
    report = json.loads(json_report.read_text(encoding="utf-8"))
    assert set(report["models"]["model"]["metrics"]) == {"precision@1", "ndcg@2"}
    assert "ndcg@2" in markdown.read_text(encoding="utf-8")


# ---------------------------------------------------------------- full disk, unwritable folder

FILE_SIZE_DRIVER = """
import resource, signal, sys
from receval_cli.cli.app import main

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), hard))
sys.argv = ["receval", *sys.argv[2:]]
main()
"""


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs RLIMIT_FSIZE (POSIX)")
def test_file_size_limit_in_the_parquet_writer(tmp_path: Path) -> None:
    """A real write failure from the kernel (files limited to 200 bytes, so the per-user
    Parquet file fails with EFBIG inside polars' writer): exit 2, a clear message, the
    earlier files intact, no temporary file."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    before = earlier_reports(out, "report.json", "users.parquet")
    process = receval(
        *(200, "run", config, "--output", out / "report.json"),
        *("--per-user", out / "users.parquet"),
        driver=FILE_SIZE_DRIVER,
    )
    code, stderr = finish(process)
    assert code == 2, stderr
    assert stderr == (
        f"error: output {out / 'users.parquet'} could not be written: File too large. No "
        "output file was written or changed; free some space or choose another folder, then "
        "run again.\n"
    )
    assert folder_bytes(out) == before


def fail_on_call(nth: int, error: OSError, real: Callable[..., Any]) -> Callable[..., Any]:
    """A stand-in for an `os` function whose n-th call raises `error`."""
    calls: list[object] = []

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        if len(calls) == nth:
            raise error
        return real(*args, **kwargs)

    return stand_in


DISK_FULL = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_disk_full_keeps_the_earlier_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC where a full disk reports it on delayed allocation (fsync): exit 2, and the
    earlier report is left as it was."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    before = earlier_reports(out, "report.json")
    monkeypatch.setattr(os, "fsync", fail_on_call(1, DISK_FULL, os.fsync))
    result = invoke("run", config, "--output", out / "report.json")
    assert_user_error(
        result,
        f"output {out / 'report.json'} could not be written: No space left on device. "
        "No output file was written or changed",
    )
    assert folder_bytes(out) == before


def test_disk_full_on_the_second_file_writes_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three outputs (per-user Parquet, JSON, markdown), the disk full on the second: all
    or nothing, so none of the three earlier files is replaced."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    names = ("users.parquet", "report.json", "report.md")
    before = earlier_reports(out, *names)
    monkeypatch.setattr(os, "fsync", fail_on_call(2, DISK_FULL, os.fsync))
    result = invoke(
        "run", config, "--per-user", out / names[0], "-o", out / names[1], "-o", out / names[2]
    )
    assert_user_error(result, f"output {out / 'report.json'} could not be written: No space")
    assert folder_bytes(out) == before


def test_no_room_for_the_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Creating the temporary file fails (no inode left): exit 2, nothing written."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    before = earlier_reports(out, "report.json")
    monkeypatch.setattr(
        "receval_cli.report.appending.tempfile.mkstemp", fail_on_call(1, DISK_FULL, print)
    )
    result = invoke("run", config, "--output", out / "report.json")
    assert_user_error(result, "could not be written: No space left on device.")
    assert folder_bytes(out) == before


def test_a_rename_failing_midway_says_what_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one step that cannot be undone: every file is written, and the second rename
    fails. The first file is the new report, the second the earlier one, no temporary
    file is left, and the message says so."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    earlier_reports(out, "report.json", "report.md")
    failure = OSError(errno.EIO, os.strerror(errno.EIO))
    monkeypatch.setattr(os, "replace", fail_on_call(2, failure, os.replace))
    result = invoke("run", config, "-o", out / "report.json", "-o", out / "report.md")
    assert_user_error(
        result,
        f"output {out / 'report.md'} could not be written: Input/output error. The output "
        "files before it were written, it and the rest were not",
    )
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "report.md"]
    assert (
        "ndcg@2"
        in json.loads((out / "report.json").read_text(encoding="utf-8"))["models"]["model"][
            "metrics"
        ]
    )
    assert (out / "report.md").read_text(encoding="utf-8") == f"{EARLIER}(report.md)\n"


@pytest.fixture
def locked_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder with mode 0500 holding an earlier report."""
    folder = tmp_path / "locked"
    folder.mkdir()
    write(folder / "report.json", EARLIER)
    folder.chmod(0o500)
    yield folder
    folder.chmod(0o700)


def test_unwritable_folder(tmp_path: Path, locked_folder: Path) -> None:
    """A folder the user may not write to: exit 2 before any work, the earlier report
    intact. Root passes permission checks, so as root the folder is /sys instead, where
    the kernel lets no one create a file: a read-only mount fails the same up-front
    check, a writable one when the temporary file is created."""
    config = hand_case(tmp_path)
    if os.geteuid() != 0:
        before = folder_bytes(locked_folder)
        result = invoke("run", config, "--output", locked_folder / "report.json")
        assert_user_error(result, f"the folder {locked_folder} is not writable.")
        assert folder_bytes(locked_folder) == before
        return
    sysfs = Path("/sys")
    if not sysfs.is_dir():
        pytest.skip("as root every folder is writable, and there is no /sys to try instead")
    result = invoke("run", config, "--output", sysfs / "report.json")
    message = assert_user_error(result, f"output {sysfs / 'report.json'}")
    assert f"the folder {sysfs} is not writable." in message or (
        "could not be written: " in message and "No output file was written" in message
    ), message
    assert not (sysfs / "report.json").exists()


# ---------------------------------------------------------------- an input rewritten mid-run


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def remove(path: Path) -> None:
    path.unlink()


def replace(path: Path) -> None:
    """Another valid predictions file renamed into place (a different inode)."""
    other = path.with_name("other.parquet")
    pl.DataFrame({"user": ["u1"], "item": ["b"], "score": [1.0]}).write_parquet(other)
    os.replace(other, path)


def keep(path: Path) -> None:
    """Change nothing."""


def rewrite_after_scan(
    monkeypatch: pytest.MonkeyPatch, change: Callable[[Path], None]
) -> list[Path]:
    """Apply `change` to the predictions file right after receval has read its schema
    and before the queries run; return the files it was applied to."""
    real = receval_cli.engines.run_plan.read_predictions
    changed: list[Path] = []

    def read_then_change(config: Any, path: Path, *args: Any) -> Any:
        scanned = real(config, path, *args)
        change(path)
        changed.append(path)
        return scanned

    monkeypatch.setattr(receval_cli.engines.run_plan, "read_predictions", read_then_change)
    return changed


@pytest.fixture
def parquet_case(tmp_path: Path) -> Path:
    """The hand case (cli_helpers) with its predictions as Parquet."""
    config = hand_case(tmp_path)
    pl.read_csv(tmp_path / "predictions.csv").write_parquet(tmp_path / "predictions.parquet")
    text = config.read_text(encoding="utf-8").replace("predictions.csv", "predictions.parquet")
    return write(config, text)


@pytest.mark.own_process  # a polars query fails (tests/process_isolation.py)
@pytest.mark.parametrize(
    ("change", "words"),
    [
        (truncate, "changed size ("),
        (remove, "was removed"),
        (replace, "was replaced by another file"),
    ],
    ids=["truncated", "removed", "replaced"],
)
def test_predictions_rewritten_during_the_run(
    parquet_case: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[Path], None], words: str
) -> None:
    """The file changes between the schema scan and the queries: exit 2 naming it, no
    report (a half-truncated Parquet file would otherwise still evaluate, from the footer
    read before; a removed one failed with a traceback)."""
    changed = rewrite_after_scan(monkeypatch, change)
    out = parquet_case.parent / "out"
    before = earlier_reports(out, "report.json")
    result = invoke("run", parquet_case, "--output", out / "report.json")
    predictions = parquet_case.parent / "predictions.parquet"
    assert changed == [predictions]
    assert_user_error(
        result, f"predictions file {predictions} {words}", "while receval was reading it"
    )
    assert folder_bytes(out) == before


def test_unchanged_input_is_not_flagged(
    parquet_case: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same hook changing nothing: the run succeeds with the hand-checked value."""
    changed = rewrite_after_scan(monkeypatch, keep)
    result = invoke("run", parquet_case, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert changed
    assert (
        json.loads(result.stdout)["models"]["model"]["metrics"]["precision@1"] == 0.5
    )  # cli_helpers


def test_io_error_escaping_the_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An OSError from inside an evaluation, with no input changed, is an input error."""
    config = hand_case(tmp_path)

    def lost(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO), str(tmp_path / "predictions.csv"))

    monkeypatch.setattr("receval_cli.analysis.runs.evaluate_config", lost)
    result = invoke("run", config)
    assert_user_error(result, f"{tmp_path / 'predictions.csv'} could not be read: Input/output")


def test_polars_panic_is_an_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A polars panic with every input unchanged: exit 3, a bug report, no traceback."""
    config = hand_case(tmp_path)

    def panic(*args: Any, **kwargs: Any) -> None:
        raise pl.exceptions.PanicException("assertion failed: x")

    monkeypatch.setattr("receval_cli.analysis.runs.evaluate_config", panic)
    result = invoke("run", config)
    assert_no_traceback(result)
    assert result.exit_code == 3
    assert result.stderr.startswith(
        "error: internal error: polars failed while evaluating: assertion failed: x."
    )
