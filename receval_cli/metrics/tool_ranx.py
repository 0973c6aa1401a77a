"""ranx's metric names (ranx 0.3.21, `evaluate`'s syntax NAME[@k][-lN]): what each means
in receval. They are receval's names too, so a config writes them ranx:NAME; they run
under the ranx preset (config/presets.py)."""

from __future__ import annotations

import re

from receval_cli.metrics.spec import MetricSpec
from receval_cli.metrics.tool_measure import DialectError, ToolMeasure, checked_spec

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
    "rbp": "rbp",
}
_RANX = re.compile(r"(?P<name>[a-z][a-z0-9_\-]*?)(?:(?P<sep>[@.])(?P<k>\d+))?(?:-l(?P<level>\d+))?")


def ranx_measures(text: str) -> list[ToolMeasure] | None:
    """ranx:NAME[@k][-lN]: its `evaluate` syntax (rbp's persistence as rbp.95 or rbp@95)."""
    match = _RANX.fullmatch(text)
    if match is not None and match["name"] == "bpref":
        raise DialectError(
            "ranx 0.3.21's bpref is not reproducible: a query without a relevant judgment "
            "raises inside its parallel loop, which leaves 0 for it and for every later query "
            "of that thread (the values change with the thread count); write bpref, "
            "trec_eval's, which ranx's follows where it does not fail"
        )
    if match is None or match["name"] not in RANX_NAMES:
        return None
    name, k, level = match["name"], match["k"], match["level"]
    if name == "r-precision":
        k = None  # ranx's r-precision reads no cutoff (r_precision.py: R is the cutoff)
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
    return [ToolMeasure("ranx", label, checked_spec(spec), "ranx", settings)]
