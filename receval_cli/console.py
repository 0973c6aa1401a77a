"""The consoles every command prints to, and the settings they share.

Colour is off when NO_COLOR is set (rich reads it) or with `--no-color`; rich also drops
colour and live displays when stdout is not a terminal. Verbosity: 0 with `--quiet`
(only the report, errors and failed gates), 1 by default, 2 with `--verbose` (plain log
lines on stderr: each stage and its time).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.console import Console


@dataclass
class Settings:
    color: bool = True
    verbosity: int = 1


SETTINGS = Settings()

NoColorOption = Annotated[
    bool, typer.Option("--no-color", help="No colours (also when NO_COLOR is set).")
]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Log each stage and its time on stderr.")
]


def configure(*, no_color: bool = False, quiet: bool = False, verbose: bool = False) -> None:
    """Apply a command's --no-color, --quiet and --verbose (a flag only ever narrows)."""
    if no_color:
        SETTINGS.color = False
    if verbose:
        SETTINGS.verbosity = 2
    elif quiet:
        SETTINGS.verbosity = 0


def reset() -> None:
    """Back to the defaults (each command invocation starts from them)."""
    SETTINGS.color = True
    SETTINGS.verbosity = 1


def out(width: int | None = None) -> Console:
    """The console for results on stdout."""
    return Console(highlight=False, width=width, no_color=not SETTINGS.color or None, emoji=False)


def err() -> Console:
    """The console for errors, warnings and logs on stderr (soft-wrapped: long paths stay
    whole)."""
    return Console(
        stderr=True,
        highlight=False,
        soft_wrap=True,
        emoji=False,
        no_color=not SETTINGS.color or None,
    )


def log(message: str) -> None:
    """A plain log line on stderr, shown with --verbose only."""
    if SETTINGS.verbosity >= 2:
        stamp = time.strftime("%H:%M:%S")
        target = _LIVE.display.console if _LIVE is not None else err()
        target.print(f"{stamp} {message}", markup=False)


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


@contextmanager
def stage(name: str) -> Iterator[None]:
    """A named stage of a run: shown by live_stages, logged (with its time) by --verbose."""
    started = time.perf_counter()
    if _LIVE is not None:
        _LIVE.display.update(_LIVE.task, description=name)
    log(f"{name} ...")
    yield
    log(f"{name}: done in {time.perf_counter() - started:.2f} s")
