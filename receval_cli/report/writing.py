"""Write outputs: files atomically (a temporary file in the same folder, then a rename),
standard output and devices directly.

A reader never sees a half-written report, and a failed or interrupted run leaves no file
behind (an earlier report at the same path stays intact). Several files are written all
or nothing: every temporary file first, then the renames, with SIGINT and SIGTERM held
back until the last rename is done. Then, in order, what is not a regular file: a
character device or a FIFO (`/dev/stdout`, `/dev/null`) is written through, never
replaced, and `-` goes to standard output.

A symlink to a file is followed: its target is replaced, the link stays. An existing
file keeps its permissions. `append` (--append) adds the report to the existing file in
place, under a lock, and takes it out again when the outputs fail (appending.py); the
appends are made before the renames, so a failure before the first rename leaves every
file as it was.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from receval_cli.console import release_stdout
from receval_cli.errors import UsageError
from receval_cli.report.appending import Append, open_append, temporary_path
from receval_cli.report.destinations import Destination
from receval_cli.signals import check, held

if TYPE_CHECKING:  # polars is imported where a table is written, not by the command line
    import polars as pl

Writer = Callable[[Path], None]

# the files renamed into place by this process, in order (for the message on an interrupt)
_written: list[Path] = []


def check_destination(path: Path) -> None:
    """Fail before any work when the output cannot be written there."""
    try:
        _check_destination(path)
    except OSError as error:  # a name too long, a loop of links, ...
        name = (
            path.name
            if len(path.name) <= 40
            else f"{path.name[:40]}... ({len(path.name)} characters)"
        )
        shown = path.parent / name  # the path as the message shows it (a long name cut)
        reason = error.strerror or str(error)
        fix = "Choose another name for the output."
        raise UsageError(
            f"output {shown}: {reason}. {fix}", path=shown, found=reason, fix=fix
        ) from None


def _check_destination(path: Path) -> None:
    if _is_device(path):
        return  # written through as it is (/dev/null, a FIFO)
    target = _target(path)
    folder = target.parent
    if target.is_dir():
        fix = f"name a file, e.g. {path / 'report.json'}."
        raise UsageError(f"output {path} is a folder; {fix}", path=path, found="a folder", fix=fix)
    if not folder.is_dir():
        fix = f"Create it first (mkdir -p {folder})."
        raise UsageError(
            f"output {path}: the folder {folder} does not exist. {fix}",
            path=path,
            found=str(folder),
            fix=fix,
        )
    if not os.access(folder, os.W_OK):
        raise UsageError(
            f"output {path}: the folder {folder} is not writable.", path=path, found=str(folder)
        )


Content = str | Writer  # text, or a function that fills the file at a path


def text_writer(content: str | Callable[[TextIO], None]) -> Writer:
    """A writer of `content`: text, or a function that writes to the open file."""

    def write_text(temporary: Path) -> None:
        with temporary.open("w", encoding="utf-8") as handle:
            if isinstance(content, str):
                handle.write(content)
            else:
                content(handle)

    return write_text


def frame_writer(frame: pl.DataFrame | pl.LazyFrame, fmt: str) -> Writer:
    """A writer of a table: parquet, csv, tsv (tab-separated) or jsonl (one JSON object a
    line), as destinations.TABLE_EXTENSIONS names them. A lazy table is streamed into a
    file (sorted and written by polars' streaming engine), collected for a device or FIFO."""

    def write_frame(temporary: Path) -> None:
        import polars as pl

        separator = "\t" if fmt == "tsv" else ","
        if isinstance(frame, pl.LazyFrame) and (temporary.is_file() or not temporary.exists()):
            if fmt == "parquet":
                frame.sink_parquet(temporary)
            elif fmt in ("csv", "tsv"):
                frame.sink_csv(temporary, separator=separator)
            else:
                frame.sink_ndjson(temporary)
            return
        table = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
        if fmt == "parquet":
            table.write_parquet(temporary)
        elif fmt in ("csv", "tsv"):
            table.write_csv(temporary, separator=separator)
        else:
            table.write_ndjson(temporary)

    return write_frame


def write_atomic(path: Path, content: str | Callable[[TextIO], None]) -> None:
    """Write `content` (text, or a function that writes to the open file) atomically."""
    write_outputs({Destination(path, "file"): text_writer(content)})


def write_outputs(outputs: Mapping[Destination, Content]) -> None:
    """Write every output: the files all or nothing (each writer fills a temporary file
    next to its target; only when all succeeded are they renamed into place), then the
    devices and FIFOs written through, then standard output."""
    check()  # a stop that arrived inside the last query: nothing is written
    files = {d: c for d, c in outputs.items() if d.path is not None and not _is_device(d.path)}
    for destination in files:
        assert destination.path is not None
        check_destination(destination.path)
    # the files that must not replace one renamed first: if one is there, nothing is
    files = dict(sorted(files.items(), key=lambda item: not item[0].exclusive))
    exclusive = {d.path for d in files if d.exclusive}
    staged: dict[Path, Path] = {}
    appends: list[tuple[Append, str, bool]] = []  # a file appended to, the report, a CSV
    renamed = 0
    done = False  # every file written (a stop held back meanwhile is raised after)
    try:
        for destination, content in files.items():
            assert destination.path is not None
            if destination.appends:
                continue  # added in place below
            target = _target(destination.path)
            with held():  # a stop between creating the file and noting it would leave it
                staged[destination.path] = _temporary(destination.path, target)
            _fill(staged[destination.path], destination, target, content)
        for destination, content in files.items():  # opened and locked last: held briefly
            if destination.appends:
                assert destination.path is not None
                assert isinstance(content, str), "a report that can be appended is text"
                csv = destination.format == "csv"
                appends.append((_open_append(destination.path), content, csv))
        with held():
            for append, content, csv in appends:  # first: a failure rolls them back
                _append(append, content, csv)
            for path, temporary in list(staged.items()):
                rename = _rename_exclusive if path in exclusive else _rename
                rename(temporary, path, _target(path), first=renamed == 0)
                renamed += 1
                del staged[path]
                _written.append(path)
            _written.extend(append.path for append, _, _ in appends)
            done = True
    except BaseException:
        if not done and renamed == 0:  # an append or the first rename failed: none changed
            for append, _, _ in appends:
                append.roll_back()
        raise
    finally:  # on any failure, an exception or an interrupt: no temporary file is left
        for append, _, _ in appends:
            append.close()
        for temporary in staged.values():
            temporary.unlink(missing_ok=True)
    for destination, content in outputs.items():
        if destination.path is not None and _is_device(destination.path):
            _write_through(destination, content)
    for destination, content in outputs.items():
        if destination.path is None:
            assert isinstance(content, str), "standard output takes text"
            _to_stdout(content)


def written() -> list[Path]:
    """The output files this process has written so far."""
    return list(_written)


def forget_written() -> None:
    _written.clear()


def _is_device(path: Path) -> bool:
    """A character device or a FIFO (after symlinks): written through, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _target(path: Path) -> Path:
    """The file a write replaces: a symlink's target (the link itself stays)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _temporary(path: Path, target: Path) -> Path:
    try:
        return temporary_path(target)
    except OSError as error:
        raise _unwritable(path, error) from None


def _open_append(path: Path) -> Append:
    try:
        return open_append(path, _target(path))
    except OSError as error:
        raise _unwritable(path, error) from None


def _append(append: Append, content: str, csv: bool) -> None:
    try:
        append.write(content, csv, 0o666 & ~_umask())
    except OSError as error:
        raise _unwritable(append.path, error) from None


def _fill(temporary: Path, destination: Destination, target: Path, content: Content) -> None:
    """Run the writer, then flush the file to the disk (a full disk often says so only
    there) and give it the permissions of the file it replaces (of a newly created file
    when there is none)."""
    assert destination.path is not None
    try:
        existing = os.stat(target) if target.exists() else None
        writer = text_writer(content) if isinstance(content, str) else content
        writer(temporary)
        descriptor = os.open(temporary, os.O_WRONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        mode = stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_umask()
        os.chmod(temporary, mode)
    except OSError as error:
        raise _unwritable(destination.path, error) from None
    except Exception as error:  # polars' Parquet writer: an I/O error too
        if not _polars_error(error):
            raise
        raise _unwritable(destination.path, error) from None


def _write_through(destination: Destination, content: Content) -> None:
    """A device or a FIFO: opened and written as it is (nothing to rename)."""
    assert destination.path is not None
    if not isinstance(content, str):
        raise UsageError(
            f"output {destination.path} is a device or a pipe; the {destination.format} "
            "table needs a regular file.",
            path=destination.path,
            found="a device or a pipe",
        )
    try:
        mode = "a" if destination.appends else "w"
        with open(destination.path, mode, encoding="utf-8") as f:
            f.write(content)
    except OSError as error:
        raise _unwritable(destination.path, error) from None
    _written.append(destination.path)


def _to_stdout(content: str) -> None:
    try:
        sys.stdout.write(content)
        sys.stdout.flush()
    except OSError as error:  # a full device; a closed pipe is cli/app.py's quiet exit
        if error.errno == errno.EPIPE:
            raise
        raise stdout_failed(error) from None


def stdout_failed(error: OSError) -> UsageError:
    """Standard output full (/dev/full) or failing otherwise, as the error to report
    (exit 2); stdout is pointed at /dev/null, so that Python's exit does
    not fail on it again."""
    release_stdout()
    reason = os.strerror(error.errno or 0)
    fix = "Write the report to a file with --output PATH instead."
    return UsageError(
        f"standard output could not be written: {reason}. {fix}",
        key="--output",
        found=reason,
        fix=fix,
    )


def _rename(temporary: Path, path: Path, target: Path, first: bool) -> None:
    try:
        os.replace(temporary, target)
    except OSError as error:  # rare: the temporary file is written, next to its path
        raise _unwritable(path, error, untouched=first) from None


def _rename_exclusive(temporary: Path, path: Path, target: Path, first: bool) -> None:
    """Rename into place only where no file is: a hard link fails on an existing name,
    atomically, where a rename would replace it."""
    try:
        os.link(temporary, target)
    except FileExistsError:
        fix = "Nothing was written; run again (a new run has a new name)."
        raise UsageError(
            f"output {path} already exists, and it is never replaced. {fix}",
            path=path,
            found="an existing file",
            fix=fix,
        ) from None
    except OSError as error:
        raise _unwritable(path, error, untouched=first) from None
    temporary.unlink()


def _unwritable(path: Path, error: Exception, untouched: bool = True) -> UsageError:
    """`output PATH could not be written: No space left on device.` and what to do."""
    if isinstance(error, OSError) and error.strerror:
        reason = error.strerror
    else:  # polars: "... underlying IO error: File too large (os error 27)"
        found = re.search(r"os error (\d+)", str(error))
        reason = os.strerror(int(found[1])) if found else str(error).strip().splitlines()[0]
        if not found and _no_room(path):  # polars' Parquet writer: "Invalid thrift: ..."
            reason = os.strerror(errno.ENOSPC)
    outcome = (
        "No output file was written or changed"
        if untouched
        else "The output files before it were written, it and the rest were not"
    )
    fix = "free some space or choose another folder, then run again."
    return UsageError(
        f"output {path} could not be written: {reason}. {outcome}; {fix}",
        path=path,
        found=reason,
        fix=fix,
    )


_ROOM = 1 << 16  # bytes: a folder with less free space than this is on a full disk


def _no_room(path: Path) -> bool:
    """Whether the file system of `path`'s folder is full (polars' Parquet writer says
    only "Invalid thrift: transport error" when a write fails with ENOSPC)."""
    try:
        found = os.statvfs(path.parent)
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < _ROOM


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _polars_error(error: Exception) -> bool:
    """A polars error (only a table writer, which imported polars, raises one)."""
    polars = sys.modules.get("polars")
    return polars is not None and isinstance(error, polars.exceptions.PolarsError)
