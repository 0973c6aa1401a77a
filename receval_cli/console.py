"""The consoles every command prints to, and the settings they share.

Colour is off when NO_COLOR is set (rich reads it) or with `--no-color`; rich also drops
colour and live displays when stdout is not a terminal. Verbosity: 0 with `--quiet`
(no progress display and no table: the report asked for, errors, warnings and failed
gates only), 1 by default, 2 with `--verbose` (log lines on stderr: each stage and its
time).

Everything for stderr goes through `emit` with a level: `error: ...`, `warning: ...`,
`gate failed: ...` as plain lines, and `--verbose` lines as `ISO-TIME LEVEL message`; with
`--log-format json` each is one JSON object a line (time, level, message) for a log
collector. Off a terminal (a pipe, a file, a CI log) `show` widens its console to the
longest word of every cell, so no name or value is cut with `…`.
"""

from __future__ import annotations

import contextlib
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
from typing import Annotated, Any

import typer
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

from receval_cli import signals
from receval_cli.escaping import printable


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
    return Text(printable(text), style=style)


def release_stdout() -> None:
    """Point stdout at /dev/null once it cannot be written (a closed pipe, a full device),
    so that nothing, Python's exit included, fails on it again."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class _Console(Console):
    """A rich Console whose closed stdout is an error (exit 2, said on stderr), not rich's
    silent exit 1, which would read as a failed gate."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


def out(width: int | None = None) -> Console:
    """The console for results on stdout."""
    return _Console(
        highlight=False,
        markup=False,  # text from data or a config is never read as markup ([/x], [bold])
        width=width,
        no_color=not SETTINGS.color or None,
        emoji=False,
    )


def err() -> Console:
    """The console for errors, warnings and logs on stderr (soft-wrapped: long paths stay
    whole)."""
    return Console(
        stderr=True,
        highlight=False,
        markup=False,
        soft_wrap=True,
        emoji=False,
        no_color=not SETTINGS.color or None,
    )


def show(renderable: RenderableType) -> None:
    """Print a result on stdout; off a terminal, wide enough that no cell is cut."""
    console = out()
    if not console.is_terminal:
        console = out(width=fitting_width(console, renderable, console.width))
    console.print(renderable)


def fitting_width(console: Console, renderable: RenderableType, width: int) -> int:
    """`width`, or more when the renderable's narrowest layout needs more: a column that
    may not wrap (metric names, values) as wide as its longest cell, one that may wrap as
    wide as its longest word, so rich never cuts a cell with `…`."""
    unbounded = console.options.update(width=1_000_000)
    needed = [width]
    for part in _parts(renderable):
        if isinstance(part, Table):
            # rich's own column measure (long stable, not public): a no_wrap column's
            # minimum is its longest word, but rich then cuts the cell rather than wrap it
            measured = [(c, part._measure_column(console, unbounded, c)) for c in part.columns]
            needed.append(sum(_least(c, m) for c, m in measured) + part._extra_width)
        elif not hasattr(part, "renderables"):  # text: its longest word
            needed.append(Measurement.get(console, unbounded, part).minimum)
    return max(needed)


def _least(column: Column, measured: Measurement) -> int:
    """The narrowest a column can be with no cell cut; a folding column shows every
    character at any width, so it need not be wider than _FOLDED."""
    if column.no_wrap:
        return measured.maximum
    if column.overflow == "fold":
        return min(measured.minimum, _FOLDED)
    return measured.minimum


_FOLDED = 12


def _parts(renderable: RenderableType) -> Iterator[RenderableType]:
    """A renderable and, for a Group, everything in it."""
    yield renderable
    for part in getattr(renderable, "renderables", []):
        yield from _parts(part)


def plain_text(renderable: RenderableType, width: int) -> str:
    """A renderable as plain text for a file: no colour, `width` columns or more (as
    `show` widens off a terminal)."""
    buffer = io.StringIO()
    plain = {"no_color": True, "highlight": False, "markup": False, "emoji": False}
    probe = Console(file=buffer, width=width, **plain)  # type: ignore[arg-type]
    wide = fitting_width(probe, renderable, width)
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
        text = json.dumps(record, ensure_ascii=False, default=str)
        target.print(text, markup=False, highlight=False)
    elif level == "info":
        target.print(f"{_now()} INFO {message}", markup=False)
    else:
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
