"""--append: a report added to the end of an existing file in place, under a lock.

The file is opened for appending (O_APPEND) and locked (`flock`, exclusive, waiting for
another receval that appends to it), and the whole report goes in one write at the end of
the file as it is then: the lines that other writers (`echo ... >> file`, a job runner's
log) added before stay, and one that writes during it lands before or after the report,
never inside it. The same file (inode) is written, so a hard link, a symlink's target and
a writer that holds the file open with `>>` all see the report.

A failed append (an error, a full disk, an interrupt before the outputs are all written)
is rolled back: the file is cut back to where the report began, and what other writers
added after the report is put back, so the file holds what it held plus their lines.

A file that is not there yet is written like any output: a temporary file, linked into
place only where no file is (a file that appeared meanwhile is appended to instead).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Append:
    """One file being appended to: opened and locked (`descriptor`), or not there yet
    (None). After `write`, the report's bytes are `start` to `end` of the file."""

    path: Path  # the path as given (for messages)
    target: Path  # the file written (a symlink's target)
    descriptor: int | None
    start: int | None = None
    end: int | None = None
    created: int | None = None  # the size of the file the append made (rollback removes it)

    def write(self, content: str, csv: bool, mode: int) -> None:
        """Add `content` at the end; a CSV's header line only to an empty file. A file
        not there yet is created with `mode`."""
        if self.descriptor is None:
            if self._create(content, mode):
                return
            self.descriptor = _open(self.target)
            assert self.descriptor is not None, "the file was there a moment ago"
            _lock(self.descriptor)
        if csv and os.fstat(self.descriptor).st_size:
            content = content.split("\n", 1)[1]  # the header is in the file already
        data = content.encode("utf-8")
        written = 0
        while written < len(data):  # one write, unless the disk fills up halfway
            count = _write(self.descriptor, data[written:])
            if self.start is None:
                self.start = os.lseek(self.descriptor, 0, os.SEEK_CUR) - count
            written += count
            self.end = os.lseek(self.descriptor, 0, os.SEEK_CUR)
        os.fsync(self.descriptor)  # a full disk often says so only here

    def _create(self, content: str, mode: int) -> bool:
        """Write a new file (a temporary one linked into place); False when a file
        appeared at the path meanwhile (then it is appended to)."""
        temporary = temporary_path(self.target)
        try:
            with open(temporary, "w", encoding="utf-8") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, mode)
            try:
                os.link(temporary, self.target)
            except FileExistsError:
                return False
            self.created = os.stat(temporary).st_size
        finally:
            temporary.unlink(missing_ok=True)
        return True

    def roll_back(self) -> None:
        """Take the report out again (see the module's text); an error doing so leaves
        the file as it is (the run's error is the one to report)."""
        with contextlib.suppress(OSError):
            self._roll_back()

    def _roll_back(self) -> None:
        if self.created is not None:
            with contextlib.suppress(FileNotFoundError):
                if os.stat(self.target).st_size == self.created:  # else another writer added
                    self.target.unlink()
            self.created = None
            return
        if self.descriptor is None or self.start is None or self.end is None:
            return  # nothing was written
        size = os.fstat(self.descriptor).st_size
        # (a file that cannot be read, opened write-only, fails here: then left as it is)
        after = os.pread(self.descriptor, size - self.end, self.end) if size > self.end else b""
        os.ftruncate(self.descriptor, self.start)
        if after:  # other writers' lines that came after the report: put back
            _write_all(self.descriptor, after)
        self.start = self.end = None

    def close(self) -> None:
        """Unlock and close (closing the descriptor releases the lock)."""
        if self.descriptor is not None:
            os.close(self.descriptor)
            self.descriptor = None


def open_append(path: Path, target: Path) -> Append:
    """Open `target` for appending and lock it, waiting while another receval appends to
    it (an interrupt while waiting stops the run, nothing written)."""
    descriptor = _open(target)
    if descriptor is not None:
        try:
            _lock(descriptor)
        except BaseException:
            os.close(descriptor)
            raise
    return Append(path, target, descriptor)


def temporary_path(target: Path) -> Path:
    """A new empty hidden file beside `target`: `.NAME.` and 8 random characters, NAME
    cut so that the whole fits the longest name the file system takes (a legal 250-byte
    output name gets a temporary name no longer than its own)."""
    longest = _name_max(target.parent)
    name = target.name
    while name and len(os.fsencode(name)) + 10 > longest:  # "." + name + "." + 8
        name = name[:-1]
    descriptor, created = tempfile.mkstemp(prefix=f".{name}.", dir=target.parent)
    os.close(descriptor)
    return Path(created)


def _name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def _open(target: Path) -> int | None:
    """The file opened for appending (and reading, for a rollback, where it may be read),
    or None where there is none."""
    flags = os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            return os.open(target, os.O_RDWR | flags)
        except PermissionError:  # a file that may be written, not read
            return os.open(target, os.O_WRONLY | flags)
    except FileNotFoundError:
        return None


def _lock(descriptor: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows: no flock (the report is still one write at the end)
        return
    fcntl.flock(descriptor, fcntl.LOCK_EX)


def _write(descriptor: int, data: bytes) -> int:
    return os.write(descriptor, data)


def _write_all(descriptor: int, data: bytes) -> None:
    while data:
        data = data[os.write(descriptor, data) :]
