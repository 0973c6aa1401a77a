"""The `receval` command's entry point (pyproject's `[project.scripts]`).

The stop handling is the first thing in place: the package, this module and
receval_cli/signals.py import only `signal` and `sys` before `main` installs it, and
everything else (the supervisor, typer, rich, then polars when a command needs it: about
0.3 s) loads after.
A SIGINT, SIGTERM or SIGHUP that arrives while the modules load ends with the same one
line and exit code (130, 143, 129) as a stop at any other moment, never a Python
traceback or a run that goes on. (One that arrives before Python has started to run
receval's code at all ends the process as the signal does: no line, the shell's 130.) A
command that reads data runs in a child process watched by this one (supervisor.py):
running out of memory there ends with one `error:` line and exit 4, not an abort.
"""

from __future__ import annotations

import sys

try:  # the stop handling's own modules: a Ctrl-C while they load is a stop too
    import signal

    from receval_cli import signals
except KeyboardInterrupt:
    from receval_cli.signals import NOTHING_WRITTEN  # loaded now that the stop is past

    sys.stderr.write(f"interrupted by SIGINT: {NOTHING_WRITTEN}\n")
    raise SystemExit(130) from None


def main() -> None:
    """Install the stop handling, import the command line, run it."""
    try:
        signals.install()
        from receval_cli import streams, supervisor
        from receval_cli.engines.memory import fit_address_space

        streams.plug_closed()  # before any file is opened (stdin, stdout, stderr closed)
        fit_address_space()
        if supervisor.wanted(sys.argv):
            supervisor.fork()  # the watching process exits there; the child goes on
        from receval_cli.cli.app import main as command

        signals.check()  # a SIGTERM that arrived while polars itself was importing
    except KeyboardInterrupt:
        _stopped(signals.interrupted(signal.SIGINT))
    except signals.Interrupted as stop:
        _stopped(stop)
    command()


def _stopped(stop: signals.Interrupted) -> None:
    signals.ignore_from_now()
    message = f"interrupted by {stop.name}: {signals.NOTHING_WRITTEN}\n"
    try:
        sys.stderr.write(message)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # its reader went away: the code says it
        from receval_cli import streams

        streams.release(sys.stderr)
    sys.exit(stop.exit_code)
