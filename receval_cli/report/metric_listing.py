"""What `receval metrics` shows: every metric from the registry, or one in full.

Everything here is read from the registry, the conventions and the presets, so the listing
cannot drift from what `run` computes: `--format table` (rich) is `metric_table` /
`metric_detail`, json and markdown are built from one `MetricEntry` per metric.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from collections.abc import Mapping
from typing import Any, TypedDict

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from receval_cli.config.convention_groups import stated
from receval_cli.config.conventions import Conventions
from receval_cli.config.presets import PRESETS
from receval_cli.console import plain_text
from receval_cli.escaping import markdown_text
from receval_cli.formats import LISTING_FORMATS
from receval_cli.metrics import REGISTRY, MetricDef, MetricSpec, SpecSyntaxError, lookup
from receval_cli.metrics.dialects import is_tools_own, spec_of, tool_measures
from receval_cli.metrics.peer_names import PEER_MEASURES
from receval_cli.metrics.registry import Param
from receval_cli.metrics.spec import ParamValue
from receval_cli.metrics.tie_expectation import TIES_TEXT
from receval_cli.report.renderers import render_as
from receval_cli.wording import possessive


def direction(definition: MetricDef) -> str:
    """higher or lower (is better), or count for a metric summed over the users."""
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


def preset_measure(metrics: dict[str, str], name: str, forms: bool = True) -> str | None:
    """The measure a preset's map gives metric `name`: that of `NAME@k`, else `NAME`, else
    (`forms`) its parametrised forms (`NAME@k(...)`, `NAME(...)`) as `spec: measure`,
    joined by `; `; None when the map has none."""
    plain = next((metrics[k] for k in (f"{name}@k", name) if k in metrics), None)
    if plain is not None or not forms:
        return plain
    shown = [f"{k}: {m}" for k, m in metrics.items() if k.startswith((f"{name}@k(", f"{name}("))]
    return "; ".join(shown) or None


def preset_measure_map(definition: MetricDef, forms: bool = True) -> dict[str, str]:
    """Preset name -> its tool's measure name, for each preset whose tool has this metric
    (see preset_measure)."""
    found = {p.name: preset_measure(p.metrics, definition.name, forms) for p in PRESETS.values()}
    return {name: measure for name, measure in found.items() if measure is not None}


def tool_measure_map(definition: MetricDef) -> dict[str, str]:
    """Every tool that defines this metric -> its measure name: the presets' tools, then
    those of metrics/peer_names.py."""
    return {**preset_measure_map(definition), **PEER_MEASURES.get(definition.name, {})}


def preset_measures(definition: MetricDef) -> str:
    """`preset: their measure` for each preset whose tool has this metric under the
    metric's plain name (the overview's column; `receval metrics NAME` shows the rest)."""
    found = preset_measure_map(definition, forms=False)
    return "\n".join(f"{p}: {m}" for p, m in found.items())


def metric_table() -> RenderableType:
    """One row per metric: name and aliases, definition, parameters, better, presets."""
    table = Table(title="receval metrics", title_justify="left", show_lines=True)
    table.add_column("name", no_wrap=True)  # a name is never cut
    for column in ("definition", "parameters (default from)", "better", "in presets"):
        table.add_column(column, overflow="fold")  # a long word folds, never cut with …
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


def _stack(*parts: RenderableType) -> Group:
    return Group(*parts)


def _range_text(lower: float | None, upper: float | None) -> str:
    """`[lower, upper]`, an unbounded end written -inf or inf."""
    low = "-inf" if lower is None else f"{lower:g}"
    high = "inf" if upper is None else f"{upper:g}"
    return f"[{low}, {high}]"


def tool_names(name: str) -> dict[str, Any]:
    """For another tool's measure name (P_10, nDCG@10, ranx:ndcg@10): what each measure it
    names is in receval (config/convention_groups.py's statement, against the defaults)."""
    try:
        measures = tool_measures(name) if is_tools_own(name) else None
    except SpecSyntaxError:
        measures = None
    if not measures:
        return {}
    return stated(tuple(m.spec for m in measures), Conventions())


def _tool_text(about: dict[str, Any]) -> Text:
    text = Text()
    for written, entry in about.items():
        differs = ", ".join(f"{k}={v}" for k, v in entry["differs"].items())
        text.append(f"{written}", style="bold")
        tool = possessive(entry["tool"])
        text.append(
            f" is {tool} measure"
            + (f" ({entry['provider']} computes it there)" if entry.get("provider") else "")
            + f": receval's {entry['metric']} under {tool} conventions (preset "
            f"{entry['preset']})"
            + (f", which differ from the defaults in {differs}" if differs else "")
            + ".\n"
        )
    return text


def metric_detail(name: str) -> RenderableType:
    """One metric in full: definition, docstring, parameters, and each preset's settings;
    for another tool's name, first what it means here."""
    about = tool_names(name)
    if about:
        found = Group(_tool_text(about), metric_detail(next(iter(about.values()))["metric"]))
        return found
    definition = named(name)
    doc = inspect.getdoc(definition.function) or ""
    upper = _range_text(definition.lower_bound, definition.upper_bound)
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
    head.append(f"cutoff: {_cutoff_text(definition)}\n")
    head.append(f"ties: {TIES_TEXT[definition.ties]}\n\n")
    head.append(doc + "\n")
    params = Table(title="parameters", title_justify="left")
    params.add_column("name", no_wrap=True)
    params.add_column("meaning", overflow="fold")
    params.add_column("default", overflow="fold")
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
    presets.add_column("preset", no_wrap=True)
    presets.add_column("their measure", overflow="fold")
    presets.add_column("parameters under the preset", overflow="fold")
    for preset in PRESETS.values():
        conventions = Conventions(preset=preset.name)
        spec = MetricSpec(definition.name, 10 if definition.takes_cutoff else None)
        if any(p.required for p in definition.params):
            continue  # a required parameter (fbeta's beta) has no preset value
        resolved = conventions.metric_params(spec)
        measure = preset_measure(preset.metrics, definition.name) or "(not in this library)"
        settings = ", ".join(f"{k}={v}" for k, v in resolved.items())
        presets.add_row(Text(preset.name), Text(measure), Text(settings))
    return Group(head, params, presets)


# --- `receval metrics --format json | markdown` ------------------------------------------


class Bounds(TypedDict):
    """A metric's range; None (JSON null) for an unbounded end."""

    lower: float | None
    upper: float | None


class ParamEntry(TypedDict):
    """One parameter of a metric, as `--format json` lists it."""

    name: str
    doc: str
    default: ParamValue | None  # the convention's default (no preset) or the fixed default
    required: bool
    convention: str | None  # the convention it defaults from, if any
    choices: list[str]


class MetricEntry(TypedDict):
    """One metric, as `--format json` lists it (keys in this order)."""

    name: str
    aliases: list[str]
    takes_cutoff: bool
    scope: str
    direction: str
    bounds: Bounds
    summary: str
    formula: str
    parameters: list[ParamEntry]
    presets: dict[str, str]
    tools: dict[str, str]  # every tool that defines it -> its measure name (presets first)


def _bound(value: float | None) -> float | None:
    """A range end for JSON: None when unbounded, an infinite (or NaN) end included."""
    return value if value is not None and math.isfinite(value) else None


def _param_entry(param: Param, defaults: Mapping[str, Any]) -> ParamEntry:
    """A parameter's entry; a convention-backed default is the convention's (no preset)."""
    default = defaults[param.convention] if param.convention else param.default
    return ParamEntry(
        name=param.name,
        doc=param.doc,
        default=default,
        required=param.required,
        convention=param.convention,
        choices=list(param.choices),
    )


def metric_entry(definition: MetricDef) -> MetricEntry:
    """Everything the registry knows about one metric, as plain JSON-ready data."""
    defaults = Conventions().model_dump(mode="json")
    return MetricEntry(
        name=definition.name,
        aliases=list(definition.aliases),
        takes_cutoff=definition.takes_cutoff,
        scope=definition.scope,
        direction=direction(definition),
        bounds=Bounds(lower=_bound(definition.lower_bound), upper=_bound(definition.upper_bound)),
        summary=definition.summary,
        formula=definition.formula,
        parameters=[_param_entry(p, defaults) for p in definition.all_params()],
        presets=preset_measure_map(definition),
        tools=tool_measure_map(definition),
    )


def metric_listing(fmt: str, name: str | None = None) -> str:
    """`receval metrics [NAME] --format FORMAT` (a row of LISTING_FORMATS): every metric
    in registry order, or the one NAME (or an alias) names. SpecError for an unknown
    NAME."""
    return render_as(LISTING_FORMATS, fmt, name)


def _entries(name: str | None) -> list[MetricEntry]:
    return [metric_entry(d) for d in (REGISTRY.values() if name is None else [named(name)])]


def listing_json(name: str | None) -> str:
    """`{"metrics": [entry, ...]}`, or NAME's entry alone (`as_written`: a tool's name)."""
    entries = _entries(name)
    about = tool_names(name) if name is not None else {}
    document: Any = {"metrics": entries} if name is None else entries[0]
    if about:  # another tool's name: what each measure it names is here
        document = {**document, "as_written": about}
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def listing_markdown(name: str | None) -> str:  # a GFM table, one row per metric
    return markdown_table(_entries(name))


def listing_text(name: str | None, width: int) -> str:
    """The terminal's table (or one metric in full) as plain text, `width` columns wide."""
    return plain_text(metric_table() if name is None else metric_detail(name), width)


MARKDOWN_COLUMNS = ("metric", "definition", "parameters", "better", "range", "scope", "tools")


def markdown_table(entries: list[MetricEntry]) -> str:
    """A GitHub-flavoured Markdown table of the entries, one row each: docs/metrics.md's
    table of every metric is this table (cli/doc_blocks.py), the tools column naming each
    tool's measure (the presets', then metrics/peer_names.py's)."""
    lines = [_row(MARKDOWN_COLUMNS), _row(["---"] * len(MARKDOWN_COLUMNS))]
    lines += [_row(_markdown_cells(entry)) for entry in entries]
    return "\n".join(lines) + "\n"


def _row(cells: tuple[str, ...] | list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _markdown_cells(entry: MetricEntry) -> list[str]:
    """One entry's cells, in MARKDOWN_COLUMNS order; a cell's lines joined by <br>."""
    name = _code(entry["name"] + ("@k" if entry["takes_cutoff"] else ""))
    if entry["aliases"]:
        name += "<br>aliases: " + ", ".join(_code(a) for a in entry["aliases"])
    bounds = entry["bounds"]
    tools = [f"{_text(t)}: {_code(m)}" for t, m in entry["tools"].items()]
    return [
        name,
        _text(entry["summary"]) + "<br>" + _text(entry["formula"]),
        "<br>".join(_param_markdown(p) for p in entry["parameters"]),
        entry["direction"],
        _text(_range_text(bounds["lower"], bounds["upper"])),
        entry["scope"],
        "<br>".join(tools),
    ]


def _param_markdown(param: ParamEntry) -> str:
    """`name`: doc; one of `a`, `b`; default `x` from conventions.NAME (or required)."""
    parts = [f"{_code(param['name'])}: {_text(param['doc'])}"]
    if param["choices"]:
        parts.append("one of " + ", ".join(_code(c) for c in param["choices"]))
    parts.append(_default_markdown(param))
    return "; ".join(parts)


def _default_markdown(param: ParamEntry) -> str:
    """required, optional, `default x`, or `default x from conventions.NAME`."""
    convention, default = param["convention"], param["default"]
    if param["required"]:
        return "required"
    if convention is None:
        return "optional" if default is None else f"default {_code(str(default))}"
    shown = "unset" if default is None else _code(str(default))
    return f"default {shown} from {_code('conventions.' + convention)}"


def _text(text: str) -> str:
    """Plain text for a table cell: Markdown syntax and `|` escaped, line breaks as <br>."""
    return markdown_text(text, line_break="<br>")


def _code(text: str) -> str:
    """Text as an inline code span for a table cell (only `|` needs escaping in it)."""
    fence = "`" * (1 + max(map(len, re.findall("`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}".replace("|", "\\|")


def _cutoff_text(definition: MetricDef) -> str:
    if definition.needs_cutoff:
        return "name@k (required)"
    return "name@k, or none for the whole list" if definition.takes_cutoff else "none"


def named(name: str) -> MetricDef:
    """The metric a name means as a config's metric list reads it (case-blind, a cutoff
    or parameters allowed: `map`, `ndcg@10`; another tool's name: P_10, nDCG@10, or P,
    trec_eval's P_5 ... P_1000), so `receval metrics` explains what runs."""
    about = tool_names(name)
    if about:
        return lookup(spec_of(next(iter(about))).name)
    try:
        return lookup(spec_of(name).name)
    except SpecSyntaxError:
        return lookup(name)
