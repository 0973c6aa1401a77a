"""trec_eval's measure names (NIST trec_eval 10.0): what each printed name means in
receval, and the -m forms that print several (P.5,10; bare P: its default cutoffs).
Every one runs under the trec_eval preset (config/presets.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

from receval_cli.metrics.tool_measure import DialectError, ToolMeasure, labelled


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
    # its pair parameter: -m rbp.p=0.5 prints rbp_p=0.5
    (re.compile(r"rbp_p=([\d.]+)"), lambda m: f"rbp(p={_number(m)})"),
    (re.compile(r"rbp_resid_p=([\d.]+)"), lambda m: f"rbp_resid(p={_number(m)})"),
    # a gain map: -m ndcg.1=3,2=9,4=4.5 prints ndcg_1=3,2=9,4=4.5
    (
        re.compile(r"ndcg_((?:\d+=[-\d.]+,?)+)"),
        lambda m: "ndcg(gains=" + m.replace("=", ":").replace(",", ";") + ")",
    ),
]

# the measures of trec_eval whose parameter is a list of values, each printed as its own
# measure (-m P.5,10 prints P_5 and P_10), with the values -m NAME (and -m all_trec) uses
_CUTOFFS = ("5", "10", "15", "20", "30", "100", "200", "500", "1000")
TREC_EVAL_LISTS: dict[str, tuple[str, tuple[str, ...]]] = {
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
_TREC_EVAL_TEXT = ("utility", "11pt_avg", "set_F", "ndcg", "rbp", "rbp_resid")


def _trec_eval_printed(text: str) -> list[str] | None:
    """The names trec_eval prints for `text` (a printed name, a -m form NAME.PARAMS, or the
    bare name of a list measure); None when it is none of these."""
    name, dot, params = text.partition(".")
    if not dot or name not in (*TREC_EVAL_LISTS, *_TREC_EVAL_TEXT):
        if text in TREC_EVAL_LISTS:
            kind, values = TREC_EVAL_LISTS[text]
            return [f"{text}_{v}" for v in values]
        return [text] if _trec_eval_spec(text) is not None else None
    if name in _TREC_EVAL_TEXT:
        return [f"{name}_{params}"]
    kind, _ = TREC_EVAL_LISTS[name]
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


def trec_eval_measures(text: str) -> list[ToolMeasure] | None:
    printed = _trec_eval_printed(text)
    if printed is None:
        return None
    found = []
    for name in printed:
        spec = _trec_eval_spec(name)
        if spec is None:
            raise DialectError(f"'{text}' gives '{name}', which trec_eval does not print")
        found.append(ToolMeasure("trec_eval", name, labelled(spec, name, "trec_eval"), "trec_eval"))
    return found
