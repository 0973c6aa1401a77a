"""No verdict of the quick suite (`uv run pytest`, the README's test command) depends on
the clock: a loaded machine makes every test slower, never wrong.

Two ways a test reads the clock are ruled out here, by reading the tests' source:
- hypothesis's deadline and its health checks (too_slow times the generation of the
  inputs): the shared profile (tests/support/hypothesis_profile.py) turns them off, and no
  test turns them on again (a test's @settings replaces the profile's values for the names
  it gives);
- `time.sleep`, `time.monotonic`, `time.time`, `time.perf_counter` called in a quick test
  or in a helper of a quick test module: a sleep used to wait for something, or a
  duration compared with a bound. The slow and Spark tests (run by .ci/run, one at a time)
  may wait on a process with a deadline; code inside a string (a child process's script)
  is the child's, not the test's.

CI runs the quick suite once more beside as many busy loops as there are cores (.ci/run).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parent
CLOCK = {"sleep", "monotonic", "monotonic_ns", "time", "time_ns", "perf_counter"}
CLOCK |= {"perf_counter_ns", "process_time"}
LEFT_OUT = ("slow", "spark")
TIMING_SETTINGS = {"deadline", "suppress_health_check"}


def _test_modules() -> list[Path]:
    return sorted(TESTS.rglob("*.py"))


def _marked(nodes: list[ast.expr]) -> bool:
    """A decorator list or a pytestmark value that names the slow or spark mark."""
    return any(f"mark.{mark}" in ast.unparse(node) for node in nodes for mark in LEFT_OUT)


def _module_marked(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            return _marked([node.value])
    return False


def _clock_names(tree: ast.Module) -> set[str]:
    """Names bound to the clock by `from time import ...` in the module."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "time"
        for alias in node.names
        if alias.name in CLOCK
    }


def clock_reads(source: str) -> list[str]:
    """Where the quick tests of one module's source read the clock: 'function:line call'."""
    tree = ast.parse(source)
    if _module_marked(tree):
        return []
    imported = _clock_names(tree)
    found = []
    for top in tree.body:
        if not isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if _marked(top.decorator_list):
            continue
        for node in ast.walk(top):
            if not isinstance(node, ast.Call):
                continue
            called = node.func
            reads = (
                isinstance(called, ast.Attribute)
                and called.attr in CLOCK
                and isinstance(called.value, ast.Name)
                and called.value.id == "time"
            ) or (isinstance(called, ast.Name) and called.id in imported)
            if reads:
                found.append(f"{top.name}:{node.lineno} {ast.unparse(node)}")
    return found


def timing_settings(source: str) -> list[str]:
    """Where a hypothesis `settings(...)` call sets a deadline or health checks."""
    return [
        f"line {node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and ast.unparse(node.func).split(".")[-1] == "settings"
        and any(keyword.arg in TIMING_SETTINGS for keyword in node.keywords)
    ]


def test_the_profile_has_no_deadline_and_no_health_check() -> None:
    assert settings.default.deadline is None
    assert set(settings.default.suppress_health_check) == set(HealthCheck)


@pytest.mark.parametrize("path", _test_modules(), ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_sets_hypothesis_timing_again(path: Path) -> None:
    found = timing_settings(path.read_text(encoding="utf-8"))
    assert not found, (
        f"{path.name} sets hypothesis's deadline or health checks: {found}; the profile in "
        "tests/support/hypothesis_profile.py turns them off for every test, leave them out"
    )


@pytest.mark.parametrize("path", _test_modules(), ids=lambda p: str(p.relative_to(TESTS)))
def test_no_quick_test_reads_the_clock(path: Path) -> None:
    found = clock_reads(path.read_text(encoding="utf-8"))
    assert not found, (
        f"quick tests of {path.name} read the clock: {found}; wait on an event, a file or a "
        "process instead of a sleep, or mark the test slow"
    )


def test_the_scans_find_what_they_look_for() -> None:
    """Each scan finds a planted case and passes over what it allows (a child's script, a
    slow test, a slow module, a settings call without timing names)."""
    planted = (
        "import time\nfrom time import sleep as nap\n"
        "def test_a():\n    started = time.monotonic()\n    nap(1)\n"
        "def helper():\n    time.sleep(0.1)\n"
        "@pytest.mark.slow\ndef test_b():\n    time.sleep(1)\n"
        "def test_c():\n    run('import time; time.sleep(1)')\n"
    )
    assert clock_reads(planted) == [
        "test_a:4 time.monotonic()",
        "test_a:5 nap(1)",
        "helper:7 time.sleep(0.1)",
    ]
    assert clock_reads("import pytest, time\npytestmark = pytest.mark.slow\n" + planted) == []
    assert timing_settings(
        "@settings(max_examples=5)\ndef a(): ...\n"
        "@hypothesis.settings(deadline=None)\ndef b(): ...\n"
        "S = settings(suppress_health_check=[HealthCheck.too_slow])\n"
    ) == [
        "line 3: hypothesis.settings(deadline=None)",
        "line 5: settings(suppress_health_check=[HealthCheck.too_slow])",
    ]


@pytest.mark.own_process
def test_a_test_in_a_process_of_its_own_runs_under_the_profile() -> None:
    """The tests marked own_process run in a child of a fork server that never imports
    conftest.py: the profile reaches them too (test_fuzz's ran with the 200 ms deadline)."""
    assert settings.default.deadline is None
    assert set(settings.default.suppress_health_check) == set(HealthCheck)
