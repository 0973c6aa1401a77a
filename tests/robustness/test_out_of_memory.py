"""Out of memory, and other deaths of the process that does the work (supervisor.py).

`receval run` (and the other commands that read data) works in a child process; the
watching process turns the child's death into one `error:` line and an exit code: 4 when
memory ran out (Rust's allocation failure and abort, or the kernel's OOM kill), 3 for
another crash, the child's own code otherwise. The drivers below make the child die on
purpose, the same way polars does; the last tests run out of memory for real.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it

REPO = Path(__file__).resolve().parents[2]

# the run command's work replaced by what the test asks: write a line on file descriptor 2 as
# native code does, then end as asked (abort, a signal, an exit code)
DRIVER = """
import os, signal, sys
import receval_cli.config.loading as loading
from receval_cli import console

how, native = sys.argv[1], sys.argv[2]

def work(*args, **kwargs):
    with console.stage("read, rank, join, metrics"):
        if native:
            os.write(2, native.encode() + b"\\n")
        if how == "abort":
            os.abort()
        if how.startswith("signal:"):
            os.kill(os.getpid(), getattr(signal, how[7:]))
        if how == "memoryerror":
            raise MemoryError()
        if how == "no thread":  # Python's thread that could not get its stack (ulimit -v)
            raise RuntimeError("can't start new thread")
        if how == "wait":
            signal.pause()
    sys.exit(int(how) if how.isdigit() else 0)

loading.load_config = work  # the run command's first step does the test's work
from receval_cli.launch import main
sys.argv = ["receval", *sys.argv[3:]]
main()
"""

ALLOC = "memory allocation of 8388608 bytes failed"
BACKTRACE = "stack backtrace:\n   0: polars::whatever\nnote: Some details are omitted, run with"


def run(how: str, native: str, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    paths = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    environment.pop("RECEVAL_UNSUPERVISED", None)
    return subprocess.run(
        [sys.executable, "-c", DRIVER, how, native, *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def test_an_allocation_failure_is_one_error_line_and_exit_4(tmp_path: Path) -> None:
    result = run("abort", f"{ALLOC}\n{BACKTRACE}", "run", "config.yaml")
    assert result.returncode == 4, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(
        "error: receval ran out of memory while read, rank, join, metrics (the process could "
        "get no more, SIGABRT)."
    )
    assert "partitions: N" in lines[0] or "ulimit -v" in lines[0]
    assert "backtrace" not in result.stderr


# what CI saw under `ulimit -v` 0.5 GB: a thread that could not get its stack, in Rust 1.89's
# panic format (the thread's id after its name), after a blank line
THREAD_PANIC = (
    "\nthread 'async-executor-0' (21894) panicked at "
    "crates/polars-async/src/executor/mod.rs:388:14:\n"
    "called `Result::unwrap()` on an `Err` value: Os { code: 11, kind: WouldBlock, "
    'message: "Resource temporarily unavailable" }'
)


@pytest.mark.parametrize(
    "native",
    [
        THREAD_PANIC,
        THREAD_PANIC.replace(" (21894)", ""),  # the format before Rust 1.89
        "\n\n" + ALLOC,
    ],
    ids=["panic with thread id", "panic without thread id", "blank lines then allocation"],
)
def test_a_thread_without_memory_is_one_error_line_too(native: str) -> None:
    """The panic's lines and the blank lines before them are held back: one line, exit 4."""
    result = run("abort", native, "run", "config.yaml")
    assert result.returncode == 4, result
    assert result.stderr.startswith("error: receval ran out of memory while read, rank"), result
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_blank_native_lines_not_before_an_abort_pass_through() -> None:
    result = run("0", "note\n\nanother\n", "run", "config.yaml")
    assert (result.returncode, result.stderr) == (0, "note\n\nanother\n\n")


def test_the_error_line_is_json_with_log_format_json() -> None:
    result = run("abort", ALLOC, "--log-format", "json", "run", "config.yaml")
    assert result.returncode == 4
    record = json.loads(result.stderr.strip())
    assert record["level"] == "error"
    assert record["message"].startswith("receval ran out of memory while read, rank")


def test_a_python_memory_error_is_exit_4_too() -> None:
    result = run("memoryerror", "", "run", "config.yaml")
    assert result.returncode == 4, result
    assert result.stderr.startswith("error: receval ran out of memory while it ran")
    assert "Traceback" not in result.stderr


def test_another_crash_is_an_internal_error_with_its_output() -> None:
    """A segmentation fault is no lack of memory: exit 3, what native code printed, then
    one error line."""
    result = run("signal:SIGSEGV", "thread 'x' panicked at src/lib.rs:1:1", "run", "c.yaml")
    assert result.returncode == 3, result
    assert "panicked" in result.stderr
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith(
            "error: internal error: receval stopped on SIGSEGV while read, rank, join, metrics"
        )
    )


def test_a_kill_with_no_sign_of_lack_of_memory_is_137_and_one_line() -> None:
    """SIGKILL that the cgroup does not count as an out-of-memory kill (`kill -9`): the
    shell's 137, and one line saying what happened and what helps if it was memory."""
    result = run("signal:SIGKILL", "", "run", "config.yaml")
    assert result.returncode == 137, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(
        "error: receval was killed by SIGKILL while read, rank, join, metrics (nothing it "
        "could report: `kill -9`, or the kernel's out-of-memory killer"
    )


def test_native_lines_and_the_exit_code_pass_through() -> None:
    """What native code writes on stderr reaches the user; the child's exit code is the
    command's (1: a failed gate)."""
    result = run("1", "a note from native code", "run", "config.yaml")
    assert (result.returncode, result.stderr) == (1, "a note from native code\n")


def test_sigterm_to_the_watching_process_reaches_the_child() -> None:
    """A job runner may signal only the process it started: the stop reaches the work,
    which reports it (one line, 143)."""
    process = subprocess.Popen(
        [sys.executable, "-c", DRIVER, "wait", "READY", "run", "config.yaml"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        start_new_session=True,  # only this process gets the signal, not a group
    )
    assert process.stderr is not None
    # the child writes READY (a native line, passed through) once it waits in its stage:
    # a fixed sleep lost the race on a loaded machine (the signal came before the handler)
    seen = []
    while not seen or seen[-1].strip() != "READY":
        line = process.stderr.readline()
        assert line, "".join(seen)
        seen.append(line)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143, stderr
    assert stderr.strip().splitlines()[-1].startswith("interrupted by SIGTERM: stopped")


def test_commands_that_read_no_data_run_in_one_process() -> None:
    from receval_cli import supervisor

    assert supervisor.command_of(["receval", "--log-format", "json", "run", "x"]) == "run"
    assert supervisor.wanted(["receval", "run", "x.yaml"]) is (os.name == "posix")
    assert not supervisor.wanted(["receval", "--version"])
    assert not supervisor.wanted(["receval", "metrics", "ndcg"])


# ------------------------------------------------------------- running out for real


def _address_space(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))

    return apply


@pytest.fixture(scope="module")
def twenty_million(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20M prediction rows (200,000 users x 100) and 2M truth rows, as Parquet."""
    folder = tmp_path_factory.mktemp("twenty")
    rows = pl.int_range(0, 20_000_000, eager=True, dtype=pl.Int64)
    pl.DataFrame(
        {"user": rows // 100, "item": (rows * 7919) % 50_000, "score": (rows * 0.618) % 1.0}
    ).write_parquet(folder / "predictions.parquet")
    judged = rows[:2_000_000]
    pl.DataFrame({"user": judged // 10, "item": (judged * 13) % 50_000}).write_parquet(
        folder / "truth.parquet"
    )
    config = folder / "config.yaml"
    config.write_text(
        "predictions: {path: predictions.parquet}\nground_truth: {path: truth.parquet}\n"
        "metrics: [ndcg@10, map]\n",
        encoding="utf-8",
    )
    return config


def _receval_under(limit: int, config: Path, out: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    environment.pop("RECEVAL_UNSUPERVISED", None)
    return subprocess.run(
        [sys.executable, "-m", "receval_cli", "run", str(config), "-o", str(out), "--verbose"],
        preexec_fn=_address_space(limit),
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux has it")
def test_twenty_million_rows_fit_a_1_5_gb_address_space(twenty_million: Path) -> None:
    """Under `ulimit -v` 1.5 GB (it failed before any data was read: glibc reserved 64 MiB
    per thread), auto splits the run into partitions and it completes."""
    out = twenty_million.parent / "fits.json"
    result = _receval_under(1_500_000_000, twenty_million, out)
    assert result.returncode == 0, (result.returncode, result.stderr[-3000:])
    assert "partition 1/" in result.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["models"]["model"]["metrics"]["map"] > 0


@pytest.mark.parametrize(
    "error",
    [
        MemoryError(),
        OSError(12, "Cannot allocate memory"),
        RuntimeError("can't start new thread"),  # Python's thread, no room for its stack
        RuntimeError("failed to spawn thread: Os { code: 11, kind: WouldBlock }"),
    ],
    ids=repr,
)
def test_a_thread_or_allocation_that_cannot_get_memory_says_so(error: BaseException) -> None:
    """Under `ulimit -v` the run fails wherever the address space ends: in polars, in
    Python's allocator, or in a thread that cannot get its stack (seen on CI: Python's
    'can't start new thread', reported as a bug with exit 3 instead of exit 4)."""
    from receval_cli.errors import says_out_of_memory

    assert says_out_of_memory(error)
    assert not says_out_of_memory(RuntimeError("can't compare str and int"))


def test_a_python_thread_that_cannot_start_is_one_error_line_and_exit_4() -> None:
    """Python's 'can't start new thread' in the run (seen on CI under `ulimit -v`): memory
    ran out, exit 4 with its one line, not a bug's exit 3."""
    result = run("no thread", "", "run", "config.yaml")
    assert result.returncode == 4, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: receval ran out of memory while it ran"), lines
    assert "bug" not in result.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux has it")
def test_a_real_allocation_failure_under_an_address_space_limit(twenty_million: Path) -> None:
    """The same run under 0.5 GB: polars' allocation fails and Rust aborts; the user sees
    one error line, exit 4, no backtrace, and no report file."""
    out = twenty_million.parent / "fails.json"
    result = _receval_under(500_000_000, twenty_million, out)
    assert result.returncode == 4, (result.returncode, result.stderr[-3000:])
    errors = [line for line in result.stderr.splitlines() if " INFO " not in line]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith("error: receval ran out of memory while ")
    assert "ulimit -v" in errors[0]
    assert not out.exists()
    assert [p.name for p in twenty_million.parent.iterdir() if p.name.startswith(".")] == []


def test_a_closed_stderr_runs_in_one_process(tmp_path: Path) -> None:
    """`2>&-`: nothing to pass on; the command still runs and writes its report."""
    from cli_helpers import hand_case

    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, "-m", "receval_cli", "run", str(config), "-q", "-o", str(out)],
        preexec_fn=lambda: os.close(2),
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0
    assert json.loads(out.read_text(encoding="utf-8"))["models"]["model"]["metrics"]


# -------------------------------------------- messages: out of memory inside a reader


@pytest.mark.parametrize(
    "raised",
    [
        pl.exceptions.ComputeError("parquet: Cannot allocate memory (os error 12)"),
        OSError(12, "Cannot allocate memory"),
        pl.exceptions.ComputeError("out of memory while decoding a page"),
        pl.exceptions.PanicException(THREAD_PANIC.strip().split("\n", 1)[1]),
    ],
    ids=["polars ENOMEM text", "OSError ENOMEM", "polars out of memory", "thread panic"],
)
def test_memory_running_out_in_a_reader_is_exit_4_not_a_damaged_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: Exception
) -> None:
    """Under `ulimit -v` a Parquet reader failed with "Cannot allocate memory" and receval
    said the file could not be read (exit 2, "Check that the file is complete")."""
    from cli_helpers import hand_case, invoke

    config = hand_case(tmp_path)
    pl.read_csv(tmp_path / "predictions.csv").write_parquet(tmp_path / "predictions.parquet")
    text = config.read_text().replace("predictions.csv", "predictions.parquet")
    config.write_text(text)

    def failing(*args: object, **kwargs: object) -> pl.LazyFrame:
        raise raised

    monkeypatch.setattr(pl, "scan_parquet", failing)
    result = invoke("run", config)
    assert result.exit_code == 4, (result.exit_code, result.stderr)
    assert result.stderr.startswith("error: receval ran out of memory while reading predictions")
    assert "Check that the file is complete" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_read_failure_raises_out_of_memory_for_memory_text(tmp_path: Path) -> None:
    from receval_cli.errors import OutOfMemory
    from receval_cli.inputs.diagnosis import read_failure

    error = pl.exceptions.ComputeError("Cannot allocate memory")
    with pytest.raises(OutOfMemory) as caught:
        read_failure(tmp_path / "x.parquet", "parquet", None, "ground truth", error)
    assert caught.value.exit_code == 4
    assert str(tmp_path / "x.parquet") in str(caught.value)
