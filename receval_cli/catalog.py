"""What `receval metrics` shows: every metric from the registry, or one in full.

Everything here is read from the registry, the conventions and the presets, so the listing
cannot drift from what `run` computes.
"""

from __future__ import annotations

import inspect

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from receval_cli.conventions import Conventions
from receval_cli.metrics import REGISTRY, MetricDef, MetricSpec, lookup
from receval_cli.presets import PRESETS


def direction(definition: MetricDef) -> str:
    if definition.aggregate == "sum":
        return "count"
    return "higher" if definition.higher_is_better else "lower"


def _param_lines(definition: MetricDef) -> str:
    lines = []
    for param in definition.params:
        if param.convention:
            source = f"conventions.{param.convention}"
        elif param.default is not None:
            source = f"default {param.default}"
        else:
            source = "required" if param.required else "optional"
        lines.append(f"{param.name}: {param.doc} ({source})")
    return "\n".join(lines)


def preset_measures(definition: MetricDef) -> str:
    """`preset: their measure` for each preset whose tool has this metric."""
    lines = []
    for preset in PRESETS.values():
        keys = [f"{definition.name}@k", definition.name]
        measure = next((preset.metrics[k] for k in keys if k in preset.metrics), None)
        if measure is not None:
            lines.append(f"{preset.name}: {measure}")
    return "\n".join(lines)


def metric_table() -> RenderableType:
    """One row per metric: name and aliases, definition, parameters, better, presets."""
    table = Table(title="receval metrics", title_justify="left", show_lines=True)
    for column in ("name", "definition", "parameters (default from)", "better", "in presets"):
        table.add_column(column)
    for definition in REGISTRY.values():
        name = definition.name + ("@k" if definition.takes_cutoff else "")
        if definition.aliases:
            name += "\n(" + ", ".join(definition.aliases) + ")"
        table.add_row(
            Text(name),
            Text(f"{definition.summary}\n{definition.formula}"),
            Text(_param_lines(definition)),
            Text(direction(definition)),
            Text(preset_measures(definition)),
        )
    footer = Text(
        "Every per-user metric also takes users_without_recommendations and "
        "users_without_relevant (conventions.*). `receval metrics NAME` shows one metric in "
        "full, with how each preset defines it."
    )
    return _stack(table, footer)


def _stack(*parts: RenderableType) -> Table:
    grid = Table.grid()
    for part in parts:
        grid.add_row(part)
    return grid


def metric_detail(name: str) -> RenderableType:
    """One metric in full: definition, docstring, parameters, and each preset's settings."""
    definition = lookup(name)
    doc = inspect.getdoc(definition.function) or ""
    low = "-inf" if definition.lower_bound is None else f"{definition.lower_bound:g}"
    high = "inf" if definition.upper_bound is None else f"{definition.upper_bound:g}"
    upper = f"[{low}, {high}]"
    head = Text()
    head.append(f"{definition.name}", style="bold")
    head.append(f"  {definition.summary}\n")
    head.append(f"formula: {definition.formula}\n")
    head.append(f"range: {upper}; better: {direction(definition)}; ")
    if definition.scope == "pairs":
        head.append("report value: one value over the scored (user, item) pairs\n")
    elif definition.scope == "logged":
        head.append("report value: one estimate over the recommendations and the log\n")
    elif definition.scope == "global":
        head.append(
            "report value: one value over every list in the predictions (a mergeable state)\n"
        )
    else:
        head.append(f"report value: {definition.aggregate} over the users\n")
    if definition.aliases:
        head.append(f"aliases: {', '.join(definition.aliases)}\n")
    head.append(
        f"cutoff: {'name@k, or none for the whole list' if definition.takes_cutoff else 'none'}\n\n"
    )
    head.append(doc + "\n")
    params = Table(title="parameters", title_justify="left")
    params.add_column("name")
    params.add_column("meaning")
    params.add_column("default")
    defaults = Conventions().model_dump()
    for param in definition.all_params():
        if param.convention:
            source = f"{defaults[param.convention]} (conventions.{param.convention})"
        elif param.default is not None:
            source = str(param.default)
        else:
            source = "required" if param.required else "optional"
        params.add_row(Text(param.name), Text(param.doc), Text(source))
    presets = Table(title="presets", title_justify="left")
    presets.add_column("preset")
    presets.add_column("their measure")
    presets.add_column("parameters under the preset")
    for preset in PRESETS.values():
        conventions = Conventions(preset=preset.name)
        spec = MetricSpec(definition.name, 10 if definition.takes_cutoff else None)
        if any(p.required for p in definition.params):
            continue  # a required parameter (fbeta's beta) has no preset value
        resolved = conventions.metric_params(spec)
        measure = preset.metrics.get(f"{definition.name}@k") or preset.metrics.get(
            definition.name, "(not in this library)"
        )
        settings = ", ".join(f"{k}={v}" for k, v in resolved.items())
        presets.add_row(Text(preset.name), Text(measure), Text(settings))
    return Group(head, params, presets)
