"""The HTML report's plotting library is optional (the `html` extra): without matplotlib,
every command that would write HTML stops before any work with exit 2, says how to install
it, and writes nothing; every other format runs without it.

matplotlib is hidden from the in-process CLI by `sys.modules["matplotlib"] = None`, which
makes `importlib.util.find_spec` (and any import) see it as absent.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from cli_helpers import assert_user_error, hand_case, invoke

from receval_cli.formats import Format, HistoryFormat

ROOT = Path(__file__).resolve().parents[2]
INSTALL_WORDS = ("matplotlib", "uv sync --extra html", "pip install '.[html]'")


@pytest.fixture
def no_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def test_matplotlib_is_an_extra_not_a_core_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not any(d.startswith("matplotlib") for d in project["dependencies"])
    assert any(d.startswith("matplotlib") for d in project["optional-dependencies"]["html"])


@pytest.mark.parametrize("where", ["file", "stdout"])
def test_an_html_report_without_matplotlib_stops_before_the_run(
    tmp_path: Path, no_matplotlib: None, where: str
) -> None:
    config = hand_case(tmp_path)
    target = tmp_path / "report.html"
    args = ["-o", target] if where == "file" else ["--format", "html"]
    result = invoke("run", config, *args)
    stderr = assert_user_error(result, "HTML report", *INSTALL_WORDS)
    assert (str(target) if where == "file" else "standard output") in stderr
    assert not target.exists()
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["config.yaml", "predictions.csv", "truth.csv"]


def test_every_other_format_runs_without_matplotlib(tmp_path: Path, no_matplotlib: None) -> None:
    config = hand_case(tmp_path)
    for fmt in [f.value for f in Format if f != Format.html]:
        result = invoke("run", config, "--format", fmt)
        assert result.exit_code == 0, (fmt, result.stdout, result.stderr)
        assert result.stdout.strip(), fmt
    assert "matplotlib" not in sys.modules or sys.modules["matplotlib"] is None


def test_history_html_without_matplotlib_stops(tmp_path: Path, no_matplotlib: None) -> None:
    config = hand_case(tmp_path)
    store = tmp_path / "store"
    ran = invoke("run", config, "--history", store, "--format", "json")
    assert ran.exit_code == 0, ran.stderr
    page = tmp_path / "trends.html"
    assert_user_error(invoke("history", store, "-o", page), "HTML history page", *INSTALL_WORDS)
    assert not page.exists()
    for fmt in [f.value for f in HistoryFormat if f != HistoryFormat.html]:
        result = invoke("history", store, "--format", fmt)
        assert result.exit_code == 0, (fmt, result.stdout, result.stderr)
