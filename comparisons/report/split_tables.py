"""Tables from a run folder: summary.csv (one row per run), the table per variant, the verdicts.

Only runs of the folder's plan that are comparable with it (comparisons.comparability) are
aggregated; `build_reports` says which it left out and why. Two spreads, named as such:
± over seeds (training randomness) and the 95% interval over test items (test-set sampling),
which with the pairwise verdicts is recomputed from predictions/*.npz (comparisons.stats.bootstrap).

Written: summary.csv (one row per run, with each run's {metric}_ci_low/_ci_high over test
items); scores.csv (the long scores table, comparisons/run_folder/scores.py); aggregate.csv (per variant: seeds, {measure}_mean/_std, and for quality
{metric}_ci_low/_ci_high over test items), summary_table.{csv,md,html}, verdicts.{csv,md}
(columns: comparisons/stats/bootstrap.py); the Chinese twins of all but summary.csv in DIR/zh.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from backends.base import VARIANTS
from comparisons.report.measured_on import costs_note
from comparisons.report.i18n import label, phrase, text
from comparisons.report.files import ON_DISK, ReportFiles
from comparisons.run_folder import Manifest, RunFolder, RunRecord, size_key, size_label
from comparisons.report.calibration_table import with_calibration  # calibration (report/calibration_table.py)
from comparisons.run_folder.scores import split_scores
from common.metric_names import CALIBRATION, INPUT as INPUT_METRICS, SUMMARY_COSTS, SUMMARY_QUALITY
from comparisons.report.spread import mean_spread
from comparisons.report.pair_tables import verdicts_markdown
from comparisons.stats.bootstrap import N_RESAMPLES, PAIR_METRICS, Verdicts, compare, run_intervals
from comparisons.report.predictions import load_predictions
from common.datasets import DataSpec, load
from comparisons.report.names import AGGREGATE_CSV, SCORES_CSV, SUMMARY_CSV, VERDICTS_CSV, VERDICTS_MD

# accuracy and macro-F1 at the 0.5 cut (the arg-max) and at the threshold chosen on validation
QUALITY = list(SUMMARY_QUALITY)
COST = list(SUMMARY_COSTS)
# what the model could not read: the share of its tokens of the test texts that are unknown
INPUT = list(INPUT_METRICS)
SUMMARY_COLUMNS = [
    "variant", "seed", "status", "reason", "train_size", *QUALITY, "positive_precision", "positive_recall",
    *INPUT, *CALIBRATION,  # calibration (report/calibration_table.py)
    "threshold", "params_total", "params_trainable", "train_seconds", "epochs_run", "seconds_per_epoch",
    "best_epoch", "latency_ms_b1_p50", "latency_ms_b1_p90", "latency_ms_b1_cv",
    "latency_ms_b32_p50", "latency_ms_b32_p90", "latency_ms_b32_cv", "throughput_per_s", "throughput_batch",
    "compile_seconds", "cold_start_s", "serve_load_s", "rss_after_import_mb", "peak_rss_train_mb",
    "peak_rss_serve_mb", "serve_max_abs_diff", "gpu_peak_mb", "size_mb", "device", "precision", "threads",
    "profile", "executor", "node_cpu", "runs_sharing_node", "timings_shared",
    "code_commit", "code_dirty", "code_sha256", "split_sha256",
]


@dataclass
class Reports:
    """Everything the tables and figures of a run folder are made from (computed once for all languages)."""

    summary: pd.DataFrame          # every comparable run of the plan, every training size
    aggregate: pd.DataFrame        # per variant, the largest training size, with intervals over test items
    verdicts: Verdicts | None      # the largest training size; None without two finished runs
    test_labels: np.ndarray
    class_names: tuple[str, ...]
    positive_index: int | None
    left_out: list[str] = field(default_factory=list)  # "run (why)" for each run not aggregated


def summary_frame(records: list) -> pd.DataFrame:
    """One row per run record (RunRecord), the columns of summary.csv."""
    rows = []
    for record in records:
        record = record if isinstance(record, RunRecord) else RunRecord.from_dict(record)
        row = {column: record.get(column) for column in SUMMARY_COLUMNS}
        fit_info = record.get("fit_info") or {}
        row["best_epoch"] = fit_info.get("best_epoch")
        if row["epochs_run"] is None and fit_info.get("epochs_run") and record.get("train_seconds") is not None:
            row["epochs_run"] = fit_info["epochs_run"]  # records made before the column existed
            row["seconds_per_epoch"] = record["train_seconds"] / fit_info["epochs_run"]
        row["train_size"] = size_label(record.train_size)  # messages trained on; all = the whole split
        row["threads"] = record.threads
        rows.append(row)
    frame = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    order = {name: i for i, name in enumerate(VARIANTS)}
    keys = {"variant": lambda s: s.map(order), "train_size": lambda s: s.map(size_key)}
    return frame.sort_values(["variant", "train_size", "seed"], key=lambda s: keys.get(s.name, lambda v: v)(s),
                             ignore_index=True)


def largest_size(summary: pd.DataFrame) -> pd.DataFrame:
    """The runs of the largest training size (all, when it was run): what the main table and figures show."""
    if summary.empty:
        return summary
    sizes = summary["train_size"].map(size_key)
    return summary[sizes == sizes.max()].reset_index(drop=True)


def aggregate_frame(summary: pd.DataFrame, intervals: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per variant: finished seeds, mean and std over seeds of every measure, and (given the
    per-variant frame of comparisons.stats.bootstrap) each quality metric's 95% interval over test items."""
    ok = summary[summary["status"] == "ok"]
    rows = []
    for variant in dict.fromkeys(summary["variant"]):
        runs = ok[ok["variant"] == variant]
        row: dict = {"variant": variant, "seeds": len(runs)}
        for column in QUALITY + INPUT + COST:
            values = pd.to_numeric(runs[column], errors="coerce").dropna().to_numpy()
            row[f"{column}_mean"] = float(values.mean()) if len(values) else np.nan
            row[f"{column}_std"] = float(values.std(ddof=1)) if len(values) > 1 else (0.0 if len(values) else np.nan)
        for column in QUALITY:
            found = None if intervals is None else intervals[intervals["variant"] == variant]
            for end in ("ci_low", "ci_high"):
                key = f"{column}_{end}"
                row[key] = float(found[key].iloc[0]) if found is not None and len(found) and key in found else np.nan
        rows.append(row)
    columns = ["variant", "seeds", *(f"{c}_{s}" for c in QUALITY + INPUT + COST for s in ("mean", "std")),
               *(f"{c}_{end}" for c in QUALITY for end in ("ci_low", "ci_high"))]
    return pd.DataFrame(rows, columns=columns)


def quality_label(column: str, lang: str) -> str:
    """A quality header that says its cut: accuracy and macro-F1 at 0.5 or at the validation threshold."""
    return label({"accuracy": "accuracy_0_5_cut", "macro_f1": "macro_f1_0_5_cut"}.get(column, column), lang)


COST_FORMATS = {"params_total": "{:,.0f}", "params_trainable": "{:,.0f}", "train_seconds": "{:.1f}",
                "epochs_run": "{:.1f}", "seconds_per_epoch": "{:.1f}", "latency_ms_b1_p50": "{:.2f}",
                "latency_ms_b32_p50": "{:.1f}", "throughput_per_s": "{:.0f}", "compile_seconds": "{:.2f}",
                "cold_start_s": "{:.1f}", "peak_rss_train_mb": "{:.0f}", "peak_rss_serve_mb": "{:.0f}",
                "size_mb": "{:.2f}"}


def readable_table(aggregate: pd.DataFrame, lang: str) -> pd.DataFrame:
    """The table people read: quality as mean ± std over seeds [95% interval over test items], costs as means."""
    def quality(row, column):
        mean, std, low, high = (row.get(f"{column}_{k}") for k in ("mean", "std", "ci_low", "ci_high"))
        if pd.isna(mean):
            return ""
        interval = "" if pd.isna(low) else f" [{low:.3f}, {high:.3f}]"
        return f"{mean_spread(mean, std, int(row['seeds']), lang=lang)}{interval}"  # pages: "1 seed", never ± 0

    table = pd.DataFrame({label("variant", lang): aggregate["variant"], label("seeds", lang): aggregate["seeds"]})
    for column in QUALITY:
        table[quality_label(column, lang)] = [quality(row, column) for _, row in aggregate.iterrows()]
    for column in INPUT:  # blank for a model without a vocabulary and for records made before the column
        table[label(column, lang)] = [("" if pd.isna(v) else f"{v:.1%}") for v in aggregate[f"{column}_mean"]]
    for column, fmt in COST_FORMATS.items():
        table[label(column, lang)] = [("" if pd.isna(v) else fmt.format(v)) for v in aggregate[f"{column}_mean"]]
        if column == "latency_ms_b32_p50":  # how reproducible the latency figure is: its spread over seeds
            cv = aggregate[f"{column}_std"] / aggregate[f"{column}_mean"]
            table[label("latency_b32_cv_over_seeds", lang)] = [("" if pd.isna(v) else f"{v:.0%}") for v in cv]
    return table


def labels_of_test_split(folder: RunFolder, records: list, test_ids: np.ndarray, manifest: Manifest) -> np.ndarray:
    """The test labels from the run folder: the predictions files' own copy (older folders: the data)."""
    for record in records:
        if folder.has_predictions(record) and folder.predictions(record).labels is not None:
            return folder.predictions(record).labels

    return np.asarray(load(DataSpec(**manifest.data["spec"])).labels)[test_ids]


def build_reports(out: "Path | RunFolder") -> Reports:
    """Select the comparable runs of the plan, aggregate them and compute the verdicts."""
    folder = RunFolder.of(out)
    manifest = folder.plan
    records, left_out = folder.selected()
    summary = summary_frame(records)
    main = largest_size(summary)
    test_ids = folder.split().test
    ok = [r for r in records if r.ok and size_label(r.train_size) in set(main.loc[main["status"] == "ok", "train_size"])]
    labels = labels_of_test_split(folder, ok, test_ids, manifest)
    positive_index = manifest.positive_index
    verdicts = None
    if ok:
        order = {name: i for i, name in enumerate(manifest.variants or VARIANTS)}
        ok.sort(key=lambda r: (order.get(r["variant"], len(order)), r["seed"]))
        predictions = load_predictions(folder, ok, test_ids)
        verdicts = compare(predictions, labels, positive_index, manifest.margins, manifest.contrasts)
        summary = _with_run_intervals(summary, run_intervals(predictions, labels, positive_index), main)
    summary = with_calibration(summary, folder, records, positive_index)  # calibration (report/calibration_table.py)
    aggregate = aggregate_frame(main, None if verdicts is None else verdicts.variants)
    return Reports(summary, aggregate, verdicts, labels, manifest.class_names, positive_index,
                   left_out)


def _with_run_intervals(summary: pd.DataFrame, intervals: pd.DataFrame, main: pd.DataFrame) -> pd.DataFrame:
    """summary.csv with each run's 95% interval over test items (runs of the largest training size)."""
    columns = [c for c in intervals.columns if c.endswith(("_ci_low", "_ci_high"))]
    main_size = main["train_size"].iloc[0] if len(main) else None
    keyed = intervals.assign(train_size=main_size).set_index(["variant", "train_size", "seed"])
    found = summary.set_index(["variant", "train_size", "seed"]).index
    extra = keyed.reindex(found)[columns].reset_index(drop=True)
    return pd.concat([summary.reset_index(drop=True), extra], axis=1)


def write_reports(folder: "Path | RunFolder", lang: str = "en", reports: Reports | None = None,
                  files: ReportFiles = ON_DISK) -> pd.DataFrame:
    """summary.csv and scores.csv in DIR (once: with the English reports); the aggregated table and the verdicts
    (csv, md) in DIR (en) or DIR/zh (zh); made in `files` (report/files.py)."""
    folder = RunFolder.of(folder)
    out = folder.path
    reports = reports or build_reports(folder)
    if lang == "en":  # once; scores.csv: the one long scores table every design fills (run_folder/scores.py)
        files.text(out / SUMMARY_CSV, reports.summary.to_csv(index=False, float_format="%.6g"))
        files.text(out / SCORES_CSV, split_scores(folder).to_csv(index=False, float_format="%.6g"))
    target = out if lang == "en" else out / "zh"
    files.text(target / AGGREGATE_CSV, reports.aggregate.to_csv(index=False, float_format="%.6g"))
    title = text("Comparison on one split: mean ± std over seeds (training randomness) "
                 "[95% interval over seeds and test items (two-level bootstrap)]",
                 "同一划分上的对比：多个种子的均值 ± 标准差（训练随机性）[种子与测试样本上的 95% 区间（两级自助法）]", lang) \
        + costs_note(out, lang)
    files.table(readable_table(reports.aggregate, lang), target, "summary_table", title=title, html=True)
    if reports.verdicts is not None:
        write_verdicts(target, reports.verdicts, lang, files)
    return reports.summary


# -- verdicts.csv / verdicts.md -------------------------------------------------------------
def write_verdicts(target: Path, verdicts: Verdicts, lang: str, files: ReportFiles = ON_DISK) -> list[Path]:
    """verdicts.csv (the columns of comparisons/stats/bootstrap.py; zh: verdict words translated) and verdicts.md."""
    pairs = verdicts.pairs.copy()
    if lang == "zh":
        for column in ("verdict", "verdict_decisions"):
            pairs[column] = [phrase(v, "A", "B", lang) if pd.notna(v) else v for v in pairs[column]]
    paths = [files.text(Path(target) / VERDICTS_CSV, pairs.to_csv(index=False, float_format="%.6g"))]
    paths.append(files.text(Path(target) / VERDICTS_MD, split_verdicts_markdown(verdicts, lang)))
    return paths


def split_verdicts_markdown(verdicts: Verdicts, lang: str) -> str:
    """A single split's verdicts.md: what its verdicts generalise over, then pair_tables.verdicts_markdown."""
    pairs, variants = verdicts.pairs, verdicts.variants
    n_items = int(pairs["n_items"].iloc[0]) if len(pairs) else 0
    lede = text(f"Paired comparisons on the same {n_items} test items: 95% percentile intervals from a two-level "
                f"bootstrap ({N_RESAMPLES} resamples, each drawing the seeds and then the test items with "
                "replacement). Primary metric: average precision, Holm-corrected over its family (below); the "
                "other metrics are secondary, each corrected on its own. Verdicts: better, equivalent within the "
                "declared margin (two one-sided tests), or inconclusive (neither shown different nor shown equal). "
                "What a verdict generalises over: other seeds of the same recipe and other test texts like these; "
                "not other training texts (one split). Decisions: one pooled sign-flip test over the test items.",
                f"在相同的 {n_items} 条测试样本上做配对比较：两级自助法的 95% 百分位区间（{N_RESAMPLES} 次重抽样，"
                "每次先有放回地抽种子，再抽测试样本）。主指标：平均精度，在其一族（见下）上做 Holm 校正；"
                "其余为次要指标，各自校正。结论：更好、在预先声明的容差内等价（双单侧检验），或无定论。"
                "结论所推广的范围：同一配方的其他种子、与此类似的其他测试文本；不包括其他训练文本（只有一个划分）。"
                "判定：对测试样本做一次合并的符号翻转检验。", lang)
    table = pd.DataFrame({label("variant", lang): variants["variant"], label("seeds", lang): variants["seeds"]})
    for metric in PAIR_METRICS:
        table[quality_label(metric, lang)] = [f"{m:.4f} [{lo:.4f}, {hi:.4f}]" for m, lo, hi in zip(
            variants[f"{metric}_mean"], variants[f"{metric}_ci_low"], variants[f"{metric}_ci_high"])]
    return verdicts_markdown(text('Verdicts: which differences these seeds and this test set can carry',
                                  '结论：这些种子和这个测试集能支撑哪些差异', lang), lede,
                             text('Each variant: seed mean [95% interval over seeds and test items]',
                                  '各模型变体：种子均值 [种子与测试样本上的 95% 区间]', lang), table, pairs, PAIR_METRICS, lang)
