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
from dataclasses import dataclass, field
from functools import cache

from receval_cli.metrics.registry import SpecError, resolve
from receval_cli.metrics.spec import MetricSpec, SpecSyntaxError

TOOLS = ("trec_eval", "ir_measures", "ranx")


@dataclass(frozen=True)
class ToolMeasure:
    """One tool's measure as receval computes it: `spec` is the receval metric, labelled
    with the tool's name (the report's key); `preset` and `settings` are the conventions it
    runs under (the tool's preset, and the settings that measure changes in it)."""

    tool: str
    name: str  # as the tool prints it (P_10, nDCG@10, ranx:ndcg@10): the report's key
    spec: MetricSpec
    preset: str
    settings: dict[str, object] = field(default_factory=dict)
    source: str = ""  # how the tool defines it, where that differs from the preset's rule


class DialectError(SpecSyntaxError):
    """A name in a tool's notation that the tool (or receval) does not define."""


def _number(text: str) -> str:
    """A trec_eval parameter as receval writes it (0.20 -> 0.2, .25 -> 0.25, 2 -> 2)."""
    value = float(text)
    return str(int(value)) if value.is_integer() and "." not in text else repr(value)


def _set_f(beta_squared: str) -> str:
    """trec_eval's set_F_x weighs recall x times precision: (x+1)PR / (xP + R), receval's
    F_beta with beta^2 = x."""
    x = float(beta_squared)
    return "set_f1" if x == 1.0 else f"set_fbeta(beta={x**0.5!r})"


# trec_eval's measure name as it prints it (parameters included) -> receval's spec
TREC_EVAL_NAMES: list[tuple[re.Pattern[str], Callable[[str], str]]] = [
    (re.compile(r"P_(\d+)"), "precision@{}".format),
    (re.compile(r"recall_(\d+)"), "recall@{}".format),
    (re.compile(r"ndcg_cut_(\d+)"), "ndcg@{}".format),
    (re.compile(r"map_cut_(\d+)"), "map@{}".format),
    (re.compile(r"success_(\d+)"), "hit_rate@{}".format),
    (re.compile(r"relative_P_(\d+)"), "relative_precision@{}".format),
    (re.compile(r"(ndcg)"), "ndcg".format),
    (re.compile(r"(map)"), "map".format),
    (re.compile(r"(gm_map)"), "map(mean=geometric)".format),
    (re.compile(r"(recip_rank)"), "mrr".format),
    (re.compile(r"(Rprec)"), "r_precision".format),
    (re.compile(r"Rprec_mult_([\d.]+)"), lambda m: f"rprec_mult(multiplier={_number(m)})"),
    (re.compile(r"iprec_at_recall_([\d.]+)"), lambda m: f"iprec_at_recall(level={_number(m)})"),
    (re.compile(r"(11pt_avg)"), "iprec_avg".format),
    (
        re.compile(r"11pt_avg_([\d.,]+)"),
        lambda m: "iprec_avg(levels=" + ";".join(_number(x) for x in m.split(",")) + ")",
    ),
    (re.compile(r"(set_map)"), "set_map".format),
    (re.compile(r"(set_P)"), "set_precision".format),
    (re.compile(r"(set_recall)"), "set_recall".format),
    (re.compile(r"(set_relative_P)"), "relative_precision".format),
    (re.compile(r"(set_F)"), lambda _: "set_f1"),
    (re.compile(r"set_F_([\d.]+)"), _set_f),
    (re.compile(r"(utility)"), "utility".format),
    (
        re.compile(r"utility_([-\d.]+,[-\d.]+,[-\d.]+,[-\d.]+)"),
        lambda m: (
            "utility("
            + ",".join(f"{n}={_number(x)}" for n, x in zip("abcd", m.split(","), strict=True))
            + ")"
        ),
    ),
    (re.compile(r"(num_rel)"), "num_rel".format),
    (re.compile(r"(num_ret)"), "num_ret".format),
    (re.compile(r"(num_rel_ret)"), "num_rel_ret".format),
    (re.compile(r"(bpref)"), "bpref".format),
    (re.compile(r"(gm_bpref)"), "bpref(mean=geometric)".format),
    (re.compile(r"(infAP)"), "infap".format),
    (re.compile(r"unj_(\d+)"), "unj@{}".format),
    (re.compile(r"(num_nonrel_judged_ret)"), "num_nonrel_judged_ret".format),
    (re.compile(r"(G)"), "g".format),
    (re.compile(r"(binG)"), "bing".format),
    (re.compile(r"(ndcg_rel)"), "ndcg_rel".format),
    (re.compile(r"(Rndcg)"), "rndcg".format),
    (re.compile(r"(rbp)"), "rbp".format),
    (re.compile(r"(rbp_resid)"), "rbp_resid".format),
    # a gain map: -m ndcg.1=3,2=9,4=4.5 prints ndcg_1=3,2=9,4=4.5
    (
        re.compile(r"ndcg_((?:\d+=[-\d.]+,?)+)"),
        lambda m: "ndcg(gains=" + m.replace("=", ":").replace(",", ";") + ")",
    ),
]

# the measures of trec_eval whose parameter is a list of values, each printed as its own
# measure (-m P.5,10 prints P_5 and P_10), with the values -m NAME (and -m all_trec) uses
_CUTOFFS = ("5", "10", "15", "20", "30", "100", "200", "500", "1000")
_TREC_EVAL_LISTS: dict[str, tuple[str, tuple[str, ...]]] = {
    # name: (how a value is printed: "int" or "2f", its default values)
    "P": ("int", _CUTOFFS),
    "recall": ("int", _CUTOFFS),
    "ndcg_cut": ("int", _CUTOFFS),
    "map_cut": ("int", _CUTOFFS),
    "relative_P": ("int", _CUTOFFS),
    "success": ("int", ("1", "5", "10")),
    "unj": ("int", ("5", "10", "20")),
    "iprec_at_recall": ("2f", tuple(f"{i / 10:.2f}" for i in range(11))),
    "Rprec_mult": ("2f", tuple(f"{i / 5:.2f}" for i in range(1, 11))),
}
# the measures whose parameter is one value printed as given (-m utility.2,-1,0,0 prints
# utility_2,-1,0,0)
_TREC_EVAL_TEXT = ("utility", "11pt_avg", "set_F", "ndcg")


def _trec_eval_printed(text: str) -> list[str] | None:
    """The names trec_eval prints for `text` (a printed name, a -m form NAME.PARAMS, or the
    bare name of a list measure); None when it is none of these."""
    name, dot, params = text.partition(".")
    if not dot or name not in (*_TREC_EVAL_LISTS, *_TREC_EVAL_TEXT):
        if text in _TREC_EVAL_LISTS:
            kind, values = _TREC_EVAL_LISTS[text]
            return [f"{text}_{v}" for v in values]
        return [text] if _trec_eval_spec(text) is not None else None
    if name in _TREC_EVAL_TEXT:
        return [f"{name}_{params}"]
    kind, _ = _TREC_EVAL_LISTS[name]
    printed = []
    for value in params.split(","):
        try:
            number = float(value)
        except ValueError:
            return None
        shown = str(int(number)) if kind == "int" else f"{number:.2f}"
        printed.append(f"{name}_{shown}")
    return list(dict.fromkeys(printed))


def _trec_eval_spec(printed: str) -> str | None:
    for pattern, template in TREC_EVAL_NAMES:
        match = pattern.fullmatch(printed)
        if match:
            return template(match.group(1))
    return None


def _trec_eval(text: str) -> list[ToolMeasure] | None:
    printed = _trec_eval_printed(text)
    if printed is None:
        return None
    found = []
    for name in printed:
        spec = _trec_eval_spec(name)
        if spec is None:
            raise DialectError(f"'{text}' gives '{name}', which trec_eval does not print")
        found.append(
            ToolMeasure("trec_eval", name, _labelled(spec, name, "trec_eval"), "trec_eval")
        )
    return found


# ranx 0.3.21's metric names (ranx.metrics.metric_switch) -> receval's metric
RANX_NAMES: dict[str, str] = {
    "hits": "hits",
    "hit_rate": "hit_rate",
    "precision": "precision",
    "recall": "recall",
    "f1": "f1",
    "r-precision": "r_precision",
    "mrr": "mrr",
    "map": "map",
    "dcg": "dcg",
    "dcg_burges": "dcg(gain=exponential)",
    "ndcg": "ndcg",
    "ndcg_burges": "ndcg(gain=exponential)",
    "bpref": "bpref",
    "rbp": "rbp",
}
_RANX = re.compile(r"(?P<name>[a-z_\-]+?)(?:(?P<sep>[@.])(?P<k>\d+))?(?:-l(?P<level>\d+))?")


def _ranx(text: str) -> list[ToolMeasure] | None:
    """ranx:NAME[@k][-lN]: its `evaluate` syntax (rbp's persistence as rbp.95 or rbp@95)."""
    match = _RANX.fullmatch(text)
    if match is None or match["name"] not in RANX_NAMES:
        return None
    name, k, level = match["name"], match["k"], match["level"]
    base = MetricSpec.parse(RANX_NAMES[name])
    params = dict(base.params)
    cutoff = None
    if name == "rbp":
        if k is None:
            raise DialectError("ranx's rbp needs its persistence, e.g. ranx:rbp.95 (p = 0.95)")
        params["p"] = float(f"0.{k}")
    elif k is not None:
        if match["sep"] != "@":
            return None
        cutoff = int(k) or None  # ranx's k = 0: the whole list
    settings: dict[str, object] = {}
    if level is not None:
        settings["relevance_threshold"] = int(level)
    label = f"ranx:{text}"
    spec = MetricSpec(base.name, cutoff, tuple(params.items()), label, "ranx")
    return [ToolMeasure("ranx", label, _checked(spec), "ranx", settings)]


def _labelled(spec: str, label: str, tool: str) -> MetricSpec:
    parsed = MetricSpec.parse(spec)
    return _checked(MetricSpec(parsed.name, parsed.k, parsed.params, label, tool))


def _checked(spec: MetricSpec) -> MetricSpec:
    try:
        return resolve(spec)
    except SpecError as error:  # a parameter value out of the metric's range
        raise DialectError(str(error)) from None


# ir_measures 0.4.3: each measure's provider (its DefaultPipeline's first that supports
# it) decides the conventions. Every provider averages over every query of the qrels, a
# query missing from the run counting 0 (providers/base.py: Evaluator.iter_calc).
_EVERY_USER: dict[str, object] = {
    "users_without_recommendations": "zero",
    "users_without_relevant": "zero",
}
# pytrec_eval: trec_eval 9, scores as floats, ties by docno descending
_PYTREC: dict[str, object] = {**_EVERY_USER}
# the counts are summed over the queries of the run (the others are filled with 0)
_PYTREC_COUNT: dict[str, object] = {"users_without_recommendations": "skip"}
# ir_measures' own and pyndeval's: doubles, ties by docno ascending
_DOCNO_ASC: dict[str, object] = {
    **_EVERY_USER,
    "score_precision": "float64",
    "tie_break": "item_text_asc",
}
# gdeval.pl: doubles in perl, ties by docno descending, grades as integers
_GDEVAL: dict[str, object] = {**_EVERY_USER, "score_precision": "float64"}
# cwl_eval: a stable sort on the score alone, doubles
_CWL: dict[str, object] = {**_EVERY_USER, "score_precision": "float64", "tie_break": "input_order"}


@dataclass(frozen=True)
class _IrMeasure:
    template: str  # receval's spec; {k} the cutoff
    provider: str
    settings: dict[str, object]
    params: tuple[str, ...] = ("rel",)  # what it takes beside its cutoff
    cutoff: str = "optional"  # "required", "optional", "none", "level" (IPrec@0.1)


IR_MEASURES: dict[str, _IrMeasure] = {
    "P": _IrMeasure("precision@{k}", "pytrec_eval", _PYTREC, cutoff="required"),
    "R": _IrMeasure("recall@{k}", "pytrec_eval", _PYTREC, cutoff="required"),
    "nDCG": _IrMeasure("ndcg@{k}", "pytrec_eval", _PYTREC, params=("dcg",)),
    "AP": _IrMeasure("map@{k}", "pytrec_eval", _PYTREC),
    "RR": _IrMeasure("mrr", "pytrec_eval", _PYTREC, cutoff="none"),
    "Rprec": _IrMeasure("r_precision", "pytrec_eval", _PYTREC, cutoff="none"),
    "Bpref": _IrMeasure("bpref", "pytrec_eval", _PYTREC, cutoff="none"),
    "infAP": _IrMeasure("infap", "pytrec_eval", _PYTREC, cutoff="none"),
    "Success": _IrMeasure("hit_rate@{k}", "pytrec_eval", _PYTREC, cutoff="required"),
    "IPrec": _IrMeasure("iprec_at_recall(level={k})", "pytrec_eval", _PYTREC, cutoff="level"),
    "SetP": _IrMeasure("set_precision", "pytrec_eval", _PYTREC, ("rel", "relative"), "none"),
    "SetR": _IrMeasure("set_recall", "pytrec_eval", _PYTREC, cutoff="none"),
    "SetF": _IrMeasure("set_f1", "pytrec_eval", _PYTREC, ("rel", "beta"), "none"),
    "SetAP": _IrMeasure("set_map", "pytrec_eval", _PYTREC, cutoff="none"),
    "NumRel": _IrMeasure("num_rel", "pytrec_eval", _PYTREC_COUNT, (), "none"),
    "NumRet": _IrMeasure("num_ret", "pytrec_eval", _PYTREC_COUNT, cutoff="none"),
    "Judged": _IrMeasure(
        "judged@{k}(denominator=list_length,negative_grades=judged)", "judged", _DOCNO_ASC, ()
    ),
    "ERR": _IrMeasure("err@{k}", "gdeval", _GDEVAL, (), "required"),
    "nERR_IA": _IrMeasure(
        "nerr@{k}(grades=binary,max_grade=1)", "pyndeval", _DOCNO_ASC, cutoff="required"
    ),
    "RBP": _IrMeasure("rbp(gain=binary)", "cwl_eval", _CWL, ("rel", "p"), "none"),
}
# ir_measures' other names for the same measures (written with the ir_measures: prefix
# only: unprefixed, MAP or NDCG would change what an upper-case receval name means)
IR_MEASURES_ALIASES = {
    "MAP": "AP",
    "MRR": "RR",
    "NDCG": "nDCG",
    "BPref": "Bpref",
    "RPrec": "Rprec",
    "Precision": "P",
    "Recall": "R",
    "NumRelRet": "NumRet(rel=1)",
    "SetRelP": "SetP(relative=True)",
}
_IR_MEASURE = re.compile(
    r"(?P<name>[A-Za-z_]\w*)\s*(?:\((?P<params>[^()]*)\))?\s*(?:@\s*(?P<at>[\d.]+))?"
)


def _ir_measures(text: str, aliases: bool = False) -> list[ToolMeasure] | None:
    """Name(param=value, ...)@cutoff, ir_measures' syntax (util.py: parse_measure)."""
    match = _IR_MEASURE.fullmatch(text.strip())
    if match is None:
        return None
    name = match["name"]
    if aliases and name in IR_MEASURES_ALIASES:
        alias = IR_MEASURES_ALIASES[name]
        rest = text.strip()[len(name) :]
        if "(" in alias and rest.startswith("("):
            alias_name, _, alias_params = alias.partition("(")
            return _ir_measures(f"{alias_name}({alias_params[:-1]},{rest[1:]}")
        return _ir_measures(alias + rest)
    measure = IR_MEASURES.get(name)
    if measure is None:
        return None
    params = _ir_params(match["params"], text)
    at = match["at"]
    return [_ir_measure(name, measure, params, at, text)]


def _ir_params(raw: str | None, text: str) -> dict[str, str]:
    params: dict[str, str] = {}
    for part in (raw or "").split(","):
        if not part.strip():
            continue
        key, sep, value = (p.strip() for p in part.partition("="))
        if not sep or not key or not value:
            raise DialectError(f"'{text}': '{part.strip()}' is not ir_measures' name=value")
        params[key] = value.strip("'\"")
    return params


def _ir_measure(
    name: str, measure: _IrMeasure, params: dict[str, str], at: str | None, text: str
) -> ToolMeasure:
    for key in params:
        if key not in measure.params:
            takes = ", ".join(measure.params) or "none"
            raise DialectError(
                f"'{text}': receval reproduces {name} without '{key}' (its parameters here: "
                f"{takes})"
            )
    if measure.cutoff == "required" and at is None:
        raise DialectError(f"'{text}': ir_measures' {name} needs a cutoff, e.g. {name}@10")
    if measure.cutoff in ("none",) and at is not None:
        raise DialectError(f"'{text}': receval reproduces ir_measures' {name} without a cutoff")
    if measure.cutoff == "level" and at is None:
        raise DialectError(f"'{text}': ir_measures' {name} needs a recall level, e.g. {name}@0.1")
    if at is not None and measure.cutoff != "level" and not at.isdigit():
        raise DialectError(f"'{text}': ir_measures' cutoff is a whole number, not '{at}'")
    template = measure.template
    if measure.cutoff == "level":
        template = template.replace("{k}", repr(float(at or 0)))
    elif at is None:
        template = template.replace("@{k}", "")
    else:
        template = template.replace("{k}", str(int(at)))
    settings = dict(measure.settings)
    if "rel" in params:
        settings["relevance_threshold"] = _whole(params["rel"], text, "rel")
    if name == "RBP":
        if "rel" not in params:
            raise DialectError(
                f"'{text}': ir_measures computes RBP with cwl_eval, which needs rel, e.g. "
                "RBP(p=0.8,rel=1)"
            )
        template = template.replace(")", f",p={float(params.get('p', 0.8))!r})")
    if name == "nDCG" and params.get("dcg", "log2") != "log2":
        if params["dcg"] != "exp-log2" or at is None:
            raise DialectError(
                f"'{text}': receval reproduces ir_measures' nDCG with dcg=log2, and "
                "dcg=exp-log2 with a cutoff (gdeval's)"
            )
        template = template.replace("@", "@") + "(gain=exponential)"
        settings = dict(_GDEVAL)
    if name == "SetP" and params.get("relative", "False") == "True":
        template = "relative_precision"
    if name == "SetF" and "beta" in params:
        beta = float(params["beta"])
        template = "set_f1" if beta == 1.0 else f"set_fbeta(beta={beta**0.5!r})"
    if name == "NumRet" and "rel" in params:
        template = "num_rel_ret"
    label = _ir_printed(name, params, at, measure)
    spec = _labelled(template, label, "ir_measures")
    return ToolMeasure("ir_measures", label, spec, "pytrec_eval", settings, measure.provider)


def _whole(value: str, text: str, key: str) -> int:
    if not value.lstrip("-").isdigit():
        raise DialectError(f"'{text}': {key} is a whole grade in ir_measures, not '{value}'")
    return int(value)


_IR_DEFAULTS = {"rel": "1", "p": "0.8", "dcg": "log2", "beta": "1.0", "relative": "False"}


def _ir_printed(name: str, params: dict[str, str], at: str | None, measure: _IrMeasure) -> str:
    """The measure as ir_measures prints it (measures/base.py: __repr__): the parameters
    that differ from their defaults, in the order given, then @cutoff."""
    shown = []
    for key, value in params.items():
        default = None if (name, key) == ("RBP", "rel") else _IR_DEFAULTS.get(key)
        if default is not None and _same(value, default):
            continue
        quoted = f"'{value}'" if key == "dcg" else value
        shown.append(f"{key}={quoted}")
    text = name + (f"({','.join(shown)})" if shown else "")
    if name == "NumRet" and "rel" in params:
        text = f"NumRet(rel={params['rel']})"
    return text + (f"@{at}" if at is not None else "")


def _same(value: str, default: str) -> bool:
    try:
        return float(value) == float(default)
    except ValueError:
        return value == default


_READERS: dict[str, Callable[[str], list[ToolMeasure] | None]] = {
    "trec_eval": _trec_eval,
    "ir_measures": _ir_measures,
    "ranx": _ranx,
}


@cache
def tool_measures(text: str, tool: str | None = None) -> tuple[ToolMeasure, ...] | None:
    """The tool measures a metric name means: `tool:NAME`, or NAME read as `tool`'s (None:
    any tool's, trec_eval first); None when the name is no tool's."""
    text = text.strip()
    prefix, colon, rest = text.partition(":")
    if colon and prefix in _READERS:
        found = _ir_measures(rest, aliases=True) if prefix == "ir_measures" else None
        found = found or _READERS[prefix](rest)
        if found is None:
            raise DialectError(f"'{rest}' is not a {prefix} measure")
        if prefix != "ranx":  # ranx's names keep the prefix: they are receval's too
            found = [_prefixed(m, prefix) for m in found] if text != rest else found
        return tuple(found)
    for name in (tool,) if tool is not None else tuple(_READERS):
        if name == "ranx":
            continue  # only with its prefix
        found = _READERS[name](text)
        if found is not None:
            return tuple(found)
    return None


def _prefixed(measure: ToolMeasure, prefix: str) -> ToolMeasure:
    """A measure written `tool:NAME`: keyed so, as the user wrote it."""
    label = f"{prefix}:{measure.name}"
    spec = MetricSpec(measure.spec.name, measure.spec.k, measure.spec.params, label, measure.tool)
    return ToolMeasure(measure.tool, label, spec, measure.preset, measure.settings, measure.source)


def receval_knows(text: str) -> bool:
    """Whether receval reads `text` as one of its own metrics (names are case-blind)."""
    try:
        resolve(MetricSpec.parse(text))
    except (SpecError, SpecSyntaxError):
        return False
    return True


def is_tools_own(text: str) -> bool:
    """A name only a tool's notation reads: a prefix, a case receval never writes
    (nDCG@10, P_10, infAP), or a name receval does not know (ndcg_cut_10)."""
    prefix, colon, _ = text.partition(":")
    if colon and prefix in _READERS:
        return True
    if tool_measures(text) is None:
        return False
    base = re.split(r"[@(.]", text, maxsplit=1)[0]
    return base != base.lower() or not receval_knows(text)


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
    parsed as receval's (a tool's name receval also knows, `map`, names the same metric)."""
    try:
        found = tool_measures(key) if is_tools_own(key) else None
    except SpecSyntaxError:
        found = None
    if found is not None and len(found) == 1:
        return found[0].spec
    return MetricSpec.parse(key)
