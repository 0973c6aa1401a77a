"""receval with its runtime dependencies alone (`pip install .`, no extra, no dev group):
the Python API and the commands work without matplotlib, pandas, pyarrow, scipy,
scikit-learn, duckdb or pyspark; what needs one of them says which to install.

The quick test runs the API in a fresh interpreter where importing any of those fails (an
import hook, as for a package that is not installed). The slow one builds the environment
as a user does (.ci/plain_install: a new virtual environment, `pip install .`) and runs
.ci/smoke_plain_install.py there: every command and every name of `import receval`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OPTIONAL = ("matplotlib", "pandas", "pyarrow", "scipy", "sklearn", "duckdb", "pyspark")

# refuses to import the packages named in argv[1], as where they are not installed
ABSENT = """
import importlib.abc, json, sys

optional = set(sys.argv[1].split(","))


class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in optional:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Absent())
"""
# the child: the API's every name a notebook uses
CHILD = """
import polars as pl
import receval

preds = pl.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "score": [0.9, 0.8, 0.7]})
worse = preds.with_columns(-pl.col("score"))
truth = pl.DataFrame({"user": [1, 2], "item": [11, 12]})
found = {}
report = receval.evaluate(preds, truth, metrics=["precision@2", "mrr"])
found["metrics"] = report.metrics
found["columns"] = report.to_polars().columns
found["report_html"] = report._repr_html_()
found["relstrings"] = receval.relstrings(preds, truth, length=2).rows()
run = receval.run(
    {
        "predictions": {"models": {"worse": worse, "model": preds}},
        "ground_truth": {"path": truth},
        "metrics": ["mrr"],
        "comparison": {"baseline": "worse"},
    }
)
found["run_models"] = sorted(run.models)
found["run_rows"] = run.to_polars().height
found["run_html"] = run._repr_html_()
try:
    report.to_pandas()
except ImportError as error:
    found["to_pandas"] = str(error)
found["loaded"] = sorted({m.partition(".")[0] for m in sys.modules} & optional)
print(json.dumps(found))
"""


def without(packages: tuple[str, ...], code: str, cwd: Path) -> str:
    """Run `code` in a fresh interpreter where `packages` cannot be imported; its stdout's
    last line."""
    result = subprocess.run(
        [sys.executable, "-c", ABSENT + code, ",".join(packages)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_the_api_runs_without_any_optional_package(tmp_path: Path) -> None:
    """evaluate, relstrings, run, to_polars and the notebook views (the tables, without
    figures, and a note saying how to get them), with every optional package refused;
    to_pandas() says what to install."""
    found = json.loads(without(OPTIONAL, CHILD, tmp_path))
    assert found["metrics"] == {"precision@2": 0.25, "mrr": 0.25}
    assert found["columns"][:2] == ["metric", "value"]
    assert "<table" in found["report_html"]
    assert "<svg" not in found["report_html"]
    assert found["relstrings"] == [[1, "-1"], [2, "-"]]
    assert found["run_models"] == ["model", "worse"]
    assert found["run_rows"] > 0
    assert "<table" in found["run_html"]
    assert "<svg" not in found["run_html"]
    assert "Figures left out" in found["run_html"]
    assert "html extra" in found["run_html"]
    assert "pip install pandas pyarrow" in found["to_pandas"]
    assert found["loaded"] == []


@pytest.mark.slow  # pandas' import in a fresh interpreter
def test_a_pandas_frame_that_needs_pyarrow_says_so(tmp_path: Path) -> None:
    """pandas without pyarrow: plain numpy columns (text as objects too) convert; a column
    of pandas' own types (here its string dtype) is an ImportError naming the argument and
    pyarrow, not polars' message."""
    pytest.importorskip("pandas")
    code = """
import pandas as pd, receval
truth = pd.DataFrame({"user": ["a"], "item": [11]})
preds = pd.DataFrame({"user": ["a", "a"], "item": [10, 11], "score": [0.9, 0.8]})
found = [receval.evaluate(preds, truth, metrics=["mrr"]).metrics]
try:
    receval.evaluate(preds.astype({"user": "string"}), truth, metrics=["mrr"])
except ImportError as error:
    found.append(str(error))
print(json.dumps(found))
"""
    plain, refused = json.loads(without(("pyarrow",), code, tmp_path))
    assert plain == {"mrr": 0.5}
    assert refused.startswith("predictions: the pandas frame has columns")
    assert "pip install pyarrow" in refused


def test_the_run_views_figures_are_drawn_where_matplotlib_is() -> None:
    """The control: with matplotlib, a run of several models shows its bars (SVG) in a
    notebook, and no note."""
    pytest.importorskip("matplotlib")
    import polars as pl

    import receval

    preds = pl.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "score": [0.9, 0.8, 0.7]})
    truth = pl.DataFrame({"user": [1, 2], "item": [11, 12]})
    models = {"a": preds, "b": preds.with_columns(-pl.col("score"))}
    config = {
        "predictions": {"models": models},
        "ground_truth": {"path": truth},
        "metrics": ["mrr"],
    }
    view = receval.run(config)._repr_html_()
    assert view is not None
    assert "<svg" in view
    assert "Figures left out" not in view


def test_ci_runs_the_smoke_matrix_in_both_plain_environments() -> None:
    """.ci/run runs the smoke matrix where a user's plain install is: a new virtual
    environment with `pip install .` (.ci/plain_install, which fails on an optional
    package found installed), and the environment the README's first command builds
    (`uv run --no-dev`: no extra, no dev group), both before any extra is installed."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    extras = ci.index("uv sync --frozen --extra spark")
    assert -1 < ci.index("\n.ci/plain_install") < extras
    assert -1 < ci.index("--no-dev python .ci/smoke_plain_install.py") < extras
    script = (ROOT / ".ci" / "plain_install").read_text(encoding="utf-8")
    assert 'pip" install --quiet --disable-pip-version-check "$what"\n' in script
    assert 'what="${1:-.}"' in script
    assert ".ci/smoke_plain_install.py" in script
