"""The Spark watch's decisions, on a status tracker made up here (no Spark needed): what a
look at the tracker finds, the progress line, and when a run counts as stalled
(engines/spark_watch.py; the real thing on a cluster: tests/engines/test_spark_stops.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from receval_cli.engines.spark_watch import Progress, StallClock, look


@dataclass
class Job:
    status: str
    stageIds: list[int]


@dataclass
class Stage:
    numTasks: int
    numActiveTasks: int
    numCompletedTasks: int


@dataclass
class Tracker:
    """pyspark's StatusTracker, as far as the watch reads it."""

    jobs: dict[int, Job]
    stages: dict[int, Stage]
    active: list[int]
    groups: dict[str, list[int]] = field(default_factory=dict)

    def getJobIdsForGroup(self, group: str) -> list[int]:
        return self.groups.get(group, [])

    def getJobInfo(self, job: int) -> Job | None:
        return self.jobs.get(job)

    def getStageInfo(self, stage: int) -> Stage | None:
        return self.stages.get(stage)

    def getActiveStageIds(self) -> list[int]:
        return self.active


def test_a_look_counts_the_groups_running_jobs_only() -> None:
    tracker = Tracker(
        jobs={
            1: Job("SUCCEEDED", [1]),
            2: Job("RUNNING", [2, 3, 4]),  # 4: not submitted yet (no info)
            9: Job("RUNNING", [9]),  # another group's (a notebook's own job)
        },
        stages={1: Stage(4, 0, 4), 2: Stage(10, 0, 10), 3: Stage(200, 4, 12), 9: Stage(5, 5, 0)},
        active=[3, 9],
        groups={"ours": [1, 2], "theirs": [9]},
    )
    found = look(tracker, "ours")
    assert found == Progress(waiting=True, active_tasks=4, done_tasks=22, stages=[(3, 12, 200, 4)])
    assert found.text() == "Spark: stage 3: 12 of 200 tasks done, 4 running"
    assert look(tracker, "none") == Progress()
    waiting = Tracker({5: Job("RUNNING", [5])}, {}, [], {"g": [5]})
    assert look(waiting, "g").text() == "Spark: a job waits for its first stage"


def _progress(done: int, running: int, waiting: bool = True) -> Progress:
    return Progress(waiting=waiting, active_tasks=running, done_tasks=done)


def test_a_run_stalls_when_nothing_runs_or_finishes_for_the_timeout() -> None:
    clock = StallClock(10.0, now=0.0)
    assert not clock.stalled(_progress(0, 0), 5.0)
    assert not clock.stalled(_progress(0, 0), 10.0)
    assert clock.stalled(_progress(0, 0), 10.5)  # no executor ever came


def test_running_or_finishing_tasks_keep_a_run_alive() -> None:
    clock = StallClock(10.0, now=0.0)
    for second in range(0, 100, 5):  # one long task running: never a stall
        assert not clock.stalled(_progress(0, 1), float(second))
    clock = StallClock(10.0, now=0.0)
    for second in range(0, 100, 5):  # tasks finishing now and then, none running when looked
        assert not clock.stalled(_progress(second, 0), float(second))
    # then the worker is lost: the same counts, nothing running
    assert not clock.stalled(_progress(95, 0), 104.0)
    assert clock.stalled(_progress(95, 0), 106.0)


def test_the_driver_working_between_jobs_is_no_stall() -> None:
    clock = StallClock(10.0, now=0.0)
    assert not clock.stalled(_progress(0, 0, waiting=False), 50.0)  # no job: the driver works
    assert not clock.stalled(_progress(0, 0), 55.0)
    assert clock.stalled(_progress(0, 0), 61.0)


def test_no_timeout_never_stalls() -> None:
    clock = StallClock(None, now=0.0)
    assert not clock.stalled(_progress(0, 0), 1e9)
