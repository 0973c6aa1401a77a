"""A command that reads data runs in a child process that this one watches.

Running out of memory inside polars cannot be caught where it happens: Rust prints
`memory allocation of N bytes failed` (and a backtrace) and aborts the process (SIGABRT,
exit 134), or the kernel's out-of-memory killer ends it (SIGKILL, 137). So `receval run`,
`validate`, `inspect`, `convert`, `compare` and `history` fork first, before anything heavy
is imported. The child does the work with the user's stdout, stdin and, for everything
Python writes, the user's stderr (a duplicate of it: `sys.stderr` still is a terminal when
it was one); what native code writes to file descriptor 2 (Rust's messages, a JVM's logs)
comes to this process through a pipe and is passed on, except what an abort prints. The
child also tells this process each stage it enters (console.STAGE_LISTENERS). This process
then exits as the child did, or, when the child died of lack of memory, with
EXIT_OUT_OF_MEMORY and one `error:` line naming the stage and the settings that help.

SIGINT, SIGTERM and SIGHUP that reach this process are passed on to the child, which
stops (signals.py) and exits 130, 143 or 129; this process then exits with that code. The
child acts on the first stop only, so one sent to the whole group (Ctrl-C at a terminal,
a job runner's `kill -- -PGID`), which the child gets twice, ends the same way as one sent
to this process alone (`kill -INT PID`, `Popen.send_signal`). Other signals keep their
default action here. The child dies with this process, whatever ends it (a job runner's
timeout sends SIGKILL, which cannot be passed on): on Linux the kernel sends it SIGKILL
(PR_SET_PDEATHSIG); elsewhere a thread of the child sees the pipe from this process close.

Nothing the child started outlives the command: on Linux this process adopts what the
child leaves running (PR_SET_CHILD_SUBREAPER) and ends it (`_Worker`). Spark's JVM ends
when its stdin closes, but not one stopped while it starts, which would run on and hold
the pipe of native stderr. Elsewhere this process only stops waiting for that output.
RECEVAL_UNSUPERVISED=1 runs the command in this process (for debuggers and profilers).
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import sys
import time
from pathlib import Path

from receval_cli import signals
from receval_cli.exit_codes import EXIT_INTERNAL, EXIT_OUT_OF_MEMORY, EXIT_SIGKILL, STOPPED

SUPERVISED = {"run", "validate", "inspect", "convert", "compare", "history"}
# what Rust's allocation failure, a panic's abort and their backtraces print
_ABORT_LINES = re.compile(
    rb"memory allocation of \d+ bytes failed|stack backtrace:|note: Some details are omitted|"
    rb"skipping backtrace printing|fatal runtime error|^\s+\d+: |^\s+at |"
    rb"thread '[^'\n]*'(?: \(\d+\))? panicked|"  # Rust 1.89 and later add the thread's id
    rb"pthread_create failed|failed to spawn thread"
)

_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36  # Linux's prctl options

_stage_channel: list[int] = []  # in the child: the pipe to tell the parent each stage


def command_of(argv: list[str]) -> str | None:
    """The command `argv` runs: its first word that is not an option (or an option's
    value: --log-format takes one)."""
    words = iter(argv[1:])
    for word in words:
        if word == "--log-format":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def wanted(argv: list[str]) -> bool:
    return (
        os.name == "posix"
        and hasattr(os, "fork")
        and os.environ.get("RECEVAL_UNSUPERVISED") != "1"
        and command_of(argv) in SUPERVISED
        and _open(2)  # a closed stderr (2>&-): nothing to pass on, run in one process
    )


def _open(descriptor: int) -> bool:
    try:
        os.fstat(descriptor)
    except OSError:
        return False
    return True


def report_stage(name: str) -> None:
    """In the child: tell the watching process the stage the run enters (no-op elsewhere)."""
    if _stage_channel:
        try:
            os.write(_stage_channel[0], name.encode("utf-8", "replace")[:400] + b"\n")
        except OSError:
            _stage_channel.clear()


def fork() -> None:
    """Fork: the child returns and runs the command; this process watches it and exits."""
    native_read, native_write = os.pipe()
    stage_read, stage_write = os.pipe()
    lifeline_read, lifeline_write = os.pipe()  # open here until this process ends
    kills_before = _oom_kills()
    watcher = os.getpid()
    adopting = _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # the worker's orphans become ours
    # blocked across the fork: a stop arriving now waits for the handler that passes it on
    signal.pthread_sigmask(signal.SIG_BLOCK, signals.STOPPING)
    child = os.fork()
    if child == 0:
        for unused in (native_read, stage_read, lifeline_write):
            os.close(unused)
        _die_with_parent(watcher, lifeline_read)
        _become_worker(native_write, stage_write)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, signals.STOPPING)
        return
    for unused in (native_write, stage_write, lifeline_read):
        os.close(unused)
    worker = _Worker(child, adopting)
    for forwarded in signals.STOPPING:
        if signal.getsignal(forwarded) != signal.SIG_IGN:  # nohup's SIGHUP stays ignored
            signal.signal(forwarded, lambda signum, frame: worker.stop(signum))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signals.STOPPING)
    held, stage = _relay(native_read, stage_read, worker)
    worker.end_processes()
    # the child is done: nothing left to pass a stop on to. Python's teardown puts the
    # default action back on handled signals, so a late Ctrl-C would kill this process
    # (-SIGINT, no line) after a complete run
    signals.ignore_from_now()
    assert worker.status is not None
    sys.exit(_conclude(worker.status, held, stage, _oom_kills() > kills_before))


def _become_worker(native_write: int, stage_write: int) -> None:
    """The child: Python's stderr is a duplicate of the user's stderr; file descriptor 2,
    where native code writes, is the pipe to the parent."""
    terminal = os.dup(2)
    os.dup2(native_write, 2)
    os.close(native_write)
    os.set_inheritable(stage_write, False)
    _stage_channel[:] = [stage_write]
    from receval_cli import console

    console.STAGE_LISTENERS.append(report_stage)
    encoding = sys.stderr.encoding if sys.stderr is not None else "utf-8"
    sys.stderr = open(  # noqa: SIM115 (the process's stderr, open until it exits)
        terminal, "w", encoding=encoding, errors="backslashreplace", buffering=1
    )


def _die_with_parent(watcher: int, lifeline: int) -> None:
    """In the child: die (SIGKILL) as soon as the watching process does, whatever ends
    it. Linux: the kernel's parent-death signal; the watcher may have died before it was
    set, hence the check of the parent after. Elsewhere: a thread that waits for the end of
    the pipe the watcher holds open (`lifeline`)."""
    if not _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL):
        import threading

        threading.Thread(target=_kill_self_at_end_of, args=(lifeline,), daemon=True).start()
    if os.getppid() != watcher:  # the watcher is gone already
        os.kill(os.getpid(), signal.SIGKILL)


def _prctl(option: int, value: int) -> bool:
    """Linux's prctl(option, value); False where it is not available or fails."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _kill_self_at_end_of(pipe: int) -> None:
    with contextlib.suppress(OSError):
        while os.read(pipe, 1):
            pass
    os.kill(os.getpid(), signal.SIGKILL)


class _Worker:
    """The child, and the processes it started (see the module's docstring): once the child
    has exited, they get LINGER seconds to end by themselves (none after a stop), then
    SIGTERM (a JVM runs its shutdown hooks), then SIGKILL after TERM_WAIT."""

    LINGER, TERM_WAIT, GONE_WAIT = 10.0, 3.0, 1.0  # seconds

    def __init__(self, pid: int, adopting: bool) -> None:
        self.pid, self.adopting = pid, adopting
        self.status: int | None = None  # os.waitpid's, once the child has exited
        self.stopped = False  # a stop arrived, or the child exited as stopped
        self.ended = 0.0  # when the child exited

    def stop(self, signum: int) -> None:
        """Pass a stop on to the child (not once reaped: its number may be reused)."""
        self.stopped = True
        if self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def exited(self) -> bool:
        """Whether the child has exited (reaped here, its status kept)."""
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status, self.ended = status, time.monotonic()
                code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
                self.stopped = self.stopped or code in STOPPED
        return self.status is not None

    def done_waiting(self) -> bool:
        """After the child: whether what it left has had its time to end by itself."""
        return self.stopped or time.monotonic() >= self.ended + self.LINGER

    def end_processes(self) -> None:
        """End the child's processes still there, SIGTERM then SIGKILL, and reap them."""
        left = self._processes()
        for signum, wait in ((signal.SIGTERM, self.TERM_WAIT), (signal.SIGKILL, self.GONE_WAIT)):
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signum)
            deadline = time.monotonic() + wait
            while left and time.monotonic() < deadline:
                time.sleep(0.05)
                left = self._processes()

    def _processes(self) -> list[int]:
        """The living processes below this one, the adopted ones that ended reaped first."""
        if not self.adopting or self.status is None:  # not before the child is reaped
            return []
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        found, below = [], [os.getpid()]
        while below:
            below = [child for parent in below for child in _children(parent)]
            found += below
        return found


def _children(pid: int) -> list[int]:
    """Process `pid`'s living children: Linux's /proc/PID/task/TID/children, one list per
    thread (none where the kernel does not list them)."""
    found = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                found += Path(f"/proc/{pid}/task/{task}/children").read_text().split()
    living = []
    for child in found:
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{child}/stat").read_bytes()
            if stat[stat.rindex(b")") + 2 :][:1] != b"Z":  # a zombie has ended
                living.append(int(child))
    return living


def _relay(native: int, stages: int, worker: _Worker) -> tuple[list[bytes], str | None]:
    """Pass the child's native stderr on, line by line, until both pipes close and the
    child has exited (or what it left is ended: `_Worker`); hold the lines an abort prints,
    and the blank lines just before it (a panic in polars' threads starts with one), and
    every line after a stop (a JVM's complaint that its driver went away). Returns the
    held lines and the last stage reported."""
    selector = selectors.DefaultSelector()
    selector.register(native, selectors.EVENT_READ, "native")
    selector.register(stages, selectors.EVENT_READ, "stage")
    try:  # readable when the child exits (Linux 5.3+; else the child is looked at 10 times/s)
        exit_watch: int | None = os.pidfd_open(worker.pid)
    except (AttributeError, OSError):
        exit_watch = None
    if exit_watch is not None:
        selector.register(exit_watch, selectors.EVENT_READ, "exit")
    pending = {"native": b"", "stage": b""}
    held: list[bytes] = []
    blank: list[bytes] = []  # blank native lines not passed on yet
    stage: str | None = None
    open_pipes = 2
    while open_pipes or not worker.exited():
        waiting = exit_watch is not None and worker.status is None
        for key, _ in selector.select(None if waiting else 0.1):
            if key.data == "exit":
                selector.unregister(key.fd)
                continue
            chunk = os.read(key.fd, 65536)
            if not chunk:
                selector.unregister(key.fd)
                os.close(key.fd)
                open_pipes -= 1
                lines, pending[key.data] = [pending[key.data]] if pending[key.data] else [], b""
            else:
                *lines, pending[key.data] = (pending[key.data] + chunk).split(b"\n")
                lines = [line + b"\n" for line in lines]
            for line in lines:
                if key.data == "stage":
                    stage = line.decode("utf-8", "replace").strip() or stage
                elif _ABORT_LINES.search(line) or held or worker.stopped:
                    held += [*blank, line]  # an abort's message: everything after it is too
                    blank = []
                elif not line.strip():
                    blank.append(line)
                else:
                    _write([*blank, line])
                    blank = []
        if worker.exited() and open_pipes and worker.done_waiting():
            break  # what still holds the pipe is ended next (end_processes)
    if exit_watch is not None:
        os.close(exit_watch)
    _write(blank)
    return held, stage


def _conclude(status: int, held: list[bytes], stage: str | None, oom_killed: bool) -> int:
    """The exit code, after any message: the child's own code, or what its death means."""
    if os.WIFEXITED(status):
        code = os.WEXITSTATUS(status)
        if code not in STOPPED:  # a stop's panic in polars' threads is its consequence
            _write(held)
        return code
    signum = os.WTERMSIG(status)
    doing = f"while {stage}" if stage else "while starting"
    out_of_memory = (signum == signal.SIGABRT and _says_out_of_memory(held)) or (
        signum == signal.SIGKILL and oom_killed
    )
    if out_of_memory:
        from receval_cli.errors import out_of_memory_message

        _error(out_of_memory_message(doing, signum))
        return EXIT_OUT_OF_MEMORY
    if signum == signal.SIGKILL:
        _error(
            f"receval was killed by SIGKILL {doing} (nothing it could report: `kill -9`, or "
            "the kernel's out-of-memory killer, which sends it when memory runs out). If "
            "memory ran out, set `partitions: N` in the config (e.g. 8) or give it more."
        )
        return EXIT_SIGKILL
    _write(held)
    _error(
        f"internal error: receval stopped on {signal.Signals(signum).name} {doing} (a crash "
        "in native code, above). Please report it with the config and the command."
    )
    return EXIT_INTERNAL


def _says_out_of_memory(held: list[bytes]) -> bool:
    """An abort's lines say that memory ran out (errors.OUT_OF_MEMORY_TEXT: loaded only
    here, after a worker died, so that the start-up stays light)."""
    from receval_cli.errors import OUT_OF_MEMORY_TEXT

    pattern = re.compile(OUT_OF_MEMORY_TEXT.encode(), re.IGNORECASE)
    return any(map(pattern.search, held))


def _write(lines: list[bytes]) -> None:
    """Pass lines on to stderr; a reader that went away (`2>&1 | head -1`) drops them."""
    for line in lines:
        with contextlib.suppress(OSError):
            os.write(2, line)


def _error(message: str) -> None:
    """One `error:` line, as the child would print it (text, or --log-format json)."""
    from receval_cli import console

    log_format = console.LogFormat.json if _json_logs(sys.argv) else None
    console.configure(no_color="--no-color" in sys.argv, log_format=log_format)
    console.emit("error", message)


def _json_logs(argv: list[str]) -> bool:
    pairs = zip(argv, [*argv[1:], ""], strict=True)
    return any(a == "--log-format=json" or (a, b) == ("--log-format", "json") for a, b in pairs)


def _oom_kills() -> int:
    """The out-of-memory kills the kernel counted in this process's cgroup (v2
    memory.events, v1 memory.oom_control); 0 where it does not say."""
    from receval_cli.engines.memory import own_cgroups

    v2, v1 = own_cgroups()
    for path in (
        f"/sys/fs/cgroup{v2}/memory.events",
        f"/sys/fs/cgroup/memory{v1}/memory.oom_control",
    ):
        try:
            for line in Path(path).read_text(encoding="ascii").splitlines():
                name, _, value = line.partition(" ")
                if name == "oom_kill" and value.strip().isdigit():
                    return int(value)
        except OSError:
            continue
    return 0
