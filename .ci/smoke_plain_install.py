"""Smoke-test receval as a plain install has it: runtime dependencies only, no extra.

Run it with the Python of an environment made as a user makes one (`.ci/plain_install`:
`python3 -m venv X && X/bin/pip install .`): it runs every command of the `receval` entry
point beside that Python on the bundled configs and sample data, and every public name of
`import receval`, checking exit codes and the output's shape. Whatever needs an extra
(`--format html`: the html extra, `to_pandas()`: pandas) must either work, where the
library happens to be installed, or stop with exit 2 / an ImportError that names what to
install. Standard library and receval only: no pytest, no dev group. Outputs go to a
temporary folder. Exit 0 when every check passes; else 1 and the list of failures.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
DATA = ROOT / "sample_data"
BIN = Path(sys.executable).parent
RECEVAL = str(BIN / "receval") if (BIN / "receval").exists() else shutil.which("receval")
OPTIONAL = ("matplotlib", "pandas", "pyarrow", "pyspark", "mlflow")
EXTRA = {name: importlib.util.find_spec(name) is not None for name in OPTIONAL}

failures: list[str] = []
passed = 0


def check(name: str, test: Callable[[], object]) -> None:
    """Run one check; record its failure (an AssertionError's message, or a traceback)."""
    global passed
    try:
        test()
    except AssertionError as failed:
        failures.append(f"{name}: {failed}")
        print(f"FAIL {name}: {failed}", flush=True)
    except Exception:
        failures.append(f"{name}: {traceback.format_exc().strip()}")
        print(f"FAIL {name}:\n{traceback.format_exc()}", flush=True)
    else:
        passed += 1
        print(f"ok   {name}", flush=True)


def receval(*args: object, code: int = 0, cwd: Path | None = None) -> str:
    """Run the entry point; assert its exit code and that stderr holds no traceback; give
    its stdout."""
    assert RECEVAL is not None, f"no receval entry point beside {sys.executable}"
    result = subprocess.run(
        [RECEVAL, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "160"},
    )
    said = f"\n  stdout: {result.stdout[-1500:]!s}\n  stderr: {result.stderr[-1500:]!s}"
    assert result.returncode == code, f"exit {result.returncode}, expected {code}{said}"
    assert "Traceback" not in result.stderr, f"a traceback{said}"
    if code == 2:
        assert result.stderr.strip(), f"exit 2 without a message{said}"
    return result.stdout if code != 2 else result.stderr


def json_of(text: str) -> object:
    return json.loads(text)


def has(word: str, text: str) -> None:
    assert word in text, f"{word!r} not in the output: {text[:300]!r}"


def cli_checks(out: Path) -> None:
    quick = CONFIGS / "quickstart.yaml"
    check("--version", lambda: has("receval ", receval("--version")))
    check("--help", lambda: has("Usage", receval("--help")))
    for command in ("run", "convert", "compare", "metrics", "init", "schema", "validate"):
        check(f"{command} --help", lambda c=command: has(f"receval {c}", receval(c, "--help")))
    for command in ("inspect", "history"):
        check(f"{command} --help", lambda c=command: has(f"receval {c}", receval(c, "--help")))
    check("a command misspelt: exit 2", lambda: receval("rnu", code=2))

    # run: every bundled config, as JSON
    for config in sorted(CONFIGS.glob("*.yaml")):

        def run_config(config: Path = config) -> None:
            target = out / f"{config.stem}.json"
            receval("run", config, "--format", "json", "--output", target, "--quiet")
            report = json_of(target.read_text(encoding="utf-8"))
            assert isinstance(report, dict), report
            assert report.get("models"), "no models in the report"

        check(f"run configs/{config.name} --format json", run_config)

    # run: every format but html, on standard output
    expect = {
        "table": "ndcg@10",
        "json": '"models"',
        "markdown": "| `ndcg@10` |",
        "csv": "ndcg@10",
        "junit": "<testsuite",
        "github": "",
        "latex": "\\begin{table",
    }
    for fmt, word in expect.items():
        check(
            f"run quickstart --format {fmt}",
            lambda f=fmt, w=word: has(w, receval("run", quick, "--format", f)),
        )

    def per_user() -> None:
        for suffix in ("csv", "parquet", "jsonl"):
            target = out / f"per_user.{suffix}"
            receval("run", quick, "--quiet", "--per-user", target)
            assert target.stat().st_size > 0, f"{target} is empty"

    check("run --per-user (csv, parquet, jsonl)", per_user)
    check(
        "run --ci --engine streaming",
        lambda: receval("run", quick, "--ci", "--engine", "streaming", "-q"),
    )
    check("run --preset trec_eval", lambda: receval("run", quick, "--preset", "trec_eval", "-q"))
    check(
        "run --set, --label, --tag",
        lambda: receval(
            "run", quick, "-q", "--set", "cutoffs=[5, 10]", "--label", "x", "--tag", "a=b"
        ),
    )
    check(
        "run --baseline-report",
        lambda: receval("run", quick, "-q", "--baseline-report", out / "quickstart.json"),
    )
    check(
        "run with a failing gate: exit 1",
        lambda: receval("run", quick, "-q", "--set", "gates={ndcg@10: {min: 0.99}}", code=1),
    )
    check("run a missing config: exit 2", lambda: receval("run", out / "missing.yaml", code=2))
    if not EXTRA["pyspark"]:  # with it, engine: spark would start Spark
        check(
            "run --engine spark (the spark extra): exit 2",
            lambda: has("spark", receval("run", quick, "--engine", "spark", code=2)),
        )

    def html(*args: object, page: str) -> None:
        target = out / f"{page}.html"
        if EXTRA["matplotlib"]:
            receval(*args, "--output", target)
            has("<!DOCTYPE html>", target.read_text(encoding="utf-8"))
        else:
            said = receval(*args, "--output", target, code=2)
            for word in ("html extra", "pip install", "matplotlib"):
                has(word, said)
            assert not target.exists(), f"{target} was written"

    check("run --format html (the html extra)", lambda: html("run", quick, "-q", page="report"))
    if not EXTRA["mlflow"]:  # with it, the run would be logged

        def tracking() -> None:
            target = out / "tracked.json"
            args = ("run", quick, "-q", "-o", target, "--mlflow-uri", "sqlite:///mlflow.db")
            said = receval(*args, code=2)
            for word in ("mlflow extra", "pip install", "--mlflow-uri"):
                has(word, said)
            assert not target.exists(), f"{target} was written"

        check("run --mlflow-uri (the mlflow extra): exit 2 before any output", tracking)

    # history
    store = out / "store"

    def history() -> None:
        for label in ("one", "two"):
            receval("run", quick, "-q", "--history", store, "--label", label)
        has("ndcg@10", receval("history", store))
        for fmt in ("json", "markdown", "csv"):
            has("ndcg@10", receval("history", store, "--format", fmt))
        receval("history", store, "--prune", "--keep", "1")

    check("history (table, json, markdown, csv, --prune)", history)
    check("history --format html (the html extra)", lambda: html("history", store, page="trends"))

    # compare: saved reports, then with per-user values and a paired test
    def compare_reports() -> None:
        a, b = out / "quickstart.json", out / "beyond.json"
        has("ndcg@10", receval("compare", a, b, "--allow-different-conventions"))
        for fmt in ("json", "markdown", "csv"):
            has(
                "ndcg@10",
                receval("compare", a, b, "--format", fmt, "--allow-different-conventions"),
            )
        target = out / "comparison.json"
        receval("compare", a, b, "-o", target, "-q", "--allow-different-conventions")
        json_of(target.read_text(encoding="utf-8"))

    check("compare (table, json, markdown, csv)", compare_reports)

    def compare_paired() -> None:
        a, b = out / "paired_a.json", out / "paired_b.json"
        popular = DATA / "popular_predictions.csv"
        receval("run", quick, "-q", "--with-per-user", "-o", a)
        path = f"predictions.path={popular}"  # the popular baseline fails the gates: exit 1
        receval("run", quick, "-q", "--with-per-user", "-o", b, "--set", path, code=1)
        has("ndcg@10", receval("compare", a, b, "--test", "t", "--format", "json"))

    check("run --with-per-user, compare --test t", compare_paired)

    # validate, inspect
    for config in ("quickstart", "compare", "beyond"):
        path = CONFIGS / f"{config}.yaml"
        check(f"validate configs/{config}.yaml", lambda p=path: receval("validate", p))
        check(
            f"validate configs/{config}.yaml --format json",
            lambda p=path: json_of(receval("validate", p, "--format", "json")),
        )
    check("inspect quickstart", lambda: has("u0", receval("inspect", quick)))
    check(
        "inspect beyond --users 2 --k 5",
        lambda: receval("inspect", CONFIGS / "beyond.yaml", "--users", "2", "--k", "5"),
    )
    check("inspect --format json", lambda: json_of(receval("inspect", quick, "--format", "json")))

    # metrics
    check("metrics", lambda: has("ndcg", receval("metrics")))
    check("metrics ndcg", lambda: has("ndcg", receval("metrics", "ndcg")))
    check("metrics --format json", lambda: json_of(receval("metrics", "--format", "json")))
    check(
        "metrics --format markdown", lambda: has("| ", receval("metrics", "--format", "markdown"))
    )

    # init, schema
    def init() -> None:
        config = out / "receval.yaml"
        files = ("-p", DATA / "predictions.csv", "-g", DATA / "ground_truth.parquet")
        receval("init", *files, "-o", config, "-q")
        has("predictions", config.read_text(encoding="utf-8"))
        receval("validate", config)
        receval("init", "-o", out / "template.yaml")
        has("predictions", (out / "template.yaml").read_text(encoding="utf-8"))
        has("predictions", receval("init", *files, "-o", "-", "-q"))

    check("init (guessed, template, stdout) and validate it", init)

    def schema() -> None:
        assert isinstance(json_of(receval("schema")), dict)
        receval("schema", "-o", out / "schema.json")
        json_of((out / "schema.json").read_text(encoding="utf-8"))

    check("schema", schema)

    # convert
    def convert() -> None:
        run = out / "model.run"
        ids = ("--user", "user_id", "--item", "item_id")
        receval("convert", DATA / "predictions.csv", *ids, "--output", run)
        assert run.read_text(encoding="utf-8").split("\n")[0].split()[1] == "Q0", "not a run"
        lists = out / "lists.run"
        receval(
            "convert",
            DATA / "predictions_lists.jsonl",
            "--user",
            "user_id",
            "--items",
            "items",
            "--output",
            lists,
        )
        assert lists.stat().st_size > 0
        qrels = out / "truth.qrels"
        truth = DATA / "ground_truth.parquet"
        receval("convert", truth, "--qrels", *ids, "--relevance", "rating", "--output", qrels)
        assert len(qrels.read_text(encoding="utf-8").split("\n")[0].split()) == 4, "not qrels"

    check("convert (a run from long and list layouts, qrels from Parquet)", convert)

    def completion() -> None:
        env = {"_RECEVAL_COMPLETE": "complete_bash", "COMP_WORDS": "receval ru", "COMP_CWORD": "1"}
        assert RECEVAL is not None
        result = subprocess.run(
            [RECEVAL],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={**os.environ, **env},
        )
        assert result.stdout.split() == ["run"], result

    check("shell completion", completion)


def _fail(message: str) -> None:
    raise AssertionError(message)


def api_checks(out: Path) -> None:
    import polars as pl

    import receval

    preds = pl.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "score": [0.9, 0.8, 0.7]})
    truth = pl.DataFrame({"user": [1, 2], "item": [11, 12]})

    check("receval.__version__", lambda: receval.__version__ or _fail("empty"))

    def evaluate() -> None:
        report = receval.evaluate(preds, truth, metrics=["precision@2", "mrr"])
        assert report.metrics == {"precision@2": 0.25, "mrr": 0.25}, report.metrics
        assert "precision@2" in repr(report)
        table = report.to_polars()
        assert table.columns[:2] == ["metric", "value"], table
        assert table.height == 2, table
        html = report._repr_html_()
        assert html is not None, "no HTML view"
        has("<table", html)
        assert report.to_dict()["metrics"] == report.metrics

    check("receval.evaluate (frames): metrics, repr, to_polars, _repr_html_, to_dict", evaluate)

    def evaluate_files() -> None:
        report = receval.evaluate(
            DATA / "predictions.csv",
            DATA / "ground_truth.parquet",
            metrics=["ndcg", "precision"],
            cutoffs=[5, 10],
            conventions={"relevance_threshold": 4},
            prediction_columns={"user": "user_id", "item": "item_id", "score": "score"},
            truth_columns={"user": "user_id", "item": "item_id", "relevance": "rating"},
        )
        assert round(report.metrics["ndcg@5"], 4) == 0.5526, report.metrics
        assert report.to_polars().height == 4

    check("receval.evaluate (the sample files)", evaluate_files)

    def to_pandas() -> None:
        report = receval.evaluate(preds, truth, metrics=["mrr"])
        if EXTRA["pandas"] and EXTRA["pyarrow"]:
            assert len(report.to_pandas()) == 1
            return
        try:
            report.to_pandas()
        except ImportError as error:
            has("pip install pandas pyarrow", str(error))
        else:
            raise AssertionError("to_pandas() without pandas raised nothing")

    check("Report.to_pandas (pandas and pyarrow, else an ImportError naming them)", to_pandas)

    def relstrings() -> None:
        table = receval.relstrings(preds, truth, length=3)
        assert table.columns == ["user", "relstring"], table
        assert sorted(table["relstring"].to_list()) == ["-", "-1"], table

    check("receval.relstrings", relstrings)

    def run() -> None:
        result = receval.run(str(CONFIGS / "compare.yaml"))
        assert isinstance(result, receval.RunReport)
        assert set(result.models) == {"popular", "model"}, result.models
        assert result.to_polars().height > 0
        html = result._repr_html_()
        assert html is not None, "no HTML view"
        has("<table", html)
        if not EXTRA["matplotlib"]:  # the tables, and a note saying how to get the figures
            assert "<svg" not in html, "a figure without matplotlib"
            has("html extra", html)
        assert result.to_dict()["models"]
        mapped = receval.run(
            {"predictions": {"path": preds}, "ground_truth": {"path": truth}, "metrics": ["mrr"]}
        )
        assert mapped.models["model"].metrics == {"mrr": 0.25}, mapped.models

    check("receval.run (a config file, a mapping with frames): _repr_html_, to_polars", run)

    def compare() -> None:
        a, b = out / "api_a.json", out / "api_b.json"
        for path, frame in ((a, preds), (b, preds.with_columns(pl.col("score") * -1))):
            report = receval.run(
                {
                    "predictions": {"path": frame},
                    "ground_truth": {"path": truth},
                    "metrics": ["mrr"],
                }
            )
            path.write_text(json.dumps(report.to_dict()), encoding="utf-8")
        comparison = receval.compare(a, b)
        assert isinstance(comparison, receval.ReportComparison)
        assert comparison.to_polars().height == 2, comparison.to_polars()  # a row per column
        assert "<table" in comparison._repr_html_()
        assert comparison.to_dict()

    check("receval.compare: to_polars, _repr_html_, to_dict", compare)

    def errors() -> None:
        assert issubclass(receval.InputError, receval.RecEvalError)
        assert issubclass(receval.ConfigError, receval.RecEvalError)
        assert issubclass(receval.UsageError, receval.RecEvalError)
        for call, error in (
            (
                lambda: receval.evaluate(out / "missing.csv", truth, metrics=["mrr"]),
                receval.InputError,
            ),
            (lambda: receval.run(str(out / "missing.yaml")), receval.ConfigError),
            (lambda: receval.run({"predictions": {"path": preds}}), receval.ConfigError),
            (lambda: receval.evaluate(preds, truth, metrics=["nope"]), receval.RecEvalError),
            (lambda: receval.relstrings(preds, truth, length=0), receval.UsageError),
            (lambda: receval.evaluate(preds, truth, metric=["mrr"]), TypeError),
        ):
            try:
                call()
            except error:
                pass
            else:
                raise AssertionError(f"no {error.__name__}")

    check("the errors: InputError, ConfigError, UsageError, RecEvalError, TypeError", errors)


def main() -> int:
    print(f"receval: {RECEVAL}; Python: {sys.executable}")
    extras = ", ".join(
        f"{name} {'present' if there else 'absent'}" for name, there in EXTRA.items()
    )
    print(f"optional libraries: {extras}")
    with tempfile.TemporaryDirectory(prefix="receval-smoke-") as folder:
        out = Path(folder)
        cli_checks(out)
        os.chdir(out)  # the API reads relative paths from here; nothing lands in the clone
        api_checks(out)
    print(f"\n{passed} checks passed, {len(failures)} failed")
    if failures:
        print("failures:")
        for failure in failures:
            print(f"- {failure}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
