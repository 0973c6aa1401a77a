"""Other tools' measure names in a config: trec_eval's, ir_measures' and ranx's.

A name written in a tool's notation means what it means in that tool: it resolves to a
receval metric (its whole definition is the registry's) with the conventions that tool
uses for it, and the report keys it by the tool's name. `tool_measures(text)` reads one
name; `spec_of(key)` turns a report's key (receval's or a tool's) back into its spec.

    trec_eval    its printed names (P_10, ndcg_cut_10, iprec_at_recall_0.10, gm_map,
                 utility_2,-1,0,0, ndcg_1=3,2=9), its -m forms (P.5,10, map_cut.5,10) and
                 the bare name of a measure with cutoffs (P: P_5 ... P_1000, as -m P)
    ir_measures  Name(param=value)@cutoff, as ir_measures writes it (nDCG@10, P(rel=2)@10,
                 RR, RBP(p=0.8), IPrec@0.1): its case tells it from receval's names
    ranx         ranx:NAME[@k][-lN] (ranx:ndcg@10, ranx:rbp.95, ranx:map@100-l2): ranx's
                 names are receval's, so they take the prefix

A name receval also knows (`map`, `bpref`, `recip_rank`) is receval's unless the prefix
`trec_eval:` (or `ir_measures:`) names the tool, or every other tool name of the config is
that tool's (metric_lists.py decides: the list speaks one tool's language).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from receval_cli.metrics.registry import OTHER_NAMES, SpecError, resolve
from receval_cli.metrics.spec import MetricSpec, SpecSyntaxError
from receval_cli.metrics.tool_ir_measures import IR_MEASURES, ir_measures_measures
from receval_cli.metrics.tool_measure import DialectError, ToolMeasure
from receval_cli.metrics.tool_ranx import RANX_NAMES, ranx_measures
from receval_cli.metrics.tool_trec_eval import (
    TREC_EVAL_LISTS,
    TREC_EVAL_NAMES,
    trec_eval_measures,
)
from receval_cli.wording import possessive

TOOLS = ("trec_eval", "ir_measures", "ranx")
__all__ = ["DialectError", "ToolMeasure"]

_READERS: dict[str, Callable[[str], list[ToolMeasure] | None]] = {
    "trec_eval": trec_eval_measures,
    "ir_measures": ir_measures_measures,
    "ranx": ranx_measures,
}


@cache
def tool_measures(text: str, tool: str | None = None) -> tuple[ToolMeasure, ...] | None:
    """The tool measures a metric name means: `tool:NAME`, or NAME read as `tool`'s (None:
    any tool's, trec_eval first); None when the name is no tool's."""
    text = text.strip()
    prefix, colon, rest = text.partition(":")
    if colon and prefix in _READERS:
        found = ir_measures_measures(rest, aliases=True) if prefix == "ir_measures" else None
        found = found or _READERS[prefix](rest)
        if found is None:
            raise DialectError(f"'{rest}' is not a {prefix} measure")
        if prefix != "ranx":  # keyed as written (ranx's names are labelled with it already)
            found = [_prefixed(m, prefix) for m in found]
        return tuple(found)
    for name in (tool,) if tool is not None else tuple(_READERS):
        if name == "ranx":
            continue  # only with its prefix
        found = _READERS[name](text)
        if found is not None:
            return tuple(found)
    return None


def tool_refusal(text: str) -> str | None:
    """Why a tool refuses a name written in its case (RBP(p=0.8): ir_measures' RBP needs
    rel) that receval then reads as its own (rbp(p=0.8)); None for any other name."""
    if not _in_a_tool_s_case(text) or not receval_knows(text):
        return None
    for tool in TOOLS:
        try:
            tool_measures(text, tool)
        except SpecSyntaxError as error:
            why = str(error).removeprefix(f"'{text}': ")
            return f"as {possessive(tool)} name it is refused: {why}"
    return None


def readers(text: str) -> tuple[str, ...]:
    """The tools whose notation reads `text` (infAP: trec_eval's and ir_measures')."""
    prefix, colon, _ = text.partition(":")
    if colon and prefix in _READERS:
        return (prefix,)
    found = []
    for tool in TOOLS:
        try:
            if tool_measures(text, tool) is not None:
                found.append(tool)
        except SpecSyntaxError:
            continue
    return tuple(found)


def _prefixed(measure: ToolMeasure, prefix: str) -> ToolMeasure:
    """A measure written `tool:NAME`: keyed so, as the user wrote it."""
    label = f"{prefix}:{measure.name}"
    spec = MetricSpec(measure.spec.name, measure.spec.k, measure.spec.params, label, measure.tool)
    return ToolMeasure(measure.tool, label, spec, measure.preset, measure.settings, measure.source)


def _in_a_tool_s_case(text: str) -> bool:
    """Whether the name (before its cutoff or parameters) has a capital: receval writes its
    names in lower case, trec_eval and ir_measures do not always (P_10, nDCG@10)."""
    base = re.split(r"[@(.]", text, maxsplit=1)[0]
    return base != base.lower()


def receval_knows(text: str) -> bool:
    """Whether receval reads `text` as one of its own metrics (names are case-blind)."""
    try:
        resolve(MetricSpec.parse(text))
    except (SpecError, SpecSyntaxError):
        return False
    return True


def is_tools_own(text: str) -> bool:
    """A name only a tool's notation reads: a prefix, a case receval never writes
    (nDCG@10, P_10, infAP), or a name receval does not know (ndcg_cut_10). A name the
    tool refuses but receval reads (infAP@3: trec_eval's infAP takes no cutoff) is
    receval's; one both refuse is the tool's, whose error says more."""
    prefix, colon, _ = text.partition(":")
    if colon and prefix in _READERS:
        return True
    try:
        if tool_measures(text) is None:
            return False
    except SpecSyntaxError:
        return not receval_knows(text)
    return _in_a_tool_s_case(text) or not receval_knows(text)


def measure_of(spec: MetricSpec) -> ToolMeasure | None:
    """The tool measure a spec of a tool's name is (None for receval's own names)."""
    if not spec.tool:
        return None
    found = tool_measures(spec.label, spec.tool)
    assert found is not None, spec.label
    assert [m.spec for m in found] == [spec], spec.label
    return found[0]


@cache
def spec_of(key: str) -> MetricSpec:
    """The metric a report's key names, for what the metric is (its name, cutoff and
    direction): a tool's name (P_10) gives its receval metric, labelled; anything else is
    parsed as receval's (a tool's name receval also knows, `map`, names the same metric;
    one it reads as an alias, `recip_rank`, its metric, mrr, labelled with the key)."""
    try:
        found = tool_measures(key) if is_tools_own(key) else None
    except SpecSyntaxError:
        found = None
    if found is not None and len(found) == 1:
        return found[0].spec
    parsed = MetricSpec.parse(key)
    try:
        resolved = resolve(parsed)
    except (SpecError, SpecSyntaxError):
        return parsed
    if resolved.name == parsed.name:
        return parsed
    return MetricSpec(resolved.name, resolved.k, resolved.params, key)


def _examples() -> tuple[str, ...]:
    """A name of every tool measure, as a config writes it (did-you-mean's choices)."""
    trec_eval = [f"{name}_{values[0]}" for name, (_, values) in TREC_EVAL_LISTS.items()]
    trec_eval += [
        pattern.pattern.strip("()")
        for pattern, _ in TREC_EVAL_NAMES
        if re.fullmatch(r"\(\w+\)", pattern.pattern)
    ]
    ir_measures = [
        f"{name}@0.1" if m.cutoff == "level" else f"{name}@10" if m.cutoff != "none" else name
        for name, m in IR_MEASURES.items()
    ]
    ranx = [f"ranx:{name}@10" if name != "rbp" else "ranx:rbp.95" for name in RANX_NAMES]
    return (*trec_eval, *(n.replace("RBP", "RBP(rel=1)") for n in ir_measures), *ranx)


TOOL_EXAMPLES = _examples()
OTHER_NAMES.extend(TOOL_EXAMPLES)
