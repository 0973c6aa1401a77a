"""Start-up of the command line: `receval --version`, `--help`, a command's
`--help` and one TAB of shell completion, each as a fresh process, against a bare
`python -c pass` of the same interpreter measured in the same run.

    uv run python benchmarks/bench_startup.py [--repeat 15] [--target 0.15]

Prints the best and median wall time of each and its excess over `python -c pass` (best
against best), and exits 1 when an excess is above the target. The children run with
bytecode caching on (PYTHONDONTWRITEBYTECODE removed, one warm-up run each), as an
installed tool runs: pip and `uv tool install` compile the bytecode at install time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

COMPLETION = {"_RECEVAL_COMPLETE": "complete_bash", "COMP_WORDS": "receval ru", "COMP_CWORD": "1"}


def _receval() -> list[str]:
    script = shutil.which("receval", path=os.path.dirname(sys.executable))
    return [script] if script else [sys.executable, "-m", "receval_cli"]


def cases() -> dict[str, tuple[list[str], dict[str, str]]]:
    receval = _receval()
    return {
        "python -c pass": ([sys.executable, "-c", "pass"], {}),
        "receval --version": ([*receval, "--version"], {}),
        "receval --help": ([*receval, "--help"], {}),
        "receval run --help": ([*receval, "run", "--help"], {}),
        "completion (receval ru<TAB>)": (receval, COMPLETION),
    }


def timed(command: list[str], extra: dict[str, str], repeat: int) -> list[float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"COLUMNS": "100", **extra})
    subprocess.run(command, env=env, capture_output=True, check=False)  # warm-up: bytecode
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr!r}")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--target", type=float, default=0.15, help="seconds above pass")
    args = parser.parse_args()
    results = {name: timed(cmd, env, args.repeat) for name, (cmd, env) in cases().items()}
    floor = min(results["python -c pass"])
    missed = 0
    print(f"{'command':32s} {'best s':>7s} {'median s':>9s} {'above pass':>11s}  target")
    for name, times in results.items():
        best = min(times)
        line = f"{name:32s} {best:7.3f} {statistics.median(times):9.3f}"
        if name == "python -c pass":
            print(line)
            continue
        above = best - floor
        verdict = "PASS" if above <= args.target else "FAIL"
        missed += verdict == "FAIL"
        print(f"{line} {above:11.3f}  {verdict} (<= {args.target:.2f})")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
