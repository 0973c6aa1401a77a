"""What the watching process costs (receval_cli/supervisor.py): `receval run` as a user runs
it, against the same run in one process (RECEVAL_UNSUPERVISED=1), alternating, best and
median of N whole processes each.

    uv run python benchmarks/bench_supervisor.py CONFIG [--repeat 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def timed(config: Path, unsupervised: bool) -> float:
    env = dict(os.environ)
    env.pop("RECEVAL_UNSUPERVISED", None)
    if unsupervised:
        env["RECEVAL_UNSUPERVISED"] = "1"
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "receval_cli", "run", str(config), "-q"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--repeat", type=int, default=8)
    args = parser.parse_args()
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.repeat):
        for unsupervised in (False, True):
            times[unsupervised].append(timed(args.config, unsupervised))
    for unsupervised, label in ((True, "one process"), (False, "watched (default)")):
        runs = times[unsupervised]
        print(f"{label:18} best {min(runs):.3f} s  median {statistics.median(runs):.3f} s")
    extra = min(times[False]) - min(times[True])
    print(f"the watching process: {extra:+.3f} s on the best run")


if __name__ == "__main__":
    main()
