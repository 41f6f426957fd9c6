"""Rebuilding an existing folder's reports: what `report --out FOLDER` does and what `api.report` calls (the command
line wraps this, not the reverse; issue 64). The folder's kind decides (comparisons/run_folder/kind.py): a benchmark
gets its cross-corpus table and page, a partition design its recipe verdicts and page, a single split its tables,
verdicts and page. A refusal raises UserInputError (one line; the command line exits 2, the API raises ValueError)."""
from __future__ import annotations

from pathlib import Path

from common.errors import UserInputError
from comparisons.numerics import note_design_identities
from comparisons.report.i18n import check_language
from comparisons.run_folder import read_runs
from comparisons.run_folder.kind import BENCHMARK, PARTITION_DESIGN, SPLIT, folder_kind
from comparisons.run_folder.records import Design
from comparisons.stats.contrasts import parse_contrasts
from comparisons.stats.decision import cpu_hour_price as checked_price


def rebuild_reports(folder: Path, lang: str = "en", contrasts: str | None = None, variance: str | None = None,
                    cpu_hour_price: float | None = None) -> str:
    """Rebuild the folder's reports in English and `lang`; the line saying what was rebuilt and where."""
    folder = Path(folder)
    check_language(lang)
    price = checked_price(cpu_hour_price)  # the pages' decision prices its CPU-hours
    kind = folder_kind(folder)
    if kind == BENCHMARK:  # a benchmark: the cross-corpus table and page from its run folders
        from comparisons.report.cross_corpus_page import write_cross_corpus_reports

        for language in dict.fromkeys(["en", lang]):
            write_cross_corpus_reports(folder, language, price)
        return f"cross-corpus table rebuilt in {folder}/cross_corpus.md (each corpus: report --out {folder}/CORPUS)"
    if kind == PARTITION_DESIGN:  # the partition design: the recipe verdicts over its partitions
        from comparisons.report.partition_page import write_recipe_pages
        from comparisons.report.partition_reports import write_recipe_reports

        design = Design.read(folder)
        declared = parse_contrasts(contrasts, design.variants)
        if declared and design.contrasts and design.contrasts_declared == "before the runs":
            raise UserInputError(f"{folder}'s plan declared its contrasts before the runs; report without --contrasts "
                                 "(contrasts chosen after seeing the results would not be a declared family)")
        if write_recipe_reports(folder, contrasts=declared, variance=variance) is None:
            raise UserInputError(f"{folder} holds no finished runs; run `python -m comparisons run --cv K --out {folder}` first")
        note_design_identities(folder)
        write_recipe_pages(folder, ["en", lang], price)
        return f"recipe verdicts rebuilt in {folder}/verdicts.md"
    if variance:
        raise UserInputError(f"--variance applies to a partition design (a folder with design.json); {folder} is a "
                             "single split, whose pairs use the two-level bootstrap; report it without --variance")
    if kind != SPLIT or not read_runs(folder):
        raise UserInputError(f"{folder} holds no finished runs; run `python -m comparisons run --out {folder}` first")
    from comparisons.report.folder_reports import write_all_reports

    write_all_reports(folder, lang, price)
    return f"reports rebuilt in {folder}"
