"""The top folder's reports of a partition design: scores.csv (the long scores table: one row per partition, seed,
training size, variant and metric), recipe_variants.csv (mean over partitions with its corrected 95% interval),
verdicts.csv (comparisons/stats/family.VERDICT_COLUMNS) and verdicts.md; the statistics are
comparisons/stats/partition_verdicts.py's."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from comparisons.report.files import ON_DISK, ReportFiles
from comparisons.run_folder.records import Design
from comparisons.report.i18n import LANGUAGES, text
from comparisons.report.pair_tables import dropped_line, seeding_line, verdicts_markdown
from comparisons.report.partition_curves import has_sizes, labels_saved_markdown, write_curve_tables
from comparisons.run_folder.scores import COSTS, wide_runs
from comparisons.run_folder.open_folder import scores_table
from comparisons.report.sequential_section import sequential_lines
from comparisons.stats.labels_saved import labels_saved
from comparisons.run_folder.training_sets import training_sets
from comparisons.stats.design_variance import DEFAULT_VARIANCE, size_overlaps
from comparisons.stats.graphical import dropped_nodes
from comparisons.stats.partition_verdicts import CALIBRATION_METRICS, METRICS, recipe_verdicts, sequential_verdicts
from comparisons.stats.sequential import repeat_of
from comparisons.report.names import RECIPE_VARIANTS_CSV, SCORES_CSV, VERDICTS_CSV, VERDICTS_MD


def partition_scores(out: Path) -> pd.DataFrame:
    """One row per comparable finished run of every partition folder (comparisons/run_folder/scores.py)."""
    return wide_runs(scores_table(out)[0])

def design_verdicts_markdown(variants: pd.DataFrame, pairs: pd.DataFrame, design: Design, lang: str = "en") -> str:
    """A partition design's verdicts.md: what its verdicts generalise over, then pair_tables.verdicts_markdown."""
    folds, repeats = design.folds, design.repeats
    repeats = f"≤ {repeats}" if design.is_sequential else repeats  # a sequential design: at most
    lede = text(
        f"{repeats} x {folds}-fold group-aware stratified partitions (identical texts never straddle train and "
        f"test; every text tested {repeats} time(s)). Each partition's seeds are averaged; pairs are tested over the "
        "partitions with the corrected repeated k-fold t-test (Nadeau & Bengio 2003; Bouckaert & Frank 2004). "
        "A verdict generalises over training randomness, the texts trained on and the texts tested, for data of "
        "this kind. Primary metric: average precision, Holm-corrected over its family (below); the rest are secondary. "
        "Equivalent: within the declared margin by two one-sided tests; inconclusive: neither shown different "
        "nor shown equal.",
        f"{repeats} 次 {folds} 折、按相同文本分组的分层划分（相同文本不会同时出现在训练与测试中；每条文本被测试 "
        f"{repeats} 次）。每个划分内对种子取平均；每对模型在各划分上用校正的重复 k 折 t 检验比较"
        "（Nadeau & Bengio 2003；Bouckaert & Frank 2004）。结论推广到训练随机性、所训练的文本和所测试的文本"
        "（同类数据）。主指标：平均精度，在其一族（见下）上做 Holm 校正；其余为次要指标。等价：双单侧检验下在声明的容差内；"
        "无定论：既未显示不同，也未显示相等。", lang)
    shown = pd.DataFrame({"variant": variants["variant"], "partitions": variants["partitions"],
                          "seeds": variants["seeds"]})
    for metric in METRICS:
        shown[metric] = [f"{m:.4f} ± {s:.4f} [{lo:.4f}, {hi:.4f}]" for m, s, lo, hi in zip(
            variants[f"{metric}_mean"], variants[f"{metric}_std"], variants[f"{metric}_ci_low"],
            variants[f"{metric}_ci_high"])]
    sized = "train_size" in pairs and pairs["train_size"].astype(str).nunique() > 1
    at_largest = text(" (at the largest training size; each size's figures in learning_curve.csv)",
                      "（最大训练规模；各规模见 learning_curve.csv）", lang) if sized else ""
    heading = text('Each recipe: mean ± std over partitions [corrected 95% interval]',
                   '各配方：各划分上的均值 ± 标准差 [校正的 95% 区间]', lang) + at_largest
    lede = " ".join(part for part in (lede, seeding_line(design.seeding, lang), dropped_line(design.family_graph, lang))
                    if part)
    return verdicts_markdown(text('Verdicts about recipes', '关于训练配方的结论', lang), lede, heading, shown, pairs,
                             METRICS + CALIBRATION_METRICS, lang, design.family)

@dataclass(frozen=True, eq=False)  # tables inside
class RecipeTables:
    """A partition design's statistics, computed once from its runs and its design.json as recorded."""

    design: Design
    long: pd.DataFrame       # the long scores table (scores.csv)
    scores: pd.DataFrame     # one row per run (wide)
    sets: dict               # each partition's training sets (run_folder/training_sets.py)
    variance: str            # the design's variance estimate
    variants: pd.DataFrame   # recipe_variants.csv
    pairs: pd.DataFrame      # verdicts.csv


def recipe_tables(out: Path, looks: int | None = None) -> RecipeTables | None:
    """The design's statistics (stats/partition_verdicts.py) from its design.json as recorded (contrasts and variance
    chosen at report time are recorded there first: run_folder/open_folder.record_report_choices); None without runs.
    Writes nothing; what a rerun's verdicts are compared with (comparisons/reproduce.py) is this too. `looks`: a
    sequential design's statistics as they stood after that many repeats (the runs of its first `looks` repeats
    only: what its runner decides each look on, comparisons/sequential_run.py)."""
    out = Path(out)
    design = Design.read(out)
    variance = design.variance or DEFAULT_VARIANCE
    long, left_out = scores_table(out)
    if left_out and looks is None:  # said once, by the report; a look decides on the same runs without repeating it
        print(f"left out {len(left_out)} run(s) not comparable with their partition's plan: " + ", ".join(left_out),
              file=sys.stderr)
    if looks is not None and not long.empty:
        long = long[[repeat_of(partition) < looks for partition in long["partition"]]]
    scores = wide_runs(long)
    if scores.empty:
        return None
    sets = training_sets(out, scores)
    variants, pairs = recipe_verdicts(scores, design.margins, design.variants or None, design.contrasts,
                                      design.folds, COSTS, sets, variance,
                                      design.family,  # declared before the runs (run --family)
                                      dropped_nodes(design.family_graph))  # and its unreachable chains
    if design.is_sequential:  # run --until-decided: the group-sequential rule over the looks
        pairs = sequential_verdicts(scores, design.margins, design.variants, design.contrasts, design.folds,
                                    design.sequential["max_repeats"], sets, variance)
    return RecipeTables(design, long, scores, sets, variance, variants, pairs)


def write_recipe_reports(out: Path, files: ReportFiles = ON_DISK) -> pd.DataFrame | None:
    """scores.csv, recipe_variants.csv, verdicts.csv, verdicts.md (and zh/verdicts.md, in Chinese) and, with several
    training sizes, learning_curve.csv and labels_saved.csv in the top folder, made in `files` (report/files.py)
    from recipe_tables; the pairs, or None without runs. Writes no plan file."""
    out = Path(out)
    tables = recipe_tables(out)
    if tables is None:
        return None
    design, long, scores, sets, variance = tables.design, tables.long, tables.scores, tables.sets, tables.variance
    variants, pairs = tables.variants, tables.pairs
    files.text(out / SCORES_CSV, long.to_csv(index=False, float_format="%.6g"))
    files.text(out / RECIPE_VARIANTS_CSV, variants.to_csv(index=False, float_format="%.6g"))
    files.text(out / VERDICTS_CSV, pairs.to_csv(index=False, float_format="%.6g"))
    if has_sizes(scores):  # the curves and labels saved, once, beside the tables the pages read
        write_curve_tables(out, long, variance, files)
    saved = labels_saved(long, overlaps=size_overlaps(sets), variance=variance) \
        if long["train_size"].nunique() > 1 else None
    for language in LANGUAGES:  # English in the folder, Chinese under zh/, as the pages are (whatever --lang)
        target = out if language == "en" else out / language
        files.text(target / VERDICTS_MD, design_verdicts_markdown(variants, pairs, design, language)
                   + "".join("\n\n" + line if i == 0 else "\n" + line
                             for i, line in enumerate(sequential_lines(design, language)))
                   + ("\n" + "\n".join(labels_saved_markdown(saved))
                      if saved is not None and not saved.empty else ""))
    return pairs
