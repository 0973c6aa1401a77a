"""The consoles every command prints to, and the settings they share.

Colour is off when NO_COLOR is set (rich reads it) or with `--no-color`; rich also drops
colour and live displays when stdout is not a terminal. Verbosity: 0 with `--quiet`
(no progress display and no table: the report asked for, errors, warnings and failed
gates only), 1 by default, 2 with `--verbose` (log lines on stderr: each stage and its
time).

Everything for stderr goes through `emit` with a level: `error: ...`, `warning: ...`,
`gate failed: ...` as plain lines, and `--verbose` lines as `ISO-TIME LEVEL message`; with
`--log-format json` each is one JSON object a line (time, level, message) for a log
collector. Off a terminal (a pipe, a file, a CI log) `show` lays every table out so that a
cell wraps at spaces only (see `fit`): no word broken across lines, nothing cut with `…`.
"""

from __future__ import annotations

import datetime
import errno
import io
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

import typer

from receval_cli import signals, streams
from receval_cli.errors import EXIT_STDOUT_CLOSED
from receval_cli.escaping import json_text, printable

if TYPE_CHECKING:  # rich loads when something is printed with it (a JSON run may print nothing)
    from rich.console import Console, RenderableType
    from rich.measure import Measurement
    from rich.table import Column, Table
    from rich.text import Text


class LogFormat(StrEnum):
    text = "text"
    json = "json"


@dataclass
class Settings:
    color: bool = True
    verbosity: int = 1
    log_format: LogFormat = LogFormat.text


SETTINGS = Settings()

NoColorOption = Annotated[
    bool, typer.Option("--no-color", help="No colours (also when NO_COLOR is set).")
]
VerboseOption = Annotated[
    bool,
    typer.Option(
        "--verbose", "-v", help="Log each stage and its time on stderr (ISO time and level)."
    ),
]
LogFormatOption = Annotated[
    LogFormat | None,
    typer.Option(
        "--log-format",
        help="text (default) or json: errors, warnings and --verbose lines on stderr as one "
        "JSON object a line (time, level, message).",
    ),
]


def configure(
    *,
    no_color: bool = False,
    quiet: bool = False,
    verbose: bool = False,
    log_format: LogFormat | None = None,
) -> None:
    """Apply a command's --no-color, --quiet, --verbose and --log-format (a flag only ever
    narrows)."""
    if no_color:
        SETTINGS.color = False
    if verbose:
        SETTINGS.verbosity = 2
    elif quiet:
        SETTINGS.verbosity = 0
    if log_format is not None:
        SETTINGS.log_format = log_format


def reset() -> None:
    """Back to the defaults (each command invocation starts from them)."""
    SETTINGS.color = True
    SETTINGS.verbosity = 1
    SETTINGS.log_format = LogFormat.text


def shown(text: object, style: str = "") -> Text:
    """A table cell or header from data or a config: printable, never read as markup."""
    from rich.text import Text

    return Text(printable(text), style=style)


def release_stdout() -> None:
    """Point stdout at /dev/null once it cannot be written (a closed pipe, a full device),
    so that nothing, Python's exit included, fails on it again."""
    streams.release(sys.stdout)


def stdout_closed() -> typer.Exit:
    """Standard output's reader went away (a pipe to `head` that has read enough): there is
    no one left to tell, so no message, and the exit that `git log | head` gives (141, as a
    process that SIGPIPE ends); a stop that arrived first is raised instead (130, 143)."""
    stop = signals.arrived()
    if stop is not None:
        raise stop
    release_stdout()
    return typer.Exit(EXIT_STDOUT_CLOSED)


@cache
def _consoles() -> tuple[type[Console], type[Console]]:
    """The consoles' classes (rich imported here, when the first is needed): stdout's,
    whose closed stdout is the BrokenPipeError that cli/app.py turns into a quiet exit 141
    (see stdout_closed), not rich's silent exit 1, which would read as a failed gate; and
    stderr's, whose reader went away (`2>&1 | head -1`): the message is dropped and stderr
    pointed at /dev/null; the command goes on (rich would exit 1)."""
    from rich.console import Console

    class StdoutConsole(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    class StderrConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            streams.release(sys.stderr)

    return StdoutConsole, StderrConsole


def out(width: int | None = None) -> Console:
    """The console for results on stdout."""
    return _consoles()[0](
        highlight=False,
        markup=False,  # text from data or a config is never read as markup ([/x], [bold])
        width=width,
        no_color=not SETTINGS.color or None,
        emoji=False,
    )


def err() -> Console:
    """The console for errors, warnings and logs on stderr (soft-wrapped: long paths stay
    whole)."""
    return _consoles()[1](
        stderr=True,
        highlight=False,
        markup=False,
        soft_wrap=True,
        emoji=False,
        no_color=not SETTINGS.color or None,
    )


def show(renderable: RenderableType) -> None:
    """Print a result on stdout; off a terminal, laid out as `fit` says."""
    console = out()
    if not console.is_terminal:
        console = out(width=fit(console, renderable, console.width))
    console.print(renderable)


def fit(console: Console, renderable: RenderableType, width: int) -> int:
    """Lay a result out for a pipe, a file or a CI log (anything but a terminal) and return
    the width to print it at: `width` (COLUMNS, else 80) or more. Receval's one policy
    there: a cell wraps at spaces only, never inside a word, and nothing is cut with `…`.
    Each table's columns are fixed here (see _fix_columns): each as narrow as _least
    allows, the room left to `width` shared among the columns that wrap, up to their
    natural width; a table that needs more than `width` makes the output wider. Text
    beside the tables wraps at spaces too."""
    from rich.measure import Measurement
    from rich.table import Table

    unbounded = console.options.update(width=1_000_000)
    needed = [width]
    for part in _parts(renderable):
        if isinstance(part, Table):
            needed.append(_fix_columns(console, part, width))
        elif not hasattr(part, "renderables"):  # text: its longest word
            needed.append(Measurement.get(console, unbounded, part).minimum)
    return max(needed)


def _fix_columns(console: Console, table: Table, width: int) -> int:
    """Give each column of `table` a fixed width (see `fit`); return the table's width.
    rich's own layout cannot be left to do it: narrowing a table to the console, it takes
    from the widest column first, below that column's longest word."""
    from rich._ratio import ratio_distribute

    unbounded = console.options.update(width=1_000_000)
    # rich's column measure (long stable, not public): cells, header and padding
    measured = [table._measure_column(console, unbounded, c) for c in table.columns]
    least = [_least(column, m) for column, m in zip(table.columns, measured, strict=True)]
    slack = [m.maximum - low for m, low in zip(measured, least, strict=True)]
    room = width - table._extra_width - sum(least)
    shares = slack if room >= sum(slack) else [0] * len(slack)
    if 0 < room < sum(slack):
        shares = ratio_distribute(room, slack)
    widths = [low + share for low, share in zip(least, shares, strict=True)]
    for index, column in enumerate(table.columns):
        column.width = max(0, widths[index] - table._get_padding_width(index))
    return sum(widths) + table._extra_width


def _least(column: Column, measured: Measurement) -> int:
    """The narrowest a column may be: a column that may not wrap (names, values), its
    widest cell; one that wraps, its longest word, and not under _READABLE (a cell of up to
    that many characters stays on one line; a longer one wraps in lines of that width or
    more, never a ribbon of a word a line)."""
    if column.no_wrap:
        return measured.maximum
    return max(measured.minimum, min(measured.maximum, _READABLE))


_READABLE = 30


def _parts(renderable: RenderableType) -> Iterator[RenderableType]:
    """A renderable and, for a Group, everything in it."""
    yield renderable
    for part in getattr(renderable, "renderables", []):
        yield from _parts(part)


def plain_text(renderable: RenderableType, width: int) -> str:
    """A renderable as plain text for a file: no colour, `width` columns or more (as
    `show` widens off a terminal)."""
    from rich.console import Console

    buffer = io.StringIO()
    plain = {"no_color": True, "highlight": False, "markup": False, "emoji": False}
    probe = Console(file=buffer, width=width, **plain)  # type: ignore[arg-type]
    wide = fit(probe, renderable, width)
    Console(file=buffer, width=wide, **plain).print(renderable)  # type: ignore[arg-type]
    return buffer.getvalue()


_PREFIXES = {"error": "error: ", "warning": "warning: ", "gate": "gate failed: ", "note": ""}
_STYLES = {"error": "bold red", "warning": "yellow", "gate": "", "note": ""}


def emit(
    level: str, message: str, prefixed: bool = True, fields: dict[str, object] | None = None
) -> None:
    """One message on stderr. Levels: error, warning and gate (a failed gate), always;
    note (what a command did: `wrote FILE`), unless --quiet; info, only with --verbose.
    Text: `error: ...`, `warning: ...`, `gate failed: ...`, a note as it is, an info line
    as `ISO-TIME INFO ...`; `prefixed=False` leaves out the `error: ` word. With
    --log-format json, one JSON object a line (time, level: info, warning or error), with
    an error's `fields` (what it is about: key, path, column, found, fix) when it has any."""
    if (level == "info" and SETTINGS.verbosity < 2) or (level == "note" and SETTINGS.verbosity < 1):
        return
    target = _LIVE.display.console if _LIVE is not None else err()
    message = bounded(printable(message))
    if SETTINGS.log_format is LogFormat.json:
        named = {"gate": "error", "note": "info"}.get(level, level)
        record: dict[str, object] = {"time": _now(), "level": named, "message": message}
        if level == "gate":
            record["event"] = "gate_failed"
        if fields:
            record["fields"] = fields
        text = json_text(json.dumps(record, ensure_ascii=False, default=str))
        target.print(text, markup=False, highlight=False)
    elif level == "info":
        target.print(f"{_now()} INFO {message}", markup=False)
    else:
        from rich.text import Text

        prefix = _PREFIXES[level] if prefixed else ""
        target.print(Text(prefix, style=_STYLES[level]) + Text(message))


_HEAD, _TAIL = 1500, 500  # a message longer than both is cut in its middle


def bounded(message: str) -> str:
    """A message that quotes unbounded input (a 50 MB line, a million-column header) cut
    in the middle: its start says what is wrong, its end how to fix it."""
    if len(message) <= _HEAD + _TAIL:
        return message
    cut = len(message) - _HEAD - _TAIL
    return f"{message[:_HEAD]} ... ({cut:,} characters cut) ... {message[-_TAIL:]}"


def note(message: str) -> None:
    """What a command did (`wrote receval.yaml`), on stderr unless --quiet."""
    emit("note", message)


def log(message: str) -> None:
    """A log line on stderr, shown with --verbose only."""
    emit("info", message)


def warn(message: str) -> None:
    emit("warning", message)


def fail(error: Exception | str, exit_code: int) -> typer.Exit:
    """Report an error (one `error:` paragraph, or a JSON line) and the exit to raise; but
    when a stopping signal arrived first, the error is its consequence: the stop is raised
    instead (exit 130 or 143, one `interrupted by ...` line)."""
    stop = signals.arrived()
    if stop is None and isinstance(error, BaseException):
        stop = signals.stop_behind(error)
    if stop is not None:
        raise stop
    emit("error", str(error), fields=getattr(error, "fields", None))
    return typer.Exit(exit_code)


def _now() -> str:
    """The local time, ISO 8601 with milliseconds and the UTC offset."""
    return datetime.datetime.now().astimezone().isoformat(timespec="milliseconds")


@dataclass
class _Live:
    display: Any  # rich.progress.Progress
    task: Any  # its one task


_LIVE: _Live | None = None


@contextmanager
def live_stages() -> Iterator[None]:
    """While a run lasts, show its current stage and the elapsed time on stderr: a
    transient spinner when stderr is a terminal, unless --quiet. Elsewhere (cron, CI,
    pipes) nothing is drawn; --verbose logs the stages as plain lines instead."""
    global _LIVE
    if SETTINGS.verbosity < 1 or not sys.stderr.isatty() or _LIVE is not None:
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    display = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err(),
        transient=True,
        redirect_stdout=False,  # the report goes to stdout untouched
        redirect_stderr=False,
    )
    with display:
        _LIVE = _Live(display, display.add_task("starting", total=None))
        try:
            yield
        finally:
            _LIVE = None


def progress(text: str) -> None:
    """A stage's progress (engine spark's running tasks) on the spinner's line, from any
    thread (rich's Progress takes a lock)."""
    live = _LIVE
    if live is not None:
        live.display.update(live.task, description=text)


STAGE_LISTENERS: list[Callable[[str], None]] = []  # told the name of each stage entered


@contextmanager
def stage(name: str) -> Iterator[None]:
    """A named stage of a run: shown by live_stages, logged (with its time) by --verbose."""
    started = time.perf_counter()
    for listener in STAGE_LISTENERS:  # supervisor.py: the watching process keeps the stage
        listener(name)
    if _LIVE is not None:
        _LIVE.display.update(_LIVE.task, description=name)
    log(f"{name} ...")
    yield
    signals.check()  # a stop that arrived inside the stage's polars queries
    log(f"{name}: done in {time.perf_counter() - started:.2f} s")
