"""The package's shape: no import cycle, and no private name imported from another module.

Imports are read from the source (every `import` and `from ... import`, at module level or
inside a function, TYPE_CHECKING blocks left out: a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "receval_cli"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes inside `if TYPE_CHECKING:` blocks."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def read_imports(root: Path) -> dict[str, list[tuple[str, str | None]]]:
    """Per module of the package: (module imported, name imported from it or None)."""
    found: dict[str, list[tuple[str, str | None]]] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_nodes(tree)
        imports: list[tuple[str, str | None]] = []
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imports += [(node.module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                imports += [(alias.name, None) for alias in node.names]
        found[module_name(path, root)] = imports
    return found


def dependency_graph(imports: dict[str, list[tuple[str, str | None]]]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (`from pkg import submodule` counts as
    the submodule)."""
    graph: dict[str, set[str]] = {name: set() for name in imports}
    for name, found in imports.items():
        for module, imported in found:
            submodule = f"{module}.{imported}"
            if imported is not None and submodule in imports:
                graph[name].add(submodule)
            elif module in imports:
                graph[name].add(module)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def private_imports(imports: dict[str, list[tuple[str, str | None]]]) -> list[str]:
    """Names starting with one underscore imported from another module of the package."""
    return [
        f"{name} imports {imported} from {module}"
        for name, found in imports.items()
        for module, imported in found
        if module in imports
        and module != name
        and imported is not None
        and imported.startswith("_")
        and not imported.startswith("__")
    ]


def test_no_import_cycle() -> None:
    assert cycles(dependency_graph(read_imports(PACKAGE))) == []


def test_no_private_name_crosses_a_module_boundary() -> None:
    assert private_imports(read_imports(PACKAGE)) == []


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    """Negative controls: a cycle through a lazy import, and a private import."""
    root = tmp_path / "fake"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "a.py").write_text("from fake.sub import b\nfrom fake.c import _hidden\n")
    (root / "sub" / "b.py").write_text("def f():\n    from fake import a\n")
    (root / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from fake import a\n"
    )
    imports = read_imports(root)
    assert cycles(dependency_graph(imports)) == [["fake.a", "fake.sub.b"]]
    assert private_imports(imports) == ["fake.a imports _hidden from fake.c"]


# what reads a model's inputs from a loaded config, aligns ids or resolves segments
PLANNING = {"read_predictions", "read_ground_truth", "align_ids", "read_sources", "segment_keys"}
# the planner; the modules that define those; the callers that have no loaded config
# (the Python API's frames and paths, `convert`'s one file, the one-bucket assembly the
# API calls)
PLANNING_ALLOWED = {
    "receval_cli.engines.run_plan",
    "receval_cli.inputs.readers",
    "receval_cli.inputs.optional",
    "receval_cli.inputs.segments",
    "receval_cli.api",
    "receval_cli.cli.convert",
    "receval_cli.evaluation.assembly",
}


def test_one_planner_reads_a_runs_inputs() -> None:
    """No module but the run planner (engines/run_plan.py) reads a model's inputs from
    a loaded config, aligns ids or resolves segments (issue #33)."""
    imports = read_imports(PACKAGE)
    found = {
        module: sorted({name for _, name in names if name in PLANNING})
        for module, names in imports.items()
        if module not in PLANNING_ALLOWED
    }
    assert {module: names for module, names in found.items() if names} == {}
