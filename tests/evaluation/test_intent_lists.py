"""A ground truth with an intent column (ground_truth.columns.intent, evaluation/
intent_lists.py): its key (user, intent, item), its checks (exit 2 naming the file, the
column and the fix), TREC diversity qrels read as they are, and what the other metrics
read of it (each item's highest grade over its intents)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_user_error, invoke, report_metrics, run_report, write, write_config

# two users; item 10 is relevant to both of user 1's intents, item 9 to one; user 2 has
# one intent. Ids 9, 10, 100: their text and number orders differ.
TRUTH = "user,intent,item,rel\n1,a,10,1\n1,b,10,2\n1,a,9,1\n1,b,100,0\n2,x,9,1\n"
RUN = "user,item,score\n1,9,0.9\n1,100,0.8\n1,10,0.7\n2,9,0.5\n2,10,0.5\n"


def diversity(folder: Path, truth: str = TRUTH, **truth_config: Any) -> dict[str, Any]:
    write(folder / "run.csv", RUN)
    write(folder / "truth.csv", truth)
    columns = truth_config.pop("columns", {"intent": "intent", "relevance": "rel"})
    return {
        "predictions": {"path": "run.csv"},
        "ground_truth": {"path": "truth.csv", "columns": columns, **truth_config},
        "metrics": ["s_recall@1", "s_recall@3", "p_ia@3", "ndcg@3", "hit_rate@1"],
    }


def test_an_item_counts_for_each_of_its_intents(tmp_path: Path) -> None:
    metrics = report_metrics(run_report(tmp_path, diversity(tmp_path), "intents"))
    # user 1: intents a, b; item 9 (rank 1) covers a, 10 (rank 3) covers a and b:
    # S-recall@1 = 1/2, @3 = 2/2; P-IA@3 = (1 + 0 + 2) / (3 * 2) = 0.5.
    # user 2: one intent; items 9 and 10 tie, and either way item 9 is in the top 3:
    # S-recall@3 = 1, P-IA@3 = 1/3; the default tie_break (item_desc, integer ids as
    # numbers) puts 10 first: S-recall@1 = 0.
    assert metrics["s_recall@1"] == pytest.approx((0.5 + 0.0) / 2, abs=1e-15)
    assert metrics["s_recall@3"] == 1.0
    assert metrics["p_ia@3"] == pytest.approx((0.5 + 1 / 3) / 2, abs=1e-15)


def test_other_metrics_read_each_items_highest_grade(tmp_path: Path) -> None:
    with_intents = report_metrics(run_report(tmp_path, diversity(tmp_path), "intents"))
    collapsed = "user,item,rel\n1,10,2\n1,9,1\n1,100,0\n2,9,1\n"
    plain = diversity(tmp_path / "plain", collapsed, columns={"relevance": "rel"})
    (tmp_path / "plain").mkdir(exist_ok=True)
    plain_metrics = report_metrics(run_report(tmp_path / "plain", plain, "plain"))
    assert with_intents["ndcg@3"] == plain_metrics["ndcg@3"]
    assert with_intents["hit_rate@1"] == plain_metrics["hit_rate@1"]


def test_without_an_intent_column_every_row_is_one_intent(tmp_path: Path) -> None:
    # one intent: S-recall@k is hit_rate@k (ir_measures reads a plain qrels file so)
    config = diversity(tmp_path, "user,item,rel\n1,10,2\n1,9,1\n1,100,0\n2,9,1\n")
    config["ground_truth"]["columns"] = {"relevance": "rel"}
    config["metrics"] = ["s_recall@1", "hit_rate@1", "s_recall@3", "hit_rate@3"]
    metrics = report_metrics(run_report(tmp_path, config, "one"))
    assert metrics["s_recall@1"] == metrics["hit_rate@1"]
    assert metrics["s_recall@3"] == metrics["hit_rate@3"]


def test_trec_diversity_qrels_are_read_as_they_are(tmp_path: Path) -> None:
    # TREC ids are text: the ties are broken by the ids' text in both runs
    texts = {"tie_break": "item_text_desc"}
    csv = report_metrics(run_report(tmp_path, {**diversity(tmp_path), "conventions": texts}, "csv"))
    qrels = "".join(
        f"{u} {i} {d} {r}\n" for u, i, d, r in (r.split(",") for r in TRUTH.split()[1:])
    )
    write(tmp_path / "truth.qrels", qrels)
    config = diversity(tmp_path)
    config["ground_truth"] = {"path": "truth.qrels", "columns": {"intent": "iteration"}}
    config["conventions"] = texts
    trec = report_metrics(run_report(tmp_path, config, "trec"))
    assert trec == csv


def test_a_missing_intent_column_is_named(tmp_path: Path) -> None:
    config = diversity(tmp_path, columns={"intent": "subtopic", "relevance": "rel"})
    result = invoke("run", write_config(tmp_path, config), "-o", tmp_path / "r.json")
    assert_user_error(result, "truth.csv", "'subtopic'", "ground_truth.columns.intent")
    assert not (tmp_path / "r.json").exists()


def test_null_intents_are_named(tmp_path: Path) -> None:
    config = diversity(tmp_path, TRUTH + "2,,10,1\n")
    result = invoke("run", write_config(tmp_path, config), "-o", tmp_path / "r.json")
    assert_user_error(result, "truth.csv", "column 'intent'", "1 null value(s)", "fill")
    assert not (tmp_path / "r.json").exists()


def test_a_repeated_user_intent_item_is_refused(tmp_path: Path) -> None:
    config = diversity(tmp_path, TRUTH + "1,a,9,2\n")
    result = invoke("run", write_config(tmp_path, config), "-o", tmp_path / "r.json")
    assert_user_error(result, "truth.csv", "1 row(s) repeat a (user, intent, item)")
    assert "conventions.truth_duplicates" in result.stderr
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(("policy", "p_ia"), [("first", 0.5), ("max", 0.5)])
def test_repeated_rows_are_kept_once_by_truth_duplicates(
    tmp_path: Path, policy: str, p_ia: float
) -> None:
    config = diversity(tmp_path, TRUTH + "1,a,9,0\n2,x,9,1\n")
    config["conventions"] = {"truth_duplicates": policy}
    config["metrics"] = ["p_ia@3(users_without_relevant=skip)"]
    metrics = report_metrics(run_report(tmp_path, config, policy))
    # user 1 as without the repeats (0.5), user 2's one intent once: 1/3
    assert metrics["p_ia@3(users_without_relevant=skip)"] == pytest.approx((p_ia + 1 / 3) / 2)


def test_an_intent_column_needs_one_row_per_item(tmp_path: Path) -> None:
    write(tmp_path / "lists.csv", "user,items\n1,9|10\n")
    config = diversity(tmp_path)
    config["ground_truth"] = {
        "path": "lists.csv",
        "columns": {"items": "items", "intent": "intent"},
    }
    result = invoke("run", write_config(tmp_path, config))
    assert_user_error(result, "lists.csv", "ground_truth.columns.intent", "one row per")


def test_ndevals_unnormalised_err_ia_at_1_is_refused_by_its_name(tmp_path: Path) -> None:
    config = diversity(tmp_path)
    config["metrics"] = ["ir_measures:ERR_IA@1"]
    result = invoke("run", write_config(tmp_path, config))
    assert_user_error(result, "ERR_IA@1", "unnormalised", "err_ia@1")


def test_inspect_lists_each_item_once_with_its_highest_grade(tmp_path: Path) -> None:
    config = write_config(tmp_path, diversity(tmp_path))
    result = invoke("inspect", config, "--user", "1", "--k", "3", "--format", "json")
    assert result.exit_code == 0, result.stderr
    found = json.loads(result.stdout)
    user = found["users"][0]
    listed = [(r["item"], r["relevance"]) for r in user["recommendations"]]
    assert listed == [(9, 1.0), (100, 0.0), (10, 2.0)]
    assert user["relevant"] == 2


def test_relstrings_read_each_items_highest_grade() -> None:
    import polars as pl

    from receval_cli.api import relstrings

    preds = pl.DataFrame({"user": [1, 1, 1], "item": [9, 100, 10], "score": [0.9, 0.8, 0.7]})
    truth = pl.read_csv(TRUTH.encode())
    columns = {"intent": "intent", "relevance": "rel"}
    found = relstrings(preds, truth, truth_columns=columns)
    assert found.filter(pl.col("user") == 1)["relstring"].to_list() == ["102"]


@pytest.mark.parametrize("column", ["intent", "subtopic"])
def test_repeated_items_of_a_truth_with_an_intent_like_column_name_it(
    tmp_path: Path, column: str
) -> None:
    config = diversity(tmp_path, TRUTH.replace("intent", column), columns={"relevance": "rel"})
    result = invoke("run", write_config(tmp_path, config))
    assert_user_error(result, "appear more than once", f"ground_truth.columns.intent: {column}")


def test_repeated_items_of_trec_qrels_name_the_iteration(tmp_path: Path) -> None:
    write(tmp_path / "truth.qrels", "1 1 10 1\n1 2 10 1\n")
    config = diversity(tmp_path)
    config["ground_truth"] = {"path": "truth.qrels"}
    result = invoke("run", write_config(tmp_path, config))
    assert_user_error(result, "appear more than once", "ground_truth.columns.intent: iteration")


def test_the_api_names_its_own_argument_for_the_intent_column() -> None:
    import polars as pl

    import receval
    from receval_cli.errors import InputError

    preds = pl.read_csv(RUN.encode())
    truth = pl.read_csv(TRUTH.encode())
    columns = {"user": "user", "item": "item", "relevance": "rel"}
    with pytest.raises(InputError, match=r"set truth_columns\['intent'\] = 'intent'"):
        receval.evaluate(preds, truth, metrics=["ndcg@3"], truth_columns=columns)


def test_convert_names_no_intent_setting_it_does_not_have(tmp_path: Path) -> None:
    write(tmp_path / "truth.csv", TRUTH)
    result = invoke(
        "convert", tmp_path / "truth.csv", "--qrels", "--relevance", "rel", "-o", tmp_path / "q"
    )
    message = assert_user_error(result, "appear more than once")
    assert "per intent" not in message
    assert "columns.intent" not in message


@pytest.mark.parametrize("dataset", ["ties_int", "tiefree"])
def test_one_intent_reduces_to_the_plain_measures(tmp_path: Path, dataset: str) -> None:
    """Without an intent column (one intent), per user: nERR-IA@k is ERR@k with binary
    grades and R = 1/2 (alpha = 0.5: the same terms, halved, over the same ideal), to
    1e-12; S-recall@k is hit_rate@k and P-IA@k precision@k, to the bit."""
    import polars as pl
    from cli_helpers import per_user_rows
    from golden_files import GOLDEN

    data = GOLDEN / "data"
    pairs = [
        ("nerr_ia@{}", "nerr@{}(grades=binary,max_grade=1)"),
        ("s_recall@{}", "hit_rate@{}"),
        ("p_ia@{}", "precision@{}"),
    ]
    metrics = [m.format(k) for pair in pairs for m in pair for k in (1, 3, 10)]
    config = {
        "predictions": {"path": str(data / f"{dataset}_predictions.csv")},
        "ground_truth": {"path": str(data / f"{dataset}_truth.csv")},
        "metrics": metrics,
    }
    run_report(tmp_path, config, "one", per_user=True)
    rows = per_user_rows(tmp_path, "one").filter(pl.col("status") == "evaluated")
    assert rows.height > 10
    for intent_aware, plain in pairs:
        for k in (1, 3, 10):
            found, expected = rows[intent_aware.format(k)], rows[plain.format(k)]
            if intent_aware.startswith("nerr"):
                assert (found - expected).abs().max() < 1e-12
            else:
                assert found.equals(expected), (intent_aware, k)


def test_convert_writes_trec_diversity_qrels(tmp_path: Path) -> None:
    write(tmp_path / "truth.csv", TRUTH)
    out = tmp_path / "truth.qrels"
    args = ("--qrels", "--relevance", "rel", "--intent", "intent", "-o", out)
    result = invoke("convert", tmp_path / "truth.csv", *args)
    assert result.exit_code == 0, result.stderr
    # sorted by user, intent, item; the intent in the iteration field
    assert out.read_text() == "1 a 9 1\n1 a 10 1\n1 b 10 2\n1 b 100 0\n2 x 9 1\n"
    config = diversity(tmp_path)
    config["conventions"] = {"tie_break": "item_text_desc"}
    csv = report_metrics(run_report(tmp_path, config, "csv"))
    config["ground_truth"] = {"path": "truth.qrels", "columns": {"intent": "iteration"}}
    assert report_metrics(run_report(tmp_path, config, "trec")) == csv


def test_convert_refuses_repeated_intent_rows_and_intent_for_runs(tmp_path: Path) -> None:
    write(tmp_path / "truth.csv", TRUTH + "1,a,9,2\n")
    args = ("--qrels", "--relevance", "rel", "--intent", "intent", "-o", tmp_path / "q")
    result = invoke("convert", tmp_path / "truth.csv", *args)
    assert_user_error(result, "1 row(s) repeat a (user, intent, item)")
    write(tmp_path / "run.csv", RUN)
    result = invoke("convert", tmp_path / "run.csv", "--intent", "x", "-o", tmp_path / "r")
    assert_user_error(result, "--intent is for --qrels only")
