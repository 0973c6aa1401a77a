"""Every exit code receval ends with, and what it means: the one table of them.

errors.py's exceptions, the watching process (supervisor.py), the signal handlers
(signals.py) and the command line (cli/app.py) read their codes here, and the table of
exit codes in docs/reports.md is `EXIT_CODES`, rendered by cli/doc_blocks.py. No import:
the watching process reads this module before anything else loads.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3  # receval computed something impossible, or failed unexpectedly: a bug
EXIT_OUT_OF_MEMORY = 4
EXIT_SIGHUP = 129  # 128 + the signal's number, as a shell reports a process it stopped
EXIT_SIGINT = 130
EXIT_SIGKILL = 137
# standard output's reader went away (`receval metrics | head -1`): 128 + SIGPIPE, the
# status of a process that SIGPIPE ends (`git log | head`), and no message
EXIT_STDOUT_CLOSED = 141
EXIT_SIGTERM = 143
STOPPED = frozenset({EXIT_SIGINT, EXIT_SIGTERM, EXIT_SIGHUP})  # a stop by a signal (signals.py)

# (code, meaning), in the order of the codes
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "every gate passed or was waived (or there are none)"),
    (EXIT_GATE_FAILED, "a gate failed; the table (or stderr) says which, the value and the margin"),
    (
        EXIT_BAD_INPUT,
        "bad usage, config or input; one `error:` paragraph on stderr, no traceback, no "
        "output file; or an MLflow store (`tracking.mlflow`, `--mlflow-uri`) that could not "
        "take the finished run: then every output is written whole first, and the line "
        "says the report was written (docs/tracking.md)",
    ),
    (
        EXIT_INTERNAL,
        "internal error: receval computed an impossible value (a metric outside its range, "
        "NaN), polars failed inside, or any other exception receval did not expect: one "
        "`error: internal error: ...` line, no traceback (a bug; please report it)",
    ),
    (
        EXIT_OUT_OF_MEMORY,
        "out of memory: polars could not allocate (Rust's allocation failure and abort), "
        "the kernel's out-of-memory killer ended the run (counted in the cgroup), or "
        "Python's own `MemoryError`; one `error: receval ran out of memory while STAGE ...` "
        "line naming the stage and what to set (`partitions: N`, `engine: streaming`, or "
        "the `ulimit -v` to raise), no backtrace, no output file",
    ),
    (
        EXIT_SIGHUP,
        "stopped by SIGHUP (the terminal closed, a job runner's stop); the same, "
        "`interrupted by SIGHUP: ...`",
    ),
    (
        EXIT_SIGINT,
        "stopped by SIGINT (Ctrl-C, `kill -INT`); one `interrupted by SIGINT: ...` line on "
        "stderr, no partial output file",
    ),
    (
        EXIT_SIGKILL,
        "killed by SIGKILL with no sign of lack of memory (`kill -9`); one `error:` line saying so",
    ),
    (
        EXIT_STDOUT_CLOSED,
        "standard output's reader went away (`receval ... | head -1`): nothing more is "
        "written, no message (any output file is complete)",
    ),
    (
        EXIT_SIGTERM,
        "stopped by SIGTERM (`kill`, a CI job cancelled); the same, `interrupted by SIGTERM: ...`",
    ),
)
