"""Input files that change while receval reads them.

receval reads a file more than once (its schema first, then the queries), so a file that
another job rewrites meanwhile can fail deep inside polars, or worse, give a report that
mixes two versions of it. `watching` notes each input's size, modification time and
inode before a run and compares them after it, and when it fails: a changed file is an
`InputError` naming it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from receval_cli.config.loading import LoadedConfig, is_remote
from receval_cli.errors import (
    InputError,
    InternalError,
    OutOfMemory,
    RecEvalError,
    says_out_of_memory,
)
from receval_cli.inputs.diagnosis import READ_ERRORS


@dataclass(frozen=True)
class FileState:
    size: int
    modified_ns: int
    inode: int
    device: int


def file_state(path: Path) -> FileState | None:
    """The file's identity and version now; None when it cannot be looked at (a missing
    file, or a glob pattern)."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return FileState(found.st_size, found.st_mtime_ns, found.st_ino, found.st_dev)


def input_files(loaded: LoadedConfig) -> dict[Path, str]:
    """Every input file of a config, with the role a message names it by."""
    config = loaded.config
    files: dict[Path, str] = {}
    for name, model in config.model_files().items():
        role = f"predictions file of model '{name}'" if config.several_models else ""
        if not is_remote(model.path):  # a Spark table or URI: Spark's to read
            files[loaded.resolve_path(model.path)] = role or "predictions file"
    optional = {
        "ground truth": config.ground_truth,
        "catalog": config.catalog,
        "interactions": config.interactions,
        "baseline": config.baseline,
        "segments": config.segments,
    }
    for role, section in optional.items():
        if section is not None and not is_remote(section.path):
            files.setdefault(loaded.resolve_path(section.path), f"{role} file")
    return files


@contextmanager
def watching(files: Mapping[Path, str]) -> Iterator[None]:
    """Run a block that reads `files` (path: role); raise an `InputError` when one of them
    changed meanwhile, whether the block succeeded or failed. An I/O error or a polars
    failure that escaped the block becomes a receval error too, never a traceback."""
    before = {path: file_state(path) for path in files}
    try:
        yield
    except (RecEvalError, OSError, *READ_ERRORS) as error:
        changed = _changed(files, before)
        if changed is not None:
            raise changed from None
        if isinstance(error, RecEvalError):
            raise
        if says_out_of_memory(error):  # not a file's fault nor a bug: exit 4
            from receval_cli.errors import out_of_memory_message

            message = out_of_memory_message("while evaluating")
            raise OutOfMemory(message, found=_first_line(error)) from None
        if isinstance(error, OSError):
            where = error.filename or "an input file"
            reason = error.strerror or str(error)
            fix = "Check that the file exists and is readable."
            raise InputError(
                f"{where} could not be read: {reason}. {fix}",
                path=error.filename or None,
                found=reason,
                fix=fix,
            ) from None
        raise InternalError(
            f"internal error: polars failed while evaluating: {_first_line(error)}. This is "
            "a bug; please report it with the config."
        ) from None
    changed = _changed(files, before)
    if changed is not None:
        raise changed


def _changed(
    files: Mapping[Path, str], before: Mapping[Path, FileState | None]
) -> InputError | None:
    for path, role in files.items():
        then, now = before[path], file_state(path)
        if then is None or then == now:
            continue
        if now is None:
            what = "was removed"
        elif (now.inode, now.device) != (then.inode, then.device):
            what = "was replaced by another file"
        elif now.size != then.size:
            what = f"changed size ({then.size:,} -> {now.size:,} bytes)"
        else:
            what = "was modified"
        fix = (
            "Run again once the file is complete; a writer that renames a finished file into "
            "place avoids this."
        )
        return InputError(
            f"{role} {path} {what} while receval was reading it, so no report was written "
            f"(it could mix two versions of the file). {fix}",
            path=path,
            found=what,
            fix=fix,
        )
    return None


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
