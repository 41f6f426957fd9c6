"""Probability calibration of every run, from its stored probabilities (predictions/*.npz): the Brier
score and the expected calibration error over CALIBRATION_BINS equal-mass bins (common/metrics.py), as
secondary measures beside AP (lower is better for both). Binary data: the positive class's probability;
more classes: the top class's probability against being right.

Each run's two figures go in its row (summary.csv of a split, scores.csv of a partition design); the
pages show them per variant, mean ± std over seeds or partitions, and a reliability diagram
(comparisons/report/figures.py: reliability_diagram).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from common.metrics import CALIBRATION_BINS
from common.metric_names import CALIBRATION
from comparisons.report.html import paragraph, table
from comparisons.report.i18n import label, text
from comparisons.report.spread import mean_spread
from comparisons.run_folder import RunFolder, size_label
from comparisons.run_folder.record_calibration import run_calibration
from comparisons.run_folder.records import Manifest

NAMES = {"brier": ("Brier score", "Brier 分数"),
         "ece": (f"ECE ({CALIBRATION_BINS} equal-mass bins)", f"ECE（{CALIBRATION_BINS} 个等量分箱）")}


def positive_index(folder: Path) -> int | None:
    """The positive class of a run folder's data (manifest.json); None with more than two classes or no manifest."""
    manifest = Manifest.read(folder)
    return manifest.positive_index if manifest else None


def with_calibration(summary: pd.DataFrame, folder: RunFolder, records: list, positive_index: int | None) -> pd.DataFrame:
    """summary.csv's rows with each finished run's brier and ece filled in (matched on variant, seed, size)."""

    summary = summary.copy()
    for column in CALIBRATION:
        summary[column] = pd.to_numeric(summary.get(column), errors="coerce") if column in summary else np.nan
    for record in records:
        if record.get("status") != "ok":
            continue
        rows = ((summary["variant"] == record["variant"]) & (summary["seed"] == record["seed"])
                & (summary["train_size"] == size_label(record.get("train_size"))))
        for column, value in run_calibration(folder, record, positive_index).items():
            summary.loc[rows, column] = value
    return summary


def calibration_table(rows: pd.DataFrame, unit: str, lang: str) -> str:
    """Per variant: runs, then Brier score and ECE as mean ± std over its runs (seeds or partitions)."""
    if rows is None or not set(CALIBRATION) <= set(rows.columns) or rows[list(CALIBRATION)].isna().all().all():
        return paragraph(text("No calibration figures: the runs' stored predictions hold no labels (an older folder).",
                              "没有校准数据：运行保存的预测不含标签（较早的目录）。", lang), "note")
    body = []
    for variant, runs in rows.groupby("variant", sort=False):
        cells = [variant, len(runs)]
        for column in CALIBRATION:
            values = pd.to_numeric(runs[column], errors="coerce").dropna()
            cells.append("—" if values.empty else mean_spread(values.mean(), values.std(ddof=1) if len(values) > 1
                                                               else float("nan"), len(values), unit, lang))
        body.append(cells)
    runs_header = text("partitions", "划分数", lang) if unit == "partition" else label("seeds", lang)
    headers = [label("variant", lang), runs_header] + [text(*NAMES[c], lang) for c in CALIBRATION]
    caption = text(f"Calibration of the probabilities (lower is better): mean ± std over {unit}s. Binary data: the "
                   "positive class's probability against the label; more classes: the top class's against being right; "
                   "ECE: items sorted by it, cut into "
                   f"{CALIBRATION_BINS} bins of equal size, |share positive − mean probability| weighted by the bin's size",
                   f"概率的校准程度（越低越好）：各{'划分' if unit == 'partition' else '种子'}上的均值 ± 标准差。二分类：正类概率对标签；多类别：最大类别概率对是否判对；"
                   f"ECE：按该概率排序后切成 {CALIBRATION_BINS} 个等量分箱，|正类占比 − 平均概率| 按分箱大小加权", lang)
    return table(headers, body, caption=caption)


