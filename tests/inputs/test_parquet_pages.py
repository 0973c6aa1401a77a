"""inputs/parquet_pages.py: the page walk and the checksums, with each walk of the column
chunks (receval_cli/_pages.c's and the Python one: every test runs with both).

The files are written by pyarrow (a dev dependency, not receval's: skipped without it),
whose own metadata says where each column chunk starts and how long it is, and whose
page headers hold the CRC-32 values the reader compares with.
"""

from __future__ import annotations

import itertools
import json
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from receval_cli.errors import InputError
from receval_cli.inputs.parquet_pages import (
    check_pages,
    compiled_walk,
    first_damaged_page,
    pages,
)

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(autouse=True, params=["compiled", "python"])
def walk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with receval_cli/_pages.c's walk of the column chunks (skipped where
    it is not built) and with the Python walk (RECEVAL_CORE=polars)."""
    if request.param == "python":
        monkeypatch.setenv("RECEVAL_CORE", "polars")
    else:
        monkeypatch.delenv("RECEVAL_CORE", raising=False)
        if compiled_walk() is None:
            pytest.skip("the compiled page walk is not built here")
    return str(request.param)


ROWS = 30_000


def table() -> Any:
    """Ids with few values (dictionary pages), plain doubles, nulls and a list column."""
    rng = np.random.default_rng(7)
    scores = rng.random(ROWS)
    return pa.table(
        {
            "user": [f"u{i % 700}" for i in range(ROWS)],
            "item": rng.integers(0, 5_000, ROWS),
            "score": pa.array(scores, mask=scores < 0.05),
            "tags": [[f"t{i % 3}", "x"] if i % 4 else [] for i in range(ROWS)],
        }
    )


def write(path: Path, **options: Any) -> Path:
    settings = {"row_group_size": 12_000, "data_page_size": 16 * 1024, **options}
    pq.write_table(table(), path, **settings)
    return path


def chunks(path: Path) -> dict[tuple[int, str], Any]:
    """pyarrow's column chunk metadata by (row group from 1, dotted column path)."""
    meta = pq.ParquetFile(path).metadata
    return {
        (g + 1, meta.row_group(g).column(c).path_in_schema): meta.row_group(g).column(c)
        for g in range(meta.num_row_groups)
        for c in range(meta.num_columns)
    }


@pytest.mark.parametrize("compression", ["none", "snappy", "zstd", "gzip"])
@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_the_pages_tile_each_column_chunk_and_every_checksum_holds(
    tmp_path: Path, compression: str, version: str
) -> None:
    path = write(
        tmp_path / "t.parquet",
        compression=compression,
        data_page_version=version,
        write_page_checksum=True,
    )
    expected = chunks(path)
    found = pages(path)
    by_chunk: dict[tuple[int, str], list[Any]] = {}
    for page in found:
        by_chunk.setdefault((page.row_group, page.column), []).append(page)
    assert set(by_chunk) == set(expected)
    assert len(expected) == 3 * 4  # three row groups, four columns
    assert "tags.list.element" in {column for _, column in expected}
    for key, chunk in expected.items():
        walked = by_chunk[key]
        first = chunk.dictionary_page_offset if chunk.has_dictionary_page else None
        start = first or chunk.data_page_offset
        assert walked[0].offset == start
        assert (walked[0].page == 0) == chunk.has_dictionary_page
        numbers = [p.page for p in walked if p.page]  # data pages, numbered from 1
        assert numbers == list(range(1, len(numbers) + 1))
        # header after header, page after page, to the chunk's last byte
        for before, after in itertools.pairwise(walked):
            assert after.offset == before.body + before.size
        assert walked[-1].body + walked[-1].size == start + chunk.total_compressed_size
    assert sum(p.page > 1 for p in found) > 0  # several data pages in a chunk
    assert all(p.recorded is not None and p.recorded == p.computed for p in found)
    assert first_damaged_page(path) is None


def test_a_file_without_checksums_has_pages_and_nothing_to_check(tmp_path: Path) -> None:
    path = write(tmp_path / "t.parquet", write_page_checksum=False)
    found = pages(path)
    assert {(p.row_group, p.column) for p in found} == set(chunks(path))
    assert all(p.recorded is None and p.computed is None for p in found)
    assert first_damaged_page(path) is None


def test_polars_writes_no_checksums(tmp_path: Path) -> None:
    """polars' writer has no option for them (so its files pass unchecked)."""
    path = tmp_path / "t.parquet"
    pl.DataFrame({"user": ["u1", "u2"] * 50, "score": np.arange(100.0)}).write_parquet(path)
    found = pages(path)
    assert found
    assert all(p.recorded is None for p in found)


def overwrite(path: Path, offset: int, new: bytes) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:offset] + new + data[offset + len(new) :])


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_eight_bytes_overwritten_in_any_page_name_that_page(
    tmp_path: Path, compression: str
) -> None:
    original = write(tmp_path / "t.parquet", compression=compression, write_page_checksum=True)
    found = pages(original)
    clean = original.read_bytes()
    damaged = tmp_path / "d.parquet"
    picked = [found[0], found[1], found[len(found) // 2], found[-1]]
    assert any(p.page == 0 for p in picked)
    for page in picked:
        damaged.write_bytes(clean)
        middle = page.body + page.size // 2 - 4
        overwrite(damaged, middle, bytes(b ^ 0xFF for b in clean[middle : middle + 8]))
        hit = first_damaged_page(damaged)
        assert hit is not None
        assert (hit.row_group, hit.column, hit.page) == (page.row_group, page.column, page.page)
        assert hit.row_groups == 3
        assert hit.recorded == page.recorded
        assert hit.computed != hit.recorded


def test_the_error_names_the_part_of_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    write(folder / "part-0.parquet", write_page_checksum=True)
    part = write(folder / "part-1.parquet", write_page_checksum=True)
    score = chunks(part)[(2, "score")]
    first = score.dictionary_page_offset if score.has_dictionary_page else None
    end = (first or score.data_page_offset) + score.total_compressed_size  # its last page's end
    overwrite(part, end - 8, struct.pack("<d", 2.0))
    with pytest.raises(InputError) as raised:
        check_pages(folder, "predictions")
    message = str(raised.value)
    assert message.startswith(f"predictions file {part}: page ")
    assert "of column 'score' in row group 2 of 3 fails its checksum: the file is damaged." in (
        message
    )
    assert raised.value.fields["column"] == "score"
    found = raised.value.fields["found"]
    assert isinstance(found, dict)
    assert found["row_group"] == 2


@pytest.mark.parametrize(
    "content",
    [b"", b"PAR1", b"PAR1" + b"\0" * 20 + b"PARE", b"PAR1" + struct.pack("<I", 10**6) + b"PAR1"],
    ids=["empty", "marker-only", "encrypted-footer", "footer-longer-than-the-file"],
)
def test_files_without_a_plain_footer_are_left_to_polars(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "t.parquet"
    path.write_bytes(content)
    assert first_damaged_page(path) is None
    assert pages(path) == []


def test_a_footer_that_is_not_thrift_is_left_to_polars(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1" + b"\xff" * 16 + struct.pack("<I", 16) + b"PAR1")
    assert first_damaged_page(path) is None


def test_spark_files_carry_checksums_that_hold_and_catch_damage(spark: Any, tmp_path: Path) -> None:
    """parquet-mr (Spark's writer) records a checksum in every page header by default:
    its files are checked, each part of the folder."""
    frame = spark.range(0, 50_000).selectExpr(
        "concat('u', id % 100) as user", "id % 777 as item", "rand(3) as score"
    )
    frame.repartition(2).write.parquet(str(tmp_path / "out"))
    parts = sorted((tmp_path / "out").glob("*.parquet"))
    assert len(parts) == 2
    for part in parts:
        found = pages(part)
        assert {p.column for p in found} == {"user", "item", "score"}
        assert all(p.recorded is not None and p.recorded == p.computed for p in found)
    check_pages(tmp_path / "out", "predictions")
    last = pages(parts[1])[-1]
    overwrite(parts[1], last.body + last.size - 8, b"\xff" * 8)
    with pytest.raises(InputError, match="fails its checksum: the file is damaged"):
        check_pages(tmp_path / "out", "predictions")


def test_a_report_says_how_many_pages_were_checked(tmp_path: Path) -> None:
    """A run could not see damage inside a page without a checksum: each Parquet input's
    block of the report counts the pages and those checked, whole folders included."""
    from cli_helpers import invoke, write_config

    users = [f"u{i}" for i in range(ROWS)]
    truth = pa.table(
        {"user": users, "item": [i % 97 for i in range(ROWS)], "relevance": [1] * ROWS}
    )
    checked = tmp_path / "truth.parquet"
    pq.write_table(truth, checked, data_page_size=16 * 1024, write_page_checksum=True)
    unchecked = tmp_path / "predictions"
    unchecked.mkdir()
    for part in range(2):
        rows = pa.table(
            {
                "user": users,
                "item": [part * 100 + i % 89 for i in range(ROWS)],
                "score": [1.0 - part / 2] * ROWS,
            }
        )
        pq.write_table(rows, unchecked / f"part-{part}.parquet", data_page_size=16 * 1024)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": str(unchecked)},
            "ground_truth": {"path": str(checked)},
            "metrics": ["ndcg@5"],
        },
    )
    out = tmp_path / "report.json"
    result = invoke("run", config, "-o", out)
    assert result.exit_code == 0, result.output
    inputs = json.loads(out.read_text(encoding="utf-8"))["models"]["model"]["inputs"]
    truth_pages = len(pages(checked))
    part_pages = [len(pages(part)) for part in sorted(unchecked.iterdir())]
    assert truth_pages > 3  # several data pages per column
    assert min(part_pages) > 3
    assert inputs["ground_truth"]["page_checksums"] == {
        "pages": truth_pages,
        "checked": truth_pages,
    }
    assert inputs["predictions"]["page_checksums"] == {"pages": sum(part_pages), "checked": 0}


def test_without_the_extension_the_python_walk_finds_the_same_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where receval_cli/_pages.c is not built (no C compiler), its import fails and the
    Python walk runs: the same pages, checksums and damage."""
    path = write(tmp_path / "t.parquet", write_page_checksum=True)
    found = pages(path)
    monkeypatch.delenv("RECEVAL_CORE", raising=False)
    monkeypatch.setitem(sys.modules, "receval_cli._pages", None)  # import raises ImportError
    assert compiled_walk() is None
    assert pages(path) == found
    last = found[-1]
    overwrite(path, last.body, b"\xff\xfe")
    damaged = first_damaged_page(path)
    assert damaged is not None
    assert (damaged.column, damaged.page, damaged.recorded) == (
        last.column,
        last.page,
        last.recorded,
    )
