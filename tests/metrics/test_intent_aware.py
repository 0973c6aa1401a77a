"""The intent-aware measures' per-user computation (metrics/intent_aware.py): ndeval's own
values (tests/peers/ndeval/, pyndeval 0.0.8 through ir_measures 0.4.3) per user and mean,
hand-computed cases, and properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ndeval_golden import GOLDEN, parsed, peer_inputs

from receval_cli.metrics.intent_aware import ideal_order, intent_values
from receval_cli.metrics.stats import IntentRequest


def golden_request(name: str) -> IntentRequest:
    """ir_measures' printed name as a request of the per-user computation."""
    measure, k, params = parsed(name)
    alpha, beta = (float(params.get(key, 0.5)) for key in ("alpha", "beta"))
    return IntentRequest(measure, k, alpha, beta)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_per_user_and_mean_equal_ndevals(name: str) -> None:
    lists, judged = peer_inputs()
    request = golden_request(name)
    golden = GOLDEN[name]
    assert set(golden["per_user"]) == set(judged)  # ir_measures: every user of the qrels
    total = 0.0
    for user, pairs in judged.items():
        value = intent_values(lists.get(user, []), pairs, [request])[request]
        expected = golden["per_user"][user]
        n = len({intent for _, intent in pairs})
        if request.measure == "err_ia" and request.k == 1:
            expected /= max(n, 1)  # ndeval leaves ERR-IA@1 unnormalised (module doc)
        if math.isnan(expected):  # ndeval's nNRBP of a user without relevant items: 0 / 0
            assert (n, request.measure, value) == (0, "nnrbp", 0.0)
        else:
            assert value == pytest.approx(expected, abs=1e-12, rel=0), user
        total += value
    if not math.isnan(golden["mean"]) and request.k != 1:
        assert total / len(judged) == pytest.approx(golden["mean"], abs=1e-12, rel=0)


def test_the_goldens_cover_what_they_promise() -> None:
    """The peer data hold the cases the module's definitions turn on."""
    lists, judged = peer_inputs()
    intents = [len({j for _, j in pairs}) for pairs in judged.values()]
    assert 0 in intents
    assert max(intents) >= 4
    assert any(user not in lists for user in judged)  # users missing from the run
    assert any(user not in judged for user in lists)  # users only in the run
    assert min(map(len, lists.values())) < 5
    assert max(map(len, lists.values())) > 20
    items = {item for rows in lists.values() for item in rows}
    assert {"9", "10", "100"} <= items  # text and number orders differ
    shared = [
        item
        for pairs in judged.values()
        for item in {i for i, _ in pairs}
        if sum(i == item for i, _ in pairs) > 1
    ]
    assert shared  # items relevant to several intents
    assert any(golden_request(n).measure == "err_ia" and v["per_user"] for n, v in GOLDEN.items())
    assert max(GOLDEN["ERR_IA@1"]["per_user"].values()) > 1  # ndeval's unnormalised @1


def test_alpha_ndcg_at_3_by_hand() -> None:
    # intents a and b; relevant pairs: x -> {a, b}, y -> {a}, z -> {b}, w -> {a}.
    # alpha = 0.5, so an intent's gain halves each time it is covered again.
    # Run [y, w, x]: g(1) = 1 (a new), g(2) = 0.5 (a seen once), g(3) = a: 0.25 + b: 1
    # = 1.25. alpha-DCG@3 = 1/log2(2) + 0.5/log2(3) + 1.25/log2(4)
    #                     = 1 + 0.315464876785729 + 0.625 = 1.940464876785729.
    # Greedy ideal: x first (gain 2: a and b new); then y, z and w each gain 0.5 (their
    # intent covered once), a tie broken to the last id in text order: z; then y and w
    # each gain 0.5 again (a still covered once), tie to y. Gains 2, 0.5, 0.5:
    # ideal alpha-DCG@3 = 2 + 0.5/log2(3) + 0.5/log2(4) = 2 + 0.315464876785729 + 0.25
    #                   = 2.565464876785729.
    # alpha-nDCG@3 = 1.940464876785729 / 2.565464876785729 = 0.756379436079802.
    judged = [("x", "a"), ("x", "b"), ("y", "a"), ("z", "b"), ("w", "a")]
    request = IntentRequest("alpha_ndcg", 3, 0.5)
    value = intent_values(["y", "w", "x"], judged, [request])[request]
    run = 1 + 0.5 / math.log2(3) + 1.25 / 2
    ideal = 2 + 0.5 / math.log2(3) + 0.5 / 2
    assert run == pytest.approx(1.940464876785729, abs=1e-15)
    assert value == pytest.approx(run / ideal, abs=1e-15)
    assert value == pytest.approx(0.756379436079802, abs=1e-15)
    assert ideal_order({"x": ["a", "b"], "y": ["a"], "z": ["b"], "w": ["a"]}, 0.5, 3) == [
        "x",
        "z",
        "y",
    ]


def test_err_ia_p_ia_and_s_recall_by_hand() -> None:
    # The same two intents (N = 2), alpha 0.5, run [y, q, x] (q judged for no intent).
    # g = 1, 0, 0.5 + 1 = 1.5. ERR-IA@3 = (1/1 + 0/2 + 1.5/3) / (2/1 + 2*0.5/2 + 2*0.25/3)
    #                                    = 1.5 / 2.6666666666666665 = 0.5625.
    # P-IA@3 = (1 + 0 + 2) / (3 * 2) = 0.5. S-recall@2 = |{a}| / 2 = 0.5; @3: 1.
    judged = [("x", "a"), ("x", "b"), ("y", "a"), ("z", "b"), ("w", "a")]
    requests = [
        IntentRequest("err_ia", 3, 0.5),
        IntentRequest("p_ia", 3, 0.5),
        IntentRequest("s_recall", 2, 0.5),
        IntentRequest("s_recall", 3, 0.5),
    ]
    values = intent_values(["y", "q", "x"], judged, requests)
    assert [values[r] for r in requests] == pytest.approx([0.5625, 0.5, 0.5, 1.0], abs=1e-15)


_items = st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=12)
_pairs = st.lists(
    st.tuples(st.sampled_from("abcdefghij"), st.sampled_from("uvwxyz")), unique=True, max_size=20
)
_alpha = st.sampled_from((0.1, 0.3, 0.5, 0.8, 1.0))


@pytest.mark.slow
@given(ranked=_items, judged=_pairs, alpha=_alpha, k=st.integers(1, 12))
def test_normalised_values_lie_in_zero_one(
    ranked: list[str], judged: list[tuple[str, str]], alpha: float, k: int
) -> None:
    requests = [IntentRequest(m, k, alpha) for m in ("alpha_ndcg", "err_ia", "nerr_ia")]
    requests += [IntentRequest(m, k, alpha) for m in ("p_ia", "s_recall")]
    requests += [IntentRequest(m, None, alpha, 0.6) for m in ("nrbp", "nnrbp")]
    for request, value in intent_values(ranked, judged, requests).items():
        assert -1e-12 <= value <= 1 + 1e-12, request


@pytest.mark.slow
@given(judged=_pairs, alpha=_alpha, k=st.integers(1, 12))
def test_the_greedy_ideal_scores_one(judged: list[tuple[str, str]], alpha: float, k: int) -> None:
    intents_of: dict[str, list[str]] = {}
    for item, intent in judged:
        intents_of.setdefault(item, []).append(intent)
    ideal = ideal_order(intents_of, alpha, None)
    requests = [IntentRequest("alpha_ndcg", k, alpha), IntentRequest("nnrbp", None, alpha)]
    values = intent_values(ideal, judged, requests)
    assert all(v == (1.0 if judged else 0.0) for v in values.values())


@pytest.mark.slow
@given(ranked=_items, relevant=st.sets(st.sampled_from("abcdefghij")), k=st.integers(1, 12))
def test_one_intent_reduces_to_the_plain_measures(
    ranked: list[str], relevant: set[str], k: int
) -> None:
    # one intent: S-recall@k is hit@k, P-IA@k is precision@k (k in the denominator)
    judged = [(item, "0") for item in sorted(relevant)]
    top = ranked[:k]
    s_recall, p_ia = IntentRequest("s_recall", k, 0.5), IntentRequest("p_ia", k, 0.5)
    values = intent_values(ranked, judged, [s_recall, p_ia])
    hits = sum(item in relevant for item in top)
    assert values[s_recall] == (float(hits > 0) if relevant else 0.0)
    assert values[p_ia] == (hits / k if relevant else 0.0)
