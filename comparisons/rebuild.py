"""Rebuilding an existing folder's reports: what `report --out FOLDER` does and what `api.report` calls (the command
line wraps this, not the reverse). It checks the arguments against the folder's kind
(comparisons/run_folder/open_folder.py), then writes through comparisons/report/write.py: a benchmark gets its
cross-corpus table and page, a partition design its recipe verdicts and page, a single split its tables, verdicts
and page. A refusal raises UserInputError (one line; the command line exits 2, the API raises ValueError)."""
from __future__ import annotations

from pathlib import Path

from common.errors import UserInputError
from comparisons.numerics import note_design_identities
from comparisons.report.i18n import check_language
from comparisons.report.names import CROSS_CORPUS_MD, VERDICTS_MD
from comparisons.report.write import write_reports
from comparisons.run_folder.open_folder import BenchmarkFolder, DesignFolder, SplitFolder, open_folder
from comparisons.run_folder.writers import write_design
from comparisons.stats.contrasts import parse_contrasts
from comparisons.stats.decision import cpu_hour_price as checked_price


def rebuild_reports(folder: Path, lang: str = "en", contrasts: str | None = None, variance: str | None = None,
                    cpu_hour_price: float | None = None) -> str:
    """Rebuild the folder's reports in English and `lang`; the line saying what was rebuilt and where."""
    folder = Path(folder)
    check_language(lang)
    price = checked_price(cpu_hour_price)  # the pages' decision prices its CPU-hours
    opened = open_folder(folder)
    if isinstance(opened, BenchmarkFolder):  # a benchmark: the cross-corpus table and page from its run folders
        write_reports(opened, [lang], price)
        return f"cross-corpus table rebuilt in {folder / CROSS_CORPUS_MD} (each corpus: report --out {folder}/CORPUS)"
    if isinstance(opened, DesignFolder):  # the partition design: the recipe verdicts over its partitions
        design = opened.design
        declared = parse_contrasts(contrasts, design.variants)
        if declared and design.contrasts and design.contrasts_declared == "before the runs":
            raise UserInputError(f"{folder}'s plan declared its contrasts before the runs; report without --contrasts "
                                 "(contrasts chosen after seeing the results would not be a declared family)")
        if declared and design.is_sequential:  # its stopping decisions were made on the family declared before
            raise UserInputError(f"{folder} is a sequential design: its looks decided on the contrasts declared before "
                                 "its runs; report it without --contrasts")
        if not any(folder.glob("partitions/r*f*/runs/*.json")):
            raise UserInputError(f"{folder} holds no finished runs; run `python -m comparisons run --cv K --out {folder}` first")
        chosen = design.with_report_choices(declared, variance)  # recorded before the report reads it
        if chosen.to_dict() != design.to_dict():
            write_design(folder, chosen)
        note_design_identities(folder)  # design.json says whether its runs mix numerics identities
        if write_reports(folder, [lang], price) is None:
            raise UserInputError(f"{folder} holds no finished runs; run `python -m comparisons run --cv K --out {folder}` first")
        return f"recipe verdicts rebuilt in {folder / VERDICTS_MD}"
    if variance:
        raise UserInputError(f"--variance applies to a partition design (a folder with design.json); {folder} is a "
                             "single split, whose pairs use the two-level bootstrap; report it without --variance")
    if not isinstance(opened, SplitFolder) or not opened.records:
        raise UserInputError(f"{folder} holds no finished runs; run `python -m comparisons run --out {folder}` first")
    write_reports(opened, [lang], price)
    return f"reports rebuilt in {folder}"
