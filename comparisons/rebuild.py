"""Rebuilding an existing folder's reports: what `report --out FOLDER` does and what `api.report` calls (the command
line wraps this, not the reverse). The opened folder checks the arguments and records
what they chose (comparisons/run_folder/open_folder.py: `record_report_choices`), then the reports are written
through comparisons/report/write.py: a benchmark gets its
cross-corpus table and page, a partition design its recipe verdicts and page, a single split its tables, verdicts
and page. A refusal raises UserInputError (one line; the command line exits 2, the API raises ValueError)."""
from __future__ import annotations

from pathlib import Path

from common.errors import UserInputError
from comparisons.numerics import note_design_identities
from comparisons.report.i18n import check_language
from comparisons.report.write import write_reports
from comparisons.run_folder.open_folder import open_folder
from comparisons.stats.decision import cpu_hour_price as checked_price


def rebuild_reports(folder: Path, lang: str = "en", contrasts: str | None = None, variance: str | None = None,
                    cpu_hour_price: float | None = None) -> str:
    """Rebuild the folder's reports in English and `lang`; the line saying what was rebuilt and where."""
    folder = Path(folder)
    check_language(lang)
    price = checked_price(cpu_hour_price)  # the pages' decision prices its CPU-hours
    opened = open_folder(folder)
    if opened is None:
        raise UserInputError(f"{folder} holds no finished runs; run `python -m comparisons run --out {folder}` first")
    opened.record_report_choices(contrasts, variance)  # the folder's kind says what it may choose (one line if not)
    note_design_identities(folder)  # a design's design.json says whether its runs mix numerics identities
    report = write_reports(opened, [lang], price)
    if report is None:
        raise UserInputError(f"{folder} holds no finished runs; run `python -m comparisons run --out {folder}` first")
    return report.rebuilt_line
