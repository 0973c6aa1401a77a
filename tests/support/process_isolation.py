"""Tests in which a polars query fails run in a process of their own.

Why: a process in which a polars query failed is not safe to reuse. When a streaming query
fails (a value that does not parse, a damaged Parquet page), polars cancels the query's
other tasks, and now and then its async executor panics while doing so ("joined on
cancelled task", then "invalid TaskData when polling"); a later query in that process can
then wait forever. Reproduced: the same bad-input run repeated in one process with
POLARS_MAX_THREADS=2 hung after a few hundred repeats, inside the next query. A `receval`
command exits after the error, so users never reuse such a process; the suite must not
either: in CI the pytest process has hung this way and, twice, a test failed the panic
guard below.

How:
- a test marked `own_process` runs in a child forked from a fork server (multiprocessing's
  "forkserver": a fresh interpreter that imported pytest, polars and receval once, and ran
  no query). The child imports the test's module, finds the test function by name and
  calls it with the fixture values pytest made here (tmp_path, parameters), in the
  environment and working directory of this process; what it raises comes back and is
  raised here, its output printed here. About 0.5 s a test, where a fresh
  `python -m pytest NODEID` costs seconds. (Assertions there are not rewritten by pytest:
  a failed `assert` shows its message and the child's traceback.)
- a marked test whose fixtures cannot travel (a Spark session, monkeypatch's patches of
  objects) runs in a fresh `python -m pytest NODEID` instead.
- guards, for tests not marked: one in which a polars query raised (every collect and sink
  is watched) fails and says to mark it, so the rule does not depend on a race; and one in
  whose captured stderr polars panicked fails the same way.
"""

from __future__ import annotations

import functools
import importlib
import multiprocessing
import os
import pickle
import re
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import polars as pl
import pytest

OWN_PROCESS = "RECEVAL_TEST_IN_OWN_PROCESS"  # set in a child: the test runs where it is
LIMIT = 540  # seconds a child may take: under pytest-timeout's 600, so its output shows
_RUST_PANIC = re.compile(r"thread '[^'\n]*'(?: \(\d+\))? panicked at ")  # Rust's panic line
# fixtures whose values do not carry what they did here into another process
_STAY_HERE = {"monkeypatch", "capsys", "capfd", "caplog", "request", "spark", "recwarn"}
# what the fork server imports once, so that no child imports it again (a child that
# imported pytest and hypothesis itself took a second before the test began). Only modules
# that run no polars query when imported: a fork of a process whose polars has started its
# threads waits forever in its first query (the test modules build Parquet files at import,
# so each child imports its test's module itself, about 0.2 s)
_PRELOAD = [
    "pytest",
    "hypothesis",
    "hypothesis_profile",  # no deadline, no health check (conftest.py is not imported here)
    "numpy",
    "pyarrow.parquet",
    "polars",
    "yaml",
    "typer.testing",
    "receval_cli.cli.app",
    "receval_cli.api",
    __name__,
]

_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload(_PRELOAD)
_failed_here: list[str] = []  # the polars calls that raised during the running test


def marked(item: pytest.Item) -> bool:
    return item.get_closest_marker("own_process") is not None


def in_child() -> bool:
    return os.environ.get(OWN_PROCESS) == "1"


# --- watching polars: which test made a query fail ---------------------------------------


def _watched(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except (pl.exceptions.PolarsError, pl.exceptions.PanicException) as error:
            _failed_here.append(
                f"{name}: {type(error).__name__}: {str(error).partition(chr(10))[0][:200]}"
            )
            raise

    return call


def watch_polars() -> None:
    """Record each polars query that raises (collects, sinks, collect_all)."""
    for name in ("collect", "collect_batches", "sink_parquet", "sink_csv", "sink_ndjson"):
        setattr(pl.LazyFrame, name, _watched(getattr(pl.LazyFrame, name), f"LazyFrame.{name}"))
    pl.collect_all = _watched(pl.collect_all, "collect_all")  # type: ignore[assignment]


# --- running a test elsewhere ------------------------------------------------------------


def _start_server() -> None:
    """Start the fork server where it can import the tests' modules: Python 3.11's fork
    server does not take this process's sys.path along (it is given it and drops it), so
    the folders pytest put there for the tests go by PYTHONPATH, for its start only (a
    module it cannot import it skips in silence, and every child then imported the test
    module again: a second per test)."""
    root = str(Path(__file__).resolve().parents[2])
    ours = [entry for entry in sys.path if entry.startswith(root)]
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([*ours, *([before] if before else [])])
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before


def _call_in_child(
    where: tuple[str, str],
    arguments: dict[str, Any],
    environment: dict[str, str],
    folder: str,
    output: str,
    channel: Connection,
) -> None:
    """In the forked child: the test's own output to a file, then the test."""
    os.environ.clear()
    os.environ.update(environment)
    os.environ[OWN_PROCESS] = "1"
    os.chdir(folder)
    sys.stdout.flush()
    sys.stderr.flush()
    descriptor = os.open(output, os.O_WRONLY | os.O_APPEND)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    try:
        module, name = where  # found by name: a wrapped test (hypothesis') does not pickle
        importlib.import_module("hypothesis_profile")  # where the server could not preload it
        getattr(importlib.import_module(module), name)(**arguments)
    except BaseException as error:  # pytest.skip and pytest.fail too
        text = "".join(traceback.format_exception(error))
        try:
            sent = pickle.dumps(error)
        except Exception:  # an error that cannot travel: its text does
            sent = None
        channel.send((sent, text))
    else:
        channel.send(None)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def _fork_run(item: pytest.Function, arguments: dict[str, Any]) -> None:
    _start_server()  # once: later calls find it running
    receiving, sending = _context.Pipe(duplex=False)
    with tempfile.NamedTemporaryFile("rb", prefix="own-process-", suffix=".log") as output:
        child = _context.Process(
            target=_call_in_child,
            args=(
                (item.module.__name__, item.originalname),
                arguments,
                dict(os.environ),
                os.getcwd(),
                output.name,
                sending,
            ),
        )
        child.start()
        sending.close()
        outcome: Any = "none"
        if receiving.poll(LIMIT):
            try:
                outcome = receiving.recv()
            except EOFError:  # the child died without a word (an abort, a signal)
                outcome = "none"
        else:
            child.kill()
            outcome = "late"
        child.join(30)
        printed = output.read().decode(errors="replace")
    sys.stdout.write(printed)  # pytest captures it as this test's output
    if outcome == "late":
        pytest.fail(f"the test's own process ran past {LIMIT} s:\n{printed[-6000:]}")
    if outcome == "none":
        pytest.fail(f"the test's own process died (exit {child.exitcode}):\n{printed[-6000:]}")
    if outcome is None:
        return
    sent, text = outcome
    error = pickle.loads(sent) if sent is not None else None
    if isinstance(error, BaseException):
        if hasattr(error, "add_note"):
            error.add_note(f"raised in the test's own process:\n{text}")
        raise error
    pytest.fail(f"the test failed in its own process:\n{text}")


def _pytest_run(item: pytest.Function) -> None:
    # -m "": the node runs whatever its marks (without -m, slow and spark tests are skipped);
    # -n 0: in this one process (addopts spread tests over workers)
    command = [sys.executable, "-m", "pytest", item.nodeid, "-q", "-p", "no:cacheprovider"]
    command += ["-m", "", "-n", "0"]
    try:
        child = subprocess.run(
            command,
            cwd=item.config.rootpath,
            env={**os.environ, OWN_PROCESS: "1"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=LIMIT,
        )
    except subprocess.TimeoutExpired as stuck:
        seen = stuck.stdout or b""
        output = (seen.decode(errors="replace") if isinstance(seen, bytes) else seen)[-6000:]
        pytest.fail(f"the test's own process ran past {LIMIT} s:\n{output}")
    if child.returncode != 0:
        pytest.fail(f"the test failed in its own process:\n{child.stdout[-12000:]}{child.stderr}")


def _travels(arguments: dict[str, Any]) -> bool:
    if _STAY_HERE & set(arguments):
        return False
    try:
        pickle.dumps(arguments)
    except Exception:  # whatever pickle refuses
        return False
    return True


def run_elsewhere(item: pytest.Function) -> None:
    """Run the marked test in a forked child, or in a fresh pytest when it must."""
    names = item._fixtureinfo.argnames
    arguments = {name: item.funcargs[name] for name in names}
    if item.cls is None and _travels(arguments):  # a test function, plain values
        _fork_run(item, arguments)
    else:
        _pytest_run(item)


# --- the hooks (imported by conftest.py) -------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """An `own_process` test runs elsewhere; None lets pytest call any other here."""
    _failed_here.clear()
    if not marked(pyfuncitem) or in_child():
        return None
    run_elsewhere(pyfuncitem)
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Fail a test not marked `own_process` in which a polars query failed or polars
    panicked: the process it leaves is not safe for the tests after it."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.passed or marked(item) or in_child():
        return
    if _failed_here or _RUST_PANIC.search(report.capstderr):
        what = "; ".join(_failed_here[:3]) or "a Rust panic on stderr"
        report.outcome = "failed"
        report.longrepr = (
            f"a polars query failed in this test's process ({what}); a process where one "
            "failed is not safe for the tests after it (a query there can wait forever): "
            "mark the test @pytest.mark.own_process so it runs in a process of its own "
            f"(tests/support/process_isolation.py)"
        )
