"""Make the screenshots of receval's HTML pages in docs/reports.md (headless Chromium).

    uv run python docs/screenshots/make.py

Each page is written by `receval run` (or `receval history`) on the bundled sample data,
cut to the sections docs/reports.md shows (the header and those <section>s, as the page has
them), rendered at 1280 pixels wide, trimmed of the empty space below, and saved as a
256-colour PNG here. The history page comes from eight nightly runs of
configs/compare.yaml, each on the sample predictions with their scores perturbed (seeded:
a model that drifts), with intervals, appended to a history store.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl
from PIL import Image

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# screenshot name: (config, the sections shown)
PAGES = {
    "run": ("quickstart", ["summary", "metrics", "curves"]),
    "models": ("compare", ["summary", "metrics", "comparisons"]),
    "segments": ("segments", ["summary", "segments"]),
    "ratings": ("ratings", ["summary", "ratings"]),
    "ctr": ("ctr", ["metrics", "clicks"]),
    "beyond": ("beyond", ["exposure"]),
}


def receval(*args: str | Path) -> None:
    subprocess.run([sys.executable, "-m", "receval_cli", *map(str, args)], check=True, cwd=ROOT)


def cut(page: str, sections: list[str]) -> str:
    """The page with only the header and `sections` in <main>."""
    head, main = page.split("<main>", 1)
    main, tail = main.split("</main>", 1)
    kept = [
        found.group(0)
        for found in re.finditer(r'<section id="(\w+)">.*?</section>\n', main, re.S)
        if found.group(1) in sections
    ]
    return f"{head}<main>\n{''.join(kept)}</main>{tail}"


def shoot(page: Path, name: str, work: Path) -> None:
    assert CHROMIUM is not None, "Chromium is needed"
    raw = work / f"{name}.raw.png"
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={work / 'profile'}",
            f"--screenshot={raw}",
            "--window-size=1280,3200",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
    )
    image = Image.open(raw).convert("RGB")
    background = image.getpixel((image.width - 1, image.height - 1))
    bottom = image.height
    pixels = image.load()
    assert pixels is not None
    while bottom > 1 and all(pixels[x, bottom - 1] == background for x in range(0, image.width, 4)):
        bottom -= 1
    trimmed = image.crop((0, 0, image.width, min(bottom + 24, image.height)))
    trimmed.quantize(256).save(HERE / f"{name}.png", optimize=True)


def history_store(work: Path) -> Path:
    """Eight nights of configs/compare.yaml on drifting predictions, with intervals."""
    store = work / "history"
    config = (ROOT / "configs" / "compare.yaml").read_text(encoding="utf-8")
    sample = pl.read_csv(ROOT / "sample_data" / "predictions.csv")
    night_config = work / "compare.yaml"
    night_config.write_text(
        config.replace("../sample_data/predictions.csv", str(work / "night.csv")).replace(
            "../sample_data/", str(ROOT / "sample_data") + "/"
        ),
        encoding="utf-8",
    )
    for night in range(8):
        rng = random.Random(night)
        noise = 0.2 + 0.1 * night  # the model drifts: noisier scores each night
        scores = [s + rng.gauss(0, noise) for s in sample["score"]]
        sample.with_columns(score=pl.Series(scores)).write_csv(work / "night.csv")
        receval("run", night_config, "-q", "--history", store, "--label", f"v1.{night}")
    return store


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for name, (config, sections) in PAGES.items():
            page = work / f"{name}.html"
            receval("run", ROOT / "configs" / f"{config}.yaml", "-q", "-o", page)
            page.write_text(cut(page.read_text(encoding="utf-8"), sections), encoding="utf-8")
            shoot(page, name, work)
        page = work / "history.html"
        receval("history", history_store(work), "-o", page)
        shoot(page, "history", work)
    for png in sorted(HERE.glob("*.png")):
        print(f"{png.name}: {png.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
