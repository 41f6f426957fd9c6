"""Redraw a folder's report page(s) from its written report (report/report.py; nothing recomputed), and take a
screenshot of each: whichever page the folder has (a single split's, report/split_page.py; a partition design's,
report/partition_page.py; a benchmark's, report/cross_corpus_page.py).

    python -m comparisons.report.page --out results/reference [--lang zh]   # rewrite the page(s)
    python -m comparisons.report.page --out results/reference --screenshot  # and a PNG of each
    python -m comparisons.report.page --out results/cross_corpus --screenshot  # a benchmark folder's page too
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from common.arguments import OneLineParser
from common.errors import UserInputError
from comparisons.report.i18n import check_language
from comparisons.report.build import read, unwritten
from comparisons.report.report import draw_pages
from comparisons.run_folder.open_folder import open_folder
from comparisons.outputs import atomic_write_bytes


CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")  # Debian's package; another system browser by path
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]


def launch_chromium(playwright, executable: str = CHROMIUM):
    """The system's Chromium (never a downloaded build), headless, no background traffic."""
    return playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)


def screenshot(page: Path, picture: Path, width: int = 1280, height: int = 1600) -> Path:
    """A PNG of the top of the page at a laptop's width (what a reader sees first)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            tab = browser.new_page(viewport={"width": width, "height": height})
            tab.goto(Path(page).resolve().as_uri())
            png = tab.screenshot(type="png")
        finally:
            browser.close()

    return atomic_write_bytes(picture, png)


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.report.page", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="a run folder written by `comparisons run`")
    parser.add_argument("--lang", default=None, help="en or zh (default: en, and zh when DIR/zh exists)")
    parser.add_argument("--screenshot", action="store_true", help="also write report.png beside each page")
    args = parser.parse_args(argv)
    try:
        languages = [check_language(args.lang)] if args.lang else ["en"] + (["zh"] if (args.out / "zh").is_dir() else [])
        opened = open_folder(args.out)
        missing = unwritten(opened, args.out)  # a table its kind's page reads, or any finished run
        if missing:
            raise UserInputError(missing)
    except UserInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = read(opened)  # read once for every language
    for path in draw_pages(report, languages):
        print(f"{path} ({path.stat().st_size / 1e6:.2f} MB)", file=sys.stderr)
        if args.screenshot:
            print(screenshot(path, path.with_name("report.png")), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
