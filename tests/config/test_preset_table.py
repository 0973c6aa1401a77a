"""docs/conventions.md's table of presets (config/preset_table.py) says what PRESETS holds:
each setting a preset fixes with its value, its exceptions per metric and explanations,
each measure, and test files that exist. The expectations are read from PRESETS and the
conventions' defaults here, not from the functions that write the table.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from receval_cli.cli.doc_blocks import REGENERATE, stale_in
from receval_cli.config.conventions import Conventions
from receval_cli.config.preset_table import ALWAYS, presets_markdown
from receval_cli.config.presets import PRESETS, Preset

ROOT = Path(__file__).resolve().parents[2]


def written(value: object) -> str:
    return "none" if value is None else str(value)


def rows(table: str) -> dict[str, list[str]]:
    """Preset name -> its row's cells, from the Markdown table."""
    found = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        found[cells[0].strip("`")] = cells
    return found


def top_level_items(cell: str) -> list[str]:
    """The cell split at the commas outside parentheses."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(cell):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(cell[start:i].strip())
            start = i + 1
    return [*items, cell[start:].strip()]


def required(preset: Preset) -> set[str]:
    """The conventions a row must name: those apart from its base preset's; else those
    every ranking metric reads, those apart from receval's default, those explained."""
    if preset.based_on:
        base = PRESETS[preset.based_on].conventions
        return {n for n, v in preset.conventions.items() if v != base[n]}
    defaults = Conventions().model_dump()
    differ = {n for n, v in preset.conventions.items() if v != defaults[n]}
    return differ | set(ALWAYS) | set(preset.explanations)


def row_faults(preset: Preset, cell: str) -> list[str]:
    """What a row's settings cell gets wrong about the preset."""
    if preset.based_on:
        cell = cell.removeprefix(f"the `{preset.based_on}` preset's settings but ")
    named: dict[str, str] = {}
    faults = []
    for item in top_level_items(cell):
        name, _, rest = item.partition(" ")
        value = rest.split(" ")[0]
        if name not in preset.conventions:
            faults.append(f"{item!r} names no convention")
        elif value != written(preset.conventions[name]):
            faults.append(f"{name} is {preset.conventions[name]!r}, the row says {value!r}")
        named[name] = item
    faults += [f"{name} is not named" for name in sorted(required(preset) - set(named))]
    for metric, params in preset.per_metric.items():
        for name, value in params.items():
            if name in named and not re.search(
                rf"but {re.escape(written(value))} for [a-z_ ]*\b{metric}\b", named[name]
            ):
                faults.append(f"{name}'s exception for {metric} ({value}) is not said")
    for name, why in preset.explanations.items():
        if name in named and f"({' '.join(why.split())})" not in named[name]:
            faults.append(f"{name}'s explanation is not said")
    return faults


@pytest.mark.parametrize("name", list(PRESETS))
def test_the_row_names_each_setting_the_preset_fixes_with_its_value(name: str) -> None:
    preset = PRESETS[name]
    assert row_faults(preset, rows(presets_markdown())[name][1]) == []


def test_a_missing_setting_a_wrong_value_and_a_lost_exception_are_found() -> None:
    """Negative controls of row_faults, on the jurity row edited three ways."""
    preset = PRESETS["jurity"]
    cell = rows(presets_markdown())["jurity"][1]
    assert "precision_denominator list_length" in cell
    dropped = cell.replace("precision_denominator list_length, ", "")
    assert row_faults(preset, dropped) == ["precision_denominator is not named"]
    wrong = cell.replace("gain binary", "gain linear")
    assert row_faults(preset, wrong) == ["gain is 'binary', the row says 'linear'"]
    lost = cell.replace(" but skip for precision and map", "")
    assert row_faults(preset, lost) == [
        "users_without_recommendations's exception for precision (skip) is not said",
        "users_without_recommendations's exception for map (skip) is not said",
    ]


def test_every_preset_has_one_row_in_the_page() -> None:
    page = (ROOT / "docs" / "conventions.md").read_text(encoding="utf-8")
    table = rows(presets_markdown())
    assert sorted(table) == sorted(PRESETS)
    for name in PRESETS:
        assert page.count(f"\n| `{name}` |") == 1, name


@pytest.mark.parametrize("name", list(PRESETS))
def test_the_row_names_each_measure(name: str) -> None:
    """Each spec in backquotes with the tool's measure; a preset based on another with
    the same measures refers to that one's row."""
    preset = PRESETS[name]
    cell = rows(presets_markdown())[name][3]
    if preset.based_on and PRESETS[preset.based_on].metrics == preset.metrics:
        assert cell == f"the `{preset.based_on}` preset's"
        return
    for spec, measure in preset.metrics.items():
        assert f"`{spec}`" in cell, spec
        assert measure.replace("|", "\\|") in cell, measure
    for metric, params in preset.per_metric.items():
        for param, value in params.items():
            if param not in Conventions.model_fields:
                assert f"the preset sets {param}={value}" in cell, metric


@pytest.mark.parametrize("name", list(PRESETS))
def test_checked_against_names_files_that_exist(name: str) -> None:
    paths = re.findall(r"`(tests/[^`]+)`", PRESETS[name].checked_against)
    assert paths, name
    for path in paths:
        assert list(ROOT.glob(path.rstrip("/"))), path


def test_a_changed_preset_makes_its_row_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    """The docs test names the preset's row and the command when PRESETS changes."""
    ranx = PRESETS["ranx"]
    changed = dataclasses.replace(ranx, conventions={**ranx.conventions, "discount": "jarvelin"})
    monkeypatch.setitem(PRESETS, "ranx", changed)
    page = (ROOT / "docs" / "conventions.md").read_text(encoding="utf-8")
    (message,) = stale_in("docs/conventions.md", page)
    assert "the presets (config/presets.py) is stale" in message
    assert "rows that differ: `ranx`" in message
    assert REGENERATE in message
