"""engine: spark: watch a run's Spark jobs while they work: progress and stalls.

`watched_jobs(session, ...)` puts the run's jobs in a job group of their own and starts a
thread that polls Spark's status tracker about once a second:
- **Progress.** The running stages and their tasks (done / all) replace the stage line of
  the terminal's spinner, and with --verbose (or --log-format json) a line is logged when a
  stage starts and at most every LOG_EVERY seconds.
- **Stalls.** When the group has a job waiting and no task has run or finished for
  `stall_timeout` seconds (the cluster lost its workers, or grants no executor), the
  thread cancels the group; the run then ends with one line naming the stall, exit 2
  (`Watch.stall_error`), instead of waiting for a worker to come back.
- **Stops.** A SIGINT, SIGTERM or SIGHUP ends the run as anywhere else (one line, 130,
  143, 129), and the group's jobs are cancelled on the way out, within a few seconds
  (CANCEL_WAIT), so a stopped run does not keep the cluster busy. When receval starts the
  session, pyspark installs a SIGINT handler of its own (it cancels every job of the
  context from inside the handler, which leaves py4j a broken connection to log four
  tracebacks about); `restore_sigint` puts receval's back, and while the session starts
  and while jobs run, Python's logging prints nothing on stderr (`python_logs_off`):
  receval's own lines say what happened. The JVM that a stop leaves (one stopped while it
  starts) is ended by the watching process (supervisor.py).

A notebook's session (`evaluate_spark(spark=...)`) is watched too, but its SIGINT handler
and logging are left as they are; its job group is put back afterwards.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from receval_cli import console, signals
from receval_cli.errors import UsageError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

POLL = 1.0  # seconds between two looks at the status tracker
LOG_EVERY = 10.0  # seconds between two --verbose progress lines of the same stage
CANCEL_WAIT = 3.0  # seconds a stop waits for Spark to take the cancellation
# the local properties setJobGroup sets (put back as they were afterwards)
_GROUP_KEYS = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


@dataclass
class Progress:
    """What the group's running jobs are doing, from one look at the status tracker."""

    waiting: bool = False  # a job of the group is running (its tasks may wait for executors)
    active_tasks: int = 0
    done_tasks: int = 0
    # the running stages: id, tasks done, tasks in all, tasks running
    stages: list[tuple[int, int, int, int]] = field(default_factory=list)

    def text(self) -> str:
        """e.g. 'Spark: stage 3: 12 of 200 tasks done, 4 running'."""
        shown = [
            f"stage {i}: {done} of {total} tasks done, {running} running"
            for i, done, total, running in self.stages
        ]
        return "Spark: " + ("; ".join(shown) if shown else "a job waits for its first stage")


def look(tracker: Any, group: str) -> Progress:
    """The group's progress from Spark's status tracker (pyspark's StatusTracker)."""
    found = Progress()
    active = set(tracker.getActiveStageIds())
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        if info is None or info.status not in ("RUNNING", "UNKNOWN"):
            continue
        found.waiting = True
        for stage_id in info.stageIds:
            stage = tracker.getStageInfo(stage_id)
            if stage is None:
                continue
            found.done_tasks += stage.numCompletedTasks
            found.active_tasks += stage.numActiveTasks
            if stage_id in active:
                done, total = stage.numCompletedTasks, stage.numTasks
                found.stages.append((stage_id, done, total, stage.numActiveTasks))
    return found


class StallClock:
    """Whether a run has stalled: a job of it waits, and no task of it has run or finished
    for `timeout` seconds (None: never)."""

    def __init__(self, timeout: float | None, now: float) -> None:
        self.timeout = timeout
        self.last_change = now
        self.last_seen = (0, 0)  # (tasks done, tasks running) at the last change

    def stalled(self, progress: Progress, now: float) -> bool:
        seen = (progress.done_tasks, progress.active_tasks)
        if not progress.waiting or progress.active_tasks or seen != self.last_seen:
            self.last_change = now
        self.last_seen = seen
        return self.timeout is not None and now - self.last_change > self.timeout


class Watch:
    """The watching thread's state (see the module's docstring)."""

    def __init__(self, session: SparkSession, stall_timeout: float | None) -> None:
        self.context = session.sparkContext
        self.group = f"receval-{uuid.uuid4().hex[:12]}"
        self.stall_timeout = stall_timeout
        self.stalled: str | None = None  # why, once the watch cancelled the group
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="receval-spark-watch", daemon=True)

    def _run(self) -> None:
        tracker = self.context.statusTracker()
        clock = StallClock(self.stall_timeout, time.monotonic())
        logged: dict[int, float] = {}
        while not self.done.wait(POLL):
            try:
                progress = look(tracker, self.group)
            except Exception:  # the JVM going away at the end of a run: nothing to watch
                return
            now = time.monotonic()
            if progress.waiting:
                _show(progress, logged, now)
            if clock.stalled(progress, now):
                assert self.stall_timeout is not None
                self.stalled = self._why(self.stall_timeout)
                self.cancel()
                return

    def _why(self, timeout: float) -> str:
        try:
            executors = len(self.context.statusTracker().getExecutorInfos()) - 1  # the driver
        except Exception:
            executors = -1
        whom = "no executor" if executors == 0 else f"{max(executors, 0)} executor(s)"
        return (
            f"no task of the run started or finished for {timeout:g} s, with {whom} "
            "connected: the cluster lost its workers, or gives the application no executors"
        )

    def cancel(self) -> None:
        """Cancel the group's jobs, waiting at most CANCEL_WAIT seconds for Spark."""
        worker = threading.Thread(
            target=_quietly(lambda: self.context.cancelJobGroup(self.group)), daemon=True
        )
        worker.start()
        worker.join(CANCEL_WAIT)

    def stall_error(self) -> UsageError:
        fix = (
            "Check the cluster (its workers, and the application's executors in the master's "
            "web UI), then run again; the config's spark: {stall_timeout: SECONDS} (or --set "
            "spark.stall_timeout=SECONDS) sets how long a run may wait."
        )
        return UsageError(
            f"engine: spark stopped the run: {self.stalled}. {fix}",
            key="spark.stall_timeout",
            found=self.stalled,
            fix=fix,
        )


def _quietly(call: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        with suppress(Exception):  # the JVM already gone: nothing left to cancel
            call()

    return run


def _show(progress: Progress, logged: dict[int, float], now: float) -> None:
    """The progress on the spinner's line, and logged with --verbose: each stage when it
    starts, then at most every LOG_EVERY seconds."""
    text = progress.text()
    console.progress(text)
    due = [s for s, *_ in progress.stages if now - logged.get(s, -LOG_EVERY) >= LOG_EVERY]
    if due or (not progress.stages and now - logged.get(-1, -LOG_EVERY) >= LOG_EVERY):
        console.log(text)
        for stage in due or [-1]:
            logged[stage] = now


@contextmanager
def watched_jobs(session: SparkSession, stall_timeout: float | None, own: bool) -> Iterator[Watch]:
    """Run the block's Spark jobs in a group of their own, watched (see the module's
    docstring). `own`: receval started the session (the command line): Python's logging
    prints nothing on stderr meanwhile."""
    watch = Watch(session, stall_timeout)
    context = watch.context
    before = {key: context.getLocalProperty(key) for key in _GROUP_KEYS}
    context.setJobGroup(watch.group, "receval run", interruptOnCancel=True)
    watch.thread.start()
    try:
        with python_logs_off(own):
            yield watch
    except (KeyboardInterrupt, signals.Interrupted):
        watch.cancel()
        raise
    finally:
        watch.done.set()
        for key, value in before.items():  # the thread's job group as it was (a notebook's)
            try:
                context.setLocalProperty(key, value)  # type: ignore[arg-type]  # None: unset
            except Exception:  # the JVM already gone
                break


@contextmanager
def python_logs_off(own: bool = True) -> Iterator[None]:
    """Python's logging prints nothing on stderr in the block (`own`: receval started the
    session; a notebook's logging is left as it is). py4j reports a connection that a stop
    broke (a Ctrl-C while the JVM answers: while a job runs, or while the session starts)
    by logging.exception on the root logger, a traceback: receval's own line says it."""
    if not own:
        yield
        return
    root = logging.getLogger()
    silence = logging.NullHandler()
    root.addHandler(silence)
    level, root.level = root.level, logging.CRITICAL + 1
    try:
        yield
    finally:
        root.removeHandler(silence)
        root.level = level


def restore_sigint(previous: object) -> None:
    """Put back the SIGINT handler receval had before pyspark started a context (pyspark
    installs its own, see the module's docstring); in the main thread only."""
    if threading.current_thread() is not threading.main_thread():
        return
    if previous is not None and signal.getsignal(signal.SIGINT) is not previous:
        signal.signal(signal.SIGINT, previous)  # type: ignore[arg-type]
