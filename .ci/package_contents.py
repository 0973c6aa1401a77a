"""Check the files of receval's wheel and sdist against what they should hold.

`python3 .ci/package_contents.py DIST [--core compiled|absent]`: DIST is the folder that
`uv build` wrote (one wheel, one sdist). The wheel holds the package and nothing else:
every file of receval_cli/ and receval/ in the checkout (the modules, both `py.typed`,
`engines/*.properties`, the C sources), its `.dist-info`, and with `--core compiled` the
three compiled extensions (`--core absent`: none of them). The sdist holds the same files,
`pyproject.toml`, `README.md` and its metadata. Whatever else either holds (tests/,
benchmarks/, sample data, `__pycache__`, bytecode, a compiled file in the sdist) is named,
and so is whatever is missing; exit 1 then. Standard library only (CI runs it with the
system Python); tests/test_distributions.py checks the rules on made-up listings.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("receval_cli", "receval")
EXTENSIONS = ("_kernel", "_list_sums", "_pages")  # pyproject.toml's ext-modules
DIST_INFO = ("METADATA", "WHEEL", "RECORD", "entry_points.txt")
SDIST_FILES = ("pyproject.toml", "README.md", "PKG-INFO")
SDIST_ALLOWED = re.compile(r"^(setup\.cfg|MANIFEST\.in|[^/]+\.egg-info/[^/]+)$")


def package_files(root: Path = ROOT) -> set[str]:
    """The files of the packages in the checkout, as git tracks them (the files on disk
    less bytecode and compiled extensions where git is not there)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", *PACKAGES],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return {name for name in listed.split("\0") if name}
    except (OSError, subprocess.CalledProcessError):
        found = {str(p.relative_to(root)) for pkg in PACKAGES for p in (root / pkg).rglob("*")}
        return {
            name
            for name in found
            if (root / name).is_file()
            and "__pycache__" not in name
            and not name.endswith((".pyc", ".so", ".pyd"))
        }


def compiled(name: str) -> str | None:
    """The extension a file of the wheel is (`_kernel` for receval_cli/_kernel.cpython-
    311-x86_64-linux-gnu.so), or None."""
    found = re.fullmatch(r"receval_cli/(\w+?)(\.[\w-]+)?\.(so|pyd)", name)
    return found[1] if found and found[1] in EXTENSIONS else None


def wheel_problems(names: list[str], package: set[str], core: str | None) -> list[str]:
    """What the wheel's files (names as the archive lists them) lack or hold too many:
    the package's files, the dist-info and, by `core` (compiled, absent or None: either),
    the compiled extensions."""
    problems = [f"missing from the wheel: {name}" for name in sorted(package - set(names))]
    infos = {name.split("/", 1)[1] for name in names if re.match(r"[^/]+\.dist-info/", name)}
    problems += [f"missing from the wheel: *.dist-info/{n}" for n in DIST_INFO if n not in infos]
    built = {compiled(name) for name in names} - {None}
    if core == "compiled":
        missing = [e for e in EXTENSIONS if e not in built]
        problems += [f"missing from the wheel: receval_cli/{e}.*.so (compiled)" for e in missing]
    elif core == "absent":
        problems += [f"compiled extension in the wheel: receval_cli/{e}" for e in sorted(built)]
    for name in sorted(names):
        if name in package or compiled(name) or re.match(r"[^/]+\.dist-info/[^/]+$", name):
            continue
        problems.append(f"unexpected in the wheel: {name}")
    return problems


def sdist_problems(names: list[str], package: set[str]) -> list[str]:
    """What the sdist's files (names less the top folder `receval-VERSION/`) lack or hold
    too many: the package's files (the C sources with them), the project's files."""
    expected = package | set(SDIST_FILES)
    problems = [f"missing from the sdist: {name}" for name in sorted(expected - set(names))]
    for name in sorted(names):
        if name not in expected and not SDIST_ALLOWED.match(name):
            problems.append(f"unexpected in the sdist: {name}")
    return problems


def one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    if len(found) != 1:
        raise SystemExit(f"error: {dist} should hold one {pattern}, it holds {len(found)}")
    return found[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist", type=Path, help="the folder uv build wrote")
    parser.add_argument("--core", choices=("compiled", "absent"), help="the compiled extensions")
    options = parser.parse_args()
    package = package_files()
    wheel = one(options.dist, "receval-*.whl")
    sdist = one(options.dist, "receval-*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = [name for name in archive.namelist() if not name.endswith("/")]
    with tarfile.open(sdist) as archive:
        in_sdist = [m.name.split("/", 1)[1] for m in archive.getmembers() if m.isfile()]
    problems = wheel_problems(in_wheel, package, options.core)
    problems += sdist_problems(in_sdist, package)
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"{wheel.name}: {len(in_wheel)} files; {sdist.name}: {len(in_sdist)} files: as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
