"""Where a command's outputs go: decided and checked before any input is read.

Every command that writes (`run`, `compare`, `convert`, `init`, `schema`) goes through
here, so they follow one set of rules:

- `-` is standard output.
- A file's format comes from its extension; `--format` names the format of `-` and of a
  file whose extension receval does not know (`report.out`, a name with no extension).
  An unknown extension without `--format` is an error naming the known extensions, and
  so is a lone output whose extension contradicts `--format` (`-o r.json -f markdown`).
- No output may be an input, whatever the spelling (`./x.csv`, a symlink, a hard link: the
  resolved real path and the inode are compared), lie inside an input folder or match an
  input's glob pattern, or be named twice. Each is exit 2 before anything is read, so an
  input is never overwritten.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from receval_cli.errors import UsageError
from receval_cli.formats import RUN_FORMATS, extensions

STDOUT = "-"

# a report's format from its file's extension (run's; compare's and history's are among them)
REPORT_EXTENSIONS = extensions(RUN_FORMATS)

# a table's format (the per-user values) from its file's extension
TABLE_EXTENSIONS = {
    ".parquet": "parquet",
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}

# the formats whose files can take another report at their end (--append)
APPENDABLE = ("table", "markdown", "csv", "github")


@dataclass(frozen=True)
class Destination:
    """One output: a file, or standard output (path None), in a format."""

    path: Path | None
    format: str
    append: bool = False
    # never replace a file already at the path (a run's file in the history store)
    exclusive: bool = False

    @property
    def name(self) -> str:
        return "standard output" if self.path is None else str(self.path)

    @property
    def appends(self) -> bool:
        """--append, and a format that can take another report at its end."""
        return self.append and self.format in APPENDABLE


def is_stdout(path: Path | str) -> bool:
    return str(path) == STDOUT


def format_of(
    path: Path,
    given: str | None,
    extensions: Mapping[str, str],
    option: str = "--output",
    allowed: Iterable[str] | None = None,
    strict: bool = True,
) -> str:
    """The format of one output: its extension's, or `given` (--format, which the command's
    option already limits to its formats) for `-` and for an extension receval does not
    know. `allowed` limits the extensions that count (a command's own formats). `strict`
    (one output): an extension that contradicts `given` is an error; among several
    outputs a known extension decides its file's format."""
    allowed = tuple(allowed) if allowed is not None else tuple(dict.fromkeys(extensions.values()))
    if is_stdout(path):
        if given is None:
            raise UsageError(
                f"{option} - (standard output) needs --format: one of {', '.join(allowed)}.",
                key=option,
                found=STDOUT,
            )
        return given
    suffix = path.suffix.lower()
    found = extensions.get(suffix)
    if found is not None and found in allowed:
        if strict and given is not None and given != found:
            renamed = path.with_suffix(_extension(given, extensions))
            fix = f"Rename the file (e.g. {renamed}) or drop --format."
            raise UsageError(
                f"{option} {path}: the extension {suffix} means {found}, but --format says "
                f"{given}. {fix}",
                key=option,
                path=path,
                found=suffix,
                fix=fix,
            )
        return found
    if given is not None:
        return given
    known = ", ".join(e for e, f in extensions.items() if f in allowed)
    what = (
        f"receval does not know the extension '{path.suffix}'"
        if path.suffix
        else ("the name has no extension")
    )
    fix = f"Name the file with one of {known}, or give --format."
    raise UsageError(
        f"{option} {path}: {what}, so the format to write is unknown. {fix}",
        key=option,
        path=path,
        found=path.suffix,
        fix=fix,
    )


def _extension(fmt: str, extensions: Mapping[str, str]) -> str:
    return next((e for e, f in extensions.items() if f == fmt), ".out")


def check_append(destinations: Iterable[Destination], append: bool, what: str) -> None:
    """--append needs an output file that can take it (table, markdown, csv or github):
    `what` ("the report") is added to its end. Among several outputs the whole documents
    (JSON, JUnit, HTML) are replaced as usual."""
    if not append:
        return
    files = [d for d in destinations if d.path is not None]
    if not files:
        fix = "give --output PATH too."
        raise UsageError(f"--append adds {what} to a file: {fix}", key="--append", fix=fix)
    if not any(d.format in APPENDABLE for d in files):
        names = ", ".join(f"{d.name} ({d.format})" for d in files)
        fix = f"--append works with {', '.join(APPENDABLE)}; drop --append to replace the file."
        raise UsageError(
            f"--append: {names} cannot take another report at the end: JSON, JUnit and "
            f"HTML are whole documents. {fix}",
            key="--append",
            path=files[0].path if len(files) == 1 else None,
            found={d.name: d.format for d in files},
            fix=fix,
        )


def guard(outputs: Iterable[Path], inputs: Mapping[Path, str]) -> None:
    """Refuse (exit 2) an output that is an input, lies in an input folder, matches an
    input's pattern, or is named twice. `inputs` maps each input path to its role ("the
    predictions file"); `-` outputs are standard output and never collide."""
    seen: dict[str, Path] = {}
    for output in outputs:
        if is_stdout(output):
            continue
        real = os.path.realpath(output)
        if real in seen:
            fix = "Give each output its own path."
            raise UsageError(
                f"output {output}: the same file as the output {seen[real]}; one would "
                f"replace the other. {fix}",
                path=output,
                found=str(seen[real]),
                fix=fix,
            )
        seen[real] = output
        for path, role in inputs.items():
            if _collides(output, real, path):
                fix = "Nothing was read or written; write the output to another path."
                raise UsageError(
                    f"output {output} would overwrite an input: it is the {role} ({path}). {fix}",
                    path=output,
                    found=str(path),
                    fix=fix,
                )


def _collides(output: Path, real: str, source: Path) -> bool:
    """Whether writing `output` (resolved: `real`) would replace or land in `source`."""
    if "://" in str(source) or str(source).startswith("table:"):
        return False  # a URI or a table (Spark): not a local file
    source_real = os.path.realpath(source)
    if real == source_real:
        return True
    if any(c in str(source) for c in "*?["):  # a glob pattern: the files it matches
        return fnmatch.fnmatch(real, source_real)
    if os.path.isdir(source_real):  # a folder of files (a partitioned dataset)
        return os.path.commonpath([real, source_real]) == source_real
    try:  # a hard link, or the same file through a bind mount
        return os.path.samefile(output, source)
    except OSError:
        return False
