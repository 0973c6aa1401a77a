"""Write output files atomically: a temporary file in the same folder, then a rename.

A reader never sees a half-written report, and a failed or interrupted run leaves no file
behind (an earlier report at the same path stays intact). Several files are written all
or nothing: every temporary file first, then the renames, with SIGINT and SIGTERM held
back until the last rename is done.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO

import polars as pl

from receval_cli.errors import UsageError
from receval_cli.signals import held

Writer = Callable[[Path], None]

# the files renamed into place by this process, in order (for the message on an interrupt)
_written: list[Path] = []


def check_destination(path: Path) -> None:
    """Fail before any work when the output cannot be written there."""
    folder = path.parent
    if path.is_dir():
        raise UsageError(f"output {path} is a folder; name a file, e.g. {path / 'report.json'}.")
    if not folder.is_dir():
        raise UsageError(
            f"output {path}: the folder {folder} does not exist. Create it first "
            f"(mkdir -p {folder})."
        )
    if not os.access(folder, os.W_OK):
        raise UsageError(f"output {path}: the folder {folder} is not writable.")


def text_writer(content: str | Callable[[TextIO], None]) -> Writer:
    """A writer of `content`: text, or a function that writes to the open file."""

    def write_text(temporary: Path) -> None:
        with temporary.open("w", encoding="utf-8") as handle:
            if isinstance(content, str):
                handle.write(content)
            else:
                content(handle)

    return write_text


def write_atomic(path: Path, content: str | Callable[[TextIO], None]) -> None:
    """Write `content` (text, or a function that writes to the open file) atomically."""
    write_all_atomic({path: text_writer(content)})


def write_all_atomic(writers: Mapping[Path, Writer]) -> None:
    """Write every file or none: each writer fills a temporary file next to its path, and
    only when all of them succeeded are they renamed into place."""
    if not writers:
        return
    for path in writers:
        check_destination(path)
    staged: dict[Path, Path] = {}
    try:
        for path, writer in writers.items():
            staged[path] = _temporary(path)
            _fill(staged[path], path, writer)
        with held():
            for index, (path, temporary) in enumerate(list(staged.items())):
                _rename(temporary, path, first=index == 0)
                del staged[path]
                _written.append(path)
    finally:  # on any failure, an exception or an interrupt: no temporary file is left
        for temporary in staged.values():
            temporary.unlink(missing_ok=True)


def written() -> list[Path]:
    """The output files this process has written so far."""
    return list(_written)


def forget_written() -> None:
    _written.clear()


def _temporary(path: Path) -> Path:
    try:
        descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as error:
        raise _unwritable(path, error) from None
    os.close(descriptor)
    return Path(name)


def _fill(temporary: Path, path: Path, writer: Writer) -> None:
    """Run the writer, then flush the file to the disk (a full disk often says so only
    there) and give it the permissions of a newly created file."""
    try:
        writer(temporary)
        descriptor = os.open(temporary, os.O_WRONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.chmod(temporary, 0o666 & ~_umask())
    except OSError as error:
        raise _unwritable(path, error) from None
    except pl.exceptions.PolarsError as error:  # polars' Parquet writer: an I/O error too
        raise _unwritable(path, error) from None


def _rename(temporary: Path, path: Path, first: bool) -> None:
    try:
        os.replace(temporary, path)
    except OSError as error:  # rare: the temporary file is written, next to its path
        raise _unwritable(path, error, untouched=first) from None


def _unwritable(path: Path, error: Exception, untouched: bool = True) -> UsageError:
    """`output PATH could not be written: No space left on device.` and what to do."""
    if isinstance(error, OSError) and error.strerror:
        reason = error.strerror
    else:  # polars: "... underlying IO error: File too large (os error 27)"
        found = re.search(r"os error (\d+)", str(error))
        reason = os.strerror(int(found[1])) if found else str(error).strip().splitlines()[0]
    outcome = (
        "No output file was written or changed"
        if untouched
        else "The output files before it were written, it and the rest were not"
    )
    return UsageError(
        f"output {path} could not be written: {reason}. {outcome}; free some space or "
        "choose another folder, then run again."
    )


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
