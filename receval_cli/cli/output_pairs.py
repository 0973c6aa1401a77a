"""Which format each `--output` is to be written in, from the command line as typed.

- `-o FORMAT:PATH` names its own format (`-o markdown:$GITHUB_STEP_SUMMARY`, `-o
  github:-`), when FORMAT is one of receval's format names: `C:\\x`, `s3://b/k` and
  `a:b.json` stay paths.
- One `--format`: the format of `-` and of each name whose extension receval does not
  know, wherever it stands (`-f json -o -`, `-o report.out -f json`); a known extension
  decides its own file (as before pairing existed).
- Several `--format`: each names the format of the `--output` right after it (`-f markdown
  -o "$GITHUB_STEP_SUMMARY" -f github -o -`). An output they leave without a format (no
  `-f` before it, no prefix, no known extension), two `-f` before one `-o`, or a `-f` after
  the last `-o` is exit 2 with the fix, never a guess.

Typer hands a repeated option's values over as a list per option; the order in which
`-f` and `-o` were interleaved is read from click's parser (common.Command records it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from receval_cli.errors import UsageError
from receval_cli.formats import RUN_FORMATS
from receval_cli.report.destinations import REPORT_EXTENSIONS, is_stdout

ALL_FORMATS = tuple(RUN_FORMATS)  # every report format receval writes


@dataclass(frozen=True)
class Output:
    """One --output: its path, and the format the command line names for it (its prefix
    or its paired --format), None where it names none."""

    path: Path
    format: str | None = None
    paired: bool = False  # its format was named for it alone (a prefix or a paired -f)


def split_prefix(text: str, allowed: Iterable[str]) -> tuple[str | None, str]:
    """`markdown:summary` -> ("markdown", "summary"); a prefix that names no format of
    receval's (a drive letter, a URI scheme) leaves the text a path. A format receval
    writes but this command does not is refused."""
    prefix, colon, rest = text.partition(":")
    if not colon or not rest or prefix.lower() not in ALL_FORMATS:
        return None, text
    allowed = tuple(allowed)
    if prefix.lower() not in allowed:
        fix = f"Use one of {', '.join(allowed)}."
        raise UsageError(
            f"--output {text}: this command does not write {prefix.lower()}. {fix}",
            key="--output",
            found=prefix,
            fix=fix,
        )
    return prefix.lower(), rest


def pair_outputs(
    order: Sequence[str], formats: Sequence[str], outputs: Sequence[Path], allowed: Iterable[str]
) -> tuple[list[Output], str | None]:
    """Each output with the format named for it, and the one --format that applies to
    every output without one (None with several: they pair). `order`: the names of the
    parameters as they came on the command line ("format", "output", others)."""
    allowed = tuple(allowed)
    found = [_prefixed(path, allowed) for path in outputs]
    if len(formats) <= 1:
        return found, formats[0] if formats else None
    pending: list[str] = []
    given = iter(formats)
    outputs_seen = iter(range(len(found)))
    for name in order:
        if name == "format":
            pending.append(next(given))
        elif name == "output":
            index = next(outputs_seen)
            found[index] = _paired(found[index], pending)
            pending = []
    if pending:
        fix = f"Put it right before the --output it names, or write -o {pending[0]}:PATH."
        after = "the last --output" if found else "no --output"
        raise UsageError(
            f"--format {' '.join(pending)}: given after {after}, it names no output's format "
            f"(with several --format, each names the format of the --output right after it). "
            f"{fix}",
            key="--format",
            found=pending,
            fix=fix,
        )
    for output in found:
        if output.format is None:
            _refuse_unnamed(output, formats, found)
    return found, None


def _prefixed(path: Path, allowed: tuple[str, ...]) -> Output:
    fmt, rest = split_prefix(str(path), allowed)
    return Output(Path(rest), fmt, paired=True) if fmt is not None else Output(path)


def _paired(output: Output, pending: list[str]) -> Output:
    """The --output after `pending` (the --format values since the previous --output)."""
    if not pending:
        return output
    if len(pending) > 1:
        fix = f"Give one --format before each --output, or write -o {pending[-1]}:{output.path}."
        raise UsageError(
            f"--output {output.path}: --format {' and --format '.join(pending)} both come "
            f"before it, so its format is ambiguous. {fix}",
            key="--format",
            path=output.path,
            found=pending,
            fix=fix,
        )
    if output.format is not None and output.format != pending[0]:
        fix = "Name its format once."
        raise UsageError(
            f"--output {output.format}:{output.path}: --format {pending[0]} before it says "
            f"otherwise. {fix}",
            key="--format",
            path=output.path,
            found=[pending[0], output.format],
            fix=fix,
        )
    return Output(output.path, pending[0], paired=True)


def _refuse_unnamed(output: Output, formats: Sequence[str], found: list[Output]) -> None:
    """Several --format were given and none is paired with this output: its extension
    decides, or it is refused."""
    if not is_stdout(output.path) and output.path.suffix.lower() in REPORT_EXTENSIONS:
        return
    what = "standard output" if is_stdout(output.path) else "no extension receval knows"
    pairs = ", ".join(f"-f {o.format} for -o {o.path}" for o in found if o.format)
    example = f"-o {formats[0]}:{output.path}"
    fix = f"Put --format FORMAT right before it, or write -o FORMAT:{output.path} (e.g. {example})."
    raise UsageError(
        f"--output {output.path}: {what} and no --format paired with it ({len(formats)} "
        f"--format given: {pairs or 'none before an --output'}), so its format is "
        f"ambiguous. {fix}",
        key="--output",
        path=None if is_stdout(output.path) else output.path,
        found=list(formats),
        fix=fix,
    )


NamedOutput = tuple[Path | None, str | None]


def one_output(
    order: Sequence[str], formats: Sequence[str], output: Path | None, allowed: Iterable[str]
) -> NamedOutput:
    """A command with one --output (compare, history): its path (None: none given) and the
    format named for it (its prefix, else the --format), by the rules of pair_outputs."""
    found, given = pair_outputs(
        order, [str(f) for f in formats], [output] if output else [], allowed
    )
    if not found:
        return None, given
    return found[0].path, found[0].format or given
