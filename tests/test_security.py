"""Nothing a config or data file holds is executed, and paths are resolved and reported.

The source is scanned for the calls that could run text as code or load objects; the
config loader's refusal of Python tags is tested in tests/inputs/test_bad_input.py and the
robustness matrix.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import yaml
from cli_helpers import PREDICTIONS_CSV, TRUTH_CSV, invoke, write, write_config

PACKAGE = Path(__file__).resolve().parents[1] / "receval_cli"

# builtins that run text as code, and modules that load code or objects from data
_FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__"}
_FORBIDDEN_MODULES = {"pickle", "marshal", "shelve", "dill", "cloudpickle"}


def _sources() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(PACKAGE.rglob("*.py"))]


@pytest.mark.slow
def test_no_code_is_run_from_text() -> None:
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in _FORBIDDEN_CALLS
            ):
                found.append(f"{path.name}:{node.lineno} {node.func.id}()")
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                module = node.module if isinstance(node, ast.ImportFrom) else None
                for name in [*names, *([module] if module else [])]:
                    if name.split(".")[0] in _FORBIDDEN_MODULES:
                        found.append(f"{path.name}:{node.lineno} import {name}")
    assert found == []


@pytest.mark.slow
def test_yaml_is_only_read_with_the_safe_loader() -> None:
    """Every yaml.load-like call is safe_load / a SafeLoader subclass; no yaml.load(...)."""
    unsafe = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "yaml"
                and node.func.attr in {"load", "load_all", "unsafe_load", "full_load"}
            ):
                unsafe.append(f"{path.name}:{node.lineno} yaml.{node.func.attr}")
    assert unsafe == []
    from receval_cli.config.yaml_file import _StrictLoader

    assert issubclass(_StrictLoader, yaml.SafeLoader)


def test_paths_are_relative_to_the_config_and_reported_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config in configs/ naming ../data/*.csv reads those files whatever the working
    folder, and the report names the files it read."""
    data = tmp_path / "project" / "data"
    write(data / "p.csv", PREDICTIONS_CSV)
    write(data / "t.csv", TRUTH_CSV)
    config = write_config(
        tmp_path / "project" / "configs",
        {
            "predictions": {"path": "../data/p.csv"},
            "ground_truth": {"path": "../data/t.csv"},
            "metrics": ["precision@1"],
        },
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = invoke("run", config, "--format", "json")
    assert result.exit_code == 0, result.stderr
    inputs = json.loads(result.stdout)["models"]["model"]["inputs"]
    for role, name in (("predictions", "p.csv"), ("ground_truth", "t.csv")):
        reported = Path(inputs[role]["path"])
        assert reported.resolve() == (data / name).resolve()
    assert json.loads(result.stdout)["config"]["source"] == str(config)
