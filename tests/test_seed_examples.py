"""The worked examples of the source documents (../shared/seeds), reproduced.

Each test names the seed and asserts the value to the precision the seed prints. Where a
seed's own arithmetic is wrong, the test asserts the correct value and says so.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

import receval_cli


def one_user(
    grades: list[float] | tuple[float, ...], extra_truth: dict[str, float] | None = None
) -> tuple:
    """A user whose list holds items i1..in in order, item i_j graded grades[j-1]."""
    items = [f"i{j}" for j in range(1, len(grades) + 1)]
    predictions = pl.DataFrame(
        {"user": ["u"] * len(items), "item": items, "rank": list(range(1, len(items) + 1))}
    )
    truth_items = dict(zip(items, grades, strict=True)) | (extra_truth or {})
    truth = pl.DataFrame(
        {
            "user": ["u"] * len(truth_items),
            "item": list(truth_items),
            "relevance": list(truth_items.values()),
        }
    )
    return predictions, truth


def hits_list(length: int, hit_ranks: list[int], n_relevant: int) -> tuple:
    """A user whose list has relevant items at hit_ranks, and n_relevant relevant in all."""
    items = [f"i{j}" for j in range(1, length + 1)]
    relevant = [f"i{j}" for j in hit_ranks]
    relevant += [f"missed{j}" for j in range(n_relevant - len(hit_ranks))]
    predictions = pl.DataFrame(
        {"user": ["u"] * length, "item": items, "rank": list(range(1, length + 1))}
    )
    truth = pl.DataFrame({"user": ["u"] * len(relevant), "item": relevant})
    return predictions, truth


class TestQualityEvaluationSeed:
    """seed 000: CG, DCG and NDCG of the list graded (2, 0, 3, 2)."""

    def test_cg_is_the_sum_of_grades(self) -> None:
        report = receval_cli.evaluate(*one_user([2, 0, 3, 2]), ["cg@4"])
        assert report.metrics["cg@4"] == 7

    def test_dcg_of_the_ideal_order_is_5_3(self) -> None:
        report = receval_cli.evaluate(*one_user([3, 2, 2, 0]), ["dcg@4", "idcg@4", "ndcg@4"])
        assert round(report.metrics["dcg@4"], 1) == 5.3
        assert report.metrics["dcg@4"] == pytest.approx(3 + 2 / math.log2(3) + 2 / 2)
        assert report.metrics["ndcg@4"] == pytest.approx(1.0)

    def test_ndcg_of_the_initial_order_is_0_83(self) -> None:
        report = receval_cli.evaluate(*one_user([2, 0, 3, 2]), ["dcg@4", "idcg@4", "ndcg@4"])
        assert round(report.metrics["dcg@4"], 1) == 4.4  # 2 + 0 + 1.5 + 0.9
        assert round(report.metrics["idcg@4"], 1) == 5.3
        assert round(report.metrics["ndcg@4"], 2) == 0.83

    def test_exponential_gain_variant(self) -> None:
        # The seed's alternative: (2^rel - 1) / log2(i + 1).
        report = receval_cli.evaluate(*one_user([2, 0, 3, 2]), ["dcg@4(gain=exponential)"])
        expected = 3 / 1 + 0 + 7 / 2 + 3 / math.log2(5)
        assert report.metrics["dcg@4(gain=exponential)"] == pytest.approx(expected)


class TestEvaluationMetricsSeed:
    """seed 001: recall@k and precision@k of one list; MRR over four users."""

    # 8 relevant items; 3 hits in the top 5, 5 in the top 8 and in the top 10.
    data = hits_list(10, [1, 3, 5, 6, 8], 8)

    @pytest.mark.parametrize(
        ("metric", "expected"),
        [
            ("recall@10", 5 / 8),
            ("recall@8", 5 / 8),
            ("recall@5", 3 / 8),
            ("precision@10", 5 / 10),
            ("precision@5", 3 / 5),
        ],
    )
    def test_recall_and_precision(self, metric: str, expected: float) -> None:
        assert receval_cli.evaluate(*self.data, [metric]).metrics[metric] == pytest.approx(expected)

    def mrr_users(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        # First relevant item at positions 1, 3, 6 and 2 for users 1 to 4.
        firsts = {1: 1, 2: 3, 3: 6, 4: 2}
        predictions = pl.DataFrame(
            [(u, f"i{r}", r) for u in firsts for r in range(1, 7)],
            schema=["user", "item", "rank"],
            orient="row",
        )
        truth = pl.DataFrame(
            [(u, f"i{r}") for u, r in firsts.items()], schema=["user", "item"], orient="row"
        )
        return predictions, truth

    def test_mrr_is_one_half(self) -> None:
        report = receval_cli.evaluate(*self.mrr_users(), ["mrr"])
        assert report.metrics["mrr"] == pytest.approx((1 + 1 / 3 + 1 / 6 + 1 / 2) / 4)
        assert report.metrics["mrr"] == pytest.approx(0.5)

    def test_mrr_at_5_drops_the_user_whose_first_hit_is_at_6(self) -> None:
        report = receval_cli.evaluate(*self.mrr_users(), ["mrr@5"])
        # (1 + 0.33 + 0 + 0.5) / 4 = 11/24 = 0.458; the seed prints it truncated, "≈ 0.45".
        assert report.metrics["mrr@5"] == pytest.approx(11 / 24)
        assert math.floor(report.metrics["mrr@5"] * 100) / 100 == 0.45


class TestEvaluationOfRecommenderSystemsSeed:
    """seed 002: the ratings table, average precision, and NDCG with the older discount."""

    def test_precision_and_recall_at_3_are_two_thirds(self) -> None:
        # Actual/predicted ratings of user1; "?" = unrated. Relevant: rating > 3.5. The seed
        # ignores recommendations of unrated items, so the list holds the rated ones only.
        table = {
            "item1": (4, 2.3),
            "item2": (2, 3.6),
            "item3": (3, 3.4),
            "item5": (5, 4.5),
            "item7": (2, 4.9),
            "item10": (4, 4.3),
        }
        predictions = pl.DataFrame(
            {
                "user": ["user1"] * len(table),
                "item": list(table),
                "score": [p for _, p in table.values()],
            }
        )
        truth = pl.DataFrame(
            {
                "user": ["user1"] * len(table),
                "item": list(table),
                "relevance": [float(a) for a, _ in table.values()],
            }
        )
        report = receval_cli.evaluate(
            predictions,
            truth,
            ["precision@3", "recall@3"],
            conventions={"relevance_threshold": 3.5},
        )
        assert report.metrics["precision@3"] == pytest.approx(2 / 3)
        assert report.metrics["recall@3"] == pytest.approx(2 / 3)

    @pytest.mark.parametrize(
        ("hit_ranks", "expected"),
        [([1, 4, 5], 0.7), ([2, 3, 4], 23 / 36)],
    )
    def test_average_precision(self, hit_ranks: list[int], expected: float) -> None:
        data = hits_list(5, hit_ranks, 3)
        report = receval_cli.evaluate(*data, ["map@5", "map"])
        assert report.metrics["map@5"] == pytest.approx(expected)
        assert report.metrics["map"] == pytest.approx(expected)
        assert round(report.metrics["map@5"], 3) == round(expected, 3)

    def test_ndcg_example_2_with_the_jarvelin_discount(self) -> None:
        data = hits_list(5, [2, 3, 4], 3)
        names = [f"{m}@5(discount=jarvelin)" for m in ("dcg", "idcg", "ndcg")]
        values = receval_cli.evaluate(*data, names).metrics
        assert round(values[names[0]], 2) == 2.13
        assert round(values[names[1]], 2) == 2.63
        assert round(values[names[2]], 2) == 0.81

    grades = (3, 2, 3, 0, 0, 1, 2, 2, 3, 0)

    def test_ten_movies_discounted_cumulative_gain(self) -> None:
        names = [f"dcg@{k}(discount=jarvelin)" for k in range(1, 11)]
        values = receval_cli.evaluate(*one_user(self.grades), names).metrics
        # The seed's running DCG: 3, 5, 6.89, (6.89, 6.89,) 7.28, 7.99, 8.66, 9.61, 9.61.
        printed = [3, 5, 6.89, 6.89, 6.89, 7.28, 7.99, 8.66, 9.61, 9.61]
        assert [round(values[n], 2) for n in names] == printed

    def test_ten_movies_ideal_dcg_and_ndcg(self) -> None:
        k_values = range(1, 11)
        names = {k: f"idcg@{k}(discount=jarvelin)" for k in k_values}
        ndcg = {k: f"ndcg@{k}(discount=jarvelin)" for k in k_values}
        values = receval_cli.evaluate(
            *one_user(self.grades), [*names.values(), *ndcg.values()]
        ).metrics
        # Ideal order 3, 3, 3, 2, 2, 2, 1, 0, 0, 0. The seed's running sum adds 0.86 after
        # 7.89 and skips the 1 at position 4 (it prints 8.75, 9.52, 9.88); the correct sums:
        correct = [3, 6, 7.89, 8.89, 9.75, 10.53, 10.88, 10.88, 10.88, 10.88]
        assert [round(values[names[k]], 2) for k in k_values] == correct
        # The seed's NDCG row starts 1, 0.83, 0.87, which is unaffected by its slip.
        assert [round(values[ndcg[k]], 2) for k in (1, 2, 3)] == [1.0, 0.83, 0.87]
        assert round(values[ndcg[10]], 2) == round(9.61 / 10.88, 2)


class TestJurityDefinitionsSeed:
    """seed 004: Jurity's Precision@k divides by the returned list, NDCG's ideal is uncut."""

    def test_precision_divides_by_the_list_length(self) -> None:
        data = hits_list(3, [1, 3], 4)  # a list of 3 items, asked at k = 5
        report = receval_cli.evaluate(
            *data, ["precision@5"], conventions={"precision_denominator": "list_length"}
        )
        assert report.metrics["precision@5"] == pytest.approx(2 / 3)

    def test_map_normalises_by_min_k_relevant(self) -> None:
        data = hits_list(5, [1, 2], 4)  # P@1 = 1, P@2 = 1; min(2, 4) = 2
        report = receval_cli.evaluate(
            *data, ["map@2"], conventions={"ap_denominator": "min_k_relevant"}
        )
        assert report.metrics["map@2"] == pytest.approx(1.0)

    def test_ndcg_ideal_over_all_relevant_items(self) -> None:
        data = hits_list(2, [1], 3)  # binary relevance, |A| = 3, asked at k = 2
        report = receval_cli.evaluate(*data, ["ndcg@2"], conventions={"ideal_dcg": "all_relevant"})
        ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
        assert report.metrics["ndcg@2"] == pytest.approx(1 / ideal)
