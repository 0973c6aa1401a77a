"""docs/conventions.md's table of presets, one row per preset of config/presets.py.

`presets_markdown()` is the block that `python -m receval_cli.cli.doc_blocks` writes and a
test diffs with the page. Its columns:

- preset: the name `conventions: {preset: NAME}` takes.
- settings it fixes: the conventions every ranking metric reads (`ALWAYS`), then every
  other convention whose value differs from receval's default or that the preset explains
  (`Preset.explanations`), in the preset's order, each as `NAME VALUE`, then `but VALUE
  for METRIC` where the preset sets that convention otherwise for some metrics
  (`Preset.per_metric`), then its explanation in parentheses. A convention not listed is
  at receval's default. A preset `based_on` another lists only the conventions whose
  values differ from that one's.
- checked against: `Preset.checked_against`, Markdown as written.
- receval metric -> its measure: `Preset.metrics` in its order, each as `` `SPEC` MEASURE ``
  (the spec alone where the tool's name is the same), a parameter the preset sets for that
  metric (`per_metric`, not a convention) in parentheses, then `Preset.also`; a preset
  `based_on` another with the same measures says so.

Rows run in `PRESETS`' order, a preset based on another right after it.
"""

from __future__ import annotations

import re

from receval_cli.config.conventions import Conventions
from receval_cli.config.presets import PRESETS, Preset

# the conventions that every preset's tool decides for its precision, recall, AP and NDCG:
# listed for every preset, even at receval's default
ALWAYS = (
    "relevance_threshold",
    "tie_break",
    "users_without_recommendations",
    "users_without_relevant",
    "precision_denominator",
    "ap_denominator",
    "ideal_dcg",
    "gain",
    "discount",
)

HEADER = (
    "| preset | settings it fixes | checked against | receval metric -> its measure |\n"
    "|---|---|---|---|\n"
)


def value_text(value: object) -> str:
    """A convention's value as the table writes it: none for None, else as written."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def listed_settings(preset: Preset) -> list[str]:
    """The conventions the preset's row names, in the preset's order (see the module)."""
    if preset.based_on:
        base = PRESETS[preset.based_on].conventions
        return [name for name, value in preset.conventions.items() if value != base[name]]
    defaults = Conventions().model_dump()
    return [
        name
        for name, value in preset.conventions.items()
        if name in ALWAYS or value != defaults[name] or name in preset.explanations
    ]


def setting_text(preset: Preset, name: str) -> str:
    """`NAME VALUE`, its per-metric exceptions (`but VALUE for METRIC and METRIC`), and
    its explanation in parentheses."""
    text = f"{name} {value_text(preset.conventions[name])}"
    exceptions: dict[str, list[str]] = {}
    for metric, params in preset.per_metric.items():
        if name in params:
            exceptions.setdefault(value_text(params[name]), []).append(metric)
    for value, metrics in exceptions.items():
        text += f" but {value} for {' and '.join(metrics)}"
    if name in preset.explanations:
        text += f" ({preset.explanations[name]})"
    return text


def settings_cell(preset: Preset) -> str:
    """The row's second cell."""
    listed = ", ".join(setting_text(preset, name) for name in listed_settings(preset))
    if not preset.based_on:
        return listed
    said = f"the `{preset.based_on}` preset's settings"
    return f"{said} but {listed}" if listed else said


def _metric_name(spec: str) -> str:
    """The metric of a spec: `ndcg@k(gain=linear)` -> `ndcg`."""
    found = re.match(r"[a-z0-9_]+", spec)
    return found.group() if found else spec


def measures_cell(preset: Preset) -> str:
    """The row's fourth cell."""
    if preset.based_on:
        base = PRESETS[preset.based_on]
        if (base.metrics, base.also, base.per_metric) == (
            preset.metrics,
            preset.also,
            preset.per_metric,
        ):
            return f"the `{preset.based_on}` preset's"
    fields = set(Conventions.model_fields)
    # per metric: the parameters the preset sets that are no convention (said once, on
    # that metric's first spec)
    pending = {
        metric: ", ".join(f"{k}={value_text(v)}" for k, v in params.items() if k not in fields)
        for metric, params in preset.per_metric.items()
    }
    entries = []
    for spec, measure in preset.metrics.items():
        entry = f"`{spec}`" if measure == spec else f"`{spec}` {measure}"
        if set_here := pending.pop(_metric_name(spec), ""):
            entry += f" (the preset sets {set_here})"
        entries.append(entry)
    entries += [f"`{metric}`: the preset sets {text}" for metric, text in pending.items() if text]
    cell = ", ".join(entries)
    return f"{cell}; also {preset.also}" if preset.also else cell


def ordered() -> list[Preset]:
    """`PRESETS` in order, each preset based on another right after that one."""
    found: list[Preset] = []
    for preset in PRESETS.values():
        if not preset.based_on:
            found.append(preset)
            found += [p for p in PRESETS.values() if p.based_on == preset.name]
    return found


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def presets_markdown() -> str:
    """The table of presets, as docs/conventions.md holds it."""
    rows = [
        "| "
        + " | ".join(
            _cell(cell)
            for cell in (
                f"`{preset.name}`",
                settings_cell(preset),
                preset.checked_against,
                measures_cell(preset),
            )
        )
        + " |\n"
        for preset in ordered()
    ]
    return HEADER + "".join(rows)
