"""SIGINT and SIGTERM stop a command cleanly: exit 130 or 143, one line on stderr.

SIGINT keeps Python's own handler (KeyboardInterrupt): polars chains a hook onto it that
aborts a running query at once, and installing another Python handler would remove that
hook. The command line turns the KeyboardInterrupt into `Interrupted`. SIGTERM gets a
handler that raises `Interrupted`; Python runs it in the main thread, so during a polars
query it takes effect when the query returns. When Python runs it inside the query (a
callback polars makes from Rust), raising there would surface as a Rust panic: the handler
records the stop, and the next checkpoint raises it (the end of a run's stage, the moment
before outputs are written: `check`). Either
exception unwinds through the atomic writes of `report/writing.py`, which delete their
temporary files: no partial output file is left.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

STOPPING = (signal.SIGINT, signal.SIGTERM)
NOTHING_WRITTEN = (
    "stopped; no output file was written (an earlier report at the same path is unchanged)."
)


class Interrupted(BaseException):
    """A stopping signal arrived. A BaseException, as KeyboardInterrupt is, so that no
    `except Exception` handler swallows it on its way to the top."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """128 + the signal's number, as a shell reports a process a signal stopped."""
        return 128 + self.signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


_stopping: list[int] = []  # the signal being acted on, once one has arrived
_deferred: list[int] = []  # a signal that arrived inside a polars query, not acted on yet


def _inside_polars(frame: FrameType | None) -> bool:
    """Whether the stack holds polars' own code: a handler then runs inside a query (a
    Python callback polars makes from Rust, e.g. while it scans a file)."""
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith("polars"):
            return True
        frame = frame.f_back
    return False


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    if _stopping:  # already stopping: let the cleanup finish, then the process exits
        return
    if _inside_polars(frame):
        # raising here would unwind through Rust: polars prints a panic message and
        # returns an error of its own; the next checkpoint acts on it (check())
        _deferred[:] = [signum]
        return
    _stopping.append(signum)
    raise Interrupted(signum)


def check() -> None:
    """Act on a stop that arrived inside a polars query: raise it now. Called where a
    run's stage ends and before outputs are written (`held`)."""
    if _deferred and not _stopping:
        _stopping.append(_deferred[0])
        raise Interrupted(_deferred[0])


def arrived() -> Interrupted | None:
    """The stop under way, if a stopping signal has arrived (else None). An error raised
    after it is its consequence: a stop raised inside a polars query comes back as
    polars' own error (a panic, read as a damaged file), so the stop must win."""
    if not _stopping and _deferred:
        _stopping.append(_deferred[0])
    return Interrupted(_stopping[0]) if _stopping else None


def stop_behind(error: BaseException) -> Interrupted | None:
    """The SIGINT an error stands for: Ctrl-C's KeyboardInterrupt raised in a callback
    polars made from Rust comes back as polars' panic (PanicException, its text naming
    the KeyboardInterrupt), which a reader turned into an error of its own (its context
    keeps the panic)."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt) or (
            type(seen).__name__ == "PanicException" and "KeyboardInterrupt" in str(seen)
        ):
            return interrupted(signal.SIGINT)
        seen = seen.__cause__ or seen.__context__
    return None


def interrupted(signum: int) -> Interrupted:
    """The exception for a signal that arrived by another way (a KeyboardInterrupt)."""
    if not _stopping:
        _stopping.append(signum)
    return Interrupted(_stopping[0])


def install() -> None:
    """Make SIGTERM raise `Interrupted` from now on, unless the process was started with
    it ignored (in the main thread only: elsewhere Python cannot handle signals)."""
    if threading.current_thread() is not threading.main_thread():
        return
    _stopping.clear()
    _deferred.clear()
    if signal.getsignal(signal.SIGTERM) != signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _raise_interrupted)


def ignore_from_now() -> None:
    """Ignore SIGINT and SIGTERM for the rest of the process: its command has finished
    (written its outputs, or reported its stop). A signal arriving while the interpreter
    shuts down would otherwise end the process silently, killed by the signal (Python
    re-raises an unhandled KeyboardInterrupt that way), after a complete run."""
    if threading.current_thread() is threading.main_thread():
        for signum in STOPPING:
            signal.signal(signum, signal.SIG_IGN)


@contextmanager
def held() -> Iterator[None]:
    """Run a short block that must not be cut in two (renaming a set of output files): a
    SIGINT or SIGTERM arriving inside it raises `Interrupted` when the block ends. (Python's
    SIGINT handler is put back, but polars' abort hook on it is gone: the outputs are
    written last.) A stop that arrived inside a polars query is raised first (check)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    check()
    arrived: list[int] = []
    previous = {s: signal.getsignal(s) for s in STOPPING}
    replaced = [s for s, handler in previous.items() if handler not in (None, signal.SIG_IGN)]
    for signum in replaced:
        signal.signal(signum, lambda number, frame: arrived.append(number))
    try:
        yield
    finally:
        for signum in replaced:
            signal.signal(signum, previous[signum])
        if arrived and not _stopping:
            _stopping.append(arrived[0])
            raise Interrupted(arrived[0])
