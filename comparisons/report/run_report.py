"""A run folder's report, whatever its kind: a single split's (report/split_report.SplitReport) or a partition
design's (report/design_report.DesignReport), the class chosen here from the opened folder's kind
(comparisons/run_folder/open_folder.py). A benchmark's corpora are read through it (report/cross_corpus.py), and
report/build.py adds the benchmark's own report to it: nothing else switches on an opened folder's class (reproduce
and the power studies read design.json where they need a design's plan, and refuse a folder without one).

Both classes answer the same questions (report/build.py lists them) and hold the same tables under the same names:
`variants` (one row per variant), `verdicts` (the pairs in today's verdict schema), `summary` (one row per run),
`manifest` (where the costs were measured), `shape` (the design in words) and `decision(price)`.
"""
from __future__ import annotations

from pathlib import Path

from comparisons.report.design_report import DesignReport
from comparisons.report.files import ReportFiles
from comparisons.report.split_report import SplitReport
from comparisons.run_folder.open_folder import DesignFolder, Opened, SplitFolder, as_opened

RUN_REPORTS = {SplitFolder: SplitReport, DesignFolder: DesignReport}  # an opened folder's kind -> its report class


def run_report_kind(opened: Opened | None) -> type[SplitReport] | type[DesignReport] | None:
    """The report class of an opened run folder (None: not a single split or a partition design)."""
    return RUN_REPORTS.get(type(opened))


def read_run_report(folder: Path | Opened, files: ReportFiles | None = None) -> SplitReport | DesignReport | None:
    """The run folder's report as `files` (a build's) or the folder hold it; None when it is not a run folder."""
    opened = as_opened(folder)
    kind = run_report_kind(opened)
    return None if kind is None else kind.read(opened, files)
