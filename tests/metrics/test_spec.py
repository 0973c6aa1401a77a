"""The metric spec grammar: parse, print, round-trip, and the registry's checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from receval_cli.metrics import REGISTRY, MetricSpec, SpecError, SpecSyntaxError, resolve


@pytest.mark.parametrize(
    ("text", "name", "k", "params"),
    [
        ("ndcg@10", "ndcg", 10, ()),
        ("NDCG@10", "ndcg", 10, ()),
        ("map", "map", None, ()),
        ("map@all", "map", None, ()),
        (" precision@5 ", "precision", 5, ()),
        ("ndcg@10(gain=exponential)", "ndcg", 10, (("gain", "exponential"),)),
        ("fbeta@5( beta = 0.5 )", "fbeta", 5, (("beta", 0.5),)),
        ("fbeta@5(beta=2)", "fbeta", 5, (("beta", 2),)),
        (
            "ndcg(gain=exponential,discount=log2)",
            "ndcg",
            None,
            (("discount", "log2"), ("gain", "exponential")),
        ),
    ],
)
def test_parse(text: str, name: str, k: int | None, params: tuple) -> None:
    spec = MetricSpec.parse(text)
    assert (spec.name, spec.k, spec.params) == (name, k, params)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ndcg@0", "positive integer"),
        ("ndcg@-1", "positive integer"),
        ("ndcg@ten", "positive integer"),
        ("ndcg@10(gain)", "write name=value"),
        ("ndcg@10(gain=linear,gain=exponential)", "given twice"),
        ("@10", "not a metric spec"),
        ("ndcg@10)", "not a metric spec"),
    ],
)
def test_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(SpecSyntaxError, match=message):
        MetricSpec.parse(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ndgc@10", "Did you mean 'ndcg'"),
        ("r_precision@10", "takes no cutoff"),
        ("ndcg@10(gian=linear)", "Did you mean 'gain'"),
        ("ndcg@10(gain=expo)", "choose one of linear, exponential"),
        ("fbeta@10", "needs the parameter 'beta'"),
        ("fbeta@10(beta=0)", "positive number"),
        ("fbeta@10(beta=inf)", "positive number"),
        ("recall@10(beta=1)", "has no parameter 'beta'"),
    ],
)
def test_registry_errors(text: str, message: str) -> None:
    with pytest.raises(SpecError, match=message.replace("(", r"\(")):
        resolve(MetricSpec.parse(text))


def test_aliases_resolve_to_the_canonical_name() -> None:
    assert str(resolve(MetricSpec.parse("ap@10"))) == "map@10"
    assert str(resolve(MetricSpec.parse("success@5"))) == "hit_rate@5"
    assert str(resolve(MetricSpec.parse("recip_rank"))) == "mrr"


names = st.sampled_from(sorted(REGISTRY))
values = st.one_of(
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True).filter(
        lambda s: s.lower() not in {"inf", "infinity", "nan"}
    ),
)
params = st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True), values, max_size=3)


@given(names, st.none() | st.integers(min_value=1, max_value=10**6), params)
def test_string_form_round_trips(name: str, k: int | None, given_params: dict) -> None:
    spec = MetricSpec(name, k, tuple(given_params.items()))
    assert MetricSpec.parse(str(spec)) == spec
    assert hash(MetricSpec.parse(str(spec))) == hash(spec)


SHARES_BELOW_ONE = sorted(
    (name, param.name)
    for name, metric in REGISTRY.items()
    for param in metric.params
    if param.share and param.below_one
)


@pytest.mark.parametrize(("metric", "param"), SHARES_BELOW_ONE)
def test_a_share_below_one_states_one_range_at_either_end(metric: str, param: str) -> None:
    """0 and 1 are both outside a share that excludes 1 (miscalibration's alpha, rbp's p):
    the two refusals state the same, true range (0 said "in (0, 1]" before)."""
    messages = []
    for value in (0, 1):
        with pytest.raises(SpecError) as caught:
            resolve(MetricSpec.parse(f"{metric}({param}={value})"))
        messages.append(str(caught.value).split("; ", 1)[1])
    assert messages[0] == messages[1] == "it must lie strictly between 0 and 1, e.g. 0.9"


def test_the_shares_below_one_include_miscalibrations_alpha() -> None:
    assert ("miscalibration", "alpha") in SHARES_BELOW_ONE
