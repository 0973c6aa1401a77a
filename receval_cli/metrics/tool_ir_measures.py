"""ir_measures' measure names (ir_measures 0.4.3, its syntax Name(param=value)@cutoff):
what each means in receval, with the conventions of the provider that computes it there
(its DefaultPipeline: pytrec_eval, cwl_eval, pyndeval, judged, msmarco, gdeval)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from receval_cli.metrics.tool_measure import DialectError, ToolMeasure, labelled

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
    # pyndeval (ndeval's C code): the qrels' iteration is the intent (a plain qrels file:
    # one intent); receval reads it from ground_truth.columns.intent (metrics/intent_aware.py)
    "alpha_nDCG": _IrMeasure(
        "alpha_ndcg@{k}", "pyndeval", _DOCNO_ASC, ("rel", "alpha"), "required"
    ),
    "ERR_IA": _IrMeasure("err_ia@{k}", "pyndeval", _DOCNO_ASC, cutoff="required"),
    "nERR_IA": _IrMeasure("nerr_ia@{k}", "pyndeval", _DOCNO_ASC, cutoff="required"),
    "NRBP": _IrMeasure("nrbp", "pyndeval", _DOCNO_ASC, ("rel", "alpha", "beta"), "none"),
    "nNRBP": _IrMeasure("nnrbp", "pyndeval", _DOCNO_ASC, ("rel", "alpha", "beta"), "none"),
    "P_IA": _IrMeasure("p_ia@{k}", "pyndeval", _DOCNO_ASC, cutoff="required"),
    "StRecall": _IrMeasure("s_recall@{k}", "pyndeval", _DOCNO_ASC, cutoff="required"),
    "RBP": _IrMeasure("rbp(gain=binary)", "cwl_eval", _CWL, ("rel", "p"), "none"),
}
# each measure's own parameters in ir_measures 0.4.3 (measures/*.py: SUPPORTED_PARAMS),
# beside the cutoff
IR_MEASURES_PARAMS: dict[str, tuple[str, ...]] = {
    "P": ("rel", "judged_only"),
    "R": ("rel", "judged_only"),
    "nDCG": ("dcg", "gains", "judged_only"),
    "AP": ("rel", "judged_only"),
    "RR": ("rel", "judged_only"),
    "Rprec": ("rel", "judged_only"),
    "Bpref": ("rel",),
    "infAP": ("rel",),
    "Success": ("rel", "judged_only"),
    "IPrec": ("rel", "judged_only"),
    "SetP": ("rel", "relative", "judged_only"),
    "SetR": ("rel",),
    "SetF": ("rel", "beta", "judged_only"),
    "SetAP": ("rel", "judged_only"),
    "NumRel": ("rel",),
    "NumRet": ("rel",),
    "Judged": (),
    "ERR": (),
    "alpha_nDCG": ("alpha", "rel", "judged_only"),
    "ERR_IA": ("rel", "judged_only"),
    "nERR_IA": ("rel", "judged_only"),
    "NRBP": ("alpha", "beta", "rel"),
    "nNRBP": ("alpha", "beta", "rel"),
    "P_IA": ("rel", "judged_only"),
    "StRecall": ("rel",),
    "RBP": ("p", "rel"),
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


def ir_measures_measures(text: str, aliases: bool = False) -> list[ToolMeasure] | None:
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
            return ir_measures_measures(f"{alias_name}({alias_params[:-1]},{rest[1:]}")
        return ir_measures_measures(alias + rest)
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
        if key not in IR_MEASURES_PARAMS[name]:
            theirs = ", ".join(IR_MEASURES_PARAMS[name]) or "none"
            raise DialectError(
                f"'{text}': ir_measures' {name} takes no '{key}' (its parameters: {theirs})"
            )
        if key not in measure.params:
            takes = ", ".join(measure.params) or "none"
            raise DialectError(
                f"'{text}': receval reproduces {name} without '{key}' (its parameters here: "
                f"{takes})"
            )
    if measure.cutoff == "required" and at is None:
        raise DialectError(f"'{text}': ir_measures' {name} needs a cutoff, e.g. {name}@10")
    if name == "RR" and at is not None:  # pytrec_eval's takes no cutoff: msmarco's does
        measure = _IrMeasure("mrr@{k}", "msmarco", _DOCNO_ASC, cutoff="optional")
    if measure.cutoff == "none" and at is not None:
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
    if name == "ERR_IA" and at is not None and at.isdigit() and int(at) == 1:
        raise DialectError(
            f"'{text}': ndeval leaves ERR-IA@1 unnormalised (up to the user's number of "
            "intents), where receval's err_ia@1 divides it by them; write err_ia@1 for "
            "receval's, or a cutoff of 2 or more"
        )
    if name in ("alpha_nDCG", "NRBP", "nNRBP"):
        template += _novelty_params(params, text)
    if name == "nDCG" and params.get("dcg", "log2") != "log2":
        if params["dcg"] != "exp-log2" or at is None:
            raise DialectError(
                f"'{text}': receval reproduces ir_measures' nDCG with dcg=log2, and "
                "dcg=exp-log2 with a cutoff (gdeval's)"
            )
        template += "(gain=exponential)"
        settings = dict(_GDEVAL)
    if name == "SetP" and params.get("relative", "False") == "True":
        template = "relative_precision"
    if name == "SetF" and "beta" in params:
        beta = float(params["beta"])
        template = "set_f1" if beta == 1.0 else f"set_fbeta(beta={beta**0.5!r})"
    if name == "NumRet" and "rel" in params:
        template = "num_rel_ret"
    label = _ir_printed(name, params, at, measure)
    spec = labelled(template, label, "ir_measures")
    return ToolMeasure("ir_measures", label, spec, "pytrec_eval", settings, measure.provider)


def _novelty_params(params: dict[str, str], text: str) -> str:
    """alpha (in (0, 1]) and beta (in (0, 1)) as receval's parameters, "" without them."""
    drawn = {}
    for key in ("alpha", "beta"):
        if key not in params:
            continue
        try:
            value = float(params[key])
        except ValueError:
            value = math.nan
        if not 0 < value <= 1 or (key == "beta" and value == 1):
            bounds = "(0, 1]" if key == "alpha" else "(0, 1)"
            raise DialectError(f"'{text}': {key} is a number in {bounds}, not '{params[key]}'")
        drawn[key] = value
    return "(" + ",".join(f"{k}={v!r}" for k, v in drawn.items()) + ")" if drawn else ""


def _whole(value: str, text: str, key: str) -> int:
    if not value.lstrip("-").isdigit():
        raise DialectError(f"'{text}': {key} is a whole grade in ir_measures, not '{value}'")
    return int(value)


_IR_DEFAULTS = {
    "rel": "1",
    "p": "0.8",
    "dcg": "log2",
    "beta": "1.0",
    "relative": "False",
    "alpha": "0.5",
}
_NRBP_DEFAULTS = {"beta": "0.5"}  # NRBP's patience (SetF's beta is 1.0)


def _ir_printed(name: str, params: dict[str, str], at: str | None, measure: _IrMeasure) -> str:
    """The measure as ir_measures prints it (measures/base.py: __repr__): the parameters
    that differ from their defaults, in the order given, then @cutoff."""
    shown = []
    for key, value in params.items():
        default = None if (name, key) == ("RBP", "rel") else _IR_DEFAULTS.get(key)
        if name in ("NRBP", "nNRBP"):
            default = _NRBP_DEFAULTS.get(key, default)
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
