"""Learning curves of a partition design with several training sizes: each recipe's test AP at each
size over the partitions (mean, corrected 95% interval with that size's own n_test / n_train), each size's
verdict of the declared contrasts marked on the curves, and the labels-saved reading (stats/labels_saved.py).

  learning_curve.csv         one row per (variant, train_size): labelled texts, partitions, mean, corrected interval
  labels_saved.csv           stats/labels_saved.py
  figures/learning_curve.png, figures/labels_saved.png (DIR/zh/figures for the Chinese page)
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from comparisons.report.i18n import text
from comparisons.stats.labels_saved import labels_saved
from comparisons.stats.corrected_t import design_interval
from comparisons.stats.design_variance import DEFAULT_VARIANCE, resample_frame, sets_at, size_overlaps
from comparisons.stats.family import PRIMARY
from comparisons.report.files import ON_DISK, ReportFiles
from comparisons.report.names import LABELS_SAVED_CSV, LEARNING_CURVE_CSV
from comparisons.run_folder.training_sets import training_sets

MARKS = {"A better": "▲", "B better": "▼", "equivalent": "=", "inconclusive": "?"}


def curve_table(scores: pd.DataFrame, metric: str = PRIMARY, sets: dict | None = None,
                variance: str = DEFAULT_VARIANCE) -> pd.DataFrame:
    """From the long scores table: (variant, train_size) -> labelled texts, partitions, draws, mean and the 95%
    interval of the design's variance estimate (stats/design_variance.py; sets: run_folder/training_sets.py)."""
    rows = scores[scores["metric"] == metric]
    overlaps = size_overlaps(sets or {})
    out = []
    for (variant, size), group in rows.groupby(["variant", "train_size"], sort=False):
        frame = resample_frame(group, "value", sets_at(sets, size))
        mean, low, high, method = design_interval(frame, float((group["n_test"] / group["n_train"]).mean()),
                                                  overlaps.get(str(size)), variance)
        out.append({"variant": variant, "train_size": size, "labelled_texts": int(round(group["n_train"].mean())),
                    "partitions": group["partition"].nunique(),
                    "draws": float(frame.groupby("partition")["draw"].nunique().mean()), f"{metric}_mean": mean,
                    f"{metric}_ci_low": low, f"{metric}_ci_high": high, "interval_method": method})
    return pd.DataFrame(out).sort_values(["variant", "labelled_texts"], kind="stable").reset_index(drop=True)


def curve_figure(curve: pd.DataFrame, pairs: pd.DataFrame, path: Path, lang: str, metric: str = PRIMARY) -> Path:
    """The curves with their intervals (log size); under them, each size's verdict of each declared contrast
    (▲ A better, ▼ B better, = equivalent, ? inconclusive)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    declared = pairs[(pairs["metric"] == metric) & (pairs.get("contrast", "every pair") == "declared")]
    rows_below = list(dict.fromkeys(zip(declared["variant_a"], declared["variant_b"])))
    figure, (ax, marks) = plt.subplots(2, 1, figsize=(7.2, 4.8 + 0.3 * len(rows_below)), dpi=110, sharex=True,
                                       gridspec_kw={"height_ratios": [4, max(1, 0.5 * len(rows_below))]})
    for variant, rows in curve.groupby("variant", sort=False):
        ax.plot(rows["labelled_texts"], rows[f"{metric}_mean"], marker="o", label=variant)
        ax.fill_between(rows["labelled_texts"], rows[f"{metric}_ci_low"], rows[f"{metric}_ci_high"], alpha=0.15)
    ax.set_xscale("log")
    ax.set_ylabel(text("test average precision (mean over partitions)", "测试平均精度（各划分均值）", lang))
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    sizes = curve.groupby("train_size")["labelled_texts"].mean().to_dict()
    for k, (a, b) in enumerate(rows_below):
        for row in declared[(declared["variant_a"] == a) & (declared["variant_b"] == b)].itertuples():
            where = sizes.get(str(row.train_size), sizes.get(row.train_size))
            if where is not None:
                marks.text(where, k, MARKS.get(row.verdict, "?"), ha="center", va="center", fontsize=11)
    ticks = sorted(set(curve["labelled_texts"]))  # the sizes measured, as plain numbers (not 6 x 10^1)
    marks.set_xticks(ticks, [f"{t:,}" for t in ticks], fontsize=7)
    marks.minorticks_off()
    marks.set_yticks(range(len(rows_below)), [f"{a} − {b}" for a, b in rows_below], fontsize=7)
    marks.set_ylim(-0.5, max(len(rows_below), 1) - 0.5)
    marks.set_xlabel(text("labelled texts (training and validation), log scale", "标注文本数（训练与验证），对数刻度", lang))
    marks.set_title(text("each size's verdict: ▲ A better  ▼ B better  = equivalent  ? inconclusive",
                         "各规模的结论：▲ A 更好  ▼ B 更好  = 等价  ? 无定论", lang), fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
    return path


def write_curve_tables(out: Path, long: pd.DataFrame, variance: str | None = None,
                       files: ReportFiles = ON_DISK) -> None:
    """learning_curve.csv and labels_saved.csv in `out`, computed once from the long scores table as scores.csv holds
    it (its text read back: the same numbers whether the folder was just run or is reported again), with the
    design's variance choice (design.json's "variance", `report --variance`; else the default). Called by the write
    side (partition_reports.write_recipe_reports), made in `files` (report/files.py); the pages read them
    (design_report.DesignReport.curves)."""
    import io

    long = pd.read_csv(io.StringIO(long.to_csv(index=False, float_format="%.6g")), dtype={"train_size": str})
    sets, variance = training_sets(out, long), variance or DEFAULT_VARIANCE
    curve = curve_table(long, sets=sets, variance=variance)
    saved = labels_saved(long, overlaps=size_overlaps(sets), variance=variance)
    files.text(out / LEARNING_CURVE_CSV, curve.to_csv(index=False, float_format="%.6g"))
    files.text(out / LABELS_SAVED_CSV, saved.to_csv(index=False, float_format="%.6g"))


def read_curve_tables(out: Path, files: ReportFiles = ON_DISK) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """(the curve, labels saved) as learning_curve.csv and labels_saved.csv hold them (in `files`, else on disk);
    None when not written."""
    if not files.exists(out / LEARNING_CURVE_CSV):
        return None
    saved = out / LABELS_SAVED_CSV
    try:
        labels = files.read_csv(saved) if files.exists(saved) else pd.DataFrame()
    except pd.errors.EmptyDataError:  # a design whose recipes all need pretraining or none does: nothing saved
        labels = pd.DataFrame()
    return files.read_csv(out / LEARNING_CURVE_CSV, dtype={"train_size": str}), labels


def curve_figures(out: Path, curve: pd.DataFrame, saved: pd.DataFrame, pairs: pd.DataFrame,
                  lang: str) -> list[tuple[Path, str]]:
    """The curves and labels-saved figures for `lang`: (png, caption) of each drawn."""

    target = (out if lang == "en" else out / "zh") / "figures"
    made = [(curve_figure(curve, pairs, target / "learning_curve.png", lang),
             text("Each recipe's test average precision against the labelled texts it saw, mean over the partitions "
                  "with its corrected 95% interval; below, each size's verdict of each declared contrast",
                  "各配方的测试平均精度随其所见标注文本数的变化，各划分均值及校正 95% 区间；下方为各规模上每个声明对比的结论",
                  lang))]
    if not saved.empty and labels_saved_figure(saved, target / "labels_saved.png", lang):
        made.append((target / "labels_saved.png",
                     text(f"Labelled texts {saved['baseline'].iloc[0]} (the best recipe without pretraining) needs to "
                          "reach each pretrained recipe's AP, against the texts the pretrained recipe used; above the "
                          "dashed diagonal, pretraining saves labels",
                          f"{saved['baseline'].iloc[0]}（最好的无预训练配方）达到各预训练配方 AP 所需的标注文本数，对照预训练配方"
                          "所用的文本数；位于虚线对角线上方即预训练节省了标注", lang)))
    return made


def has_sizes(scores: pd.DataFrame | None) -> bool:
    return scores is not None and "train_size" in scores and scores["train_size"].nunique() > 1 and bool(
        np.isfinite(pd.to_numeric(scores["n_train"], errors="coerce")).all())


def labels_saved_markdown(table: pd.DataFrame, lang: str = "en") -> list[str]:
    """The table as markdown lines (English; the page renders its own bilingual table)."""
    if table.empty:
        return []
    lines = [f"Labelled texts the best recipe without pretraining ({table['baseline'].iloc[0]}) needs to reach each "
             "pretrained recipe's test AP, read off its curve per partition (linear in log size), geometric mean "
             "and 95% interval (corrected t on log size):", "",
             "| pretrained | labelled texts used | texts the baseline needs [95% interval] | ratio | reading |",
             "| --- | ---: | --- | ---: | --- |"]
    for row in table.itertuples():
        needed = (f"{row.needed:,.0f} [{row.needed_ci_low:,.0f}, {row.needed_ci_high:,.0f}]"
                  if np.isfinite(row.needed) else "–")
        ratio = f"{row.ratio:.2f}x" if np.isfinite(row.ratio) else "–"
        lines.append(f"| {row.pretrained} | {row.labelled_texts:,} | {needed} | {ratio} | {row.reading} |")
    return lines + [""]

def labels_saved_figure(table: pd.DataFrame, path, lang: str = "en") -> bool:
    """Texts needed against texts used, log-log, with the "no saving" diagonal; False when there is nothing to draw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    finite = table[np.isfinite(table["needed"].astype(float))]
    if finite.empty:
        return False
    figure, ax = plt.subplots(figsize=(6.4, 4.4), dpi=110)
    for variant, rows in finite.groupby("pretrained", sort=False):
        low = (rows["needed"] - rows["needed_ci_low"]).clip(lower=0)  # an interval clipped to the sizes measured
        high = (rows["needed_ci_high"] - rows["needed"]).clip(lower=0)  # can end at its estimate (rounding below 0)
        ax.errorbar(rows["labelled_texts"], rows["needed"], yerr=[low, high], marker="o", capsize=3, label=variant)
    span = [float(table["labelled_texts"].min()), float(max(table["labelled_texts"].max(), finite["needed_ci_high"].max()))]
    ax.plot(span, span, color="0.6", linestyle="--", label=text("no saving", "无节省", lang))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(text("labelled texts the pretrained recipe used", "预训练配方使用的标注文本数", lang))
    ax.set_ylabel(text(f"texts {table['baseline'].iloc[0]} needs for the same AP",
                       f"{table['baseline'].iloc[0]} 达到相同 AP 所需文本数", lang))
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return True
