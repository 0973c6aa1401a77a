"""Outputs follow the shell's and CI's conventions, checked as a user meets them: the
CLI runs as a subprocess (`python -m receval_cli`) with stdout and stderr pipes, not a
terminal, and each test checks the bytes written, the exit code and stderr.

- `-o -` is standard output for run, compare, convert, init and schema;
- an output's format comes from its extension, an unknown one is refused unless --format;
- --per-user writes Parquet, CSV, TSV or JSON Lines by its extension;
- no output may replace an input (every kind, every spelling) or another output;
- --append adds to the text formats; the github format prints workflow annotations;
- off a terminal no name or value is cut; --help shows no `<bool>`; -V is --version;
- -q drops the table and progress but never warnings or failed gates; --verbose lines
  carry an ISO time and a level; --log-format json writes one object a line.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from cli_helpers import NDCG_2, PRECISION_1, PREDICTIONS_CSV, TRUTH_CSV, run_process, write

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it

ROOT = Path(__file__).parents[2]


def refused(done: subprocess.CompletedProcess[bytes], *words: str) -> str:
    """Exit 2, nothing on stdout, one `error:` paragraph with every word, no traceback."""
    stderr = done.stderr.decode()
    assert done.returncode == 2, (done.returncode, done.stdout, stderr)
    assert done.stdout == b""
    assert stderr.startswith("error: "), stderr
    assert "Traceback" not in stderr
    missing = [w for w in words if w not in stderr]
    assert not missing, f"message lacks {missing}: {stderr!r}"
    return stderr


def files_in(folder: Path) -> dict[str, bytes]:
    """Every file under folder (hidden temporaries included) and its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


CATALOG_CSV = "item,genre\na,x\nb,y\nd,y\nf,y\n"  # c and e (recommended) are unknown
INTERACTIONS_CSV = "user,item\nu1,a\nu2,b\nu3,a\n"
BASELINE_CSV = "user,item,score\nu1,a,1\nu2,a,1\n"
SEGMENTS_CSV = "user,country\nu1,DE\nu2,FR\n"


@pytest.fixture
def case(tmp_path: Path) -> Path:
    """The hand case of cli_helpers (precision@1 0.5, ndcg@2 0.62204) with every kind of
    input: a catalog, an interactions log, a baseline and a segments file. The catalog
    lacks two recommended items, so `unknown_items.warn: 0` makes a warning."""
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    write(tmp_path / "truth.csv", TRUTH_CSV)
    write(tmp_path / "catalog.csv", CATALOG_CSV)
    write(tmp_path / "log.csv", INTERACTIONS_CSV)
    write(tmp_path / "baseline.csv", BASELINE_CSV)
    write(tmp_path / "segments.csv", SEGMENTS_CSV)
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "catalog": {"path": "catalog.csv", "columns": {"category": "genre"}},
        "interactions": {"path": "log.csv"},
        "baseline": {"path": "baseline.csv"},
        "segments": {"path": "segments.csv"},
        "segment_by": ["country"],
        "metrics": ["precision@1", "ndcg@2", "serendipity@2"],
        "gates": {"precision@1": {"min": 0.4}},
    }
    write(tmp_path / "config.yaml", yaml.safe_dump(config, sort_keys=False))
    return tmp_path


def json_report(case: Path, *extra: str) -> dict[str, Any]:
    done = run_process("run", "config.yaml", "--format", "json", *extra, cwd=case)
    assert done.returncode == 0, done.stderr.decode()
    report: dict[str, Any] = json.loads(done.stdout)
    return report


# ----------------------------------------------------------------------- -o - is stdout


def test_run_dash_output_is_stdout(case: Path) -> None:
    before = files_in(case)
    done = run_process("run", "config.yaml", "--format", "json", "-o", "-", cwd=case)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert math.isclose(
        report["models"]["model"]["metrics"]["precision@1"], PRECISION_1, abs_tol=1e-15
    )
    assert math.isclose(report["models"]["model"]["metrics"]["ndcg@2"], NDCG_2, abs_tol=1e-15)
    assert done.stderr == b""
    assert files_in(case) == before  # no file named `-`, nothing else written


def test_run_dash_beside_a_file(case: Path) -> None:
    """`-o - -o report.md`: standard output in --format, the file in its extension's."""
    done = run_process("run", "config.yaml", "-o", "-", "-o", "report.md", "-f", "csv", cwd=case)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().startswith("model,metric,value,")
    assert (case / "report.md").read_text().startswith("## receval")
    assert not (case / "-").exists()


def test_run_dash_takes_the_table(case: Path) -> None:
    done = run_process("run", "config.yaml", "-o", "-", "-q", cwd=case)
    assert done.returncode == 0
    assert "precision@1" in done.stdout.decode()  # an explicit -o - is written even with -q
    assert not (case / "-").exists()


def test_compare_dash_output_is_stdout(case: Path) -> None:
    for name in ("a", "b"):
        done = run_process("run", "config.yaml", "-o", f"{name}.json", "-q", cwd=case)
        assert done.returncode == 0, done.stderr
    done = run_process("compare", "a.json", "b.json", "-o", "-", "--format", "csv", cwd=case)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0].startswith("column,metric,value")
    assert any(",precision@1," in line for line in lines)
    assert not (case / "-").exists()


def test_convert_dash_output_is_stdout(case: Path) -> None:
    done = run_process("convert", "predictions.csv", "-o", "-", "--score", "score", cwd=case)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines() == [
        "u1 Q0 a 1 0.9 receval",
        "u1 Q0 b 2 0.8 receval",
        "u1 Q0 c 3 0.7 receval",
        "u2 Q0 d 1 0.9 receval",
        "u2 Q0 e 2 0.5 receval",
    ]
    assert "to standard output" in done.stderr.decode()
    assert not (case / "-").exists()


def test_init_and_schema_dash_output_is_stdout(case: Path) -> None:
    done = run_process("init", "-p", "predictions.csv", "-g", "truth.csv", "-o", "-", cwd=case)
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(done.stdout)["predictions"]["path"] == "predictions.csv"
    done = run_process("schema", "-o", "-", cwd=case)
    assert done.returncode == 0
    assert json.loads(done.stdout)["type"] == "object"
    assert not (case / "-").exists()


# ------------------------------------------------------------------- formats by extension


@pytest.mark.parametrize("name", ["report.yaml", "report", "out/report.json.bak"])
def test_unknown_output_extension_is_refused(case: Path, name: str) -> None:
    (case / "out").mkdir()
    before = files_in(case)
    message = refused(run_process("run", "config.yaml", "-o", name, cwd=case), name, "--format")
    for known in (".json", ".md", ".csv", ".xml", ".txt", ".html"):
        assert known in message
    assert files_in(case) == before


def test_unknown_extension_with_format(case: Path) -> None:
    done = run_process("run", "config.yaml", "-o", "report.yaml", "--format", "json", cwd=case)
    assert done.returncode == 0, done.stderr
    assert (
        json.loads((case / "report.yaml").read_text())["models"]["model"]["metrics"]["precision@1"]
        == 0.5
    )


def test_extension_contradicting_format_is_refused(case: Path) -> None:
    refused(
        run_process("run", "config.yaml", "-o", "r.json", "-f", "markdown", cwd=case),
        "r.json",
        "json",
        "markdown",
    )
    assert not (case / "r.json").exists()


def test_compare_refuses_a_format_it_cannot_write(case: Path) -> None:
    done = run_process("run", "config.yaml", "-o", "a.json", "-q", cwd=case)
    assert done.returncode == 0
    refused(run_process("compare", "a.json", "a.json", "-o", "c.html", cwd=case), "c.html", ".md")


@pytest.mark.parametrize("extension", [".parquet", ".csv", ".tsv", ".jsonl"])
def test_per_user_honours_its_extension(case: Path, extension: str) -> None:
    target = case / f"users{extension}"
    done = run_process("run", "config.yaml", "--per-user", target.name, "-q", cwd=case)
    assert done.returncode == 0, done.stderr
    data = target.read_bytes()
    if extension == ".parquet":
        assert data[:4] == b"PAR1"
        frame = pl.read_parquet(target)
    elif extension == ".jsonl":
        lines = data.decode().splitlines()
        assert len(lines) == 2
        assert all(isinstance(json.loads(line), dict) for line in lines)
        frame = pl.read_ndjson(target)
    else:
        separator = "\t" if extension == ".tsv" else ","
        header = data.decode().splitlines()[0]
        assert header.split(separator)[:3] == ["model", "user", "status"]
        frame = pl.read_csv(target, separator=separator)
    by_user = {row["user"]: row for row in frame.iter_rows(named=True)}
    assert by_user["u1"]["precision@1"] == 0.0
    assert by_user["u2"]["precision@1"] == 1.0
    assert math.isclose(by_user["u2"]["ndcg@2"], 1 / (1 + 1 / math.log2(3)), rel_tol=1e-15)


def test_per_user_unknown_extension_is_refused(case: Path) -> None:
    message = refused(run_process("run", "config.yaml", "--per-user", "u.xlsx", cwd=case), "u.xlsx")
    for known in (".parquet", ".csv", ".tsv", ".jsonl"):
        assert known in message
    refused(run_process("run", "config.yaml", "--per-user", "-", cwd=case), "--per-user")


# ------------------------------------------------------------ never an output over an input

INPUTS = {
    "predictions.csv": "predictions file",
    "truth.csv": "ground truth file",
    "catalog.csv": "catalog file",
    "log.csv": "interactions file",
    "baseline.csv": "baseline file",
    "segments.csv": "segments file",
    "config.yaml": "config file",
}


@pytest.mark.parametrize("option", ["-o", "--per-user"])
@pytest.mark.parametrize("name", list(INPUTS))
def test_an_output_over_an_input_is_refused(case: Path, name: str, option: str) -> None:
    """Every input kind, through -o (with --format, so the extension is no excuse) and
    --per-user, spelt as a relative path with `./`."""
    before = files_in(case)
    extra = ["--format", "json"] if option == "-o" else []
    target = f"./{name}"
    done = run_process("run", "config.yaml", option, target, *extra, cwd=case)
    refused(done, "would overwrite an input", INPUTS[name])
    assert files_in(case) == before  # nothing written, no temporary file left


def test_a_symlink_or_hard_link_to_an_input_is_refused(case: Path) -> None:
    (case / "link.csv").symlink_to(case / "truth.csv")
    os.link(case / "predictions.csv", case / "hard.csv")
    before = files_in(case)
    refused(run_process("run", "config.yaml", "-o", "link.csv", cwd=case), "ground truth file")
    refused(run_process("run", "config.yaml", "-o", "hard.csv", cwd=case), "predictions file")
    assert files_in(case) == before


def test_an_output_in_an_input_folder_or_glob_is_refused(case: Path) -> None:
    parts = case / "parts"
    parts.mkdir()
    (case / "predictions.csv").rename(parts / "p1.csv")
    config = yaml.safe_load((case / "config.yaml").read_text())
    config["predictions"]["path"] = "parts/*.csv"
    write(case / "glob.yaml", yaml.safe_dump(config))
    refused(run_process("run", "glob.yaml", "-o", "parts/new.csv", cwd=case), "parts/*.csv")
    assert sorted(p.name for p in parts.iterdir()) == ["p1.csv"]


def test_an_output_over_the_baseline_report_is_refused(case: Path) -> None:
    assert run_process("run", "config.yaml", "-o", "saved.json", "-q", cwd=case).returncode == 0
    before = files_in(case)
    done = run_process(
        "run", "config.yaml", "--baseline-report", "saved.json", "-o", "saved.json", cwd=case
    )
    refused(done, "--baseline-report file")
    assert files_in(case) == before


def test_two_outputs_on_one_file_are_refused(case: Path) -> None:
    before = files_in(case)
    done = run_process("run", "config.yaml", "-o", "r.csv", "--per-user", "./r.csv", cwd=case)
    refused(done, "r.csv", "same file")
    assert files_in(case) == before


def test_other_commands_refuse_an_output_over_an_input(case: Path) -> None:
    before = files_in(case)
    refused(
        run_process("convert", "predictions.csv", "-o", "predictions.csv", cwd=case),
        "would overwrite an input",
    )
    done = run_process(
        "init", "-p", "predictions.csv", "-g", "truth.csv", "-o", "truth.csv", "--force", cwd=case
    )
    refused(done, "would overwrite an input", "--ground-truth")
    assert run_process("run", "config.yaml", "-o", "a.json", "-q", cwd=case).returncode == 0
    refused(
        run_process("compare", "a.json", "a.json", "-o", "a.json", "-f", "json", cwd=case),
        "saved report",
    )
    after = files_in(case)
    del after["a.json"]
    assert after == before


# ------------------------------------------------------------------ --append and github


def test_append_keeps_earlier_content(case: Path) -> None:
    """As a GitHub step summary: an earlier step's text stays, each run adds its report."""
    summary = write(case / "summary.md", "# Earlier step\n\nits text\n")
    for _ in range(2):
        done = run_process("run", "config.yaml", "-o", "summary.md", "--append", "-q", cwd=case)
        assert done.returncode == 0, done.stderr
    text = summary.read_text()
    assert text.startswith("# Earlier step\n\nits text\n## receval\n")
    assert text.count("## receval") == 2
    assert text.count("| `precision@1` | 0.5000 |") == 2


def test_append_csv_writes_one_header(case: Path) -> None:
    for _ in range(3):
        done = run_process("run", "config.yaml", "-o", "m.csv", "--append", "-q", cwd=case)
        assert done.returncode == 0, done.stderr
    lines = (case / "m.csv").read_text().splitlines()
    assert sum(line.startswith("model,metric") for line in lines) == 1
    assert sum(line.startswith("model,precision@1,") for line in lines) == 3


def test_append_refuses_whole_documents(case: Path) -> None:
    write(case / "r.json", "{}")
    refused(run_process("run", "config.yaml", "-o", "r.json", "--append", cwd=case), "json")
    assert (case / "r.json").read_text() == "{}"
    refused(run_process("run", "config.yaml", "--append", cwd=case), "--output")


def test_github_step_summary_recipe(case: Path) -> None:
    """docs/comparing-and-gates.md's recipe: the summary file has no extension (--format
    names it), the earlier step's content stays, and report.json beside it is written
    whole."""
    summary = write(case / "step_summary_1f2e", "earlier step\n")
    write(case / "report.json", "an earlier report")
    args = ["-f", "markdown", "-o", summary.name, "--append", "-o", "report.json"]
    done = run_process("run", "config.yaml", *args, cwd=case)
    assert done.returncode == 0, done.stderr
    assert summary.read_text().startswith("earlier step\n## receval\n")
    assert (
        json.loads((case / "report.json").read_text())["models"]["model"]["metrics"]["precision@1"]
        == 0.5
    )


def test_github_annotations(case: Path) -> None:
    """A failed gate is an error annotation (exit 1), a warning a warning annotation; a
    newline or % inside a message is escaped, so one annotation stays one line."""
    config = yaml.safe_load((case / "config.yaml").read_text())
    config["gates"] = {"precision@1": {"min": 0.9}, "ndcg@2": {"min": 0.1}}
    config["unknown_items"] = {"warn": 0.0}  # every run warns about unknown items
    write(case / "gated.yaml", yaml.safe_dump(config))
    done = run_process("run", "gated.yaml", "--format", "github", cwd=case)
    assert done.returncode == 1
    lines = done.stdout.decode().splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 1
    assert re.fullmatch(r"::error title=receval gate failed%3A precision@1 >= 0\.9::.+", errors[0])
    assert "precision@1 = 0.5" in errors[0]
    warnings = [line for line in lines if line.startswith("::warning ")]
    assert warnings
    assert all(line.startswith("::warning title=receval::") for line in warnings)
    assert "%0A" not in "".join(warnings) or "\n" not in "".join(warnings)
    assert lines[-1] == "receval: 3 metrics, 1 of 2 gates failed, 1 warnings"


def test_github_annotations_beside_a_json_report(case: Path) -> None:
    """docs/comparing-and-gates.md's recipe: `-f github -o - -o report.json` prints the
    annotations and writes the JSON (its extension's format); github has no extension of
    its own."""
    done = run_process(
        "run", "config.yaml", "-f", "github", "-o", "-", "-o", "report.json", cwd=case
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines()[-1].startswith("receval: 3 metrics, 1 gate passed")
    assert (
        json.loads((case / "report.json").read_text())["models"]["model"]["metrics"]["precision@1"]
        == 0.5
    )
    done = run_process("run", "config.yaml", "-f", "github", "-o", "annotations", cwd=case)
    assert done.returncode == 0, done.stderr
    assert (case / "annotations").read_text().startswith("receval: 3 metrics")


def test_standard_output_named_twice_is_refused(case: Path) -> None:
    refused(run_process("run", "config.yaml", "-o", "-", "-o", "-", cwd=case), "more than once")


def test_a_table_to_a_fifo_is_refused(case: Path) -> None:
    """The per-user Parquet, CSV, TSV or JSONL file is built in a temporary file and
    renamed; a FIFO cannot take that, so it is refused (and stays a FIFO)."""
    import stat

    os.mkfifo(case / "users.parquet")
    done = run_process("run", "config.yaml", "--per-user", "users.parquet", "-q", cwd=case)
    refused(done, "users.parquet", "regular file")
    assert stat.S_ISFIFO((case / "users.parquet").lstat().st_mode)


def test_github_escapes_newlines_and_percent() -> None:
    from receval_cli.escaping import github_data, github_property

    assert github_data("a%b\r\nc") == "a%25b%0D%0Ac"
    assert github_property("t: x, y") == "t%3A x%2C y"


# -------------------------------------------------------------- nothing cut off a terminal


def test_no_cell_is_cut_off_a_terminal(case: Path) -> None:
    """A long metric name in a narrow pipe: the table widens, nothing ends in `…`."""
    config = yaml.safe_load((case / "config.yaml").read_text())
    config["metrics"] = ["precision@1", "ndcg@2(gain=exponential)", "map@2(denominator=hits)"]
    write(case / "long.yaml", yaml.safe_dump(config))
    for command in (["run", "long.yaml"], ["metrics"], ["metrics", "ndcg"], ["metrics", "gini"]):
        done = run_process(*command, cwd=case, env={"COLUMNS": "30"})
        assert done.returncode == 0, done.stderr
        text = done.stdout.decode()
        assert "…" not in text, command
    assert "ndcg@2(gain=exponential)" in run_process("run", "long.yaml", cwd=case).stdout.decode()
    done = run_process("run", "long.yaml", "-o", "t.txt", "-q", cwd=case, env={"COLUMNS": "30"})
    assert done.returncode == 0
    assert "map@2(denominator=hits)" in (case / "t.txt").read_text()
    assert "…" not in (case / "t.txt").read_text()


def test_help_shows_flags_without_a_type_and_dash_v_is_version(case: Path) -> None:
    for command in ([], ["run"], ["compare"], ["convert"], ["init"], ["validate"], ["metrics"]):
        done = run_process(*command, "--help", cwd=case, env={"COLUMNS": "120"})
        assert done.returncode == 0
        text = done.stdout.decode()
        assert "<bool>" not in text, command
        assert "<list" not in text, command
    run_help = run_process("run", "--help", cwd=case, env={"COLUMNS": "120"}).stdout.decode()
    assert re.search(r"--quiet\s+-q\s+No progress", run_help)
    assert re.search(r"--output\s+-o\s+PATH", run_help)
    short = run_process("-V", cwd=case)
    assert short.returncode == 0
    assert short.stdout == run_process("--version", cwd=case).stdout == b"receval 0.2.0\n"


# ------------------------------------------------------------------- quiet is not silent


def test_quiet_keeps_warnings_and_failed_gates(case: Path) -> None:
    config = yaml.safe_load((case / "config.yaml").read_text())
    config["gates"] = {"precision@1": {"min": 0.9}}
    config["unknown_items"] = {"warn": 0.0}
    write(case / "warned.yaml", yaml.safe_dump(config))
    done = run_process("run", "warned.yaml", "-q", cwd=case)
    assert done.returncode == 1
    assert done.stdout == b""  # no table
    stderr = done.stderr.decode().splitlines()
    assert any(line.startswith("warning: ") and "unknown" in line for line in stderr)
    assert any(line.startswith("gate failed: precision@1 = 0.5") for line in stderr)


def test_quiet_run_that_passes_prints_nothing(case: Path) -> None:
    done = run_process("run", "config.yaml", "-q", cwd=case)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d"


def test_verbose_lines_carry_an_iso_time_and_a_level(case: Path) -> None:
    done = run_process("run", "config.yaml", "-o", "r.json", "-q", "--verbose", cwd=case)
    assert done.returncode == 0
    lines = done.stderr.decode().splitlines()
    assert lines
    for line in lines:
        assert re.fullmatch(ISO + r" INFO \S.*", line), line
    assert any(line.endswith("wrote r.json") for line in lines)


def test_log_format_json(case: Path) -> None:
    """One JSON object a line, for log collectors: info lines, warnings and errors."""
    config = yaml.safe_load((case / "config.yaml").read_text())
    config["unknown_items"] = {"warn": 0.0}
    write(case / "warned.yaml", yaml.safe_dump(config))
    done = run_process("run", "warned.yaml", "-q", "-v", "--log-format", "json", cwd=case)
    assert done.returncode == 0
    records = [json.loads(line) for line in done.stderr.decode().splitlines()]
    assert {r["level"] for r in records} == {"info", "warning"}
    for record in records:
        assert re.fullmatch(ISO, record["time"])
        assert record["message"]
    bad = run_process("--log-format", "json", "run", "missing.yaml", cwd=case)
    assert bad.returncode == 2
    (record,) = [json.loads(line) for line in bad.stderr.decode().splitlines()]
    assert record["level"] == "error"
    assert "missing.yaml" in record["message"]


# ------------------------------------------------------- links, devices, FIFOs and modes


def test_a_symlinked_output_replaces_its_target_and_stays_a_link(case: Path) -> None:
    reports = case / "reports"
    reports.mkdir()
    target = write(reports / "latest.json", "an earlier report")
    (case / "report.json").symlink_to(target)
    done = run_process("run", "config.yaml", "-o", "report.json", "-q", cwd=case)
    assert done.returncode == 0, done.stderr
    assert (case / "report.json").is_symlink()
    assert json.loads(target.read_text())["models"]["model"]["metrics"]["precision@1"] == 0.5
    assert sorted(p.name for p in reports.iterdir()) == ["latest.json"]  # no temporary left


def test_an_existing_report_keeps_its_mode(case: Path) -> None:
    report = write(case / "report.json", "{}")
    report.chmod(0o600)
    assert run_process("run", "config.yaml", "-o", "report.json", "-q", cwd=case).returncode == 0
    assert report.stat().st_mode & 0o777 == 0o600
    assert json.loads(report.read_text())["models"]["model"]["metrics"]["ndcg@2"] == pytest.approx(
        NDCG_2
    )


def test_a_fifo_is_written_through(case: Path) -> None:
    import stat
    import threading

    fifo = case / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    done = run_process("run", "config.yaml", "-o", "pipe", "-f", "json", "-q", cwd=case)
    reader.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(received[0])["models"]["model"]["metrics"]["precision@1"] == 0.5
    assert stat.S_ISFIFO(fifo.lstat().st_mode)  # still a FIFO, not a regular file


@pytest.mark.skipif(os.geteuid() != 0, reason="making device nodes needs root")
def test_character_devices_are_written_through_never_replaced(case: Path) -> None:
    """Device nodes made in the test's own folder (never the real /dev): a null device
    takes the report and stays a device; a full device is exit 2 naming the error."""
    import stat

    null, full = case / "null", case / "full"
    try:
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except PermissionError:
        pytest.skip("this container does not allow device nodes")
    done = run_process("run", "config.yaml", "-o", "null", "-f", "json", cwd=case)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(null.lstat().st_mode)
    refused(
        run_process("run", "config.yaml", "-o", "full", "-f", "json", cwd=case), "full", "space"
    )
    assert stat.S_ISCHR(full.lstat().st_mode)
