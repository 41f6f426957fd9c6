"""The one way a folder's reports are written, whatever its kind and whoever asks: a run when it finishes
(comparisons/carry_out.py), a benchmark after its corpora (comparisons/benchmark.py), `report --out` and
`api.report` (comparisons/rebuild.py). The folder is opened once (comparisons/run_folder/open_folder.py); its kind
computes its statistics once for every language and writes its tables and figures, each file once:

- a single split: report/folder_reports.py (summary, aggregate and verdicts, serving, curves, figures);
- a partition design: report/partition_reports.py (scores, recipe verdicts, verdicts.md, the curve tables);
- a benchmark: report/cross_corpus.py (its corpora read once; the cross-corpus tables).

Then the pages, one a language, from the report those files make (report/report.py: read once, nothing recomputed).
"""
from __future__ import annotations

from pathlib import Path

from comparisons.report.cross_corpus import build, write_cross_corpus_tables
from comparisons.report.folder_reports import write_split_tables
from comparisons.report.partition_reports import write_recipe_reports
from comparisons.report.report import draw_pages, read_report
from comparisons.run_folder.open_folder import BenchmarkFolder, DesignFolder, SplitFolder, open_folder
from comparisons.stats.decision import DEFAULT_CPU_HOUR_PRICE


def write_reports(folder: "Path | SplitFolder | DesignFolder | BenchmarkFolder", languages=("en",),
                  price: float = DEFAULT_CPU_HOUR_PRICE) -> Path | None:
    """Every report of the folder in English and the other languages asked for; the English page, or None when
    there is nothing to report yet (no finished runs; not a run folder). A partition design's report follows its
    design.json as recorded (the run side records there what report time chose: comparisons/rebuild.py, and the
    numerics identities of its runs: comparisons/numerics.note_design_identities); nothing here writes a plan file."""
    opened = folder if isinstance(folder, (SplitFolder, DesignFolder, BenchmarkFolder)) else open_folder(Path(folder))
    languages = list(dict.fromkeys(["en", *languages]))
    if isinstance(opened, BenchmarkFolder):
        report = build(opened.path)  # its corpora read once, for the tables and the pages of every language
        for language in languages:
            write_cross_corpus_tables(report, language)
        return draw_pages(read_report(opened), languages, price)[0]  # drawn from what was written, as below
    if isinstance(opened, DesignFolder):
        if write_recipe_reports(opened.path) is None:
            return None
    elif isinstance(opened, SplitFolder):
        if not write_split_tables(opened, languages):
            return None
    else:
        return None
    return draw_pages(read_report(opened), languages, price)[0]
