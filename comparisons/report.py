"""Tables from a run folder: summary.csv (one row per run) and the mean ± std table per variant."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from backends.base import VARIANTS
from comparisons.i18n import label, text
from comparisons.outputs import atomic_write_text, write_table
from comparisons.runs import read_runs

SUMMARY_COLUMNS = [
    "variant", "seed", "status", "reason", "accuracy", "macro_f1", "average_precision",
    "positive_precision", "positive_recall", "threshold", "macro_f1_at_threshold",
    "params_total", "params_trainable", "train_seconds", "best_epoch", "cold_start_ms",
    "latency_ms_b1_p50", "latency_ms_b1_p90", "latency_ms_b1_cv",
    "latency_ms_b32_p50", "latency_ms_b32_p90", "latency_ms_b32_cv", "throughput_per_s",
    "rss_after_import_mb", "peak_rss_train_mb", "peak_rss_infer_mb", "peak_rss_mb", "gpu_peak_mb",
    "size_mb", "device", "split_sha256",
]
QUALITY = ["accuracy", "macro_f1", "average_precision"]
COST = ["params_total", "params_trainable", "train_seconds", "latency_ms_b1_p50", "latency_ms_b32_p50",
        "latency_ms_b32_cv", "throughput_per_s", "peak_rss_mb", "size_mb"]


def summary_frame(records: list[dict]) -> pd.DataFrame:
    rows = []
    for record in records:
        row = {column: record.get(column) for column in SUMMARY_COLUMNS}
        row["best_epoch"] = (record.get("fit_info") or {}).get("best_epoch")
        rows.append(row)
    frame = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    order = {name: i for i, name in enumerate(VARIANTS)}
    return frame.sort_values(["variant", "seed"], key=lambda s: s.map(order) if s.name == "variant" else s,
                             ignore_index=True)


def aggregate_frame(summary: pd.DataFrame) -> pd.DataFrame:
    """Per variant: number of finished seeds, mean and std of every numeric measure."""
    ok = summary[summary["status"] == "ok"]
    rows = []
    for variant in dict.fromkeys(summary["variant"]):
        runs = ok[ok["variant"] == variant]
        row: dict = {"variant": variant, "seeds": len(runs)}
        for column in QUALITY + COST:
            values = pd.to_numeric(runs[column], errors="coerce").dropna().to_numpy()
            row[f"{column}_mean"] = float(values.mean()) if len(values) else np.nan
            row[f"{column}_std"] = float(values.std(ddof=1)) if len(values) > 1 else (0.0 if len(values) else np.nan)
        rows.append(row)
    return pd.DataFrame(rows)


def readable_table(aggregate: pd.DataFrame, lang: str) -> pd.DataFrame:
    """The table people read: quality as mean ± std, cost as means, headers in `lang`."""
    def pm(mean, std, digits):
        return "" if pd.isna(mean) else f"{mean:.{digits}f} ± {std:.{digits}f}"

    table = pd.DataFrame({label("variant", lang): aggregate["variant"], label("seeds", lang): aggregate["seeds"]})
    for column in QUALITY:
        table[label(column, lang)] = [pm(m, s, 4) for m, s in zip(aggregate[f"{column}_mean"], aggregate[f"{column}_std"])]
    formats = {"params_total": "{:,.0f}", "params_trainable": "{:,.0f}", "train_seconds": "{:.1f}",
               "latency_ms_b1_p50": "{:.2f}", "latency_ms_b32_p50": "{:.1f}", "throughput_per_s": "{:.0f}",
               "peak_rss_mb": "{:.0f}", "size_mb": "{:.2f}"}
    for column, fmt in formats.items():
        table[label(column, lang)] = [("" if pd.isna(v) else fmt.format(v)) for v in aggregate[f"{column}_mean"]]
        if column == "latency_ms_b32_p50":  # how reproducible the latency figure is: its spread over seeds
            cv = aggregate[f"{column}_std"] / aggregate[f"{column}_mean"]
            table[label("latency_b32_cv_over_seeds", lang)] = [("" if pd.isna(v) else f"{v:.0%}") for v in cv]
    return table


def write_reports(out: Path, lang: str = "en") -> pd.DataFrame:
    """summary.csv in DIR; the aggregated table (csv, md, html) in DIR (en) or DIR/zh (zh)."""
    out = Path(out)
    summary = summary_frame(read_runs(out))
    atomic_write_text(out / "summary.csv", summary.to_csv(index=False, float_format="%.6g"))
    aggregate = aggregate_frame(summary)
    target = out if lang == "en" else out / "zh"
    atomic_write_text(target / "aggregate.csv", aggregate.to_csv(index=False, float_format="%.6g"))
    title = text("Comparison on one split: mean ± std over seeds", "同一划分上的对比：多个种子的均值 ± 标准差", lang)
    write_table(readable_table(aggregate, lang), target, "summary_table", title=title, html=True)
    return summary
