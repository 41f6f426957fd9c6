"""A folder's pages, whatever its kind: `draw_pages` draws them from the folder's report (report/build.py: read
once), one page skeleton (html.report_page) with the sections the kind has.

- a single split: report/split_report.SplitReport, drawn by report/split_page.build_page;
- a partition design: report/design_report.DesignReport, drawn by report/partition_page.build_recipe_page;
- a benchmark: report/cross_corpus.BenchmarkReport, drawn by report/cross_corpus_page.build_cross_corpus_page.

Drawing computes no statistics: a page drawn right after the reports were written (report/write.py) and one redrawn
later from the folder (`python -m comparisons.report.page`) are the same page.
"""
from __future__ import annotations

from pathlib import Path

from comparisons.outputs import atomic_write_text
from comparisons.report.build import Report, page_of, read
from comparisons.report.html import page_path
from comparisons.stats.decision import DEFAULT_CPU_HOUR_PRICE


def build_page(report: Report, lang: str, price: float = DEFAULT_CPU_HOUR_PRICE) -> str:
    """One page of the report in one language: the kind's sections in the one skeleton (html.report_page)."""
    return page_of(report)(report, lang, price)


def draw_pages(report: Report, languages, price: float = DEFAULT_CPU_HOUR_PRICE) -> list[Path]:
    """report.html in each language (English in the folder, another under its language's folder), each written once."""
    return [atomic_write_text(page_path(report.path, lang), build_page(report, lang, price))
            for lang in dict.fromkeys(languages)]


def redraw_pages(folder: Path, languages=("en",), price: float = DEFAULT_CPU_HOUR_PRICE) -> list[Path]:
    """The folder's pages drawn again from its written report (nothing recomputed)."""
    return draw_pages(read(folder), languages, price)
