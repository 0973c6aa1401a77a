"""The metric registry, filled by importing the metric families."""

from receval_cli.metrics import ranking as ranking  # noqa: I001 (registry order)
from receval_cli.metrics import trec_gain as trec_gain
from receval_cli.metrics import cascade as cascade
from receval_cli.metrics import intent_aware as intent_aware
from receval_cli.metrics import counts as counts
from receval_cli.metrics import judged as judged
from receval_cli.metrics import classification as classification
from receval_cli.metrics import confusion as confusion
from receval_cli.metrics import partial_auc as partial_auc
from receval_cli.metrics import list_quality as list_quality
from receval_cli.metrics import precision_points as precision_points
from receval_cli.metrics import rating as rating
from receval_cli.metrics import ctr as ctr
from receval_cli.metrics import beyond as beyond
from receval_cli.metrics import calibration as calibration
from receval_cli.metrics import exposure as exposure
from receval_cli.metrics import fairness as fairness
from receval_cli.metrics import sampled as sampled
from receval_cli.metrics import propensity as propensity
from receval_cli.metrics.registry import REGISTRY, MetricDef, SpecError, lookup, resolve
from receval_cli.metrics.spec import MetricSpec, SpecSyntaxError

__all__ = [
    "REGISTRY",
    "MetricDef",
    "MetricSpec",
    "SpecError",
    "SpecSyntaxError",
    "lookup",
    "resolve",
]
