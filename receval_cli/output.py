"""Write output files atomically: a temporary file in the same folder, then a rename.

A reader never sees a half-written report, and a failed run leaves no file behind (an
earlier report at the same path stays intact).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from receval_cli.errors import UsageError


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


def write_atomic(path: Path, content: str | Callable[[TextIO], None]) -> None:
    """Write `content` (text, or a function that writes to the open file) atomically."""

    def write_text(temporary: Path) -> None:
        with temporary.open("w", encoding="utf-8") as handle:
            if isinstance(content, str):
                handle.write(content)
            else:
                content(handle)
            handle.flush()
            os.fsync(handle.fileno())

    write_atomic_with(path, write_text)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_atomic_with(path: Path, writer: Callable[[Path], None]) -> None:
    """Let `writer` write a temporary file (e.g. Parquet), then rename it to `path`."""
    check_destination(path)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(descriptor)
    try:
        writer(Path(temporary))
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise UsageError(f"output {path} could not be written: {error.strerror}.") from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
