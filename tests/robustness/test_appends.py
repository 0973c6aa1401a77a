"""--append next to other writers: in place, under a lock, rolled back on failure.

The shell's `>>` writers, a job runner's log held open and hard links all keep what they
wrote and see the report; a failed append leaves the file byte for byte as it was; a CSV
keeps one header; a legal output name of 250 bytes is written (its temporary name fits).
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import REPO, assert_user_error, hand_case, invoke, run_process, write

import receval_cli.report.appending

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it

# one markdown report of the hand case, as --append adds it
MARKDOWN_REPORT = (
    r"## receval\n\nRun [^\n]+, id `(?P<id>[^`]+)`\.\n\n\| metric \| value \|\n\|---\|---:\|\n"
    r"\| `precision@1` \| 0\.5000 \|\n\| `ndcg@2` \| 0\.6220 \|\n\nUsers: 2 evaluated\.\n"
)
CSV_HEADER = "model,metric,value,low,high,difference,p_adjusted,verdict,gate"
CSV_ROWS = ("model,precision@1,0.5,,,,,,", "model,ndcg@2,0.6220")
EARLIER = "# Earlier step\n\nits text\n"


def receval_command(*args: str | Path) -> list[str]:
    """`receval ARGS` as a command line: this checkout's receval_cli."""
    return [sys.executable, "-m", "receval_cli", *map(str, args)]


def environment() -> dict[str, str]:
    paths = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "COLUMNS": "80"}


def reports_in(text: str) -> list[str]:
    """The run ids of the whole markdown reports that make up `text`, in order; fails
    when anything else (a part of a report) is in it."""
    assert re.fullmatch(f"(?:{MARKDOWN_REPORT})*", text), text
    return re.findall(MARKDOWN_REPORT.replace("(?P<id>", "("), text)


# ---------------------------------------------------------------- concurrent writers

WRITER = """
i=0
while [ ! -e stop ]; do
  i=$((i + 1))
  echo "writer {k} line $i" >> log.md
  echo "writer {k},line,$i" >> log.csv
done
echo $i > count.{k}
"""

APPENDER = """
for run in $(seq {runs}); do
  "$@" || exit $?
done
"""


@pytest.mark.slow
def test_concurrent_shell_writers_and_appends_lose_nothing(tmp_path: Path) -> None:
    """4 shell loops write `>>` lines to log.md and log.csv as fast as they can while
    four receval processes (two markdown on log.md, two csv on log.csv) append 2 reports
    each: every writer line is there exactly once, and every report whole."""
    config = hand_case(tmp_path)
    seeded = run_process("run", config, "-o", "log.csv", "-q", cwd=tmp_path)  # the header
    assert seeded.returncode == 0, seeded.stderr
    write(tmp_path / "log.md", EARLIER)
    env = environment()
    writer = ["nice", "-n", "19", "sh", "-c"]  # the writers yield the CPU to receval
    writers = [subprocess.Popen([*writer, WRITER.format(k=k)], cwd=tmp_path) for k in range(4)]
    runs = 2
    appenders = [
        subprocess.Popen(
            [
                "sh",
                "-c",
                APPENDER.format(runs=runs),
                "sh",
                *receval_command("run", config, "-f", fmt, "-o", name, "--append", "-q"),
            ],
            cwd=tmp_path,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for fmt, name in [("markdown", "log.md"), ("csv", "log.csv")] * 2
    ]
    try:
        results = [a.communicate(timeout=300) for a in appenders]
    finally:
        write(tmp_path / "stop", "")
        for writer in writers:
            writer.wait(timeout=60)
    assert [a.returncode for a in appenders] == [0] * 4, [r[1] for r in results]
    counts = [int((tmp_path / f"count.{k}").read_text()) for k in range(4)]
    assert min(counts) > 0

    markdown = (tmp_path / "log.md").read_text(encoding="utf-8")
    lines = markdown.splitlines(keepends=True)
    written = [line for line in lines if line.startswith("writer ")]
    expected = [f"writer {k} line {i}\n" for k in range(4) for i in range(1, counts[k] + 1)]
    assert sorted(written) == sorted(expected)  # none lost, none twice
    rest = "".join(line for line in lines if not line.startswith("writer "))
    assert rest.startswith(EARLIER)
    ids = reports_in(rest.removeprefix(EARLIER))
    assert len(ids) == len(set(ids)) == 2 * runs

    table = (tmp_path / "log.csv").read_text(encoding="utf-8").splitlines()
    written = [line for line in table if line.startswith("writer ")]
    expected = [f"writer {k},line,{i}" for k in range(4) for i in range(1, counts[k] + 1)]
    assert sorted(written) == sorted(expected)
    rest = [line for line in table if not line.startswith("writer ")]
    assert rest[0] == CSV_HEADER
    assert rest.count(CSV_HEADER) == 1
    assert len(rest) == 1 + 2 * (1 + 2 * runs)
    for first, second in zip(rest[1::2], rest[2::2], strict=True):  # each report's 2 rows
        assert first == CSV_ROWS[0]
        assert second.startswith(CSV_ROWS[1])


# ---------------------------------------------------------------- the same file, not a copy


def test_a_writer_holding_the_file_open_keeps_writing_into_it(tmp_path: Path) -> None:
    """A job runner's log held open with `>>`: what it writes after the append lands in
    the file that holds the report (the old copy-and-rename left it in a deleted file)."""
    config = hand_case(tmp_path)
    write(tmp_path / "log.md", EARLIER)
    script = 'exec 3>>log.md; echo before >&3; "$@" || exit $?; echo after >&3'
    command = receval_command("run", config, "-f", "markdown", "-o", "log.md", "--append", "-q")
    done = subprocess.run(
        ["sh", "-c", script, "sh", *command],
        cwd=tmp_path,
        env=environment(),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "log.md").read_text(encoding="utf-8")
    assert text.startswith(EARLIER + "before\n")
    assert text.endswith("after\n")
    assert len(reports_in(text.removeprefix(EARLIER + "before\n").removesuffix("after\n"))) == 1


def test_a_hard_link_sees_the_appended_report(tmp_path: Path) -> None:
    """The file is written in place: its other name (a hard link) and a symlink to it
    show the report too, and it keeps its inode and permissions."""
    config = hand_case(tmp_path)
    log = write(tmp_path / "log.md", EARLIER)
    log.chmod(0o640)
    os.link(log, tmp_path / "linked.md")
    (tmp_path / "pointer.md").symlink_to(log.name)
    inode = log.stat().st_ino
    for name in ("log.md", "pointer.md"):
        done = run_process("run", config, "-o", name, "--append", "-q", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    text = (tmp_path / "linked.md").read_text(encoding="utf-8")
    assert len(reports_in(text.removeprefix(EARLIER))) == 2
    assert log.stat().st_ino == inode
    assert log.stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "pointer.md").is_symlink()


# ---------------------------------------------------------------- a failed append


def test_a_failed_append_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills up after half the report: exit 2, and the half written is taken
    out again: the file, through its hard link too, holds exactly what it held."""
    config = hand_case(tmp_path)
    log = write(tmp_path / "log.md", EARLIER)
    os.link(log, tmp_path / "linked.md")
    before = log.read_bytes()
    real = receval_cli.report.appending._write

    def half_then_full(descriptor: int, data: bytes) -> int:
        if len(data) > 1:
            return real(descriptor, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(receval_cli.report.appending, "_write", half_then_full)
    result = invoke("run", config, "-o", log, "--append")
    assert_user_error(
        result,
        f"output {log} could not be written: No space left on device. No output file was "
        "written or changed",
    )
    assert log.read_bytes() == before
    assert (tmp_path / "linked.md").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "config.yaml",
        "linked.md",
        "log.md",
        "predictions.csv",
        "truth.csv",
    ]


def test_a_failed_append_keeps_lines_written_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer adds a line after the report, then the append fails (fsync): the
    report is taken out, the other writer's line stays."""
    config = hand_case(tmp_path)
    log = write(tmp_path / "log.md", EARLIER)
    real = os.fsync

    def another_writer_then_full(descriptor: int) -> None:
        if os.fstat(descriptor).st_ino == log.stat().st_ino:
            with log.open("a", encoding="utf-8") as other:
                other.write("another writer\n")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(descriptor)

    monkeypatch.setattr(os, "fsync", another_writer_then_full)
    result = invoke("run", config, "-o", log, "--append")
    assert_user_error(result, "No space left on device. No output file was written or changed")
    assert log.read_text(encoding="utf-8") == EARLIER + "another writer\n"


def test_a_failed_rename_takes_the_append_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--append beside a whole document (report.json): the rename of report.json fails,
    so the summary's append is rolled back and no file changed, as the message says."""
    config = hand_case(tmp_path)
    summary = write(tmp_path / "summary.md", EARLIER)
    write(tmp_path / "report.json", "an earlier report")
    failure = OSError(errno.EIO, os.strerror(errno.EIO))

    def fail(*args: object) -> None:
        raise failure

    monkeypatch.setattr(os, "replace", fail)
    result = invoke("run", config, "-o", summary, "--append", "-o", tmp_path / "report.json")
    assert_user_error(result, "Input/output error. No output file was written or changed")
    assert summary.read_text(encoding="utf-8") == EARLIER
    assert (tmp_path / "report.json").read_text(encoding="utf-8") == "an earlier report"


# ---------------------------------------------------------------- CSV header, long names


def test_csv_appended_to_twice_keeps_one_header(tmp_path: Path) -> None:
    """A CSV file created by the first append, then appended to twice (once through a
    symlink): one header line, then each run's rows, seen through a hard link too."""
    config = hand_case(tmp_path)
    (tmp_path / "pointer.csv").symlink_to("m.csv")
    for name in ("m.csv", "m.csv", "pointer.csv"):
        done = run_process("run", config, "-o", name, "--append", "-q", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        if not (tmp_path / "linked.csv").exists():
            os.link(tmp_path / "m.csv", tmp_path / "linked.csv")
    lines = (tmp_path / "linked.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == CSV_HEADER
    assert lines.count(CSV_HEADER) == 1
    assert len(lines) == 7
    assert [line.split(",")[1] for line in lines[1:]] == ["precision@1", "ndcg@2"] * 3


@pytest.mark.parametrize("length", [250, 255])
def test_a_long_legal_output_name_is_written(tmp_path: Path, length: int) -> None:
    """A name of 250 (and 255, the longest ext4 takes) bytes: written, then appended to;
    the temporary name is cut to fit, and none is left behind."""
    config = hand_case(tmp_path)
    name = "é" * ((length - 3) // 2) + "a" * ((length - 3) % 2) + ".md"
    assert len(os.fsencode(name)) == length
    for extra in ([], ["--append"]):
        done = run_process("run", config, "-o", name, *extra, "-q", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    assert len(reports_in((tmp_path / name).read_text(encoding="utf-8"))) == 2
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_long_name_for_a_fresh_append(tmp_path: Path) -> None:
    """--append to a 250-byte name that is not there yet: created, whole."""
    config = hand_case(tmp_path)
    name = "r" * 247 + ".md"
    done = run_process("run", config, "-o", name, "--append", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(reports_in((tmp_path / name).read_text(encoding="utf-8"))) == 1
