"""Every report of a single-split run folder, from the run records it holds: summary and verdict tables, serving
tables, learning curves, figures and report.html (English always, and the folder's language when it is another).
Written after a run (comparisons/cli.py) and by `report --out DIR`; a partition design's pages are
comparisons/report/partition_page.py's."""
from __future__ import annotations

import sys
from pathlib import Path

from common.splits import largest_train_size
from comparisons.comparability import left_out_line
from comparisons.numerics import identities_line
from comparisons.stats.decision import DEFAULT_CPU_HOUR_PRICE
from comparisons.report.figures import write_figures
from comparisons.report.learning_curves import write_learning_curves
from comparisons.report.split_page import write_report_page
from comparisons.report.split_report import SplitReport
from comparisons.report.serving import serving_frame, write_serving
from comparisons.report.split_tables import build_reports, largest_size, write_reports
from comparisons.run_folder import RunFolder


def write_all_reports(out: "Path | RunFolder", languages=("en",), price: float = DEFAULT_CPU_HOUR_PRICE) -> Path | None:
    """Tables, figures and report.html from the run records that exist (en always, and the other languages asked
    for); the English page (None without records). Called through comparisons/report/write.py."""
    folder = RunFolder.of(out)  # opened once: its plan, records and predictions serve every report below
    if not folder.records:
        return None
    languages = list(dict.fromkeys(["en", *languages]))
    reports = build_reports(folder)  # the plan's comparable runs, their aggregate and verdicts, once
    split = folder.split()
    if reports.left_out:
        print(f"report: {left_out_line(reports.left_out)}", file=sys.stderr)
    mixed = identities_line(folder.selected()[0])
    if mixed:
        print(f"report: {mixed}", file=sys.stderr)
    pairs = None if reports.verdicts is None else reports.verdicts.pairs
    budget = (folder.plan.fields.get("label_budget") if folder.plan else None) or "train"  # older sweeps: train
    write_learning_curves(folder, reports.summary, split.test, reports.test_labels, reports.positive_index,
                          largest_train_size(split, budget), languages)  # before the page embeds it
    records, _ = folder.selected()
    serving = serving_frame(folder.path, records, reports.test_labels, reports.positive_index, folder.plan.margins)
    report, pages = None, []
    for language in languages:  # a language's figures before the next's: the Chinese font, once set, stays set
        write_reports(folder, language, reports)
        write_serving(folder.path, language, serving)  # its verdicts against native computed once, above
        write_figures(folder, largest_size(reports.summary), reports.aggregate, reports.test_labels,
                      reports.class_names, reports.positive_index, language, pairs)
        report = report or SplitReport.read(folder)  # the language-neutral tables, written with the English ones
        pages.append(write_report_page(folder, language, price, report))  # last: it embeds the tables and figures
    return pages[0]
