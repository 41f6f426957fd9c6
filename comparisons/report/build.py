"""A folder's report, whatever its kind: where the kind of an opened folder (comparisons/run_folder/open_folder.py)
chooses its report's class and its page (a run folder's class: report/run_report.py); everything else asks them.

- a single split: report/split_report.SplitReport (its tables made by report/folder_reports.py), its page
  report/split_page.py;
- a partition design: report/design_report.DesignReport (its tables made by report/partition_reports.py), its page
  report/partition_page.py;
- a benchmark: report/cross_corpus.BenchmarkReport (its corpora's reports read once; the cross-corpus tables), its
  page report/cross_corpus_page.py.

Each class answers the same questions: `make(opened, languages, files)` computes its statistics once and makes its
tables in `files` (report/files.py: in memory; False: nothing to report yet), `read(opened, files)` reads the
report those files hold (nothing recomputed: from memory after a build, from the folder later, with the precision
they are written in), `write()` writes what its build made, each file once, and `unwritten(opened)` says why its
page cannot be drawn yet. The pages (report/report.py) are drawn after `write`: they embed the figures and the
per-language tables from the folder, so a page drawn right after a build and one redrawn later are the same page.

    report = build(folder, ["en", "zh"])  # computed once, nothing written
    report.write()                        # its tables and figures, each file once
    read(folder)                          # the same report later, from the folder
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from comparisons.report.cross_corpus import BenchmarkReport
from comparisons.report.cross_corpus_page import build_cross_corpus_page
from comparisons.report.design_report import DesignReport
from comparisons.report.files import ReportFiles
from comparisons.report.partition_page import build_recipe_page
from comparisons.report.run_report import RUN_REPORTS
from comparisons.report.split_page import build_page as build_split_page
from comparisons.report.split_report import SplitReport, no_finished_runs
from comparisons.run_folder.open_folder import BenchmarkFolder, Opened, as_opened

Report = SplitReport | DesignReport | BenchmarkReport
KINDS = {BenchmarkFolder: BenchmarkReport, **RUN_REPORTS}  # an opened folder's kind -> its report class
PAGES = {SplitReport: build_split_page, DesignReport: build_recipe_page,  # a report's class -> its page
         BenchmarkReport: build_cross_corpus_page}


def report_kind(opened: Opened | None) -> type[SplitReport] | type[DesignReport] | type[BenchmarkReport] | None:
    """The report class of the opened folder's kind (None: not a run folder)."""
    return KINDS.get(type(opened))


def page_of(report: Report) -> Callable[..., str]:
    """The function drawing the report's page in one language: (report, lang, price) -> HTML."""
    return PAGES[type(report)]


def build(folder: Path | Opened, languages=("en",)) -> Report | None:
    """The folder's report, writing nothing: its statistics computed once for English and the other languages asked
    for, its tables made in memory (the kind's make), then read as they will be written; None when there is nothing
    to report yet (no finished runs; not a run folder). `write()` writes it."""
    opened = as_opened(folder)
    kind = report_kind(opened)
    files = ReportFiles()
    if kind is None or not kind.make(opened, list(dict.fromkeys(["en", *languages])), files):
        return None
    return kind.read(opened, files)


def read(folder: Path | Opened) -> Report | None:
    """The folder's report as its written files hold it (None: not a run folder)."""
    opened = as_opened(folder)
    kind = report_kind(opened)
    return None if kind is None else kind.read(opened)


def unwritten(opened: Opened | None, out: Path) -> str | None:
    """Why the folder `out` (opened: open_folder(out)) has no report to draw yet, and what to do; None when it has."""
    kind = report_kind(opened)
    return no_finished_runs(out) if kind is None else kind.unwritten(opened)
