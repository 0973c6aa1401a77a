"""receval's own exceptions.

They are raised deep inside and turned into a message and an exit code only at the CLI
edge. Every message names the file, the column or key, what was found and the fix.
"""

from __future__ import annotations

import difflib
import errno
import re
import signal
from collections.abc import Iterable

from receval_cli.exit_codes import EXIT_BAD_INPUT as EXIT_BAD_INPUT
from receval_cli.exit_codes import EXIT_GATE_FAILED as EXIT_GATE_FAILED
from receval_cli.exit_codes import EXIT_INTERNAL as EXIT_INTERNAL
from receval_cli.exit_codes import EXIT_OK as EXIT_OK
from receval_cli.exit_codes import EXIT_OUT_OF_MEMORY as EXIT_OUT_OF_MEMORY
from receval_cli.exit_codes import EXIT_STDOUT_CLOSED as EXIT_STDOUT_CLOSED


class RecEvalError(Exception):
    """Base of every error receval reports to a user (exit code 2).

    Besides its message, an error may carry what it is about as fields, for scripts (the
    `--log-format json` error line holds them; the Python API's `error.fields`): `key` the
    setting at fault (named for the audience, see wording.py), `path` the file, `column`
    the column, `found` what was found there, `fix` what to do."""

    exit_code = EXIT_BAD_INPUT

    def __init__(
        self,
        message: str = "",
        *,
        key: str | None = None,
        path: object = None,
        column: str | None = None,
        found: object = None,
        fix: str | None = None,
    ) -> None:
        super().__init__(message)
        given = {"key": key, "path": path, "column": column, "found": found, "fix": fix}
        self.fields: dict[str, object] = {
            name: str(value) if name == "path" else value
            for name, value in given.items()
            if value is not None
        }


class ConfigError(RecEvalError):
    """The YAML config is malformed, or names a key, metric or value that is not valid."""


class InputError(RecEvalError):
    """An input file is missing, unreadable, or its contents do not fit the config."""


class UsageError(RecEvalError):
    """The command line asks for something inconsistent."""


class TrackingError(RecEvalError):
    """An experiment tracker (MLflow) could not take a run whose outputs are written: the
    tracker is unreachable or refused it (exit 2: where the config or command line sends
    the run cannot take it; the report files are whole)."""


class ArgumentTypeError(UsageError, TypeError):
    """A Python API argument of a type the function does not take (a TypeError too, as
    Python's own would be)."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ' Did you mean 'x'?' for the closest choice, or '' when none is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not close:
        return ""
    differ = _how_they_differ(word, close[0])
    return f" Did you mean '{close[0]}'?{differ}"


def _escaped(text: str) -> str:
    """Text with every character beyond ASCII as its code point ('usua\\u0301rio')."""
    return "".join(c if c.isascii() and c.isprintable() else f"\\u{ord(c):04x}" for c in text)


def _how_they_differ(found: str, suggested: str) -> str:
    """For a suggestion that looks identical to what was found (another Unicode form, an
    invisible character): what differs, so the two names are told apart; else ''."""
    import unicodedata

    def visible(text: str) -> str:
        kept = "".join(c for c in text if unicodedata.category(c) != "Cf")
        return unicodedata.normalize("NFC", kept)

    if found == suggested or visible(found) != visible(suggested):
        return ""
    for text in (found, suggested):
        for position, char in enumerate(text, start=1):
            if unicodedata.category(char) == "Cf":
                name = unicodedata.name(char, "an invisible character").lower()
                return (
                    f" They look alike: '{_escaped(text)}' holds an invisible {name} "
                    f"U+{ord(char):04X} at character {position}."
                )
    return (
        f" They look alike but are written with different code points: "
        f"'{_escaped(found)}' vs '{_escaped(suggested)}' (normalize the text to NFC)."
    )


class OutOfMemory(RecEvalError):
    """Memory ran out where receval could still say so (a reader's allocation failing,
    reported as an error rather than an abort): exit 4, as supervisor.py's."""

    exit_code = EXIT_OUT_OF_MEMORY


# what a text says when memory ran out (a reader's OSError, a PolarsError, a panic of a
# thread that could not get its stack: EAGAIN under `ulimit -v`, Python's own thread that
# could not start for the same reason, Rust's allocation failure before an abort);
# supervisor.py reads an aborted worker's stderr with it too
OUT_OF_MEMORY_TEXT = (
    r"Cannot allocate memory|out of memory|memory allocation of \d+ bytes failed|"
    r"failed to spawn thread|pthread_create failed|can't start new thread|"
    r"code: 11, kind: WouldBlock, message: \"Resource temporarily unavailable\""
)
_OUT_OF_MEMORY = re.compile(OUT_OF_MEMORY_TEXT, re.IGNORECASE)


def says_out_of_memory(error: BaseException) -> bool:
    """The error is memory running out (ENOMEM, or a message that says so)."""
    if isinstance(error, MemoryError):
        return True
    if isinstance(error, OSError) and error.errno == errno.ENOMEM:
        return True
    return _OUT_OF_MEMORY.search(str(error)) is not None


def out_of_memory_message(doing: str, signum: int | None = None) -> str:
    """What receval says when memory ran out `doing` something (a worker killed or aborted
    for it: supervisor.py; a reader's allocation failing), with the fix."""
    how = f", {signal.Signals(signum).name}" if signum else ""
    head = f"receval ran out of memory {doing} (the process could get no more{how})."
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        return (
            f"{head} Its address space is limited to {soft / 2**30:.1f} GiB (ulimit -v), too "
            "little for this run even in partitions: raise that limit, or limit memory "
            "instead of address space (a cgroup: systemd-run -p MemoryMax=..., a container's "
            "memory limit), which engine: auto plans for."
        )
    return (
        f"{head} Set `partitions: N` in the config to evaluate the users in N passes, each "
        "holding about 1/N of them (e.g. partitions: 8), with `engine: streaming`; or give "
        "the process more memory."
    )


class InternalError(RecEvalError):
    """receval computed something impossible: a bug, reported with what was found."""

    exit_code = EXIT_INTERNAL
