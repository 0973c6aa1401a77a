"""The package's shape: its layers in order, no import cycle, no private name imported
from another module, and one name per concept (no module name in two packages outside
cli/, no public function or class defined twice).

Imports are read from the source (every `import` and `from ... import`, at module level or
inside a function: a lazy import is still a dependency). The layer order and the cycle
check count the imports in TYPE_CHECKING blocks too (a type is a dependency).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
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


def read_imports(
    root: Path, type_checking: bool = False
) -> dict[str, list[tuple[str, str | None]]]:
    """Per module of the package: (module imported, name imported from it or None); with
    `type_checking`, the imports in TYPE_CHECKING blocks too."""
    found: dict[str, list[tuple[str, str | None]]] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = set() if type_checking else _type_checking_nodes(tree)
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
    """Not even through an import under TYPE_CHECKING (two modules that need each
    other's types are one concept split in two, or share a third module)."""
    assert cycles(dependency_graph(read_imports(PACKAGE, type_checking=True))) == []


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
    with_types = dependency_graph(read_imports(root, type_checking=True))
    assert cycles(with_types) == [["fake.a", "fake.c", "fake.sub.b"]]


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
    a loaded config, aligns ids or resolves segments."""
    imports = read_imports(PACKAGE)
    found = {
        module: sorted({name for _, name in names if name in PLANNING})
        for module, names in imports.items()
        if module not in PLANNING_ALLOWED
    }
    assert {module: names for module, names in found.items() if names} == {}


# The layers, bottom to top: a module imports only modules of its own package (or
# top-level module) and of the layers below; the units of one layer import none of each
# other. docs/architecture.md writes the same order (checked below).
LAYERS = (
    ("exit_codes",),
    (
        "errors",
        "wording",
        "escaping",
        "version",
        "choices",
        "formats",
        "streams",
        "signals",
        "compiled",
    ),
    ("console",),
    ("results",),
    ("metrics",),
    ("config",),
    ("inputs",),
    ("evaluation",),
    ("report",),
    ("engines",),
    ("history",),
    ("analysis",),
    ("supervisor",),
    ("api", "cli"),
    ("launch",),
    ("__init__", "__main__"),
)


def unit(module: str) -> str:
    """The package (or top-level module) a module belongs to: `receval_cli.report.html` ->
    report, `receval_cli.errors` -> errors, `receval_cli` -> __init__."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def unit_graph(imports: dict[str, list[tuple[str, str | None]]]) -> dict[str, set[str]]:
    """Package (or top-level module) -> the others it imports."""
    graph: dict[str, set[str]] = {unit(name): set() for name in imports}
    for name, others in dependency_graph(imports).items():
        graph[unit(name)].update(unit(other) for other in others if unit(other) != unit(name))
    return graph


def upward_imports(
    imports: dict[str, list[tuple[str, str | None]]], layers: tuple[tuple[str, ...], ...]
) -> list[str]:
    """Each import of a module of a higher layer, or of another unit of the same layer."""
    level = {name: index for index, layer in enumerate(layers) for name in layer}
    return [
        f"{name} ({unit(name)}) imports {other} ({unit(other)})"
        for name, others in dependency_graph(imports).items()
        for other in sorted(others)
        if unit(other) != unit(name) and level[unit(other)] >= level[unit(name)]
    ]


def mutual_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The pairs of packages (or top-level modules) that import each other."""
    return sorted((a, b) for a in graph for b in graph[a] if a < b and a in graph[b])


def documented_layers() -> tuple[tuple[str, ...], ...]:
    """The order docs/architecture.md writes: one line in backquotes, the layers bottom to
    top separated by " < ", the units of a layer by ", "."""
    section = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    lines = [line for line in section.splitlines() if line.startswith("`") and " < " in line]
    assert len(lines) == 1, lines
    return tuple(tuple(layer.split(", ")) for layer in lines[0].strip("`").split(" < "))


def test_the_docs_write_the_layer_order() -> None:
    assert documented_layers() == LAYERS


def test_every_package_has_a_layer() -> None:
    """A new package or top-level module is placed in LAYERS (and in docs/architecture.md)."""
    placed = {name for layer in LAYERS for name in layer}
    found = set(unit_graph(read_imports(PACKAGE)))
    assert found - placed == set()
    assert placed - found == set()


def test_no_module_imports_a_layer_above_its_own() -> None:
    """TYPE_CHECKING imports included."""
    assert upward_imports(read_imports(PACKAGE, type_checking=True), LAYERS) == []


def test_no_two_packages_import_each_other() -> None:
    """TYPE_CHECKING imports included."""
    assert mutual_imports(unit_graph(read_imports(PACKAGE, type_checking=True))) == []


def test_no_relative_import() -> None:
    """The checks read absolute imports only; the package writes no other."""
    relative = [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.level > 0
    ]
    assert relative == []


def test_the_layer_checks_find_what_they_look_for(tmp_path: Path) -> None:
    """Negative controls: an upward import under TYPE_CHECKING and a lazy one, two
    packages importing each other, two units of one layer."""
    root = tmp_path / "fake"
    for package in ("low", "high"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "leaf.py").write_text("")
    (root / "other.py").write_text("from fake import leaf\n")
    (root / "low" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from fake.high import b\n"
    )
    (root / "low" / "c.py").write_text("def f():\n    from fake.high.b import g\n")
    (root / "high" / "b.py").write_text("from fake.low import a\n\ndef g():\n    pass\n")
    layers = (("leaf", "other"), ("low",), ("high",), ("__init__",))
    assert upward_imports(read_imports(root, type_checking=True), layers) == [
        "fake.low.a (low) imports fake.high.b (high)",
        "fake.low.c (low) imports fake.high.b (high)",
        "fake.other (other) imports fake.leaf (leaf)",
    ]
    assert upward_imports(read_imports(root), layers) == [
        "fake.low.c (low) imports fake.high.b (high)",
        "fake.other (other) imports fake.leaf (leaf)",
    ]
    assert mutual_imports(unit_graph(read_imports(root, type_checking=True))) == [("high", "low")]


# A module longer than this says why in its docstring's first paragraph
MAX_LINES = 400
LONG_REASON = "Over 400 lines:"


def long_modules(root: Path) -> list[str]:
    """The modules over MAX_LINES lines whose docstring's first paragraph has no line
    starting with LONG_REASON."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= MAX_LINES:
            continue
        docstring = ast.get_docstring(ast.parse(text)) or ""
        first = docstring.split("\n\n", 1)[0]
        if not any(line.startswith(LONG_REASON) for line in first.splitlines()):
            found.append(f"{module_name(path, root)} ({text.count(chr(10))} lines)")
    return found


def test_no_long_module_without_a_reason() -> None:
    """One job per module: a module over 400 lines is split, or its docstring's first
    paragraph says why not, on a line of its own starting "Over 400 lines:"."""
    assert long_modules(PACKAGE) == []


def test_the_length_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    """Negative controls: a long module without a reason, one with the reason outside its
    first paragraph, one with it; a short one needs none."""
    root = tmp_path / "fake"
    root.mkdir()
    body = "x = 1\n" * MAX_LINES
    (root / "__init__.py").write_text("")
    (root / "short.py").write_text('"""Short."""\n')
    (root / "bare.py").write_text('"""Long."""\n' + body)
    (root / "late.py").write_text(f'"""Long.\n\n{LONG_REASON} too late."""\n' + body)
    (root / "said.py").write_text(f'"""Long.\n{LONG_REASON} one table."""\n' + body)
    assert long_modules(root) == [
        f"fake.bare ({MAX_LINES + 1} lines)",
        f"fake.late ({MAX_LINES + 3} lines)",
    ]


# An issue number ("#35", "(#38 item 2)", "issue 50"): the repository holds no tracker to
# resolve it, so the code says what the thing is instead. Hex colours ("#1f77b4",
# "#999999", CSS's "color: #444") and numbered names ("a#2") are not issue numbers.
ISSUE_NUMBER = re.compile(r"(?<![\w&:])(?<!: )#\d{1,4}(?!\w)|\bissues? #?\d+\b", re.IGNORECASE)
# the package's sources (Python and C) and the project file, whose comments explain the build
ISSUE_SCANNED = ("*.py", "*.c", "*.h", "*.pyi")


def issue_numbers(root: Path, extra: tuple[Path, ...] = ()) -> list[str]:
    """Each line of the package's sources and of `extra` that cites an issue number, as
    "path:line: text" relative to root's parent."""
    paths = sorted({p for pattern in ISSUE_SCANNED for p in root.rglob(pattern)})
    found = []
    for path in [*paths, *extra]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if ISSUE_NUMBER.search(line):
                where = path.relative_to(root.parent).as_posix()
                found.append(f"{where}:{number}: {line.strip()}")
    return found


def test_no_issue_number_in_the_package() -> None:
    """No issue number in the package's Python and C sources (code, comments, docstrings,
    messages) nor in pyproject.toml: say what the thing is instead."""
    assert issue_numbers(PACKAGE, (PACKAGE.parent / "pyproject.toml",)) == []


def test_the_issue_number_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    """Negative controls: an issue number in a docstring, in a C comment, in a message and
    in the project file's comment are found; hex colours and numbered names are not."""
    root = tmp_path / "fake"
    root.mkdir()
    (root / "a.py").write_text('"""The core (#35 item 5)."""\nCOLOUR = "#1f77b4"\n')
    (root / "b.c").write_text('/* the kernel (#35) */\nstatic const char *grey = "#999999";\n')
    (root / "c.py").write_text('NAME = "a#2"\nraise ValueError("see issue 50")\n')
    (root / "d.py").write_text('CSS = "p { color: #444; background:#555; }"\n')
    project = tmp_path / "pyproject.toml"
    project.write_text("# the sums (#38): optional\n[project]\n")
    assert issue_numbers(root, (project,)) == [
        'fake/a.py:1: """The core (#35 item 5)."""',
        "fake/b.c:1: /* the kernel (#35) */",
        'fake/c.py:2: raise ValueError("see issue 50")',
        "pyproject.toml:1: # the sums (#38): optional",
    ]


def repeated_module_names(root: Path) -> list[str]:
    """A module name that two packages hold (cli/ aside: its modules are the commands,
    named as the command line names them): one name, two concepts."""
    paths = [p for p in root.rglob("*.py") if "cli" not in p.relative_to(root).parts[:-1]]
    counts = Counter(p.name for p in paths if not p.name.startswith("__"))
    return sorted(
        str(p.relative_to(root)) for p in paths if counts[p.name] > 1 and p.name != "__init__.py"
    )


def repeated_public_names(root: Path) -> list[str]:
    """'name: module, module' for each public function or class that two modules define."""
    where: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            defines = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            if defines and not node.name.startswith("_"):
                where.setdefault(node.name, []).append(module_name(path, root))
    return [
        f"{name}: {', '.join(found)}" for name, found in sorted(where.items()) if len(found) > 1
    ]


def test_no_module_name_twice_outside_cli() -> None:
    assert repeated_module_names(PACKAGE) == []


def test_no_public_name_defined_twice() -> None:
    assert repeated_public_names(PACKAGE) == []


def test_the_name_checks_find_what_they_look_for(tmp_path: Path) -> None:
    root = tmp_path / "fake"
    for folder in ("metrics", "evaluation", "cli"):
        (root / folder).mkdir(parents=True)
    (root / "metrics" / "rating.py").write_text("def power():\n    pass\n")
    (root / "evaluation" / "rating.py").write_text("class Power:\n    pass\n")
    (root / "evaluation" / "stats.py").write_text("def power():\n    pass\ndef _own():\n    pass\n")
    (root / "cli" / "stats.py").write_text("def _own():\n    pass\n")  # cli/ may repeat a name
    assert repeated_module_names(root) == ["evaluation/rating.py", "metrics/rating.py"]
    assert repeated_public_names(root) == ["power: fake.evaluation.stats, fake.metrics.rating"]
