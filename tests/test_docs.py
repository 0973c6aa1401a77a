"""The README is checked against the code: its tables, its config and its examples."""

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
README = (ROOT / "README.md").read_text(encoding="utf-8")


def block(name: str) -> list[str]:
    match = re.search(f"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", README, re.S)
    assert match, f"README has no {name} block"
    return [line for line in match.group(1).splitlines() if line.startswith("| `")]


def code_blocks(language: str) -> list[str]:
    return re.findall(f"```{language}\n(.*?)```", README, re.S)


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
    example = next(b for b in code_blocks("yaml") if "predictions:" in b)
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


def test_python_example_runs_and_prints_what_it_says() -> None:
    example = next(b for b in code_blocks("python") if "receval_cli.evaluate" in b)
    namespace: dict[str, object] = {}
    exec(example, namespace)  # the README's own code
    report = namespace["report"]
    assert report.metrics == {"precision@2": 0.5, "mrr": 0.5}  # type: ignore[attr-defined]


def test_python_example_with_a_catalog_and_a_log() -> None:
    first, _, third = [b for b in code_blocks("python") if "receval_cli.evaluate" in b]
    namespace: dict[str, object] = {}
    exec(first + third, namespace)  # the README's own code, the third block after the first
    report = namespace["report"]
    assert report.metrics == {  # type: ignore[attr-defined]
        "catalog_coverage@2": 2 / 3,
        "novelty@2": -math.log2(2 / 3),
        "intra_list_diversity@2": 1.0,
    }


def test_python_example_with_files_gives_the_quickstart_numbers() -> None:
    """The README's file example evaluates the quickstart's files with its conventions;
    its values are the CLI's for the same metrics."""
    first, second, _ = [b for b in code_blocks("python") if "receval_cli.evaluate" in b]
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
    presets_section = README.split("### Presets")[1].split("\n### ")[0]
    for name, preset in PRESETS.items():
        assert set(preset.conventions) == settings, name
        assert f"| `{name}` |" in presets_section, name
        Conventions(preset=name)  # valid values


def test_the_ranx_tie_limit_is_stated_as_ranx_has_it() -> None:
    """#16 item 8: ranx (numba's argsort) keeps file order among ties only in lists of at
    most 15 items, whatever the number of tied items: the README and the preset's notes
    say so (the README said "up to 15 tied items")."""
    from receval_cli.config.presets import PRESETS

    row = next(line for line in README.splitlines() if line.startswith("| `ranx` |"))
    assert "only in lists of at most 15 items" in row
    assert "15 tied items" not in README
    assert any("lists of at most 15 items" in note for note in PRESETS["ranx"].notes)


def _readme_commands() -> list[str]:
    """Every `uv run receval ...` line of the README's bash blocks, comments dropped."""
    lines = []
    for block in code_blocks("bash"):
        for line in block.splitlines():
            if line.startswith("uv run receval ") and "configs/quickstart.yaml   #" not in line:
                lines.append(line.split("#")[0].strip())
    return lines


@pytest.mark.parametrize("command", _readme_commands())
def test_readme_commands_run(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's receval commands run as written, on a copy of the bundled configs and
    sample data (so the files they write land in a temporary folder)."""
    import shlex
    import shutil

    from cli_helpers import invoke

    for folder in ("configs", "sample_data"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    args = shlex.split(command)[3:]
    result = invoke(*args)
    assert result.exit_code == 0, (command, result.stdout, result.stderr)
    assert result.stdout or list(tmp_path.glob("*.*")), command  # it printed or wrote


def test_readme_init_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The `receval init` block, in order, on the sample data saved under its file names."""
    import shlex

    import polars as pl
    from cli_helpers import invoke

    block = next(b for b in code_blocks("bash") if b.startswith("receval init"))
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
    """The README's key reference is generated from the config's models (one home for
    every key's description): regenerate it with `python -m receval_cli.config.reference`
    when a key changes."""
    from receval_cli.config.model import Config
    from receval_cli.config.reference import markdown

    match = re.search("<!-- config-keys:start -->\n(.*?)<!-- config-keys:end -->", README, re.S)
    assert match, "README has no config-keys block"
    assert match.group(1) == markdown()
    keys = [line.split("`")[1] for line in block("config-keys")]
    assert [k for k in keys if "." not in k] == list(Config.model_fields)
    assert len(keys) == len(set(keys))  # each key once
    assert all(line.count(" | ") == 3 for line in block("config-keys"))  # no stray pipe


def test_the_notebook_recipe_lists_what_the_executors_import() -> None:
    """The Spark notebook recipe's package line is EXECUTOR_PACKAGES, which
    tests/test_spark_cluster.py runs the recipe with (and nothing more)."""
    from receval_cli.engines.spark import EXECUTOR_PACKAGES

    match = re.search(r"the executors need these installed:\n#   (.*)\n", README)
    assert match, "README's notebook recipe lost its package line"
    assert tuple(match.group(1).split()) == EXECUTOR_PACKAGES
