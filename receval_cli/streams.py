"""Standard streams that are closed (`>&-`, `2>&-`) or whose reader went away.

A process started with file descriptor 0, 1 or 2 closed would hand that number to the
next file it opens: a report opened as descriptor 2 would receive what native code
prints on stderr. So `plug_closed` (the first thing the `receval` command does) opens
each closed one on its own: stdin and stderr on /dev/null (a run whose outputs go to files
does its work; it cannot print its warnings), stdout on a pipe without a reader, so that
a report or table meant for it ends the command as a reader that went away does (exit 141,
errors.EXIT_STDOUT_CLOSED), and a table that only accompanies output files is not shown.
`release` points a stream that failed so at /dev/null, so that nothing, Python's own exit
included ("Exception ignored ... BrokenPipeError"), writes to it again.
"""

from __future__ import annotations

import contextlib
import os
import sys

_closed_at_start: set[int] = set()


def plug_closed() -> None:
    """Open each of the standard file descriptors that is closed (see above)."""
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            _closed_at_start.add(descriptor)
            if descriptor == 1:
                reader, writer = os.pipe()
                os.close(reader)  # no reader: a write fails with EPIPE, as after `| head`
            else:
                writer = os.open(os.devnull, os.O_RDWR)
            if writer != descriptor:
                os.dup2(writer, descriptor)
                os.close(writer)
    # Python set these to None for a descriptor closed at its start
    text = {"encoding": "utf-8", "errors": "backslashreplace", "closefd": False}
    if 0 in _closed_at_start:
        sys.stdin = open(0, **text)  # type: ignore[call-overload]  # noqa: SIM115
    for descriptor, name in ((1, "stdout"), (2, "stderr")):
        if descriptor in _closed_at_start:
            stream = open(descriptor, "w", buffering=1, **text)  # type: ignore[call-overload]  # noqa: SIM115
            setattr(sys, name, stream)


def stdout_closed_at_start() -> bool:
    """Whether the command started with stdout closed (`>&-`)."""
    return 1 in _closed_at_start


def release(stream: object) -> None:
    """Point a stream that cannot be written (a closed pipe, a full device) at /dev/null."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        descriptor = stream.fileno()  # type: ignore[attr-defined]
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, descriptor)
        os.close(devnull)
