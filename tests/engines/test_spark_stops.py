"""engine: spark on a standalone cluster that stops working, and under a job runner's
signals (engines/spark_watch.py).

A standalone master on 127.0.0.1 with no worker of its own: an application there gets no
executor, so its first job waits for ever, which is the moment a stop or the stall
watchdog is about. Each run is `receval run --engine spark --spark-master spark://...
--verbose` as a process in a session of its own:
- SIGTERM to the process (a job runner's stop) and SIGINT to its group (Ctrl-C) while the
  job waits end it within 10 s: exit 143 or 130, one `interrupted by` line, no traceback,
  no output file;
- with `spark.stall_timeout`, a run that gets no executor ends with one line naming the
  stall, exit 2;
- a worker started for the run and killed while its tasks run (a lost node) ends the run
  the same way, instead of a wait for a worker that never comes back.

And on a local master, a stop at each moment of the session's start (the JVM launched by
spark-submit's scripts, the gateway's handshake, the context's creation) and at its end
ends the run with its one line and its code, and leaves no process of the run behind (a
JVM stopped while it started once held the run open for 90 s and more, then ran on).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import polars as pl
import pytest
import yaml
from spark_cluster import JVM_NOTICE, _free_port, _spark_env, _spark_home, _stop, _wait_for

from receval_cli.signals import NOTHING_WRITTEN

REPO = Path(__file__).parents[2]
STOP_WITHIN = 10.0  # seconds: #39's bar (Kubernetes' grace period is 30 s)
_LOG = re.compile(r"^\d{4}-\d\d-\d\dT\S+ INFO ")
RECEVALS = ("error:", "warning:", "interrupted by", "gate failed")  # receval's own lines

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Master:
    url: str
    folder: Path
    env: dict[str, str]


@pytest.fixture(scope="module")
def master(spark_installed: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Master]:
    """A standalone master alone (no worker) on 127.0.0.1."""
    folder = tmp_path_factory.mktemp("master")
    env = _spark_env(folder)
    port = _free_port()
    log = folder / "master.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                *(
                    str(_spark_home() / "bin" / "spark-class"),
                    "org.apache.spark.deploy.master.Master",
                ),
                *("--host", "127.0.0.1", "--port", str(port), "--webui-port", "0"),
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for(log, "I have been elected leader", process, 120)
        yield Master(f"spark://127.0.0.1:{port}", folder, env)
    finally:
        _stop(process)


def _case(folder: Path, stall_timeout: float | None, users: int = 400) -> Path:
    """Integer ids, 30 scored items and 5 graded ones per user."""
    folder.mkdir(parents=True, exist_ok=True)
    per_user = 30
    user = [u for u in range(users) for _ in range(per_user)]
    item = [(u * 7 + i * 13) % 997 for u in range(users) for i in range(per_user)]
    score = [((u + 3) * (i + 5)) % 101 / 101 for u in range(users) for i in range(per_user)]
    pl.DataFrame({"user": user, "item": item, "score": score}).write_parquet(folder / "p.parquet")
    truth = pl.DataFrame(
        {
            "user": [u for u in range(users) for _ in range(5)],
            "item": [(u * 7 + i * 26) % 997 for u in range(users) for i in range(5)],
            "grade": [1 + i % 3 for _ in range(users) for i in range(5)],
        }
    )
    truth.write_parquet(folder / "t.parquet")
    config = {
        "predictions": {"path": "p.parquet"},
        "ground_truth": {"path": "t.parquet", "columns": {"relevance": "grade"}},
        "metrics": ["ndcg@10", "precision@5", "map@10"],
        "engine": "spark",
        "spark": {"stall_timeout": stall_timeout},
    }
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def _start(config: Path, master: Master) -> subprocess.Popen[str]:
    """`receval run` on the cluster, --verbose, in a session of its own."""
    env = {**master.env, "PYTHONPATH": str(REPO), "COLUMNS": "80"}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "receval_cli", "run", str(config), "--verbose"),
            *("--spark-master", master.url, "-o", str(config.parent / "report.json")),
            *("--spark-conf", f"spark.pyspark.python={sys.executable}"),
            *("--spark-conf", "spark.ui.enabled=false", "--spark-conf", "spark.cores.max=2"),
            *("--spark-conf", "spark.executor.memory=1g"),
        ],
        cwd=config.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _read_until(
    process: subprocess.Popen[str], wanted: re.Pattern[str], stream: IO[str] | None = None
) -> list[str]:
    """stderr's (or `stream`'s) lines up to the first that matches `wanted` (the run still
    going)."""
    stream = stream or process.stderr
    assert stream is not None
    seen: list[str] = []
    for line in stream:
        seen.append(line.rstrip("\n"))
        if wanted.search(line):
            return seen
    process.wait(30)
    raise AssertionError(f"the run ended ({process.returncode}) before {wanted.pattern!r}: {seen}")


def _finish(process: subprocess.Popen[str], within: float) -> tuple[int, list[str], float]:
    """The exit code, stderr's remaining lines that are not --verbose logs nor the JVM's
    notice, and how long the end took."""
    started = time.monotonic()
    try:
        _, rest = process.communicate(timeout=within + 60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"the run did not end within {within + 60:g} s")
    lines = [line for line in rest.splitlines() if not _LOG.match(line) and line != JVM_NOTICE]
    return process.returncode, lines, time.monotonic() - started


WAITING = re.compile(r"INFO Spark: (a job waits|stage)")


@pytest.mark.parametrize(("signum", "to"), [(signal.SIGTERM, "process"), (signal.SIGINT, "group")])
def test_a_stop_ends_a_spark_run_within_seconds(
    master: Master, tmp_path: Path, signum: int, to: str
) -> None:
    config = _case(tmp_path, stall_timeout=None)  # the job waits for ever: no executor
    process = _start(config, master)
    _read_until(process, WAITING)
    (os.killpg if to == "group" else os.kill)(process.pid, signum)
    code, lines, took = _finish(process, STOP_WITHIN)
    name = signal.Signals(signum).name
    assert (code, lines) == (128 + signum, [f"interrupted by {name}: {NOTHING_WRITTEN}"])
    assert took < STOP_WITHIN, took
    assert not (tmp_path / "report.json").exists()


def test_a_run_without_executors_stops_at_the_stall_timeout(master: Master, tmp_path: Path) -> None:
    config = _case(tmp_path, stall_timeout=3)
    process = _start(config, master)
    _read_until(process, WAITING)
    code, lines, _ = _finish(process, 3 + 30)
    assert code == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        "error: engine: spark stopped the run: no task of the run started or finished for 3 s, "
        "with no executor connected"
    ), lines
    assert not (tmp_path / "report.json").exists()


def test_a_lost_worker_stops_the_run(master: Master, tmp_path: Path) -> None:
    """A worker joins, its executor starts the run's tasks, and the worker and its
    executor are killed (a node lost): the run ends at its stall timeout, exit 2."""
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [
                *(
                    str(_spark_home() / "bin" / "spark-class"),
                    "org.apache.spark.deploy.worker.Worker",
                ),
                *("--host", "127.0.0.1", "--cores", "2", "--memory", "1g", "--webui-port", "0"),
                *("--work-dir", str(tmp_path / "work"), master.url),
            ],
            env=master.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for(log, "Successfully registered with master", worker, 120)
        # the buckets' stage under way (several tasks, not all done): its tasks take
        # seconds on 150,000 users (on 20,000 they could all start and end between two
        # progress lines, which come every few seconds and seldom catch a task running);
        # a stall timeout longer than a busy machine's slowest step before the tasks run
        # (5 s was once reached there, before any task started)
        config = _case(tmp_path / "run", stall_timeout=20, users=150_000)
        process = _start(config, master)
        under_way = r"INFO Spark: stage \d+: \d+ of ([2-9]|\d{2,}) tasks done"
        _read_until(process, re.compile(under_way))
        os.killpg(worker.pid, signal.SIGKILL)  # the worker and the executor it started
        code, lines, _ = _finish(process, 20 + 60)
    finally:
        _stop(worker)
    assert code == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: engine: spark stopped the run: no task of the run"), lines
    assert not (tmp_path / "run" / "report.json").exists()


def test_a_stop_sent_to_spark_submit(spark_installed: None, tmp_path: Path) -> None:
    """Under spark-submit the JVM is receval's parent, and a job runner stops spark-submit:
    the JVM shuts the context down on SIGTERM and receval's jobs come back cancelled
    "because SparkContext was shut down". That is the stop's one line, not `error:
    internal error: Py4JJavaError ...` (exit 3); spark-submit exits 143 within seconds."""
    config = _case(tmp_path, stall_timeout=None, users=20_000)
    env = {**_spark_env(tmp_path), "PYTHONPATH": str(REPO)}
    env.update(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    env.pop("PYSPARK_GATEWAY_PORT", None)
    process = subprocess.Popen(
        [
            *(str(_spark_home() / "bin" / "spark-submit"), "--master", "local[2]"),
            *("--conf", "spark.ui.enabled=false", str(REPO / "receval_cli" / "__main__.py")),
            *("run", str(config), "--verbose", "-o", str(tmp_path / "report.json")),
        ],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,  # spark-submit joins the driver's stderr to its stdout
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    _read_until(process, re.compile(r"INFO Spark: stage"), process.stdout)
    os.kill(process.pid, signal.SIGTERM)  # spark-submit's JVM, not receval's Python
    started = time.monotonic()
    rest, _ = process.communicate(timeout=STOP_WITHIN + 60)
    assert process.returncode == 128 + signal.SIGTERM, rest[-3000:]
    assert time.monotonic() - started < STOP_WITHIN
    # receval's own line reaches spark-submit's output only when the JVM, which relays the
    # driver's output, has not exited first; when it does, it is the stop's
    ours = [line for line in rest.splitlines() if line.startswith(RECEVALS)]
    assert set(ours) <= {f"interrupted by SIGTERM: {NOTHING_WRITTEN}"}, ours
    assert "Traceback" not in rest
    assert not (tmp_path / "report.json").exists()


def test_a_context_shut_down_under_spark_submit_is_a_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the driver sees when spark-submit's JVM shuts the context down (a stop sent to
    spark-submit) is that stop, not an error; outside spark-submit it stays an error."""
    from receval_cli import signals
    from receval_cli.engines.spark import stopped_from_outside

    cancelled = RuntimeError(
        "An error occurred while calling o272.toPythonIterator. : org.apache.spark."
        "SparkException: Job 5 cancelled because SparkContext was shut down"
    )
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert stopped_from_outside(cancelled) is None  # receval's own JVM: not a stop from outside
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "40000")
    assert stopped_from_outside(RuntimeError("Job 5 failed: a task failed")) is None
    monkeypatch.setattr(signals, "_stopping", [])
    stop = stopped_from_outside(cancelled)
    assert stop is not None
    assert (stop.name, stop.exit_code) == ("SIGTERM", 143)


# --- a stop while the session starts, on a local master --------------------------------


@dataclass
class LocalRun:
    """`receval run` on local[1] in a session of its own, its processes marked by an
    environment variable (which the JVM and its Python workers inherit), pyspark's
    temporary folder and Spark's local folders in `temp` (TMPDIR; temp/local)."""

    process: subprocess.Popen[str]
    mark: str
    temp: Path

    def processes(self) -> dict[int, str]:
        """The run's living processes (marked, or in its process group), by their
        command lines."""
        found = {}
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes()
                fields = stat[stat.rindex(b")") + 2 :].split()
                if fields[0] == b"Z":  # ended, not yet reaped
                    continue
                environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
                command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            except (OSError, ValueError):
                continue
            if self.mark.encode() in environ or int(fields[2]) == self.process.pid:
                found[int(entry)] = command.decode(errors="replace")
        return found


def _start_local(config: Path) -> LocalRun:
    mark = f"RECEVAL_STOP_TEST={uuid.uuid4().hex}"
    temp = config.parent / "temp"
    (temp / "local").mkdir(parents=True)
    env = {
        **_spark_env(config.parent),
        "PYTHONPATH": str(REPO),
        "COLUMNS": "80",
        "TMPDIR": str(temp),
    }
    env.pop("PYSPARK_GATEWAY_PORT", None)
    env.pop("PYSPARK_PYTHON", None)
    env[mark.split("=")[0]] = mark.split("=")[1]
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "receval_cli", "run", str(config), "--verbose"),
            *("--spark-master", "local[1]", "-o", str(config.parent / "report.json")),
            *("--spark-conf", "spark.ui.enabled=false"),
            *("--spark-conf", f"spark.local.dir={temp / 'local'}"),
        ],
        cwd=config.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    return LocalRun(process, mark, temp)


def _until(run: LocalRun, seen: Callable[[], bool]) -> None:
    """Look (every 10 ms) until `seen` says the moment has come; fail if the run ends first."""
    while not seen():
        if run.process.poll() is not None:
            _, err = run.process.communicate()
            raise AssertionError(
                f"the run ended ({run.process.returncode}) before the moment: {err}"
            )
        time.sleep(0.01)


def _running(run: LocalRun, text: str, java: bool = True) -> Callable[[], bool]:
    """A process of the run whose command line holds `text` is running (`java`: a JVM)."""

    def seen() -> bool:
        commands = run.processes().values()
        return any(
            text in command and (not java or Path(command.split(" ")[0]).name == "java")
            for command in commands
        )

    return seen


def _gateway_read(run: LocalRun) -> Callable[[], bool]:
    """pyspark has read the JVM's gateway port: the folder it made for the connection's
    file (the only one in TMPDIR) came and went."""
    came: set[str] = set()

    def seen() -> bool:
        now = set(os.listdir(run.temp))
        gone = came - now
        came.update(now)
        return bool(gone)

    return seen


def _started(run: LocalRun) -> None:
    _read_until(run.process, re.compile(r"INFO start Spark"))


# the moments of a session's start, each as the test sees it come: the stage's line,
# spark-submit's script, the java that builds the JVM's command, the JVM, pyspark's
# reading of the gateway's port, and the context under way (its first folder in
# spark.local.dir: Python waits for the JVM's answer)
MOMENTS: dict[str, Callable[[LocalRun], None]] = {
    "start Spark": _started,
    "spark-submit": lambda run: _until(run, _running(run, "pyspark/bin/spark-", java=False)),
    "launcher": lambda run: _until(run, _running(run, "launcher.Main")),
    "JVM": lambda run: _until(run, _running(run, "deploy.SparkSubmit")),
    "gateway": lambda run: _until(run, _gateway_read(run)),
    "context": lambda run: _until(run, lambda: any((run.temp / "local").iterdir())),
}


@pytest.mark.parametrize("moment", list(MOMENTS))
@pytest.mark.parametrize(
    ("signum", "to"),
    [(signal.SIGTERM, "process"), (signal.SIGINT, "group")],
    ids=["SIGTERM-process", "SIGINT-group"],
)
def test_a_stop_while_the_session_starts_ends_everything(
    spark_installed: None, tmp_path: Path, moment: str, signum: int, to: str
) -> None:
    """SIGTERM to the process (a job runner's stop) or SIGINT to its group (Ctrl-C) at a
    moment of the session's start: the run ends (a generous wait, which fails only if it
    hangs), exit 143 or 130, its one line, no output file, no process of it left (the JVM
    and every child)."""
    run = _start_local(_case(tmp_path, stall_timeout=None))
    try:
        MOMENTS[moment](run)
        (os.killpg if to == "group" else os.kill)(run.process.pid, signum)
        code, lines, _ = _finish(run.process, STOP_WITHIN)
        left = run.processes()
    finally:
        _end(run)
    name = signal.Signals(signum).name
    assert (code, lines) == (128 + signum, [f"interrupted by {name}: {NOTHING_WRITTEN}"])
    assert left == {}
    assert not (tmp_path / "report.json").exists()


def test_a_stop_as_the_session_ends_ends_everything(spark_installed: None, tmp_path: Path) -> None:
    """SIGTERM as the report is done (the session and its JVM still up): the run ends as
    stopped (143, its one line, which names the output when it was written already) or,
    when its command had finished, complete (0, no line, the output written); no process
    of it is left."""
    run = _start_local(_case(tmp_path, stall_timeout=None, users=50))
    try:
        _read_until(run.process, re.compile(r"INFO report: done"))
        os.kill(run.process.pid, signal.SIGTERM)
        code, lines, _ = _finish(run.process, STOP_WITHIN)
        left = run.processes()
    finally:
        _end(run)
    report = tmp_path / "report.json"
    stopped = {
        f"interrupted by SIGTERM: {NOTHING_WRITTEN}": False,
        f"interrupted by SIGTERM: stopped after writing {report}.": True,
    }
    if code == 0:
        assert (lines, report.exists()) == ([], True)
    else:
        assert code == 143, lines
        assert len(lines) == 1, lines
        assert report.exists() == stopped[lines[0]], lines
    assert left == {}


def _end(run: LocalRun) -> None:
    """Whatever the verdict, nothing of the run is left running."""
    for pid in run.processes():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    if run.process.poll() is None:
        run.process.kill()
        run.process.communicate()
