"""The one way a folder's reports are written (issue 64), whatever its kind and whoever asks: a run when it finishes
(comparisons/carry_out.py), a benchmark after its corpora (comparisons/benchmark.py), `report --out` and
`api.report` (comparisons/rebuild.py). The folder is opened once (comparisons/run_folder/open_folder.py) and its kind
picks the sections; each report is computed once for every language, its tables written once, and its pages drawn
from it (each file written once):

- a single split: report/folder_reports.py (tables, serving, curves, figures, then the page);
- a partition design: report/partition_reports.py (scores, recipe verdicts, verdicts.md), then the pages from the
  design's report read once (report/design_report.py, report/partition_page.py);
- a benchmark: report/cross_corpus_page.py (its corpora read once, then the tables and the page a language).
"""
from __future__ import annotations

from pathlib import Path

from comparisons.numerics import note_design_identities
from comparisons.run_folder.open_folder import BenchmarkFolder, DesignFolder, SplitFolder, open_folder
from comparisons.stats.decision import DEFAULT_CPU_HOUR_PRICE


def write_reports(folder: "Path | SplitFolder | DesignFolder | BenchmarkFolder", languages=("en",),
                  price: float = DEFAULT_CPU_HOUR_PRICE, contrasts: list[tuple[str, str]] | None = None,
                  variance: str | None = None) -> Path | None:
    """Every report of the folder in English and the other languages asked for; the folder's main page, or None
    when there is nothing to report yet (no finished runs; not a run folder). contrasts and variance: a partition
    design's family and variance chosen at report time (recorded in its design.json)."""
    opened = folder if isinstance(folder, (SplitFolder, DesignFolder, BenchmarkFolder)) else open_folder(Path(folder))
    languages = list(dict.fromkeys(["en", *languages]))
    if isinstance(opened, BenchmarkFolder):
        from comparisons.report.cross_corpus_page import write_cross_corpus_reports

        return write_cross_corpus_reports(opened.path, languages, price)
    if isinstance(opened, DesignFolder):
        from comparisons.report.partition_page import write_recipe_pages
        from comparisons.report.partition_reports import write_recipe_reports

        if write_recipe_reports(opened.path, contrasts=contrasts, variance=variance) is None:
            return None
        note_design_identities(opened.path)  # design.json says whether its runs mix numerics identities
        return write_recipe_pages(opened.path, languages, price)[0]
    if isinstance(opened, SplitFolder) and opened.records:
        from comparisons.report.folder_reports import write_all_reports

        return write_all_reports(opened, languages, price)
    return None
