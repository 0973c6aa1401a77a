"""The fault tests' configs and what a refused run leaves behind."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import write

import receval_cli.engines.run_plan

REPO = Path(__file__).resolve().parents[2]


EARLIER = "an earlier report: must survive a failed run\n"


NOTHING_WRITTEN = (
    "stopped; no output file was written (an earlier report at the same path is unchanged)."
)


TIMEOUT = 180  # seconds; generous for a loaded 2-core CI machine


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
from receval_cli.cli.app import receval_command

sys.argv = ["receval", *sys.argv[1:]]
receval_command()
"""


def receval(*args: str | Path | int, driver: str = MAIN_DRIVER) -> subprocess.Popen[str]:
    """Start `receval ARGS` in a new process, through a driver script that may patch
    something and then calls `receval_cli.cli.app.receval_command()` (the `receval` command)."""
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


# the stop a query turns into its own error: SIGTERM's handler raises inside the query,
# and polars hands back a panic (which reads as a damaged file)
PANIC_DRIVER = """
import os, signal, sys, time
import polars as pl
from receval_cli.cli.app import receval_command

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
receval_command()
"""


# a Ctrl-C inside a polars call while the report is written: polars hands the
# KeyboardInterrupt back as its panic, a BaseException that `except Exception` lets pass
# (CI once saw exit 1 and a traceback through report/render.py)
REPORT_PANIC_DRIVER = """
import os, signal, sys, time
import polars as pl
import receval_cli.report.render as rendering
from receval_cli.cli.app import receval_command

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
receval_command()
"""


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


# SIGTERM while polars calls back into Python from Rust (it builds its default cast options
# while it scans a Parquet file): the handler runs inside the query
CALLBACK_DRIVER = """
import os, signal, sys, time
import polars.io.scan_options.cast_options as cast_options
from receval_cli.cli.app import receval_command

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
receval_command()
"""


# Patches one function of `os` so that its n-th call (on an output file) first sends the
# process a signal, then runs receval's `receval_command()` with the remaining arguments.
SIGNAL_DRIVER = """
import os, signal, sys
from receval_cli.cli.app import receval_command

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
receval_command()
"""


# The signal arrives the moment a temporary output file has been created (mkstemp has
# returned, nothing has noted the file yet): the n-th temporary file of the run.
TEMPORARY_DRIVER = """
import os, signal, sys, tempfile
from receval_cli.cli.app import receval_command

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
receval_command()
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


# A stop that arrives as the interpreter shuts down, after a complete run
LATE_DRIVER = """
import atexit, os, signal, sys, time
from receval_cli.cli.app import receval_command

signame = sys.argv[1]

def late():
    os.kill(os.getpid(), getattr(signal, signame))
    time.sleep(0.2)

atexit.register(late)
sys.argv = ["receval", *sys.argv[2:]]
receval_command()
"""


FILE_SIZE_DRIVER = """
import resource, signal, sys
from receval_cli.cli.app import receval_command

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), hard))
sys.argv = ["receval", *sys.argv[2:]]
receval_command()
"""


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
