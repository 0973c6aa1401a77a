"""The command line: parsing and rendering only; the work is in plain functions.

Exit codes: 0 ok, 1 a gate failed, 2 bad usage, config or input, 3 internal error,
129 / 130 / 143 stopped by SIGHUP / SIGINT / SIGTERM, 141 (quietly) standard output's reader
went away or it is closed.
"""

from __future__ import annotations

import errno
import signal
import sys
from typing import Annotated, Any

import typer
from typer._click.exceptions import ClickException  # typer's own click: usage errors
from typer.core import TyperGroup

from receval_cli import console, signals
from receval_cli.cli.common import Command, PlainHelp, UnsetWithoutPydantic, unexpected
from receval_cli.cli.compare import compare_command
from receval_cli.cli.convert import convert
from receval_cli.cli.history import history_command
from receval_cli.cli.init import init_command
from receval_cli.cli.inspect import inspect_command
from receval_cli.cli.list_metrics import list_metrics
from receval_cli.cli.run import run_command
from receval_cli.cli.schema import schema_command
from receval_cli.cli.validate import validate_command
from receval_cli.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_OUT_OF_MEMORY,
    out_of_memory_message,
    says_out_of_memory,
)
from receval_cli.report.writing import (
    forget_written,
    stdout_failed,
    written,
)
from receval_cli.version import __version__


class _Commands(UnsetWithoutPydantic, PlainHelp, TyperGroup):
    """The commands; a KeyboardInterrupt (SIGINT) leaves them as `Interrupted`, which
    `receval_command` reports (Typer would turn it into a silent exit 130)."""

    def invoke(self, ctx: Any) -> Any:  # a click Context
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # what a command left buffered: a closed pipe shows here
            return result
        except KeyboardInterrupt:
            raise signals.interrupted(signal.SIGINT) from None
        except (typer.Exit, typer.Abort, ClickException):
            raise
        except MemoryError:  # Python's own allocation failing (polars' aborts: supervisor.py)
            message = out_of_memory_message("while it ran")
            raise console.fail(message, EXIT_OUT_OF_MEMORY) from None
        except OSError as error:
            if says_out_of_memory(error):  # ENOMEM where it was not caught: exit 4 too
                message = out_of_memory_message("while it ran")
                raise console.fail(message, EXIT_OUT_OF_MEMORY) from None
            if error.errno == errno.EPIPE:  # stdout's reader went away: exit 141, quietly
                raise console.stdout_closed() from None
            if error.errno != errno.ENOSPC:
                raise console.fail(unexpected(error), EXIT_INTERNAL) from None
            raise console.fail(stdout_failed(error), EXIT_BAD_INPUT) from None
        except BaseException as error:  # a bug: one line and exit 3, never a traceback or 1
            if not signals.is_error(error):  # SystemExit, a stop: theirs to end the run
                raise
            stop = signals.stop_behind(error)  # or a stop that came back wrapped
            if stop is not None:
                raise stop from None
            if says_out_of_memory(error):  # polars' "out of memory", uncaught: exit 4
                message = out_of_memory_message("while it ran")
                raise console.fail(message, EXIT_OUT_OF_MEMORY) from None
            raise console.fail(unexpected(error), EXIT_INTERNAL) from None


app = typer.Typer(
    cls=_Commands,
    name="receval",
    help="Exact, fast offline evaluation of recommender systems.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"receval {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_version, is_eager=True, help="Print the version."
        ),
    ] = False,
    no_color: console.NoColorOption = False,
    log_format: console.LogFormatOption = None,
) -> None:
    """Exact, fast offline evaluation of recommender systems."""
    console.reset()
    console.configure(no_color=no_color, log_format=log_format)


# commands defined in their own modules: one registration line each, below this one
app.command("run", cls=Command)(run_command)
app.command(cls=Command)(convert)
app.command("compare", cls=Command)(compare_command)
app.command("metrics", cls=Command)(list_metrics)
app.command("init", cls=Command)(init_command)
app.command("schema", cls=Command)(schema_command)
app.command("validate", cls=Command)(validate_command)
app.command("inspect", cls=Command)(inspect_command)
app.command("history", cls=Command)(history_command)


def receval_command() -> None:
    """The `receval` command. SIGINT, SIGTERM and SIGHUP stop it with exit 130, 143 or 129
    and one line on stderr, leaving no partial output file."""
    signals.install()
    forget_written()
    try:
        try:
            app()
        except KeyboardInterrupt:  # typer building its command, before its own handling
            raise signals.interrupted(signal.SIGINT) from None
        except Exception as error:  # a stop while a module created a class (stop_behind)
            stop = signals.stop_behind(error)
            if stop is None:
                raise
            raise stop from None
        except SystemExit as done:  # typer ends a Ctrl-C outside a command (while it parses
            stop = signals.stop_behind(done)  # the arguments) with a silent exit 130
            if stop is None:
                raise
            raise stop from None
    except signals.Interrupted as stop:
        console.emit("error", _interrupted(stop), prefixed=False)
        sys.exit(stop.exit_code)
    finally:
        signals.ignore_from_now()  # the command is over: a late stop has nothing to stop


def _interrupted(stop: signals.Interrupted) -> str:
    files = written()
    if not files:
        return f"interrupted by {stop.name}: {signals.NOTHING_WRITTEN}"
    return f"interrupted by {stop.name}: stopped after writing {', '.join(map(str, files))}."
