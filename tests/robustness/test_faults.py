"""Faults: interrupts, full disks, unwritable folders and inputs rewritten during a run.

In every case receval exits with its code (130 for SIGINT, 143 for SIGTERM, 2 for a
write or read failure), prints one line on stderr and no traceback, and leaves the
output folder as it was: no partial report, no temporary `.NAME.XXXX` file, and an
earlier report at the same path byte for byte.

The signal tests run `receval` in a subprocess (a real process gets the signal); the
others run in-process through the CLI runner.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import assert_no_traceback, assert_user_error, hand_case, invoke, write
from fault_cases import (
    CALLBACK_DRIVER,
    DISK_FULL,
    EARLIER,
    FILE_SIZE_DRIVER,
    FINALIZER_SCRIPT,
    IMPORT_DRIVER,
    LATE_DRIVER,
    LATE_STOP_DRIVER,
    NOTHING_WRITTEN,
    OUTPUT_KINDS,
    PANIC_DRIVER,
    REPORT_PANIC_DRIVER,
    SIGNAL_DRIVER,
    TEMPORARY_DRIVER,
    TIMEOUT,
    assert_interrupted,
    earlier_reports,
    fail_on_call,
    finish,
    folder_bytes,
    keep,
    receval,
    remove,
    replace,
    rewrite_after_scan,
    truncate,
)

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_mid_run(big_config: Path, tmp_path: Path, signum: int) -> None:
    """The signal arrives once the metrics query has started (the --verbose stage line):
    exit 130 / 143, one line, and the earlier report and per-user file are untouched."""
    out = tmp_path / "out"
    before = earlier_reports(out, "report.json", "users.parquet")
    process = receval(
        *("run", big_config, "--verbose", "--output", out / "report.json"),
        *("--per-user", out / "users.parquet"),
    )
    assert process.stderr is not None
    seen: list[str] = []
    watchdog = threading.Timer(TIMEOUT, process.kill)  # never hang the test run
    watchdog.start()
    try:
        for line in process.stderr:
            seen.append(line)
            if "read, rank, join, metrics ..." in line:
                process.send_signal(signum)
                break
        stderr = "".join(seen) + process.stderr.read()
        code = process.wait()
    finally:
        watchdog.cancel()
    assert "read, rank, join, metrics ..." in seen[-1], stderr
    assert_interrupted(code, stderr, signum, NOTHING_WRITTEN)
    assert "metrics: done" not in stderr  # it stopped inside the stage
    assert folder_bytes(out) == before


def test_a_stop_that_a_query_turns_into_an_error_is_a_stop(tmp_path: Path) -> None:
    """A SIGTERM whose handler fires inside a polars query comes back as polars' panic;
    receval reports the stop (exit 143, one line), not a damaged input (exit 2)."""
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    code, stderr = finish(receval("run", config, "--output", out, driver=PANIC_DRIVER))
    assert_interrupted(code, stderr, signal.SIGTERM, NOTHING_WRITTEN)
    assert "damaged" not in stderr
    assert not out.exists()


def test_a_stop_polars_wraps_while_the_report_is_written_is_a_stop(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    process = receval("stop", "run", config, "--output", out, driver=REPORT_PANIC_DRIVER)
    code, stderr = finish(process)
    assert_interrupted(code, stderr, signal.SIGINT, NOTHING_WRITTEN)
    assert not out.exists()


def test_a_panic_while_the_report_is_written_is_an_internal_error(tmp_path: Path) -> None:
    """The same panic without a stop behind it: a bug, exit 3 and one line."""
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    process = receval("bug", "run", config, "--output", out, driver=REPORT_PANIC_DRIVER)
    code, stderr = finish(process)
    assert code == 3, stderr
    assert "Traceback" not in stderr, stderr
    assert stderr.startswith("error: internal error: PanicException: index out of bounds."), stderr
    assert not out.exists()


def test_a_stop_after_the_run_is_done_changes_nothing(tmp_path: Path) -> None:
    """Once the child has exited, the watcher ignores stops: Python's teardown puts the
    default action back on a handled signal, and a SIGINT then killed the watcher (no
    line, -SIGINT) after a complete run, seen on a loaded machine at 400 ms."""
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    code, stderr = finish(receval("run", config, "-q", "--output", out, driver=LATE_STOP_DRIVER))
    assert code == 0, stderr
    assert stderr == "SIGINT here: <Handlers.SIG_IGN: 1>\n"
    assert json.loads(out.read_text(encoding="utf-8"))["models"]


def test_a_stop_inside_a_polars_callback_is_not_a_panic(tmp_path: Path) -> None:
    """Raising in a callback polars makes from Rust would print a Rust panic message; the
    stop waits until the query returns: exit 143, one line, no panic, no traceback."""
    config = hand_case(tmp_path)
    pl.read_csv(tmp_path / "predictions.csv").write_parquet(tmp_path / "predictions.parquet")
    text = config.read_text(encoding="utf-8").replace("predictions.csv", "predictions.parquet")
    config.write_text(text, encoding="utf-8")
    out = tmp_path / "report.json"
    code, stderr = finish(receval("run", config, "--output", out, driver=CALLBACK_DRIVER))
    assert "panicked" not in stderr, stderr
    assert_interrupted(code, stderr, signal.SIGTERM, NOTHING_WRITTEN)
    assert not out.exists()


@pytest.mark.parametrize(
    ("function", "signum", "nth"),
    [("fsync", signal.SIGINT, 1), ("fsync", signal.SIGTERM, 2)],
    ids=["SIGINT-first-file", "SIGTERM-second-file"],
)
def test_interrupt_while_writing(tmp_path: Path, function: str, signum: int, nth: int) -> None:
    """The signal arrives when the n-th of two output files is written to its temporary
    file (before its fsync): neither file is replaced, no temporary file is left."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    before = earlier_reports(out, "report.json", "report.md")
    name = signal.Signals(signum).name
    process = receval(
        *(function, name, nth, out, "run", config),
        *("--output", out / "report.json", "--output", out / "report.md"),
        driver=SIGNAL_DRIVER,
    )
    code, stderr = finish(process)
    assert_interrupted(code, stderr, signum, NOTHING_WRITTEN)
    assert folder_bytes(out) == before


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("kind", list(OUTPUT_KINDS))
def test_interrupt_as_a_temporary_file_appears(tmp_path: Path, kind: str, signum: int) -> None:
    """A stop delivered the moment the temporary file of an output appears (every output
    kind, the history store included): one line, exit 128 + signal, and no file left in
    the output folder, the temporary one included."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    option, name = OUTPUT_KINDS[kind]
    process = receval(
        signal.Signals(signum).name, 1, "run", config, option, out / name,
        driver=TEMPORARY_DRIVER,
    )  # fmt: skip
    code, stderr = finish(process)
    assert_interrupted(code, stderr, signum, NOTHING_WRITTEN)
    assert [p.relative_to(out) for p in out.rglob("*") if p.is_file()] == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_the_modules_load(tmp_path: Path, signum: int) -> None:
    """The stop arrives before any command runs: one line, exit 128 + signal, no
    traceback, no output."""
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    name = signal.Signals(signum).name
    process = receval(name, "run", config, "--output", out, driver=IMPORT_DRIVER)
    code, stderr = finish(process)
    assert_interrupted(code, stderr, signum, NOTHING_WRITTEN)
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert not out.exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_inside_a_finalizer_is_kept_for_the_next_checkpoint(signum: int) -> None:
    """A CI run once saw "Exception ignored in: 'Path'", a traceback through signals.py,
    and then a complete run: a stop that lands in a finalizer is kept and raised at the
    next checkpoint (a stage's end, before the outputs are written), with nothing on
    stderr."""
    name = signal.Signals(signum).name
    found = subprocess.run(
        [sys.executable, "-c", FINALIZER_SCRIPT, name],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (found.returncode, found.stderr) == (0, "")
    assert found.stdout.splitlines() == ["ran on", f"stopped {int(signum)}"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_after_the_command_finished_is_ignored(tmp_path: Path, signum: int) -> None:
    """Once the command has written its outputs, a stop has nothing left to stop: the run's
    own exit code, nothing more on stderr (not a process silently killed by the signal)."""
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    name = signal.Signals(signum).name
    code, stderr = finish(receval(name, "run", config, "-q", "--output", out, driver=LATE_DRIVER))
    assert (code, stderr) == (0, "")
    assert json.loads(out.read_text(encoding="utf-8"))["models"]["model"]["metrics"]


def test_interrupt_between_renames_completes_the_set(tmp_path: Path) -> None:
    """A SIGINT just before the first of two renames is held back until both are done:
    the two files are the new reports, whole, and the message names them."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    earlier_reports(out, "report.json", "report.md")
    json_report, markdown = out / "report.json", out / "report.md"
    process = receval(
        *("replace", "SIGINT", 1, out, "run", config),
        *("--output", json_report, "--output", markdown),
        driver=SIGNAL_DRIVER,
    )
    code, stderr = finish(process)
    message = f"stopped after writing {json_report}, {markdown}."
    assert_interrupted(code, stderr, signal.SIGINT, message)
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "report.md"]
    report = json.loads(json_report.read_text(encoding="utf-8"))
    assert set(report["models"]["model"]["metrics"]) == {"precision@1", "ndcg@2"}
    assert "ndcg@2" in markdown.read_text(encoding="utf-8")


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs RLIMIT_FSIZE (POSIX)")
def test_file_size_limit_in_the_parquet_writer(tmp_path: Path) -> None:
    """A real write failure from the kernel (files limited to 200 bytes, so the per-user
    Parquet file fails with EFBIG inside polars' writer): exit 2, a clear message, the
    earlier files intact, no temporary file."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    before = earlier_reports(out, "report.json", "users.parquet")
    process = receval(
        *(200, "run", config, "--output", out / "report.json"),
        *("--per-user", out / "users.parquet"),
        driver=FILE_SIZE_DRIVER,
    )
    code, stderr = finish(process)
    assert code == 2, stderr
    assert stderr == (
        f"error: output {out / 'users.parquet'} could not be written: File too large. No "
        "output file was written or changed; free some space or choose another folder, then "
        "run again.\n"
    )
    assert folder_bytes(out) == before


def test_disk_full_keeps_the_earlier_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC where a full disk reports it on delayed allocation (fsync): exit 2, and the
    earlier report is left as it was."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    before = earlier_reports(out, "report.json")
    monkeypatch.setattr(os, "fsync", fail_on_call(1, DISK_FULL, os.fsync))
    result = invoke("run", config, "--output", out / "report.json")
    assert_user_error(
        result,
        f"output {out / 'report.json'} could not be written: No space left on device. "
        "No output file was written or changed",
    )
    assert folder_bytes(out) == before


def test_disk_full_on_the_second_file_writes_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three outputs (per-user Parquet, JSON, markdown), the disk full on the second: all
    or nothing, so none of the three earlier files is replaced."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    names = ("users.parquet", "report.json", "report.md")
    before = earlier_reports(out, *names)
    monkeypatch.setattr(os, "fsync", fail_on_call(2, DISK_FULL, os.fsync))
    result = invoke(
        "run", config, "--per-user", out / names[0], "-o", out / names[1], "-o", out / names[2]
    )
    assert_user_error(result, f"output {out / 'report.json'} could not be written: No space")
    assert folder_bytes(out) == before


def test_no_room_for_the_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Creating the temporary file fails (no inode left): exit 2, nothing written."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    before = earlier_reports(out, "report.json")
    monkeypatch.setattr(
        "receval_cli.report.appending.tempfile.mkstemp", fail_on_call(1, DISK_FULL, print)
    )
    result = invoke("run", config, "--output", out / "report.json")
    assert_user_error(result, "could not be written: No space left on device.")
    assert folder_bytes(out) == before


def test_a_rename_failing_midway_says_what_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one step that cannot be undone: every file is written, and the second rename
    fails. The first file is the new report, the second the earlier one, no temporary
    file is left, and the message says so."""
    config = hand_case(tmp_path)
    out = tmp_path / "out"
    earlier_reports(out, "report.json", "report.md")
    failure = OSError(errno.EIO, os.strerror(errno.EIO))
    monkeypatch.setattr(os, "replace", fail_on_call(2, failure, os.replace))
    result = invoke("run", config, "-o", out / "report.json", "-o", out / "report.md")
    assert_user_error(
        result,
        f"output {out / 'report.md'} could not be written: Input/output error. The output "
        "files before it were written, it and the rest were not",
    )
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "report.md"]
    assert (
        "ndcg@2"
        in json.loads((out / "report.json").read_text(encoding="utf-8"))["models"]["model"][
            "metrics"
        ]
    )
    assert (out / "report.md").read_text(encoding="utf-8") == f"{EARLIER}(report.md)\n"


@pytest.fixture
def locked_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder with mode 0500 holding an earlier report."""
    folder = tmp_path / "locked"
    folder.mkdir()
    write(folder / "report.json", EARLIER)
    folder.chmod(0o500)
    yield folder
    folder.chmod(0o700)


def test_unwritable_folder(tmp_path: Path, locked_folder: Path) -> None:
    """A folder the user may not write to: exit 2 before any work, the earlier report
    intact. Root passes permission checks, so as root the folder is /sys instead, where
    the kernel lets no one create a file: a read-only mount fails the same up-front
    check, a writable one when the temporary file is created."""
    config = hand_case(tmp_path)
    if os.geteuid() != 0:
        before = folder_bytes(locked_folder)
        result = invoke("run", config, "--output", locked_folder / "report.json")
        assert_user_error(result, f"the folder {locked_folder} is not writable.")
        assert folder_bytes(locked_folder) == before
        return
    sysfs = Path("/sys")
    if not sysfs.is_dir():
        pytest.skip("as root every folder is writable, and there is no /sys to try instead")
    result = invoke("run", config, "--output", sysfs / "report.json")
    message = assert_user_error(result, f"output {sysfs / 'report.json'}")
    assert f"the folder {sysfs} is not writable." in message or (
        "could not be written: " in message and "No output file was written" in message
    ), message
    assert not (sysfs / "report.json").exists()


@pytest.fixture
def parquet_case(tmp_path: Path) -> Path:
    """The hand case (cli_helpers) with its predictions as Parquet."""
    config = hand_case(tmp_path)
    pl.read_csv(tmp_path / "predictions.csv").write_parquet(tmp_path / "predictions.parquet")
    text = config.read_text(encoding="utf-8").replace("predictions.csv", "predictions.parquet")
    return write(config, text)


@pytest.mark.own_process  # a polars query fails (tests/support/process_isolation.py)
@pytest.mark.parametrize(
    ("change", "words"),
    [
        (truncate, "changed size ("),
        (remove, "was removed"),
        (replace, "was replaced by another file"),
    ],
    ids=["truncated", "removed", "replaced"],
)
def test_predictions_rewritten_during_the_run(
    parquet_case: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[Path], None], words: str
) -> None:
    """The file changes between the schema scan and the queries: exit 2 naming it, no
    report (a half-truncated Parquet file would otherwise still evaluate, from the footer
    read before; a removed one failed with a traceback)."""
    changed = rewrite_after_scan(monkeypatch, change)
    out = parquet_case.parent / "out"
    before = earlier_reports(out, "report.json")
    result = invoke("run", parquet_case, "--output", out / "report.json")
    predictions = parquet_case.parent / "predictions.parquet"
    assert changed == [predictions]
    assert_user_error(
        result, f"predictions file {predictions} {words}", "while receval was reading it"
    )
    assert folder_bytes(out) == before


def test_unchanged_input_is_not_flagged(
    parquet_case: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same hook changing nothing: the run succeeds with the hand-checked value."""
    changed = rewrite_after_scan(monkeypatch, keep)
    result = invoke("run", parquet_case, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert changed
    assert (
        json.loads(result.stdout)["models"]["model"]["metrics"]["precision@1"] == 0.5
    )  # cli_helpers


def test_io_error_escaping_the_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An OSError from inside an evaluation, with no input changed, is an input error."""
    config = hand_case(tmp_path)

    def lost(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO), str(tmp_path / "predictions.csv"))

    monkeypatch.setattr("receval_cli.analysis.runs.evaluate_config", lost)
    result = invoke("run", config)
    assert_user_error(result, f"{tmp_path / 'predictions.csv'} could not be read: Input/output")


def test_polars_panic_is_an_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A polars panic with every input unchanged: exit 3, a bug report, no traceback."""
    config = hand_case(tmp_path)

    def panic(*args: Any, **kwargs: Any) -> None:
        raise pl.exceptions.PanicException("assertion failed: x")

    monkeypatch.setattr("receval_cli.analysis.runs.evaluate_config", panic)
    result = invoke("run", config)
    assert_no_traceback(result)
    assert result.exit_code == 3
    assert result.stderr.startswith(
        "error: internal error: polars failed while evaluating: assertion failed: x."
    )
