"""What `receval` sets in its own environment before anything heavy loads (launch.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

DRIVER = """
import os, sys
import receval_cli.cli.app as app

app.receval_command = lambda: print(os.environ.get("OPENBLAS_THREAD_TIMEOUT"))
sys.argv = ["receval", "--version"]
from receval_cli.launch import main
main()
"""


def _seen(driver: str, name: str, given: str | None) -> str:
    """What `driver` prints (the variable `name` as the command saw it), run with the
    environment's `name` set to `given` (None: unset)."""
    environment = {k: v for k, v in os.environ.items() if k != name}
    if given is not None:
        environment[name] = given
    result = subprocess.run(
        [sys.executable, "-c", driver],
        env=environment,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize(("given", "seen"), [(None, "4"), ("12", "12")])
def test_openblas_threads_sleep_unless_the_user_says(given: str | None, seen: str) -> None:
    """numpy's OpenBLAS threads spin for 2^28 cycles after its import (0.1 s of a core per
    run) unless OPENBLAS_THREAD_TIMEOUT says less; a user's own value is kept."""
    assert _seen(DRIVER, "OPENBLAS_THREAD_TIMEOUT", given) == f"{seen}\n"


ARENAS = DRIVER.replace('"OPENBLAS_THREAD_TIMEOUT"', '"_RJEM_MALLOC_CONF"')


@pytest.mark.parametrize("given", [None, "narenas:3,dirty_decay_ms:0"])
def test_polars_gets_one_arena_per_core_unless_the_user_says(given: str | None) -> None:
    """polars' jemalloc gets one arena per core the process may run on (its default,
    four a core, each keeping the pages its threads freed, held a 10M-row run 100-200 MiB
    higher); a user's own _RJEM_MALLOC_CONF is kept."""
    assert ARENAS != DRIVER
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    seen = given or f"narenas:{cores}"
    assert _seen(ARENAS, "_RJEM_MALLOC_CONF", given) == f"{seen}\n"
