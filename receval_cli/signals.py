"""SIGINT, SIGTERM and SIGHUP stop a command cleanly: exit 130, 143 or 129 (128 + the
signal), one line on stderr.

`install` gives the three one handler, `_on_stop`, before polars is imported: polars
chains a hook onto the SIGINT handler in place when it loads, which aborts a running
query at once (a handler installed later would remove that hook). SIGINT raises
KeyboardInterrupt, as Python's own handler does; the command line turns it into
`Interrupted`. SIGTERM and SIGHUP raise `Interrupted`; Python runs the handler in the main
thread, so during a polars query it takes effect when the query returns. When Python runs
it inside the query (a callback polars makes from Rust), raising there would surface as a
Rust panic: the handler records the stop, and the next checkpoint raises it (the end of a
run's stage, the moment before outputs are written: `check`). Either exception unwinds
through the atomic writes of `report/writing.py`, which delete their temporary files: no
partial output file is left.

A stop that lands while Python runs a finalizer, where an exception cannot be raised, is
kept for the next checkpoint in the same way (`_on_unraisable`).

Only the first stop counts: a second one (the same signal from the terminal and from the
watching process, supervisor.py, which passes on what it gets; another signal; a second
Ctrl-C) is ignored while the first unwinds. A signal the process was started with ignored
(`nohup`'s SIGHUP, a background job's SIGINT) stays ignored. Other signals (SIGUSR1,
SIGQUIT, ...) keep their default action.

This module is imported first by the `receval` command (launch.py), so it imports only
`signal` and `sys`: the sooner its handler is in place, the shorter the time in which
Ctrl-C would print Python's KeyboardInterrupt traceback.
"""

from __future__ import annotations

import signal
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (see above)
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from types import FrameType

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
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


def _on_stop(signum: int, frame: FrameType | None) -> None:
    """The handler of SIGINT, SIGTERM and SIGHUP (see the module's docstring)."""
    if _stopping or _deferred:  # already stopping: let the cleanup finish, then exit
        return
    if signum == signal.SIGINT:
        _stopping.append(signum)
        raise KeyboardInterrupt
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


def is_error(error: BaseException) -> bool:
    """An error, as against a way to end the run (SystemExit, a stop): an Exception, or
    polars' panic (pyo3's PanicException derives from BaseException alone, so `except
    Exception` lets it pass: a Ctrl-C inside a polars call while the report was written
    once left the program that way, exit 1 and a traceback)."""
    return isinstance(error, Exception) or _is_panic(error)


def stop_behind(error: BaseException) -> Interrupted | None:
    """The stop an error stands for: Ctrl-C's KeyboardInterrupt raised in a callback
    polars made from Rust comes back as polars' panic (PanicException, its text naming
    the KeyboardInterrupt), which a reader turned into an error of its own (its context
    keeps the panic); a stop raised while Python creates a class (a module loading) comes
    back as the RuntimeError "Error calling __set_name__" whose cause is the stop."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, Interrupted):
            return interrupted(seen.signum)
        if isinstance(seen, KeyboardInterrupt) or (
            _is_panic(seen) and "KeyboardInterrupt" in str(seen)
        ):
            return interrupted(signal.SIGINT)
        seen = seen.__cause__ or seen.__context__
    return None


def _is_panic(error: BaseException) -> bool:
    return type(error).__name__ == "PanicException"


def interrupted(signum: int) -> Interrupted:
    """The exception for a signal that arrived by another way (a KeyboardInterrupt)."""
    if not _stopping:
        _stopping.append(signum)
    return Interrupted(_stopping[0])


def _on_unraisable(info: sys.UnraisableHookArgs) -> None:
    """A stop raised while Python ran a finalizer (a `__del__`, a weakref callback: Python
    cannot raise there) would be "ignored" with a traceback, and the command would run
    on: it is kept instead, as a stop inside a polars query is, for the next checkpoint to
    raise (`check`: a stage's end, the moment before outputs are written). Anything else
    goes to Python's own hook."""
    if isinstance(info.exc_value, KeyboardInterrupt | Interrupted) and _stopping:
        _deferred[:] = _stopping[:1]
        _stopping.clear()
        return
    sys.__unraisablehook__(info)


def install() -> None:
    """Give SIGINT, SIGTERM and SIGHUP the stop handler from now on, except one the
    process was started with ignored (in the main thread only: elsewhere Python cannot
    handle signals). SIGINT keeps Python's handler once polars is imported (replacing it
    would remove polars' hook: see the module's docstring). Nothing is imported before the
    handler is in place (threading takes a while to load: a Ctrl-C in it would be a
    traceback)."""
    sys.unraisablehook = _on_unraisable
    for signum in STOPPING:
        current = signal.getsignal(signum)
        if current == signal.SIG_IGN or (
            signum == signal.SIGINT and "polars" in sys.modules and current != _on_stop
        ):
            continue
        try:
            signal.signal(signum, _on_stop)
        except ValueError:  # not the main thread
            return
    _stopping.clear()
    _deferred.clear()


def ignore_from_now() -> None:
    """Ignore SIGINT, SIGTERM and SIGHUP for the rest of the process: its command has
    finished (written its outputs, or reported its stop). A signal arriving while the
    interpreter shuts down would otherwise end the process silently, killed by the signal
    (Python re-raises an unhandled KeyboardInterrupt that way), after a complete run."""
    if _in_main_thread():
        for signum in STOPPING:
            signal.signal(signum, signal.SIG_IGN)


def _in_main_thread() -> bool:
    import threading  # here, not at the top: see the module's docstring

    return threading.current_thread() is threading.main_thread()


class _Held:
    """See `held`."""

    def __init__(self) -> None:
        self.arrived: list[int] = []
        self.previous: dict[int, object] = {}

    def __enter__(self) -> None:
        if not _in_main_thread():
            return
        check()
        self.previous = {s: signal.getsignal(s) for s in STOPPING}
        for signum, handler in self.previous.items():
            if handler not in (None, signal.SIG_IGN):
                signal.signal(signum, lambda number, frame: self.arrived.append(number))

    def __exit__(self, *exception: object) -> None:
        for signum, handler in self.previous.items():
            if handler not in (None, signal.SIG_IGN):
                signal.signal(signum, handler)  # type: ignore[arg-type]
        if self.arrived and not _stopping:
            _stopping.append(self.arrived[0])
            raise Interrupted(self.arrived[0])


def held() -> AbstractContextManager[None]:
    """Run a short block that must not be cut in two (renaming a set of output files): a
    SIGINT, SIGTERM or SIGHUP arriving inside it raises `Interrupted` when the block ends.
    (The stop handler is put back, but polars' abort hook on SIGINT is gone: the outputs
    are written last.) A stop that arrived inside a polars query is raised first (check)."""
    return _Held()
