"""Ids as the files write them, and input columns named like receval's own.

Ids from text formats: an id read from a text format (CSV, TSV) keeps its text unless every value of
its column is a canonical integer, the text an integer column writes (digits, no leading
zero but "0" itself, no '+', '-' only before a nonzero value, no space, within 64 bits);
then it is an integer, as before. So `0042` in a CSV matches "0042" in a Parquet or JSON
Lines file, `007` and `7` are two items, and an integer column still ranks its ties in
number order.

Columns named like receval's: a file's extra columns named like the internal ones (row,
rank, list_length, rel, relevant, ...) change nothing: every metric is the same as without them.

Every expected value is worked out by hand in the test's comments.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import (
    NDCG_2,
    PRECISION_1,
    PREDICTIONS_CSV,
    TRUTH_CSV,
    assert_no_traceback,
    assert_user_error,
    invoke,
    run_metrics,
    run_report,
    write,
    write_config,
)


def long_truth(folder: Path, fmt: str, users: list[str], items: list[str]) -> str:
    """A ground truth of text ids in `fmt` (parquet, jsonl, csv); returns its file name."""
    frame = pl.DataFrame(
        {"user": users, "item": items}, schema={"user": pl.String, "item": pl.String}
    )
    name = f"truth.{fmt}"
    if fmt == "parquet":
        frame.write_parquet(folder / name)
    elif fmt == "jsonl":
        frame.write_ndjson(folder / name)
    else:
        frame.write_csv(folder / name, quote_style="never")
    return name


# ---------------------------------------------------------------- ids from text formats


# ids from text formats
@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_padded_csv_ids_match_the_same_text_in_a_typed_file(tmp_path: Path, fmt: str) -> None:
    """Every user's best-scored item is its relevant one, written the same way in both
    files: precision@1 = 1. (Read as integers, 0042 became 42, which "0042" is not.)"""
    write(
        tmp_path / "predictions.csv",
        "user,item,score\n0042,007,0.9\n0042,8,0.5\n001,0100,0.9\n001,99,0.5\n7,5,0.9\n7,6,0.1\n",
    )
    truth = long_truth(tmp_path, fmt, ["0042", "001", "7"], ["007", "0100", "5"])
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": truth},
        "metrics": ["precision@1", "recall@2"],
    }
    report = run_report(tmp_path, config, "config")
    assert report["models"]["model"]["metrics"] == {"precision@1": 1.0, "recall@2": 1.0}
    assert report["warnings"] == []
    assert report["models"]["model"]["users"]["evaluated"] == 3


# ids from text formats, on Spark (Spark reads Parquet and CSV, not JSON Lines)
@pytest.mark.parametrize("truth_format", ["parquet", "csv"])
def test_padded_csv_ids_on_spark(spark: Any, tmp_path: Path, truth_format: str) -> None:
    """engine: spark follows the same rule: 0042 stays "0042" (precision@1 = 1), and a
    column of canonical integers still compares as integers (9, 10, 100 against 9, 10)."""
    write(
        tmp_path / "predictions.csv",
        "user,item,score\n0042,007,0.9\n0042,8,0.5\n001,0100,0.9\n001,99,0.5\n7,5,0.9\n7,6,0.1\n",
    )
    truth = long_truth(tmp_path, truth_format, ["0042", "001", "7"], ["007", "0100", "5"])
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": truth},
        "metrics": ["precision@1", "recall@2"],
        "engine": "spark",
    }
    report = run_report(tmp_path, config, "config")
    assert report["models"]["model"]["metrics"] == {"precision@1": 1.0, "recall@2": 1.0}
    write(tmp_path / "p2.csv", "user,item,score\n9,100,0.9\n9,10,0.5\n10,9,0.9\n10,100,0.5\n")
    write(tmp_path / "t2.csv", "user,item\n9,10\n10,9\n")
    plain = {
        "predictions": {"path": "p2.csv"},
        "ground_truth": {"path": "t2.csv"},
        "metrics": ["precision@1", "mrr"],
    }
    on_spark = run_metrics(tmp_path, {**plain, "engine": "spark"})
    assert on_spark == {"precision@1": 0.5, "mrr": 0.75}
    assert on_spark == run_metrics(tmp_path, plain)


# ids from text formats
def test_padded_ids_in_a_tsv_file(tmp_path: Path) -> None:
    """The same rule for TSV: 0042 is the text "0042" (precision@1 = 1, as above)."""
    write(tmp_path / "predictions.tsv", "user\titem\tscore\n0042\t007\t0.9\n0042\t7\t0.5\n")
    truth = long_truth(tmp_path, "jsonl", ["0042"], ["007"])
    config = {
        "predictions": {"path": "predictions.tsv"},
        "ground_truth": {"path": truth},
        "metrics": ["precision@1"],
    }
    assert run_metrics(tmp_path, config) == {"precision@1": 1.0}


# ids from text formats
def test_padded_ids_on_both_sides_compare_as_written(tmp_path: Path) -> None:
    """Both files pad every id, each its own way: user 001 is in both; its items 01 and 02
    are not the truth's 001 (as integers all three were 1), so precision@1 = 0."""
    write(tmp_path / "predictions.csv", "user,item,score\n001,01,0.9\n001,02,0.5\n")
    write(tmp_path / "truth.csv", "user,item\n001,001\n")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1", "recall@2"],
    }
    report = run_report(tmp_path, config, "config")
    assert report["models"]["model"]["metrics"] == {"precision@1": 0.0, "recall@2": 0.0}
    assert report["models"]["model"]["users"]["in_both"] == 1


# ids from text formats
def test_an_error_example_shows_the_padded_id(tmp_path: Path) -> None:
    """A repeated (user, item) pair is named as the file writes it: '001', not 1."""
    write(tmp_path / "predictions.csv", "user,item,score\n001,001,0.9\n001,001,0.5\n")
    write(tmp_path / "truth.csv", "user,item\n001,001\n")
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.csv"},
            "metrics": ["precision@1"],
        },
    )
    message = assert_user_error(invoke("run", config), "user '001', item '001'")
    assert "user 1," not in message


# ids from text formats
def test_padded_and_canonical_ids_in_one_column_are_text(tmp_path: Path) -> None:
    """007 and 7 in one column: the column is text, so the truth's 7 (a canonical CSV
    column, read as integers) is compared as "7" too. u1's list: 007 (0.9), 7 (0.8):
    precision@1 = 0, precision@2 = 1/2. (As integers, 007 and 7 were one repeated pair.)"""
    write(tmp_path / "predictions.csv", "user,item,score\nu1,007,0.9\nu1,7,0.8\n")
    write(tmp_path / "truth.csv", "user,item\nu1,7\n")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1", "precision@2"],
    }
    assert run_metrics(tmp_path, config) == {"precision@1": 0.0, "precision@2": 0.5}


# ids from text formats
def test_padded_ids_are_not_merged_by_the_max_score_convention(tmp_path: Path) -> None:
    """duplicates: max_score keeps the best row of a repeated (user, item); 007 and 7 are
    two items, so nothing merges. u1's list: 007 (0.9), 8 (0.7), 7 (0.5); relevant: 7.
    precision@1 = 0, recall@2 = 0, recall@3 = 1. (Merged, 7 scored 0.9 and came first.)"""
    write(tmp_path / "predictions.csv", "user,item,score\nu1,007,0.9\nu1,7,0.5\nu1,8,0.7\n")
    write(tmp_path / "truth.csv", "user,item\nu1,7\n")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1", "recall@2", "recall@3"],
        "conventions": {"duplicates": "max_score"},
    }
    assert run_metrics(tmp_path, config) == {"precision@1": 0.0, "recall@2": 0.0, "recall@3": 1.0}


# ids from text formats
@pytest.mark.parametrize(
    ("tie_break", "relevant", "expected"),
    [
        # number order: 100 > 10 > 9 (as text "9" > "100" > "10" would put 9 first)
        ("item_desc", "100", 1.0),
        ("item_desc", "9", 0.0),
        # number order: 9 < 10 < 100 (as text "10" would come first)
        ("item_asc", "9", 1.0),
        ("item_asc", "10", 0.0),
    ],
)
def test_canonical_integer_ids_still_tie_in_number_order(
    tmp_path: Path, tie_break: str, relevant: str, expected: float
) -> None:
    """Canonical integers in both CSV files are integers, as before: three tied items 9,
    10 and 100 are ordered by number, so precision@1 is 1 exactly when the relevant item
    is the first in number order."""
    write(tmp_path / "predictions.csv", "user,item,score\n5,9,0.5\n5,10,0.5\n5,100,0.5\n")
    write(tmp_path / "truth.csv", f"user,item\n5,{relevant}\n")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1"],
        "conventions": {"tie_break": tie_break},
    }
    assert run_metrics(tmp_path, config) == {"precision@1": expected}


# ids from text formats
def test_canonical_csv_ids_are_integers_beside_a_parquet_of_integers(tmp_path: Path) -> None:
    """A canonical CSV column beside Parquet integers: both integers (validate says so),
    and ties still go by number (item_desc: 100 first, the relevant one)."""
    write(tmp_path / "predictions.csv", "user,item,score\n5,9,0.5\n5,10,0.5\n5,100,0.5\n")
    pl.DataFrame({"user": [5], "item": [100]}).write_parquet(tmp_path / "truth.parquet")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.parquet"},
        "metrics": ["precision@1"],
        "conventions": {"tie_break": "item_desc"},
    }
    assert run_metrics(tmp_path, config) == {"precision@1": 1.0}
    result = invoke("validate", tmp_path / "config.yaml", "--format", "json")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert '"compared_as": "integer"' in result.stdout
    assert '"compared_as": "text"' not in result.stdout


# ids from text formats
@pytest.mark.parametrize("truth_format", ["csv", "parquet"])
def test_negative_integer_ids_are_integers(tmp_path: Path, truth_format: str) -> None:
    """-1 and -10 are written as an integer column writes them: integers, as in Parquet,
    so one file gives the same result in every format. Tied under item_desc, -1 comes
    before -10 (by number; as text "-10" came first), and -1 is relevant: precision@1 = 1."""
    write(tmp_path / "predictions.csv", "user,item,score\n1,-1,0.5\n1,-10,0.5\n")
    truth = pl.DataFrame({"user": [1], "item": [-1]})
    if truth_format == "csv":
        truth.write_csv(tmp_path / "truth.csv")
    else:
        truth.write_parquet(tmp_path / "truth.parquet")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": f"truth.{truth_format}"},
        "metrics": ["precision@1"],
        "conventions": {"tie_break": "item_desc"},
    }
    assert run_metrics(tmp_path, config) == {"precision@1": 1.0}


# ids from text formats
def test_padded_negative_ids_are_text(tmp_path: Path) -> None:
    """-05 is not how an integer column writes -5: the column is text, -05 and -5 are two
    items. u1's list: -05 (0.9), -5 (0.5); relevant -5: precision@1 = 0, precision@2 =
    1/2. (As integers, they were one repeated pair.)"""
    write(tmp_path / "predictions.csv", "user,item,score\nu1,-05,0.9\nu1,-5,0.5\n")
    write(tmp_path / "truth.csv", "user,item\nu1,-5\n")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1", "precision@2"],
    }
    assert run_metrics(tmp_path, config) == {"precision@1": 0.0, "precision@2": 0.5}


# ids from text formats
def test_minus_zero_is_text(tmp_path: Path) -> None:
    """-0 and 0 are two items (as integers both were 0, one repeated pair): u1's list -0
    (0.9), 0 (0.5); relevant 0: precision@1 = 0, precision@2 = 1/2."""
    write(tmp_path / "predictions.csv", "user,item,score\nu1,-0,0.9\nu1,0,0.5\n")
    write(tmp_path / "truth.csv", "user,item\nu1,0\n")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1", "precision@2"],
    }
    assert run_metrics(tmp_path, config) == {"precision@1": 0.0, "precision@2": 0.5}


# ids from text formats
def test_plus_signed_ids_are_text(tmp_path: Path) -> None:
    """+5 is text, not the Parquet integer 5 (which is compared as "5"): u1's first item
    +5 is not relevant, 5 is. precision@1 = 0, precision@2 = 1/2."""
    write(tmp_path / "predictions.csv", "user,item,score\n1,+5,0.9\n1,5,0.5\n")
    pl.DataFrame({"user": [1], "item": [5]}).write_parquet(tmp_path / "truth.parquet")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.parquet"},
        "metrics": ["precision@1", "precision@2"],
    }
    assert run_metrics(tmp_path, config) == {"precision@1": 0.0, "precision@2": 0.5}


# ids from text formats
def test_ids_beyond_64_bits_are_text(tmp_path: Path) -> None:
    """2^63 does not fit a 64-bit integer: the column is text, and matches the same text
    in the ground truth (precision@1 = 1); 2^63 - 1 still fits (an integer column)."""
    big = str(2**63)
    write(tmp_path / "predictions.csv", f"user,item,score\nu1,{big},0.9\nu1,1,0.5\n")
    truth = long_truth(tmp_path, "jsonl", ["u1"], [big])
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": truth},
        "metrics": ["precision@1"],
    }
    assert run_metrics(tmp_path, config) == {"precision@1": 1.0}
    largest = str(2**63 - 1)
    write(tmp_path / "predictions.csv", f"user,item,score\nu1,{largest},0.9\nu1,1,0.5\n")
    write(tmp_path / "truth.csv", f"user,item\nu1,{largest}\n")
    config["ground_truth"] = {"path": "truth.csv"}
    assert run_metrics(tmp_path, config) == {"precision@1": 1.0}


# ids from text formats
def test_a_padded_id_past_the_inferred_rows_makes_the_column_text(tmp_path: Path) -> None:
    """Canonical integers for the first 10,001 rows (more than the reader infers types
    from), then 007 and 7: the whole column is text, and they are two items. Users 0..10000
    recommend item 1 (not relevant); user u1: 007 (0.9), 7 (0.5), relevant 7. precision@1
    is 0 for everyone; recall@2 is 1 for u1 only (the others' relevant item 2 is absent)."""
    rows = "".join(f"{n},1,0.5\n" for n in range(10_001))
    write(tmp_path / "predictions.csv", "user,item,score\n" + rows + "u1,007,0.9\nu1,7,0.5\n")
    truth_rows = "".join(f"{n},2\n" for n in range(10_001))
    write(tmp_path / "truth.csv", "user,item\n" + truth_rows + "u1,7\n")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1", "recall@2"],
    }
    assert run_metrics(tmp_path, config) == {"precision@1": 0.0, "recall@2": 1 / 10_002}


# ids from text formats
def test_padded_ids_in_a_catalog_are_distinct_items(tmp_path: Path) -> None:
    """The catalog lists 007, 7 and 8 (three items, not 7 twice); u1 recommends 007 and 8
    at k=2: catalog_coverage@2 = 2/3."""
    write(tmp_path / "predictions.csv", "user,item,score\nu1,007,0.9\nu1,8,0.5\n")
    write(tmp_path / "truth.csv", "user,item\nu1,8\n")
    write(tmp_path / "catalog.csv", "item\n007\n7\n8\n")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "catalog": {"path": "catalog.csv"},
        "metrics": ["catalog_coverage@2"],
    }
    assert run_metrics(tmp_path, config) == {"catalog_coverage@2": pytest.approx(2 / 3)}


# ids from text formats
def test_padded_ids_in_interactions_and_baseline(tmp_path: Path) -> None:
    """The log has 007 twice and 7 once (three items by text: 007, 7, 8); u1 recommends
    007 then 8. arp@1 = pop(007) = 2 (as integers 7 had 3 rows). The baseline lists 7 for
    u1, which is not 007: unexpectedness@1 = 1 (as integers it was 0)."""
    write(tmp_path / "predictions.csv", "user,item,score\nu1,007,0.9\nu1,8,0.5\n")
    write(tmp_path / "truth.csv", "user,item\nu1,8\n")
    write(tmp_path / "log.csv", "user,item\nx,007\ny,007\nx,7\nz,8\n")
    write(tmp_path / "baseline.csv", "user,item,score\nu1,7,0.9\n")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "interactions": {"path": "log.csv"},
        "baseline": {"path": "baseline.csv"},
        "metrics": ["arp@1", "unexpectedness@1"],
    }
    assert run_metrics(tmp_path, config) == {"arp@1": 2.0, "unexpectedness@1": 1.0}


# ids from text formats
def test_padded_user_ids_in_a_segments_file(tmp_path: Path) -> None:
    """The segments file's 001 is the predictions' user "001" (text in Parquet), not 1:
    group=a holds user 001 (precision@1 = 1), group=b holds 002 (precision@1 = 0)."""
    frame = pl.DataFrame({"user": ["001", "001", "002", "002"], "item": ["a", "b", "c", "d"]})
    frame.with_columns(score=pl.Series([0.9, 0.5, 0.9, 0.5])).write_parquet(
        tmp_path / "predictions.parquet"
    )
    pl.DataFrame({"user": ["001", "002"], "item": ["a", "d"]}).write_parquet(
        tmp_path / "truth.parquet"
    )
    write(tmp_path / "users.csv", "user,group\n001,a\n002,b\n")
    config = {
        "predictions": {"path": "predictions.parquet"},
        "ground_truth": {"path": "truth.parquet"},
        "segments": {"path": "users.csv"},
        "segment_by": ["group"],
        "metrics": ["precision@1"],
    }
    report = run_report(tmp_path, config, "config")
    assert report["models"]["model"]["metrics"] == {"precision@1": 0.5}
    segments = report["models"]["model"]["segments"]
    assert segments["group=a"]["metrics"] == {"precision@1": 1.0}
    assert segments["group=b"]["metrics"] == {"precision@1": 0.0}


# ---------------------------------------------------------------- columns named like receval's

# every name receval gives a column of its own, somewhere between reading and reporting
INTERNAL = [
    "row",
    "rank",
    "rel",
    "relevant",
    "list_length",
    "list_rows",
    "list_distinct",
    "items",
    "in_truth",
    "n_relevant",
    "truth_items",
    "truth_distinct",
    "value",
    "copies",
    "raw_rows",
    "raw_users",
    "kind",
    "len",
    "status",
    "position",
    "pairs",
    "rows",
    "nulls",
    "hit",
    "known",
    "seen",
    "user_text",
    "first_row",
]
HAND = {"precision@1": PRECISION_1, "ndcg@2": pytest.approx(NDCG_2)}


def with_extra_columns(text: str, names: list[str]) -> str:
    """The CSV text with extra columns `names`, numbered 1, 2, ... down each column."""
    header, *rows = text.strip().split("\n")
    lines = [f"{header},{','.join(names)}"]
    lines += [f"{row},{','.join([str(n)] * len(names))}" for n, row in enumerate(rows, 1)]
    return "\n".join(lines) + "\n"


def hand_config(**extra: Any) -> dict[str, Any]:
    return {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1", "ndcg@2"],
        **extra,
    }


# columns named like receval's
def test_extra_columns_named_like_internal_ones_change_nothing(tmp_path: Path) -> None:
    """The hand case (precision@1 = 0.5, ndcg@2 = 0.62204) with every internal name as an
    extra column of both files; the layout is still score (named, and found by default)."""
    write(tmp_path / "predictions.csv", with_extra_columns(PREDICTIONS_CSV, INTERNAL))
    write(tmp_path / "truth.csv", with_extra_columns(TRUTH_CSV, INTERNAL))
    assert run_metrics(tmp_path, hand_config()) == HAND
    checked = invoke("validate", tmp_path / "config.yaml", "--format", "json")
    assert checked.exit_code == 0, (checked.stdout, checked.stderr)
    named = {
        "path": "predictions.csv",
        "columns": {"user": "user", "item": "item", "score": "score"},
    }
    assert run_metrics(tmp_path, hand_config(predictions=named)) == HAND
    for policy in ("first", "max_score"):
        conventions = {
            "duplicates": policy,
            "truth_duplicates": "first",
            "tie_break": "input_order",
        }
        assert run_metrics(tmp_path, hand_config(conventions=conventions)) == HAND


# ids and columns on every polars engine: the reader is shared, and so must be the numbers
@pytest.mark.parametrize(
    "engine",
    [{"engine": "in_memory"}, {"engine": "streaming"}, {"partitions": 2}],
    ids=["in_memory", "streaming", "partitions"],
)
def test_padded_ids_and_internal_names_on_every_polars_engine(
    tmp_path: Path, engine: dict[str, Any]
) -> None:
    write(
        tmp_path / "predictions.csv",
        "user,item,score,row,rank\n0042,007,0.9,5,9\n0042,8,0.5,4,8\n001,0100,0.9,3,7\n"
        "001,99,0.5,2,6\n7,5,0.9,1,5\n7,6,0.1,0,4\n",
    )
    truth = long_truth(tmp_path, "parquet", ["0042", "001", "7"], ["007", "0100", "5"])
    config = {
        "predictions": {"path": "predictions.csv", "columns": {"score": "score"}},
        "ground_truth": {"path": truth},
        "metrics": ["precision@1", "recall@2"],
        **engine,
    }
    assert run_metrics(tmp_path, config) == {"precision@1": 1.0, "recall@2": 1.0}


# columns named like receval's
def test_a_rank_column_named_row(tmp_path: Path) -> None:
    """The rank layout, its rank column called `row`: u1 a, b, c; u2 d, e (the hand case)."""
    write(tmp_path / "predictions.csv", "user,item,row\nu1,a,1\nu1,b,2\nu1,c,3\nu2,d,1\nu2,e,2\n")
    write(tmp_path / "truth.csv", TRUTH_CSV)
    predictions = {"path": "predictions.csv", "columns": {"rank": "row"}}
    assert run_metrics(tmp_path, hand_config(predictions=predictions)) == HAND


# columns named like receval's
def test_list_layouts_with_extra_columns_named_row_and_rank(tmp_path: Path) -> None:
    """The hand case as one list per user in each file, beside columns row and rank."""
    write(tmp_path / "predictions.csv", "user,items,row,rank\nu1,a|b|c,7,7\nu2,d|e,8,8\n")
    write(tmp_path / "truth.csv", "user,items,row,rank,rel\nu1,b,1,1,1\nu2,d|f,2,2,2\n")
    config = hand_config(
        predictions={"path": "predictions.csv", "columns": {"items": "items"}},
        ground_truth={"path": "truth.csv", "columns": {"items": "items"}},
    )
    assert run_metrics(tmp_path, config) == HAND


# columns named like receval's
def test_id_columns_swapped_with_internal_names(tmp_path: Path) -> None:
    """The user column is called `item`, the item column `user` and the score `row`: each
    is read by its role."""
    swapped = PREDICTIONS_CSV.replace("user,item,score", "item,user,row")
    write(tmp_path / "predictions.csv", swapped)
    write(tmp_path / "truth.csv", TRUTH_CSV.replace("user,item", "rank,row"))
    config = hand_config(
        predictions={
            "path": "predictions.csv",
            "columns": {"user": "item", "item": "user", "score": "row"},
        },
        ground_truth={"path": "truth.csv", "columns": {"user": "rank", "item": "row"}},
    )
    assert run_metrics(tmp_path, config) == HAND


# columns named like receval's
def test_a_bad_score_column_named_row_is_named_with_its_value(tmp_path: Path) -> None:
    """A score column called `row` holding text: the error quotes the first bad value."""
    write(tmp_path / "predictions.csv", "user,item,row\nu1,a,0.9\nu1,b,high\n")
    write(tmp_path / "truth.csv", TRUTH_CSV)
    config = write_config(
        tmp_path, hand_config(predictions={"path": "predictions.csv", "columns": {"score": "row"}})
    )
    assert_user_error(invoke("run", config), "column 'row'", "'high'", "data row 2")


# columns named like receval's
def test_optional_inputs_with_a_row_column(tmp_path: Path) -> None:
    """Catalog, interactions and baseline each with a `row` column (and the log a
    timestamp): the metrics and `inspect` work as without. Catalog a..f: u1 shows a, u2
    shows d at k=1, coverage 2/6. The baseline lists a for u1 and e for u2:
    unexpectedness@1 = (0 + 1) / 2."""
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    write(tmp_path / "truth.csv", TRUTH_CSV)
    write(tmp_path / "catalog.csv", "item,row\na,1\nb,2\nc,3\nd,4\ne,5\nf,6\n")
    write(tmp_path / "log.csv", "user,item,row,timestamp\nu1,a,1,10\nu2,b,2,20\nu3,b,3,30\n")
    write(tmp_path / "baseline.csv", "user,item,score,row,rank\nu1,a,0.9,1,1\nu2,e,0.9,2,2\n")
    config = hand_config(
        catalog={"path": "catalog.csv"},
        interactions={"path": "log.csv", "columns": {"timestamp": "timestamp"}},
        baseline={"path": "baseline.csv"},
        metrics=["precision@1", "catalog_coverage@1", "unexpectedness@1"],
    )
    assert run_metrics(tmp_path, config) == {
        "precision@1": PRECISION_1,
        "catalog_coverage@1": pytest.approx(2 / 6),
        "unexpectedness@1": 0.5,
    }
    result = invoke("validate", tmp_path / "config.yaml", "--format", "json")
    assert_no_traceback(result)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    result = invoke("inspect", tmp_path / "config.yaml", "--user", "u1", "--format", "json")
    assert_no_traceback(result)
    assert result.exit_code == 0, (result.stdout, result.stderr)


# columns named like receval's
def test_validate_with_mapped_columns_named_like_its_counts(tmp_path: Path) -> None:
    """validate counts the file's rows beside each mapped column's nulls: a user column
    called `rows` and an item column called `pairs` are counted like any other."""
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV.replace("user,item", "rows,pairs"))
    write(tmp_path / "truth.csv", TRUTH_CSV)
    predictions = {"path": "predictions.csv", "columns": {"user": "rows", "item": "pairs"}}
    config = write_config(tmp_path, hand_config(predictions=predictions))
    result = invoke("validate", config, "--format", "json")
    assert_no_traceback(result)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    block = json.loads(result.stdout)["models"]["model"]["predictions"]
    assert block["rows"] == 5
    assert block["nulls"] == {"rows": 0, "pairs": 0, "score": 0}
    assert run_metrics(tmp_path, hand_config(predictions=predictions)) == HAND
