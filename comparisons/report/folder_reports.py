"""The tables and figures of a single-split run folder, from the run records it holds: summary and verdict tables,
serving tables, learning curves and figures, in English and the folder's language, statistics computed once for
every language, made in a report's files (report/files.py) that report/build.py hands it; written by
`Report.write`."""
from __future__ import annotations

import sys
from pathlib import Path

from common.splits import largest_train_size
from comparisons.comparability import left_out_line
from comparisons.numerics import identities_line
from comparisons.report.figures import write_figures
from comparisons.report.files import ON_DISK, ReportFiles
from comparisons.report.learning_curves import write_learning_curves
from comparisons.report.serving import serving_frame, write_serving
from comparisons.report.split_tables import build_reports, largest_size, write_reports
from comparisons.run_folder import RunFolder


def write_split_tables(out: "Path | RunFolder", languages=("en",), files: ReportFiles = ON_DISK) -> bool:
    """Tables and figures from the run records that exist, in each language (English first), made in `files`
    (report/files.py); False without records. Called by report/build.py (SplitReport.make)."""
    folder = RunFolder.of(out)  # opened once: its plan, records and predictions serve every report below
    if not folder.records:
        return False
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
                          largest_train_size(split, budget), languages, files)  # before the page embeds it
    records, _ = folder.selected()
    serving = serving_frame(folder.path, records, reports.test_labels, reports.positive_index, folder.plan.margins)
    for language in languages:
        write_reports(folder, language, reports, files)
        write_serving(folder.path, language, serving, files)  # its verdicts against native computed once, above
        write_figures(folder, largest_size(reports.summary), reports.aggregate, reports.test_labels,
                      reports.class_names, reports.positive_index, language, pairs, files)
    return True
