"""receval's wheel and sdist: .ci/run builds both (`uv build`), lists their files against
what they should hold (.ci/package_contents.py), installs the wheel with pip in a clean
virtual environment and runs the quick start and the smoke matrix from it, then a wheel
built with no C compiler through the GitHub Action's steps.

These tests check the listing's rules on made-up listings (the real ones are CI's) and
that .ci/run does each of those steps, in that order, before the extras are installed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_helpers import load_script

ROOT = Path(__file__).resolve().parents[1]
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
contents = load_script(ROOT / ".ci" / "package_contents.py", "package_contents")
PACKAGE = contents.package_files(ROOT)
COMPILED = [f"receval_cli/{name}.cpython-311-x86_64-linux-gnu.so" for name in contents.EXTENSIONS]
DIST_INFO = [f"receval-0.2.0.dist-info/{name}" for name in (*contents.DIST_INFO, "top_level.txt")]
SDIST = [
    *PACKAGE,
    "pyproject.toml",
    "README.md",
    "PKG-INFO",
    "setup.cfg",
    "receval.egg-info/SOURCES.txt",
]


def test_the_package_files_are_the_checkout_s() -> None:
    """Every module, both py.typed, the Spark engine's log settings, the C sources; no
    bytecode, no compiled extension built in place, nothing outside the packages."""
    assert "receval_cli/cli/run.py" in PACKAGE
    assert {"receval/__init__.py", "receval/py.typed", "receval_cli/py.typed"} <= PACKAGE
    assert "receval_cli/engines/spark_log4j2.properties" in PACKAGE
    assert {f"receval_cli/{name}.c" for name in contents.EXTENSIONS} <= PACKAGE
    assert not [name for name in PACKAGE if not name.startswith(("receval/", "receval_cli/"))]
    assert not [name for name in PACKAGE if name.endswith((".pyc", ".so")) or "__pycache__" in name]


def test_a_wheel_as_expected_passes() -> None:
    wheel = [*PACKAGE, *COMPILED, *DIST_INFO]
    assert contents.wheel_problems(wheel, PACKAGE, "compiled") == []
    assert contents.wheel_problems([*PACKAGE, *DIST_INFO], PACKAGE, "absent") == []
    assert contents.wheel_problems(wheel, PACKAGE, None) == []
    assert contents.sdist_problems(SDIST, PACKAGE) == []


ADDED = [
    "tests/test_docs.py",
    "receval_cli/__pycache__/api.cpython-311.pyc",
    "benchmarks/data/x.parquet",
    "sample_data/predictions.csv",
]
# a file the wheel lacks: how the problem names it
REMOVED = {
    "receval_cli/py.typed": "receval_cli/py.typed",
    "receval_cli/engines/spark_log4j2.properties": "receval_cli/engines/spark_log4j2.properties",
    COMPILED[2]: "receval_cli/_pages.*.so (compiled)",
    DIST_INFO[3]: "*.dist-info/entry_points.txt",
}


@pytest.mark.parametrize("name", ADDED)
def test_a_wheel_that_holds_too_much_is_named(name: str) -> None:
    wheel = [*PACKAGE, *COMPILED, *DIST_INFO, name]
    assert contents.wheel_problems(wheel, PACKAGE, "compiled") == [
        f"unexpected in the wheel: {name}"
    ]


@pytest.mark.parametrize("name", REMOVED)
def test_a_wheel_that_holds_too_little_is_named(name: str) -> None:
    wheel = [n for n in [*PACKAGE, *COMPILED, *DIST_INFO] if n != name]
    assert contents.wheel_problems(wheel, PACKAGE, "compiled") == [
        f"missing from the wheel: {REMOVED[name]}"
    ]


def test_the_compiled_extensions_where_none_should_be() -> None:
    found = contents.wheel_problems([*PACKAGE, *COMPILED[:1], *DIST_INFO], PACKAGE, "absent")
    assert found == ["compiled extension in the wheel: receval_cli/_kernel"]


@pytest.mark.parametrize("name", [*ADDED, COMPILED[0], "benchmarks/bench.py"])
def test_an_sdist_that_holds_too_much_is_named(name: str) -> None:
    assert contents.sdist_problems([*SDIST, name], PACKAGE) == [f"unexpected in the sdist: {name}"]


@pytest.mark.parametrize("name", ["receval_cli/_list_sums.c", "pyproject.toml", "README.md"])
def test_an_sdist_that_holds_too_little_is_named(name: str) -> None:
    sdist = [n for n in SDIST if n != name]
    assert contents.sdist_problems(sdist, PACKAGE) == [f"missing from the sdist: {name}"]


def test_ci_builds_checks_and_installs_the_wheel_before_the_extras() -> None:
    """uv build, the listing with the compiled core, the wheel through .ci/plain_install
    (pip in a new environment, the compiled core expected), then a wheel built with no
    compiler through the action's steps (the compiled core expected absent) and the two
    quick starts' metrics compared; all before any extra is installed."""
    steps = [
        'uv build --quiet --out-dir "$scratch/dist"',
        'package_contents.py "$scratch/dist" --core compiled',
        'RECEVAL_EXPECT_CORE=compiled .ci/plain_install "$scratch"/dist/receval-*.whl',
        'CC=false uv build --quiet --wheel --out-dir "$scratch/no-compiler" "$scratch"/dist/',
        "RECEVAL_EXPECT_CORE=absent .ci/action_from_wheel",
        "the same with and without the compiled core",
        "uv sync --frozen --extra spark",
    ]
    places = [CI.find(step) for step in steps]
    assert -1 not in places, [step for step, at in zip(steps, places, strict=True) if at < 0]
    assert places == sorted(places)


def test_the_install_scripts_run_the_quick_start_from_outside_the_checkout() -> None:
    """.ci/plain_install installs what it is given with pip (the checkout by default),
    checks the compiled core as asked, and runs the README's first quick-start command and
    the smoke matrix from a folder away from the checkout, whose receval_cli/ (with its
    extensions built in place) would otherwise be what a `python -c` imports."""
    script = (ROOT / ".ci" / "plain_install").read_text(encoding="utf-8")
    assert 'what="${1:-.}"' in script
    assert 'pip" install --quiet --disable-pip-version-check "$what"' in script
    assert re.search(r'cd "\$away" && PATH="\$venv/bin:\$PATH" bash -c "\$\{first#uv run', script)
    assert 'python" "$away/.ci/smoke_plain_install.py"' in script
    action = (ROOT / ".ci" / "action_from_wheel").read_text(encoding="utf-8")
    assert 'INPUT_PACKAGE="$1" "${PYTHON:-python3}" "$script" install' in action
    assert "INPUT_CONFIG=configs/quickstart.yaml" in action
