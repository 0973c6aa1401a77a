"""The tests are laid out like the code (docs/development.md, "Where tests go"): few test
modules at tests/' root, each test module's name unique and free of issue numbers, and no
test module importing another (what several share lives in tests/support/)."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent
AT_THE_ROOT = 15  # the checks of the whole checkout: architecture, docs, README, clock, ...


def modules_under(root: Path) -> list[Path]:
    return sorted(root.rglob("test_*.py"))


def root_modules(root: Path) -> list[str]:
    return sorted(path.name for path in root.glob("test_*.py"))


def repeated_names(root: Path) -> list[str]:
    """pytest imports each test module by its name: two of one name cannot both load."""
    counts = Counter(path.name for path in modules_under(root))
    return sorted(name for name, count in counts.items() if count > 1)


def numbered_names(root: Path) -> list[str]:
    """A name that ends in a number (test_signals_34.py) says when, not what."""
    return [
        str(path.relative_to(root)) for path in modules_under(root) if re.search(r"\d+$", path.stem)
    ]


def imports_of_test_modules(root: Path) -> list[str]:
    """'module: imported' for each test module that imports another test module."""
    found = []
    for path in modules_under(root):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            found += [
                f"{path.relative_to(root)}: {name}"
                for name in names
                if name.split(".")[-1].startswith("test_")
            ]
    return found


def test_few_test_modules_at_the_root() -> None:
    assert len(root_modules(TESTS)) <= AT_THE_ROOT, root_modules(TESTS)


def test_the_tests_sit_in_folders() -> None:
    folders = {path.parent for path in modules_under(TESTS)} - {TESTS}
    assert len(folders) >= 6, sorted(str(f.relative_to(TESTS)) for f in folders)


def test_no_test_module_name_twice() -> None:
    assert repeated_names(TESTS) == []


def test_no_test_module_named_by_a_number() -> None:
    assert numbered_names(TESTS) == []


def test_no_test_module_imports_another() -> None:
    assert imports_of_test_modules(TESTS) == [], "move what they share into tests/support/"


def missing_test_paths(package: Path) -> list[str]:
    """'file: path' for each tests/... path a module of the package names (a preset's
    "checked against", a docstring) that is not in the checkout."""
    found = []
    for path in sorted(package.rglob("*")):
        if path.suffix not in (".py", ".c") or "__pycache__" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        for named in re.findall(r"tests/[\w./*-]*[\w/*]", text):
            # a pattern (tests/peers/jurity/ctr_*.json) names the files it matches
            matches = package.parent.glob(named) if "*" in named else [package.parent / named]
            if not any(match.exists() for match in matches):
                found.append(f"{path.relative_to(package.parent)}: {named}")
    return found


def test_the_test_paths_the_package_names_exist() -> None:
    """The presets say which tests check them, docstrings name the test that compares two
    implementations: those paths follow the tests when they move."""
    assert missing_test_paths(TESTS.parent / "receval_cli") == []


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    (tmp_path / "metrics").mkdir()
    (tmp_path / "cli").mkdir()
    (tmp_path / "metrics" / "test_ndcg.py").write_text("import polars\n")
    (tmp_path / "cli" / "test_ndcg.py").write_text("from test_helpers import x\n")
    (tmp_path / "test_bounds_34.py").write_text("import test_ndcg\n")
    assert root_modules(tmp_path) == ["test_bounds_34.py"]
    assert repeated_names(tmp_path) == ["test_ndcg.py"]
    assert numbered_names(tmp_path) == ["test_bounds_34.py"]
    assert imports_of_test_modules(tmp_path) == [
        "cli/test_ndcg.py: test_helpers",
        "test_bounds_34.py: test_ndcg",
    ]
    package = tmp_path / "receval_cli"
    package.mkdir()
    (package / "presets.py").write_text(
        'checked = "golden files (tests/golden/ranx, tests/metrics/ctr_*.json)"\n'
    )
    (package / "core.c").write_text("/* tests/metrics/test_*.py compares them */\n")
    (tmp_path / "tests" / "metrics").mkdir(parents=True)
    (tmp_path / "tests" / "metrics" / "test_ndcg.py").write_text("")
    assert missing_test_paths(package) == [
        "receval_cli/presets.py: tests/golden/ranx",
        "receval_cli/presets.py: tests/metrics/ctr_*.json",  # a pattern matching nothing
    ]
