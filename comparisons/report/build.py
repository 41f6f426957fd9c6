"""A folder's report, whatever its kind: the one place the kind of an opened folder
(comparisons/run_folder/open_folder.py) chooses its report's class; everything else asks that class.

- a single split: report/split_report.SplitReport (its tables written by report/folder_reports.py);
- a partition design: report/design_report.DesignReport (its tables written by report/partition_reports.py);
- a benchmark: report/cross_corpus.BenchmarkReport (its corpora read once; the cross-corpus tables).

Each class answers the same three questions: `write_tables(opened, languages)` computes its statistics once and
writes its tables (False: nothing to report yet), `read(opened)` reads the report its written files hold (nothing
recomputed, so a page drawn right after the tables were written and one redrawn later are the same page),
`unwritten(opened)` says why its page cannot be drawn yet. The pages: report/report.py.
"""
from __future__ import annotations

from pathlib import Path

from comparisons.report.cross_corpus import BenchmarkReport
from comparisons.report.design_report import DesignReport
from comparisons.report.split_report import SplitReport, no_finished_runs
from comparisons.run_folder.open_folder import BenchmarkFolder, DesignFolder, Opened, SplitFolder, as_opened

Report = SplitReport | DesignReport | BenchmarkReport


def report_kind(opened: Opened | None) -> type[SplitReport] | type[DesignReport] | type[BenchmarkReport] | None:
    """The report class of the opened folder's kind (None: not a run folder)."""
    if isinstance(opened, BenchmarkFolder):
        return BenchmarkReport
    if isinstance(opened, DesignFolder):
        return DesignReport
    return SplitReport if isinstance(opened, SplitFolder) else None


def build(folder: Path | Opened, languages=("en",)) -> Report | None:
    """The folder's report: its statistics computed once for English and the other languages asked for, its tables
    written (the kind's write_tables), then read back as written; None when there is nothing to report yet (no
    finished runs; not a run folder)."""
    opened = as_opened(folder)
    kind = report_kind(opened)
    if kind is None or not kind.write_tables(opened, list(dict.fromkeys(["en", *languages]))):
        return None
    return kind.read(opened)


def read(folder: Path | Opened) -> Report | None:
    """The folder's report as its written files hold it (None: not a run folder)."""
    opened = as_opened(folder)
    kind = report_kind(opened)
    return None if kind is None else kind.read(opened)


def unwritten(opened: Opened | None, out: Path) -> str | None:
    """Why the folder `out` (opened: open_folder(out)) has no report to draw yet, and what to do; None when it has."""
    kind = report_kind(opened)
    return no_finished_runs(out) if kind is None else kind.unwritten(opened)
