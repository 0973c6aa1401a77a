"""The README and docs/ are checked against the code: their tables, their config and their
examples, and every `uv run receval` command they show runs."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from cli_helpers import run_json

from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import load_config
from receval_cli.metrics import REGISTRY

ROOT = Path(__file__).parent.parent
# every page a reader is sent to: the README and docs/*.md, by their path from the root
PAGES = {
    path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
}


def page(name: str) -> str:
    """A page of docs/, by its file name."""
    return PAGES[f"docs/{name}"]


# the generated or checked blocks, each in the page that holds it
BLOCK_PAGES = {
    "metrics-table": "metrics.md",
    "conventions-table": "conventions.md",
    "config-keys": "configuration.md",
}


def block(name: str) -> list[str]:
    text = page(BLOCK_PAGES[name])
    match = re.search(f"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
    assert match, f"docs/{BLOCK_PAGES[name]} has no {name} block"
    return [line for line in match.group(1).splitlines() if line.startswith("| `")]


def code_blocks(language: str, text: str) -> list[str]:
    return re.findall(f"```{language}\n(.*?)```", text, re.S)


def test_metric_table_lists_every_registered_metric_with_its_formula() -> None:
    rows = block("metrics-table")
    assert len(rows) == len(REGISTRY)
    for row, definition in zip(rows, REGISTRY.values(), strict=True):
        name = definition.name + ("@k" if definition.takes_cutoff else "")
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert cells[0] == f"`{name}`"
        assert cells[1].replace("\\|", "|") == definition.formula
        for param in definition.params:
            fixed = "required" if param.required else "optional"
            if param.default is not None:
                fixed = f"default {param.default}"
            source = param.convention or fixed
            assert f"`{param.name}` ({source})" in cells[2]


def test_conventions_table_matches_the_model() -> None:
    rows = block("conventions-table")
    fields = Conventions.model_fields
    assert [r.split("`")[1] for r in rows] == list(fields)
    defaults = Conventions()
    for row, (name, field) in zip(rows, fields.items(), strict=True):
        assert f"| `{getattr(defaults, name)}` |" in row
        assert field.description is not None
        assert field.description in row


def test_config_example_is_valid(tmp_path: Path) -> None:
    example = next(b for b in code_blocks("yaml", page("configuration.md")) if "predictions:" in b)
    path = tmp_path / "config.yaml"
    path.write_text(example, encoding="utf-8")
    loaded = load_config(path)
    assert [str(s) for s in loaded.specs] == [
        "ndcg@5",
        "ndcg@10",
        "ndcg@20",
        "precision@3",
        "map",
        "r_precision",
        "ndcg@10(gain=exponential)",
        "fbeta@10(beta=0.5)",
    ]
    assert set(loaded.gates) == {"ndcg@10", "precision@3"}


def python_examples() -> list[str]:
    return [b for b in code_blocks("python", page("python-api.md")) if "receval.evaluate" in b]


def test_python_example_runs_and_prints_what_it_says() -> None:
    example = next(b for b in python_examples() if "receval.evaluate" in b)
    namespace: dict[str, object] = {}
    exec(example, namespace)  # the page's own code
    report = namespace["report"]
    assert report.metrics == {"precision@2": 0.5, "mrr": 0.5}  # type: ignore[attr-defined]


def test_python_example_with_a_catalog_and_a_log() -> None:
    first, _, third = python_examples()
    namespace: dict[str, object] = {}
    exec(first + third, namespace)  # the page's own code, the third block after the first
    report = namespace["report"]
    assert report.metrics == {  # type: ignore[attr-defined]
        "catalog_coverage@2": 2 / 3,
        "novelty@2": -math.log2(2 / 3),
        "intra_list_diversity@2": 1.0,
    }


def test_python_example_with_files_gives_the_quickstart_numbers() -> None:
    """The Python API page's file example evaluates the quickstart's files with its
    conventions; its values are the CLI's for the same metrics."""
    first, second, _ = python_examples()
    namespace: dict[str, object] = {}
    exec(first + second, namespace)
    metrics = namespace["report"].metrics  # type: ignore[attr-defined]
    ran = run_json(ROOT / "configs" / "quickstart.yaml", expect=0)["models"]["model"]["metrics"]
    assert set(metrics) == {f"{m}@{k}" for m in ("ndcg", "precision") for k in (5, 10)}
    for name, value in metrics.items():
        assert value == ran[name], name


def test_every_preset_fixes_every_convention_and_is_documented() -> None:
    from receval_cli.config.presets import PRESETS

    settings = set(Conventions.model_fields) - {"preset"}
    presets_section = page("conventions.md").split("\n## Presets\n")[1].split("\n## ")[0]
    for name, preset in PRESETS.items():
        assert set(preset.conventions) == settings, name
        assert f"| `{name}` |" in presets_section, name
        Conventions(preset=name)  # valid values


def test_the_ranx_tie_limit_is_stated_as_ranx_has_it() -> None:
    """ranx (numba's argsort) keeps file order among ties only in lists of at
    most 15 items, whatever the number of tied items: the presets' page and the preset's
    notes say so (the README said "up to 15 tied items")."""
    from receval_cli.config.presets import PRESETS

    presets = page("conventions.md")
    row = next(line for line in presets.splitlines() if line.startswith("| `ranx` |"))
    assert "only in lists of at most 15 items" in row
    assert not any("15 tied items" in text for text in PAGES.values())
    assert any("lists of at most 15 items" in note for note in PRESETS["ranx"].notes)


def _doc_commands() -> list[tuple[str, list[str]]]:
    """Every bash block of the README and of docs/*.md that holds `uv run receval ...`
    lines: (page:line of the block, its commands in order, comments dropped)."""
    found = []
    for name, text in PAGES.items():
        for match in re.finditer(r"```bash\n(.*?)```", text, re.S):
            commands = [
                line.split("#")[0].strip()
                for line in match.group(1).splitlines()
                if line.startswith("uv run receval ") and "configs/quickstart.yaml   #" not in line
            ]
            if commands:
                found.append((f"{name}:{text.count(chr(10), 0, match.start()) + 1}", commands))
    return found


def test_the_docs_show_commands_to_run() -> None:
    """The collection below finds the README's tour and the pages' examples (not nothing)."""
    pages = {where.split(":")[0] for where, _ in _doc_commands()}
    assert {"README.md", "docs/commands.md", "docs/metrics.md"} <= pages


@pytest.mark.parametrize(
    ("where", "commands"), [pytest.param(w, c, id=w) for w, c in _doc_commands()]
)
def test_doc_commands_run(
    where: str, commands: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The receval commands of the README and docs/ run as written, each block's in order
    in one folder (a block may read what an earlier line wrote), on a copy of the bundled
    configs and sample data (so the files they write land in a temporary folder)."""
    import shlex
    import shutil

    from cli_helpers import invoke

    for folder in ("configs", "sample_data"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    for command in commands:
        args = shlex.split(command)[3:]
        result = invoke(*args)
        assert result.exit_code == 0, (where, command, result.stdout, result.stderr)
        assert result.stdout or list(tmp_path.glob("*.*")), command  # it printed or wrote


def test_readme_init_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The `receval init` block of docs/commands.md, in order, on the sample data saved
    under its file names."""
    import shlex

    import polars as pl
    from cli_helpers import invoke

    block = next(
        b for b in code_blocks("bash", page("commands.md")) if b.startswith("receval init")
    )
    predictions = pl.read_csv(ROOT / "sample_data" / "predictions.csv")
    truth = pl.read_parquet(ROOT / "sample_data" / "ground_truth.parquet")
    monkeypatch.chdir(tmp_path)
    for folder in ("runs", "data"):
        (tmp_path / folder).mkdir()
    predictions.write_parquet("runs/model.parquet")
    predictions.write_csv("preds.csv")
    truth.write_csv("data/test.csv")
    truth.write_csv("truth.csv")
    for line in block.splitlines():
        args = shlex.split(line.split("#")[0])[1:]
        result = invoke(*args)
        assert result.exit_code == 0, (line, result.stdout, result.stderr)
    assert Path("receval.yaml").exists()
    assert Path("template.yaml").exists()


def test_config_key_reference_is_the_models() -> None:
    """docs/configuration.md's key reference is generated from the config's models (one
    home for every key's description): regenerate it with `python -m
    receval_cli.config.reference` when a key changes."""
    from receval_cli.config.model import Config
    from receval_cli.config.reference import markdown

    text = page("configuration.md")
    match = re.search("<!-- config-keys:start -->\n(.*?)<!-- config-keys:end -->", text, re.S)
    assert match, "docs/configuration.md has no config-keys block"
    assert match.group(1) == markdown()
    keys = [line.split("`")[1] for line in block("config-keys")]
    assert [k for k in keys if "." not in k] == list(Config.model_fields)
    assert len(keys) == len(set(keys))  # each key once
    assert all(line.count(" | ") == 3 for line in block("config-keys"))  # no stray pipe


def test_the_notebook_recipe_lists_what_the_executors_import() -> None:
    """The Spark notebook recipe's package line is EXECUTOR_PACKAGES, which
    tests/test_spark_cluster.py runs the recipe with (and nothing more)."""
    from receval_cli.engines.spark import EXECUTOR_PACKAGES

    match = re.search(r"the executors need these installed:\n#   (.*)\n", page("engines.md"))
    assert match, "docs/engines.md's notebook recipe lost its package line"
    assert tuple(match.group(1).split()) == EXECUTOR_PACKAGES
