"""engine: auto plans a run to fit the memory the process can use (engines/memory.py).

The limits are read from the cgroup (v2, else v1), `ulimit -v` and MemAvailable; the need
is estimated from the rows on disk. The last test runs a 20M-row job inside a cgroup
limited to 700 MiB, where a single pass is killed by the kernel (it peaks near 1.3 GiB).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from receval_cli.compiled import extension
from receval_cli.engines import choice, memory

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it

MiB = 2**20


def test_rows_on_disk_reads_parquet_metadata_and_estimates_text(tmp_path: Path) -> None:
    pl.DataFrame({"user": range(1000), "item": range(1000)}).write_parquet(tmp_path / "a.parquet")
    (tmp_path / "b.csv").write_text("user,item\n" + "u,i\n" * 1000, encoding="utf-8")
    assert memory.rows_on_disk([tmp_path / "a.parquet"]) == 1000  # exact, from the footer
    estimate = memory.rows_on_disk([tmp_path / "b.csv"])
    assert 100 < estimate < 10_000  # from the size: 4 bytes a row here, 20 assumed
    parts = tmp_path / "parts"
    parts.mkdir()
    for index in range(3):
        pl.DataFrame({"user": range(10)}).write_parquet(parts / f"part-{index}.parquet")
    assert memory.rows_on_disk([parts]) == 30  # a folder of Parquet parts: every part


def test_the_need_shrinks_with_partitions() -> None:
    rows = 20_000_000
    assert memory.needed_bytes(rows) == memory.FIXED + memory.PER_ROW * rows
    assert memory.needed_bytes(rows, 10) == memory.FIXED + memory.PER_ROW * rows // 10


@pytest.mark.parametrize(
    ("rows", "available", "expected"),
    [
        (20_000_000, None, 1),
        (20_000_000, 64 * 2**30, 1),
        (20_000_000, 1500 * MiB, 2),
        (20_000_000, 700 * MiB, 8),
        (20_000_000, 100 * MiB, 20),
        # 100M rows: 64 GiB free or nothing known, the run still plans for 2.5 GiB at most
        (100_000_000, 64 * 2**30, 3),
        (100_000_000, None, 3),
        (100_000_000, 1500 * MiB, 9),
    ],
)
def test_partitions_follow_the_available_memory(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    rows: int,
    available: int | None,
    expected: int,
) -> None:
    """Rows small on disk (far below the size rule's 512 MiB): the partitions come from
    the memory alone: the share of what is available, never above PEAK_GOAL."""
    monkeypatch.setattr(choice, "available_bytes", lambda: available)
    monkeypatch.setattr(choice, "rows_on_disk", lambda paths: rows if paths else 0)
    predictions = tmp_path / "p.parquet"
    predictions.write_bytes(b"x" * 100)
    planned = choice.PEAK_GOAL
    if available is not None:
        planned = min(int(memory.SHARE * available), planned)
    budget = max(planned - memory.FIXED, memory.MIN_SPLIT)  # 100 MiB: below the fixed part
    if 1 < expected < 256:  # the fewest partitions whose estimate fits the budget
        assert memory.PER_ROW * rows / expected <= budget
        assert memory.PER_ROW * rows / (expected - 1) > budget
    assert choice.auto_partitions([predictions]) == expected
    engine = choice.polars_engine("auto", [predictions])
    assert engine == ("streaming" if expected > 1 else "auto")


def test_a_small_input_is_never_split(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With little memory left (a busy machine), a 5-row input is still one pass: more
    passes cannot shrink the fixed part of a run (they were 256 before)."""
    monkeypatch.setattr(choice, "available_bytes", lambda: 10 * MiB)
    (tmp_path / "p.csv").write_text("user,item,score\n1,a,0.5\n", encoding="utf-8")
    assert choice.auto_partitions([tmp_path / "p.csv"]) == 1
    assert choice.polars_engine("auto", [tmp_path / "p.csv"]) == "auto"


def test_the_cgroup_file_cache_is_not_counted_as_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A cgroup's usage counts its file cache; the inactive part is left out (a fresh
    clone and build can fill a limit with cache alone)."""
    v1 = tmp_path / "memory" / "job"
    v1.mkdir(parents=True)
    (v1 / "memory.limit_in_bytes").write_text(str(4 * 2**30), encoding="ascii")
    (v1 / "memory.usage_in_bytes").write_text(str(4 * 2**30 - MiB), encoding="ascii")
    (v1 / "memory.stat").write_text(
        f"cache {3 * 2**30}\ntotal_inactive_file {3 * 2**30}\n", encoding="ascii"
    )
    real = memory.Path

    def moved(text: str) -> Path:  # /sys/fs/cgroup/... -> the folder above
        return (
            real(text.replace("/sys/fs/cgroup", str(tmp_path)))
            if text.startswith("/sys/fs/cgroup")
            else real(text)
        )

    monkeypatch.setattr(memory, "Path", moved)
    monkeypatch.setattr(memory, "own_cgroups", lambda: ("/none", "/job"))
    assert memory._cgroup_room() == 3 * 2**30 + MiB


def test_the_limits_are_read_from_this_machine() -> None:
    found = memory.available_bytes()
    if sys.platform.startswith("linux"):
        assert found is not None
        assert found > 0
    else:
        assert found is None


# ------------------------------------------------------------- a real cgroup limit


@pytest.fixture
def limited_cgroup() -> Iterator[Path]:
    """A memory cgroup of this process's (v1 here; v2 where the machine has it) limited to
    700 MiB; skipped where the machine does not let this process make one (not root)."""
    v2, v1 = memory.own_cgroups()
    candidates = [
        (Path(f"/sys/fs/cgroup/memory{v1}"), "memory.limit_in_bytes"),
        (Path(f"/sys/fs/cgroup{v2}"), "memory.max"),
    ]
    for parent, limit_file in candidates:
        if not (parent / limit_file).exists() and not (parent / "cgroup.procs").exists():
            continue
        group = parent / f"receval-test-{uuid.uuid4().hex[:8]}"
        try:
            group.mkdir()
            (group / limit_file).write_text(str(700 * MiB), encoding="ascii")
        except OSError:
            if group.exists():
                group.rmdir()
            continue
        try:
            yield group
        finally:
            group.rmdir()
        return
    pytest.skip("no memory cgroup can be made here (needs root and a cgroup file system)")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="cgroups are Linux's")
@pytest.mark.parametrize("core", ["compiled", "polars"])
def test_a_run_fits_a_cgroup_limit(tmp_path: Path, limited_cgroup: Path, core: str) -> None:
    """20M prediction rows in a 700 MiB cgroup: the run completes. auto splits the users
    into hash partitions (a single pass of the polars core peaks near 1.3 GiB and is
    killed; the memory left would not hold the least range of users); the compiled core
    reads each partition's rows in batches."""
    if core == "compiled" and extension() is None:
        pytest.skip("the compiled core is not built here")
    rows = pl.int_range(0, 20_000_000, eager=True, dtype=pl.Int64)
    pl.DataFrame(
        {"user": rows // 100, "item": (rows * 7919) % 50_000, "score": (rows * 0.618) % 1.0}
    ).write_parquet(tmp_path / "predictions.parquet")
    judged = pl.int_range(0, 2_000_000, eager=True, dtype=pl.Int64)
    pl.DataFrame({"user": judged // 10, "item": (judged * 13) % 50_000}).write_parquet(
        tmp_path / "truth.parquet"
    )
    del rows, judged
    config = tmp_path / "config.yaml"
    config.write_text(
        "predictions: {path: predictions.parquet}\nground_truth: {path: truth.parquet}\n"
        "metrics: [ndcg@10, precision@5]\n",
        encoding="utf-8",
    )
    procs = limited_cgroup / "cgroup.procs"

    def enter() -> None:
        procs.write_text(str(os.getpid()), encoding="ascii")

    result = subprocess.run(
        [sys.executable, "-m", "receval_cli", "run", str(config), "--verbose", "-q"],
        preexec_fn=enter,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "RECEVAL_CORE": "polars" if core == "polars" else ""},
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    # too little memory for the least range of users (engines/ranges.py): hash partitions
    assert "partition 1/" in result.stderr
    if core == "compiled":
        assert "the compiled core evaluated the predictions, read in batches" in result.stderr


# ------------------------------------------------------------- compressed text


def test_a_gzip_file_says_its_inflated_size(tmp_path: Path) -> None:
    import gzip

    text = b"user,item\n" + b"1,2\n" * 100_000
    (tmp_path / "t.csv.gz").write_bytes(gzip.compress(text))
    assert memory.inflated_size(tmp_path / "t.csv.gz") == len(text)
    # its rows are estimated from the inflated size, not the compressed one
    assert memory.rows_on_disk([tmp_path / "t.csv.gz"]) == len(text) // 20


def test_a_gzip_trailer_that_wrapped_past_4_gib(tmp_path: Path) -> None:
    """ISIZE is the size modulo 2^32: a file larger than it says inflates past 4 GiB."""
    body = b"\x1f\x8b" + b"\x00" * 98 + (50).to_bytes(4, "little")  # 104 bytes "inflate" to 50
    (tmp_path / "w.csv.gz").write_bytes(body)
    assert memory.inflated_size(tmp_path / "w.csv.gz") == 50 + 2**32


@pytest.mark.parametrize(
    ("descriptor", "field", "expected"),
    [
        (0b0010_0000, (200).to_bytes(1, "little"), 200),  # single segment, 1-byte size
        (0b0100_0000, b"\x00" + (1000).to_bytes(2, "little"), 1256),  # 2 bytes: + 256
        (0b1000_0000, b"\x00" + (70_000).to_bytes(4, "little"), 70_000),
        (0b1100_0000, b"\x00" + (2**40).to_bytes(8, "little"), 2**40),
        (0b0000_0000, b"\x00", None),  # no content size recorded
    ],
)
def test_a_zstd_frame_header_gives_the_content_size(
    tmp_path: Path, descriptor: int, field: bytes, expected: int | None
) -> None:
    """RFC 8878's frame header: the window byte follows unless single-segment; the
    2-byte size field is offset by 256."""
    head = b"\x28\xb5\x2f\xfd" + bytes([descriptor]) + field + b"\x00" * 8
    (tmp_path / "t.csv.zst").write_bytes(head)
    assert memory.inflated_size(tmp_path / "t.csv.zst") == expected


@pytest.mark.skipif(shutil.which("zstd") is None, reason="needs the zstd command")
def test_a_real_zstd_file(tmp_path: Path) -> None:
    text = b"user,item\n" + b"1,2\n" * 50_000
    (tmp_path / "t.csv").write_bytes(text)
    subprocess.run(["zstd", "-q", str(tmp_path / "t.csv")], check=True)
    assert memory.inflated_size(tmp_path / "t.csv.zst") == len(text)
