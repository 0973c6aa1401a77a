"""A Parquet file's rows and null counts from its footer (inputs/parquet_stats.py): the
counts polars finds in the rows, over several row groups; None where any chunk of a column
asked records no null count, the column is not in the file, or the file is no Parquet."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from receval_cli.inputs.parquet_stats import footer_counts

VALUES = st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=1, max_size=40)


@given(VALUES, st.lists(st.one_of(st.none(), st.text(max_size=3)), max_size=40), st.integers(1, 9))
def test_the_footers_counts_are_the_rows(
    tmp_path_factory: pytest.TempPathFactory,
    numbers: list[int | None],
    texts: list[str | None],
    group: int,
) -> None:
    rows = len(numbers)
    texts = (texts + [None] * rows)[:rows]
    frame = pl.DataFrame({"n": numbers, "t": texts}, schema={"n": pl.Int64, "t": pl.String})
    path = tmp_path_factory.mktemp("stats") / "f.parquet"
    frame.write_parquet(path, row_group_size=group)
    found = footer_counts(path, ["n", "t"])
    assert found == (rows, {"n": frame["n"].null_count(), "t": frame["t"].null_count()})


def test_none_without_statistics_or_the_column(tmp_path: Path) -> None:
    frame = pl.DataFrame({"n": [1, None, 3]})
    frame.write_parquet(tmp_path / "plain.parquet", statistics=False)
    frame.write_parquet(tmp_path / "stats.parquet")
    (tmp_path / "text.parquet").write_text("n\n1\n", encoding="utf-8")
    assert footer_counts(tmp_path / "plain.parquet", ["n"]) is None
    assert footer_counts(tmp_path / "stats.parquet", ["n"]) == (3, {"n": 1})
    assert footer_counts(tmp_path / "stats.parquet", ["n", "missing"]) is None
    assert footer_counts(tmp_path / "text.parquet", ["n"]) is None
    assert footer_counts(tmp_path / "nowhere.parquet", ["n"]) is None


@pytest.mark.parametrize("statistics", [True, False])
def test_a_logs_checks_come_from_its_footer(tmp_path: Path, statistics: bool) -> None:
    """An interactions log in one Parquet file: check_sources' row (rows, null ids) read
    from the footer where it records the counts; otherwise (None) the rows are read."""
    from receval_cli.config.model import InteractionsConfig
    from receval_cli.inputs.optional import check_query, read_interactions
    from receval_cli.inputs.parquet_stats import footer_checks

    path = tmp_path / "log.parquet"
    pl.DataFrame({"u": [1, None, 2], "i": [7, 8, None]}).write_parquet(path, statistics=statistics)
    config = InteractionsConfig(path=str(path), columns={"user": "u", "item": "i"})
    log = read_interactions(config, path)
    expected = check_query(log).collect().row(0, named=True)
    assert expected == {"rows": 3, "user": 1, "item": 1}
    assert footer_checks(log) == (expected if statistics else None)
