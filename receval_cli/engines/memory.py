"""How much memory a run may use, and how much a run of a given size needs.

`engine: auto` reads the memory actually available to this process, the least of:
- the cgroup's limit less its usage (a container's or a systemd unit's limit; cgroup v2,
  else v1),
- the address-space limit (`ulimit -v`, RLIMIT_AS) less the address space in use,
- the kernel's estimate of the memory available to start new work (MemAvailable),
and plans the run to fit in a share of it (engines/choice.py). The need is an estimate
from measured peaks (benchmarks/README.md): about PER_ROW bytes per prediction or truth
row evaluated at once, on top of a FIXED base.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterable
from pathlib import Path

FIXED = 320 * 2**20  # bytes: Python, polars and a run's fixed costs (bench_scale.py)
PER_ROW = 64  # bytes at the peak per row in one pass (5.4 GiB at 100M rows, 0.8 at 10M)
SHARE = 0.7  # of the available memory a run plans to use (the rest: the kernel, headroom)
# the least per-row memory a partition is planned for: below it, more passes save next to
# nothing (the fixed part stays), so a small input is never split, whatever the memory
MIN_SPLIT = 64 * 2**20
# rows per byte on disk where a file's row count is not in its metadata
_BYTES_PER_ROW = {"csv": 20, "tsv": 20, "jsonl": 45, "trec": 30}
_INFLATION = {".gz": 5, ".zst": 6}  # text to compressed, where the file does not say


M_ARENA_MAX = -8  # glibc's mallopt parameter: the most malloc arenas


def fit_address_space() -> None:
    """Under an address-space limit (`ulimit -v`), keep glibc's malloc to 2 arenas: it
    reserves 64 MiB of address space per thread otherwise (128 MiB with polars' threads at
    start), which exhausts a limit of 1.5 GiB before any data is read; and numpy's OpenBLAS
    to one thread. Called before any thread starts; nothing changes without such a limit
    (or off glibc)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return
    # numpy's OpenBLAS starts a thread per core at import; when it cannot (no address
    # space left), it raises SIGINT on itself. receval's numpy work needs no BLAS threads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(M_ARENA_MAX, 2)
    except (OSError, AttributeError):
        pass


def available_bytes() -> int | None:
    """The memory this process can still use (the least of the limits above), or None
    where none is known (not Linux)."""
    found = [b for b in (_cgroup_room(), _address_space_room(), _mem_available()) if b is not None]
    return min(found) if found else None


def rows_on_disk(paths: Iterable[Path]) -> int:
    """The rows the files hold: a Parquet file's from its metadata, others estimated from
    their size (compressed text inflated)."""
    total = 0
    for path in paths:
        files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
        for file in files:
            total += _rows(file)
    return total


def needed_bytes(rows: int, partitions: int = 1) -> int:
    """The estimated peak of a run over `rows` rows in `partitions` partitions."""
    return FIXED + PER_ROW * -(-rows // max(partitions, 1))


def _rows(path: Path) -> int:
    suffixes = [s.lower() for s in path.suffixes]
    if not path.is_file():  # a pipe or a device is never opened here (the reader names it)
        return 0
    size = path.stat().st_size
    if suffixes and suffixes[-1] == ".parquet":
        try:
            import polars as pl

            return int(pl.scan_parquet(path).select(pl.len()).collect().item())
        except (Exception, pl.exceptions.PanicException):
            # a damaged file (polars may panic on one) or memory running out: the reader
            # meets it too and says so, naming the file
            return size // 8
    inflated = inflated_size(path)
    if inflated is not None:
        size = inflated
    elif suffixes and suffixes[-1] in _INFLATION:
        size *= _INFLATION[suffixes[-1]]
    kind = next(
        (s.lstrip(".") for s in reversed(suffixes) if s.lstrip(".") in _BYTES_PER_ROW), "csv"
    )
    return size // _BYTES_PER_ROW[kind]


def inflated_size(path: Path) -> int | None:
    """The size a gzip or zstd file's text inflates to, from its own header or trailer
    (gzip's ISIZE, the last member's size modulo 2^32; zstd's frame content size where
    the writer recorded it), or None when the file does not say."""
    suffix = path.suffix.lower()
    if suffix not in (".gz", ".zst") or not path.is_file():  # never open a FIFO or a device
        return None
    try:
        with path.open("rb") as handle:
            if suffix == ".gz":
                size = handle.seek(0, os.SEEK_END)
                if size < 18:
                    return None
                handle.seek(size - 4)
                isize = int.from_bytes(handle.read(4), "little")
                # ISIZE is modulo 2^32: a file larger than it says wrapped at least once
                return isize if isize >= size else isize + 2**32
            if suffix == ".zst":
                return _zstd_content_size(handle.read(18))
    except OSError:
        return None
    return None


def _zstd_content_size(head: bytes) -> int | None:
    """A zstd frame's Frame_Content_Size field (RFC 8878, 3.1.1.1), if present."""
    if len(head) < 6 or head[:4] != b"\x28\xb5\x2f\xfd":
        return None
    descriptor = head[4]
    fcs_flag, single_segment, dict_flag = descriptor >> 6, (descriptor >> 5) & 1, descriptor & 3
    position = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[dict_flag]
    width = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    if width == 0 or len(head) < position + width:
        return None
    value = int.from_bytes(head[position : position + width], "little")
    return value + 256 if width == 2 else value


def _read_int(path: str) -> int | None:
    try:
        text = Path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None  # "max": no limit


def _cgroup_room() -> int | None:
    """The cgroup's limit less what its processes use: v2 (memory.max), else v1
    (limit_in_bytes). The usage the kernel reports counts the file cache too; its inactive
    part is reclaimed on demand, so it is left out (as container runtimes count the
    working set): after a clone and a build the cache alone can fill the limit."""
    v2, v1 = own_cgroups()
    for limit_file, usage_file, stat_file, inactive in (
        (
            f"/sys/fs/cgroup{v2}/memory.max",
            f"/sys/fs/cgroup{v2}/memory.current",
            f"/sys/fs/cgroup{v2}/memory.stat",
            "inactive_file",
        ),
        (
            f"/sys/fs/cgroup/memory{v1}/memory.limit_in_bytes",
            f"/sys/fs/cgroup/memory{v1}/memory.usage_in_bytes",
            f"/sys/fs/cgroup/memory{v1}/memory.stat",
            "total_inactive_file",
        ),
    ):
        limit = _read_int(limit_file)
        if limit is not None and limit < 2**60:  # v1 writes a huge number for no limit
            used = (_read_int(usage_file) or 0) - (_stat_field(stat_file, inactive) or 0)
            return max(limit - max(used, 0), 0)
    return None


def _stat_field(path: str, field: str) -> int | None:
    """A `name value` line of a cgroup's memory.stat."""
    try:
        for line in Path(path).read_text(encoding="ascii").splitlines():
            name, _, value = line.partition(" ")
            if name == field and value.strip().isdigit():
                return int(value)
    except OSError:
        return None
    return None


def own_cgroups() -> tuple[str, str]:
    """This process's cgroup paths: v2's (`0::PATH`) and v1's memory controller's."""
    v2 = v1 = ""
    try:
        for line in Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines():
            number, controllers, path = line.split(":", 2)
            if number == "0" and not controllers:
                v2 = path.rstrip("/")
            elif "memory" in controllers.split(","):
                v1 = path.rstrip("/")
    except (OSError, ValueError):
        pass
    return v2, v1


def _address_space_room() -> int | None:
    """RLIMIT_AS less the address space this process already maps (VmSize)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    return max(soft - (_status_kib("VmSize") or 0) * 1024, 0)


def _mem_available() -> int | None:
    kib = _meminfo_kib("MemAvailable")
    return None if kib is None else kib * 1024


def _status_kib(field: str) -> int | None:
    return _kib_field(f"/proc/{os.getpid()}/status", field)


def _meminfo_kib(field: str) -> int | None:
    return _kib_field("/proc/meminfo", field)


def _kib_field(path: str, field: str) -> int | None:
    try:
        for line in Path(path).read_text(encoding="ascii").splitlines():
            name, _, value = line.partition(":")
            if name == field:
                return int(value.split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return None
