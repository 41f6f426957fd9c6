"""The one way a folder's reports are written, whatever its kind and whoever asks: a run when it finishes
(comparisons/carry_out.py), a benchmark after its corpora (comparisons/benchmark.py), `report --out` and
`api.report` (comparisons/rebuild.py). The folder is opened once (comparisons/run_folder/open_folder.py); its kind
(report/build.py, the one place it is decided) computes its statistics once for every language and makes its
tables and figures (report/files.py), which `Report.write` writes, each file once:

- a single split: report/folder_reports.py (summary, aggregate and verdicts, serving, curves, figures);
- a partition design: report/partition_reports.py (scores, recipe verdicts, verdicts.md, the curve tables);
- a benchmark: report/cross_corpus.py (its corpora read once; the cross-corpus tables).

Then the pages, one a language, from the report those files make (read once, nothing recomputed: report/report.py).
"""
from __future__ import annotations

from pathlib import Path

from comparisons.report.build import Report, build
from comparisons.report.report import draw_pages
from comparisons.run_folder.open_folder import Opened
from comparisons.stats.decision import DEFAULT_CPU_HOUR_PRICE


def write_reports(folder: Path | Opened, languages=("en",), price: float = DEFAULT_CPU_HOUR_PRICE) -> Report | None:
    """Every report of the folder in English and the other languages asked for; the report written, or None when
    there is nothing to report yet (no finished runs; not a run folder). A partition design's report follows its
    design.json as recorded (the run side records there what report time chose: run_folder/open_folder.py's
    record_report_choices, and the numerics identities of its runs: comparisons/numerics.note_design_identities); nothing here writes a plan file."""
    languages = list(dict.fromkeys(["en", *languages]))
    report = build(folder, languages)  # computed once for every language, nothing written yet
    if report is None:
        return None
    report.write()  # its tables and figures, each file once
    draw_pages(report, languages, price)
    return report
