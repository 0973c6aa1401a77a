"""The `receval` command's entry point (pyproject's `[project.scripts]`).

The stop handling is in place before anything heavy is imported: a SIGINT or SIGTERM that
arrives while the modules load (about 0.3 s: typer, rich, then polars when a command needs
it) ends with the same one line and exit code (130, 143) as a stop at any other moment,
never a Python traceback or a process silently killed. A command that reads data runs in a
child process watched by this one (supervisor.py): running out of memory there ends with
one `error:` line and exit 4, not an abort.
"""

from __future__ import annotations

import signal
import sys

from receval_cli import signals, supervisor
from receval_cli.engines.memory import fit_address_space


def main() -> None:
    """Install the stop handling, import the command line, run it."""
    signals.install()
    fit_address_space()
    try:
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
    sys.stderr.write(f"interrupted by {stop.name}: {signals.NOTHING_WRITTEN}\n")
    sys.stderr.flush()
    sys.exit(stop.exit_code)
