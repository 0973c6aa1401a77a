"""The `receval` command's entry point (pyproject's `[project.scripts]`).

The stop handling is the first thing in place: the package, this module and
receval_cli/signals.py import only `signal`, `sys` and `typing` before `main` installs it
(a stop while they load is one too), and everything else (the supervisor, typer, rich,
then polars when a command needs it: about 0.3 s) loads after. When the command is done,
the process ends without tearing the interpreter down (`_run_then_exit`).
A SIGINT, SIGTERM or SIGHUP that arrives while the modules load ends with the same one
line and exit code (130, 143, 129) as a stop at any other moment, never a Python
traceback or a run that goes on. (One that arrives before Python has started to run
receval's code at all ends the process as the signal does: no line, the shell's 130.) A
command that reads data runs in a child process watched by this one (supervisor.py):
running out of memory there ends with one `error:` line and exit 4, not an abort.
"""

# No `from __future__ import annotations` and nothing else before the `try`: each
# statement before it is time in which Ctrl-C prints a traceback through this file (the
# __future__ module is a file to find and read; a fresh CI machine once took that long).
try:  # the stop handling's own modules: a Ctrl-C while they load is a stop too
    import signal
    import sys
    from collections.abc import Callable
    from typing import NoReturn

    from receval_cli import signals
except KeyboardInterrupt:
    import sys

    from receval_cli.signals import NOTHING_WRITTEN  # loaded now that the stop is past

    sys.stderr.write(f"interrupted by SIGINT: {NOTHING_WRITTEN}\n")
    raise SystemExit(130) from None


def main() -> None:
    """Install the stop handling, import the command line, run it."""
    import gc

    gc.disable()  # while the modules load; _collect_from_now turns it back on
    try:
        signals.install()
        from receval_cli import streams, supervisor
        from receval_cli.engines.memory import fit_address_space

        streams.plug_closed()  # before any file is opened (stdin, stdout, stderr closed)
        fit_address_space()
        blas_threads_sleep()
        polars_arenas_per_core()
        if supervisor.wanted(sys.argv):
            supervisor.fork()  # the watching process exits there; the child goes on
        from receval_cli import console
        from receval_cli.cli.app import receval_command as command

        console.STAGE_LISTENERS.append(_collect_from_now)
        signals.check()  # a SIGTERM that arrived while polars itself was importing
    except KeyboardInterrupt:
        _stopped(signals.interrupted(signal.SIGINT))
    except signals.Interrupted as stop:
        _stopped(stop)
    except Exception as error:  # a stop while a module created a class: a RuntimeError
        behind = signals.stop_behind(error)
        if behind is None:
            raise
        _stopped(behind)
    _run_then_exit(command)


def blas_threads_sleep() -> None:
    """numpy's OpenBLAS starts a thread per core at import, and each spins for 2^28 cycles
    (OPENBLAS_THREAD_TIMEOUT's default, 28) before it sleeps: about 0.1 s of a core in
    every run, on a 2-core machine 6% of a 10M-row run's CPU time, though the run makes
    no BLAS call. 2^4 cycles puts them to sleep at once; the bootstrap's matrix products
    still use them (a user's own setting wins)."""
    import os

    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")


def polars_arenas_per_core() -> None:
    """polars allocates through jemalloc, which gives each thread one of 4 arenas per core
    and keeps the pages a thread freed in its own arena for the next allocation there. A
    run's threads (polars' pool, its readers, the compiled core's) each held up to a
    decoded batch that way: one arena per core held 10M rows' peak to 390 MiB from 480-600
    MiB, in the same time (benchmarks/README.md, "Large logs"). Set before polars loads
    (a user's own _RJEM_MALLOC_CONF wins)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    os.environ.setdefault("_RJEM_MALLOC_CONF", f"narenas:{max(1, cores or 1)}")


def _collect_from_now(stage: str) -> None:
    """At a command's first stage (its modules loaded): Python's cyclic garbage collection
    back on, with what was loaded so far set aside for good (gc.freeze: never scanned
    again). Collecting while some 2,000 classes and functions were created took about 12%
    of the start-up (one full and a dozen partial collections) and freed a few hundred
    small objects."""
    import gc

    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _run_then_exit(command: Callable[[], None]) -> NoReturn:
    """Run the command, then end the process at once: flush the standard streams, run the
    exit handlers (atexit: temporary folders, Spark's gateway, coverage) and `os._exit`.
    That skips the interpreter's teardown of every module and object, which costs 0.1 to
    0.25 s after a run that loaded polars, numpy and the config models (benchmarks/README.md,
    "Fixed cost"). Where another non-daemon thread still runs, a stream cannot be flushed,
    or a profiler or tracer watches (`python -m cProfile`, coverage: they write their
    results after the command returns), Python's own exit runs instead, as before."""
    try:
        command()
        code: object = 0
    except SystemExit as done:
        code = done.code
    except KeyboardInterrupt:  # a Ctrl-C the command line did not see (it reports its own)
        _stopped(signals.interrupted(signal.SIGINT))
    except Exception as error:  # one that came back wrapped (signals.stop_behind)
        behind = signals.stop_behind(error)
        if behind is None:
            raise
        _stopped(behind)
    import os
    import threading

    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    watched = sys.gettrace() is not None or sys.getprofile() is not None  # cProfile, coverage
    if watched or any(t.is_alive() and not t.daemon for t in others) or not _flushed():
        raise SystemExit(code)
    status = _exit_status(code)
    import atexit

    atexit._run_exitfuncs()
    if not _flushed():  # an exit handler's output that cannot be written: Python decides
        sys.exit(status)
    os._exit(status)


def _flushed() -> bool:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            return False
    return True


def _exit_status(code: object) -> int:
    """The status Python's own exit gives for `sys.exit(code)`: None 0, an integer
    itself, anything else printed on stderr and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(f"{code}\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    return 1


def _stopped(stop: signals.Interrupted) -> NoReturn:
    signals.ignore_from_now()
    message = f"interrupted by {stop.name}: {signals.NOTHING_WRITTEN}\n"
    try:
        sys.stderr.write(message)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # its reader went away: the code says it
        from receval_cli import streams

        streams.release(sys.stderr)
    sys.exit(stop.exit_code)
