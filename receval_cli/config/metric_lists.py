"""The metric list expanded into specs (cutoffs, parameters); the gates keyed by them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from receval_cli.config.fairness_specs import fairness_specs
from receval_cli.config.model import Config, Gate
from receval_cli.config.yaml_file import found_value
from receval_cli.errors import ConfigError, did_you_mean
from receval_cli.metrics import MetricSpec, SpecError, SpecSyntaxError, resolve
from receval_cli.metrics.dialects import (
    TOOLS,
    is_tools_own,
    readers,
    receval_knows,
    tool_measures,
    tool_refusal,
)
from receval_cli.metrics.registry import value_count
from receval_cli.wording import possessive

_ENTRY_KEYS = ("name", "k", "cutoffs")


def expand_metrics(path: Path, config: Config) -> tuple[MetricSpec, ...]:
    """Turn the config's `metrics` list and `cutoffs` into resolved specs; `pr_curve: true`
    adds the interpolated precision-recall curve's points (PR_CURVE) after them, and a
    `fairness:` block its metrics (config/fairness_specs.py)."""
    specs = metric_specs(config.metrics, config.cutoffs, str(path), path=path)
    if config.pr_curve:
        specs += tuple(s for s in PR_CURVE if s not in specs)
    specs += tuple(s for s in fairness_specs(path, config.fairness) if s not in specs)
    check_work(path, config, specs)
    return specs


MAX_RESAMPLED_VALUES = 20_000_000  # resamples x metric values (the bootstrap holds 16 bytes each)


def check_work(path: Path, config: Config, specs: tuple[MetricSpec, ...]) -> None:
    """Refuse a config whose segments or resamples multiply its metric values past the
    bounds: every segment_by attribute reports every value once more (at most
    MAX_METRIC_VALUES in all), and a bootstrap or permutation test computes every value
    once per resample (at most MAX_RESAMPLED_VALUES)."""
    values = sum(value_count(spec)[0] for spec in specs)
    attributes = len(config.segment_by)
    if attributes and values * (1 + attributes) > MAX_METRIC_VALUES:
        count = values * (1 + attributes)
        fix = "Split the segments or the metrics over several configs."
        raise ConfigError(
            f"{path}: segment_by: {values:,} metric values for all users and again for each "
            f"of {attributes:,} attributes make {count:,}; receval computes at most "
            f"{MAX_METRIC_VALUES:,} per run. {fix}",
            path=path,
            key="segment_by",
            found=f"{count:,} metric values",
            fix=fix,
        )
    groups = values * (1 + attributes)
    resampled: list[tuple[str, int]] = []
    if config.confidence is not None and config.confidence.method == "bootstrap":
        resampled.append(("confidence.resamples", config.confidence.resamples))
    if config.comparison is not None and config.comparison.test == "permutation":
        resampled.append(("comparison.resamples", config.comparison.resamples))
    for key, resamples in resampled:
        if groups * resamples > MAX_RESAMPLED_VALUES:
            count = groups * resamples
            fix = f"Lower {key} (1,000 to 10,000 are usual) or ask for fewer metrics."
            raise ConfigError(
                f"{path}: {key}: {resamples:,} resamples of {groups:,} metric values make "
                f"{count:,} resampled values; receval computes at most "
                f"{MAX_RESAMPLED_VALUES:,} per run. {fix}",
                path=path,
                key=key,
                found=f"{count:,} resampled values",
                fix=fix,
            )


# the 11 standard recall levels 0.0, 0.1, ..., 1.0 (i / 10 is the double nearest each)
PR_CURVE = tuple(MetricSpec("iprec_at_recall", None, (("level", i / 10),)) for i in range(11))


def metric_specs(
    entries: list[str | dict[str, Any]],
    cutoffs: list[int] | None,
    where: str,
    *,
    path: Path | None = None,
) -> tuple[MetricSpec, ...]:
    """Turn a `metrics` list (strings or mappings) and `cutoffs` into resolved specs.
    `where` begins an error's message; `path`, the config file, is its `path` field."""
    specs: dict[MetricSpec, None] = {}  # in order, each once
    asked = 0
    parts: set[str] = set()  # what counted more than once (recall levels, ...)
    language = spoken_tool(entries)
    for index, entry in enumerate(entries):
        key = f"metrics[{index}]"
        try:
            expanded = _tool_specs(entry, language)
            if expanded is None:
                expanded = _entry_specs(entry, cutoffs)
            asked += len(expanded)
            if asked > MAX_METRIC_VALUES:
                raise _too_many(entries, cutoffs, where, path, parts)
            tool_named = bool(readers(_written(entry)))
            for spec in expanded:
                resolved = resolve(spec)
                if tool_named:
                    resolved = _keyed_as_written(spec, resolved)
                count, what = value_count(resolved)
                if count > MAX_METRIC_VALUES:
                    raise _too_many_parts(resolved, count, what, f"{where}: {key}", key, path)
                if count > 1:
                    asked += count - 1
                    parts.update(what)
                    if asked > MAX_METRIC_VALUES:
                        raise _too_many(entries, cutoffs, where, path, parts)
                specs.setdefault(resolved)
        except (SpecError, SpecSyntaxError) as error:
            raise ConfigError(
                f"{where}: {key}: {error}", path=path, key=key, found=found_value(entry)
            ) from None
    return tuple(specs)


MAX_METRIC_VALUES = 2_000  # metrics x cutoffs in one config (a large real one asks a few hundred)


def _too_many(
    entries: list[str | dict[str, Any]],
    cutoffs: list[int] | None,
    where: str,
    path: Path | None,
    parts: set[str],
) -> ConfigError:
    shape = f"{len(entries):,} metrics" + (f" x {len(cutoffs):,} cutoffs" if cutoffs else "")
    if parts:
        shape += f", with their {' and '.join(sorted(parts))} counted one each"
    return ConfigError(
        f"{where}: metrics: the config asks for more than {MAX_METRIC_VALUES:,} metric values "
        f"({shape}); receval computes at most {MAX_METRIC_VALUES:,} per run. Ask for fewer "
        "cutoffs (e.g. [1, 5, 10, 20, 50, 100]) or split the metrics over several configs.",
        path=path,
        key="metrics",
        found=shape,
    )


def _too_many_parts(
    spec: MetricSpec, count: int, what: tuple[str, ...], where: str, key: str, path: Path | None
) -> ConfigError:
    listed = " and ".join(what)
    fix = f"Ask for fewer {listed} (each is computed on its own)."
    return ConfigError(
        f"{where}: '{spec}' asks for {count:,} {listed}, and each counts as a metric value; "
        f"receval computes at most {MAX_METRIC_VALUES:,} per run. {fix}",
        path=path,
        key=key,
        found=f"{count:,} {listed}",
        fix=fix,
    )


def sampled_notes(specs: tuple[MetricSpec, ...]) -> tuple[str, ...]:
    """With corrected@k asked, the warning that names the sampled metrics' bias."""
    corrected = [str(s) for s in specs if s.name == "corrected"]
    if not corrected:
        return ()
    others = [str(s) for s in specs if s.name != "corrected"]
    plain = f" ({', '.join(others)})" if others else ""
    return (
        f"metrics: the ranking metrics on sampled candidate lists{plain} rank each relevant "
        "item among a few sampled negatives and overstate the same metrics over the whole "
        "catalog, which they may even order differently (Krichene and Rendle, KDD 2020); "
        f"{', '.join(corrected)} estimates the full metric.",
    )


def fallback_notes(entries: list[str | dict[str, Any]]) -> tuple[str, ...]:
    """A note for each name written in a tool's case that the tool refuses and receval
    reads as its own (RBP(p=0.8): receval's rbp(p=0.8)), so the run says whose it is."""
    notes = []
    for entry in entries:
        text = _written(entry)
        why = tool_refusal(text)
        if why is not None:
            notes.append(
                f"metrics: '{text}' is read as receval's {resolve(MetricSpec.parse(text))}; {why}."
            )
    return tuple(notes)


def _keyed_as_written(written: MetricSpec, resolved: MetricSpec) -> MetricSpec:
    """A tool's name that receval reads as an alias of its own (trec_eval's recip_rank:
    receval's mrr) keeps the key it was written with, whose definition runs (the report's
    warnings say whose where the list mixes names, mixed_list_notes)."""
    if resolved.tool or written.name == resolved.name:
        return resolved
    label = str(MetricSpec(written.name, written.k, written.params))
    return MetricSpec(resolved.name, resolved.k, resolved.params, label)


def mixed_list_notes(entries: list[str | dict[str, Any]]) -> tuple[str, ...]:
    """A note for each name that is both receval's and a tool's (recip_rank, bpref, map) in
    a list that mixes tools' names with receval's (or several tools'): receval's
    definition runs, under the config's conventions, and the note says so and how to ask
    for the tool's."""
    if spoken_tool(entries) is not None:
        return ()
    shared: list[tuple[str, tuple[str, ...]]] = []
    others: list[str] = []
    for text in (_written(entry) for entry in entries):
        try:
            tools = () if is_tools_own(text) or not receval_knows(text) else readers(text)
        except SpecSyntaxError:
            return ()  # reported with its entry
        if tools:
            shared.append((text, tools))
        else:
            others.append(text)
    if not shared or not any(is_tools_own(text) for text in others):
        return ()
    mixed = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
    notes = []
    for text, tools in shared:
        metric = resolve(MetricSpec.parse(text)).name
        theirs = " and ".join(possessive(tool) for tool in tools)
        notes.append(
            f"metrics: '{text}' names receval's {metric} and {theirs} {text}; the list is not "
            f"in one tool's names ({mixed}), so it is receval's: {metric} ran, under "
            f"the config's conventions, keyed '{text}'. Write {tools[0]}:{text} for "
            f"{possessive(tools[0])}."
        )
    return tuple(notes)


def _written(entry: object) -> str:
    return str(entry.get("name", "")) if isinstance(entry, dict) else str(entry)


def spoken_tool(entries: list[str | dict[str, Any]]) -> str | None:
    """The one tool whose language the metric list speaks: every name written in a tool's
    notation is that tool's (infAP, which trec_eval and ir_measures both write, is either),
    and every other name is one that tool also reads (`map`, `bpref`: then that tool's too,
    metrics/dialects.py). None otherwise."""
    tools: set[str] | None = None
    for entry in entries:
        text = _written(entry)
        try:
            if is_tools_own(text):
                found = set(readers(text)) or {m.tool for m in tool_measures(text) or ()}
                tools = found if tools is None else tools & found
            elif tool_measures(text) is None:
                return None  # receval's own name
        except SpecSyntaxError:
            continue  # reported with its entry
    if not tools:
        return None
    return next(tool for tool in TOOLS if tool in tools)


def _tool_specs(entry: str | dict[str, Any], language: str | None) -> list[MetricSpec] | None:
    """The specs of a name in a tool's notation (None: receval's own name). A tool's name
    holds its parameters and cutoffs: a mapping gives it none."""
    text = _written(entry)
    if is_tools_own(text):
        measures = tool_measures(text, language)
        if measures is None:  # another tool's own name in a list that speaks `language`
            measures = tool_measures(text)
    elif language is not None:
        measures = tool_measures(text, language)
    else:
        return None
    if measures is None:
        return None
    if isinstance(entry, dict) and set(entry) != {"name"}:
        others = ", ".join(sorted(set(entry) - {"name"}))
        raise SpecSyntaxError(
            f"'{text}' is {measures[0].tool}'s measure, whose parameters and cutoff are "
            f"written in its name as {measures[0].tool} writes them; drop {others}, or "
            "write the receval metric `receval metrics "
            f"{text}` names with its parameters"
        )
    return [m.spec for m in measures]


def _entry_specs(entry: str | dict[str, Any], cutoffs: list[int] | None) -> list[MetricSpec]:
    if isinstance(entry, str):
        base = MetricSpec.parse(entry)
        explicit_all = "@" in entry
        return _with_cutoffs(base, None if explicit_all else cutoffs)
    if "name" not in entry:
        raise SpecSyntaxError("a metric mapping needs a name, e.g. {name: ndcg, cutoffs: [10]}")
    base = MetricSpec.parse(str(entry["name"]))
    params = dict(base.params)
    for key, value in entry.items():
        if key in _ENTRY_KEYS:
            continue
        if isinstance(value, dict | list) or value is None:
            hint = did_you_mean(str(key), _ENTRY_KEYS)
            raise SpecSyntaxError(
                f"'{key}' is not a key of a metric mapping (name, k, cutoffs) and, as a "
                f"parameter, it needs a single value, not {value!r}.{hint}"
            )
        params[str(key)] = value
    ks = _entry_cutoffs(entry, base)
    spec = MetricSpec(base.name, base.k, tuple(params.items()))
    if ks is not None:
        return [MetricSpec(spec.name, k, spec.params) for k in ks]
    explicit = "@" in str(entry["name"])
    return _with_cutoffs(spec, None if explicit else cutoffs)


def _entry_cutoffs(entry: dict[str, Any], base: MetricSpec) -> list[int] | None:
    if "k" in entry and "cutoffs" in entry:
        raise SpecSyntaxError("give either k or cutoffs, not both")
    raw = entry.get("cutoffs", entry.get("k"))
    if raw is None:
        return None
    if base.k is not None:
        raise SpecSyntaxError(f"'{entry['name']}' already has a cutoff; drop k/cutoffs")
    values = raw if isinstance(raw, list) else [raw]
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise SpecSyntaxError(f"cutoff {value!r} is not a positive integer")
    return values


def _with_cutoffs(spec: MetricSpec, cutoffs: list[int] | None) -> list[MetricSpec]:
    if spec.k is not None or not cutoffs:
        return [spec]
    from receval_cli.metrics import lookup

    try:
        takes_cutoff = lookup(spec.name).takes_cutoff
    except SpecError:
        return [spec]  # resolve() reports the unknown name
    if not takes_cutoff:
        return [spec]
    return [MetricSpec(spec.name, k, spec.params) for k in cutoffs]


def canonical_gates(path: Path, config: Config, specs: tuple[MetricSpec, ...]) -> dict[str, Gate]:
    """Key every gate by its metric's key in the report (so `ap@10` gates `map@10`, and
    `mrr` the metric written `recip_rank`)."""
    names = [str(s) for s in specs]
    # receval's metrics by what they are, keyed as written (recip_rank gated as mrr)
    written = {MetricSpec(s.name, s.k, s.params): str(s) for s in reversed(specs) if not s.tool}
    gates: dict[str, Gate] = {}
    written_as: dict[str, str] = {}  # the report's key -> the gate's key in the config
    for metric, gate in config.gates.items():
        try:
            resolved = resolve(MetricSpec.parse(metric))
        except (SpecError, SpecSyntaxError):
            resolved = None
        canonical = metric
        if metric not in names and resolved is not None:
            canonical = written.get(resolved, str(resolved))
        if canonical not in names:
            key = f"gates.{metric}"
            fix = f"Gate one of: {', '.join(names)}; or add '{metric}' to metrics."
            raise ConfigError(
                f"{path}: {key}: no such metric among this config's metrics."
                f"{did_you_mean(metric, names)} {fix}",
                path=path,
                key=key,
                found=metric,
                fix=fix,
            )
        models = list(config.model_files())
        if gate.model is not None and gate.model not in models:
            key = f"gates.{metric}.model"
            raise ConfigError(
                f"{path}: {key} '{gate.model}' is not a model of this config; the models are: "
                f"{', '.join(models)}.{did_you_mean(gate.model, models)}",
                path=path,
                key=key,
                found=gate.model,
            )
        if canonical in gates:  # mrr and recip_rank: one would replace the other unsaid
            key, first = f"gates.{metric}", written_as[canonical]
            fix = f"Keep one gate for {canonical} (its bounds in one mapping)."
            raise ConfigError(
                f"{path}: {key} and gates.{first} gate the same metric, {canonical}. {fix}",
                path=path,
                key=key,
                found=metric,
                fix=fix,
            )
        gates[canonical], written_as[canonical] = gate, metric
    return gates
