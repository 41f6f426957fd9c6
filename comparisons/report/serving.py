"""The serving table and figure: every serving path of every variant, with its verdict against native.

Reads serving/<run>.json and predictions/<run>.serving.npz (comparisons/run/serving/measure_paths.py) of the plan's finished
runs. Per (variant, path), means over seeds: b1 p50 latency, b32 throughput, cold start, serving
peak RSS, size on disk, AP, flipped decisions and the largest probability change against native,
batch dependence; and the paired verdict of the path against native on average precision
(stats/bootstrap.compare on the same test items and seeds, native's validation threshold for both;
Holm over every path-vs-native pair of the folder): equivalent within the declared margin, native
better, the path better, or inconclusive. Written: serving_table.csv/.md (en in DIR, zh in DIR/zh)
and figures/serving.png (AP against b1 latency, every path a point). A path that was skipped,
refused or failed is a row with its (redacted) reason.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from common.redaction import redact
from comparisons.report.files import ON_DISK, ReportFiles
from comparisons.report.measured_on import costs_note
from comparisons.report.i18n import label, phrase, setup_matplotlib, text
from comparisons.stats.family import correct_family, margin_for
from comparisons.stats.bootstrap import compare
from comparisons.report.html import paragraph, table as html_table
from comparisons.report.names import SERVING_TABLE_CSV, SERVING_TABLE_MD

PATH_ORDER = ("native", "native-bf16", "onnx", "onnx-int8", "torch-int8")  # as run/serving/paths.PATHS
FIGURES = ("latency_ms_b1_p50", "throughput_per_s", "cold_start_s", "peak_rss_serve_mb", "size_mb",
           "average_precision", "flips_vs_native", "max_proba_change_vs_native")


def read_serving(out: Path, records: list[dict]) -> list[tuple[dict, dict]]:
    """(run record, its serving JSON) for each finished run that measured serving paths."""
    found = []
    for record in records:
        path = Path(out) / str(record.get("serving_file", ""))
        if record.get("status") == "ok" and record.get("serving_file") and path.exists():
            found.append((record, json.loads(path.read_text())))
    return found


def _probabilities(out: Path, serving: dict) -> dict[str, np.ndarray]:
    with np.load(Path(out) / serving["probabilities_file"]) as saved:
        return {name.replace("_", "-"): np.asarray(saved[name], dtype=float) for name in saved.files}


def verdict_pairs(out: Path, found: list[tuple[dict, dict]], labels: np.ndarray, positive_index,
                  margins: dict | None) -> pd.DataFrame:
    """One AP row per (variant, path vs native), Holm-corrected over all of them."""
    frames: dict[tuple[str, str], list[dict]] = {}
    for record, serving in found:
        probabilities = _probabilities(out, serving)
        for path, proba in probabilities.items():
            if path != "native":
                frames.setdefault((record["variant"], path), []).extend([
                    {"variant": "native", "seed": record["seed"], "threshold": serving["threshold"],
                     "proba": probabilities["native"]},
                    {"variant": path, "seed": record["seed"], "threshold": serving["threshold"], "proba": proba}])
    rows = []
    for (variant, path), runs in frames.items():
        pairs = compare(pd.DataFrame(runs), labels, positive_index, margins, corrected=False).pairs
        ap = pairs[pairs["metric"] == "average_precision"].assign(serving_variant=variant)
        rows.append(ap)
    if not rows:
        return pd.DataFrame()
    return correct_family(pd.concat(rows, ignore_index=True))


def serving_frame(out: Path, records: list[dict], labels: np.ndarray, positive_index,
                  margins: dict | None) -> pd.DataFrame | None:
    """One row per (variant, path): the figures (means over seeds), status, reason, verdict against native."""
    found = read_serving(out, records)
    if not found:
        return None
    rows = []
    for record, serving in found:
        for row in serving["paths"]:
            dependence = row.get("batch_dependence") or {}
            rows.append({"variant": record["variant"], "seed": record["seed"], "path": row["path"],
                         "status": row["status"], "reason": redact(row.get("reason") or ""),
                         "int8_weights": row.get("int8_weights"),
                         **{name: row.get(name) for name in FIGURES},
                         "batch_max_proba_change": dependence.get("max_proba_change"),
                         "batch_flips": dependence.get("flips"), "batch_texts": dependence.get("texts")})
    frame = pd.DataFrame(rows)
    numeric = [*FIGURES, "batch_max_proba_change", "batch_flips", "batch_texts"]
    frame[numeric] = frame[numeric].apply(pd.to_numeric, errors="coerce")
    grouped = frame.groupby(["variant", "path"], sort=False)
    table = grouped[numeric].mean().reset_index()
    firsts = grouped[["status", "reason", "int8_weights"]].first().reset_index()
    table = firsts.merge(table, on=["variant", "path"]).assign(seeds=grouped.size().values)
    pairs = verdict_pairs(out, found, labels, positive_index, margins)
    table["verdict_vs_native"] = ""
    table["ap_difference_vs_native"] = np.nan
    for _, pair in pairs.iterrows():
        at = (table["variant"] == pair["serving_variant"]) & (table["path"] == pair["variant_a"])
        table.loc[at, "verdict_vs_native"] = pair["verdict"]
        table.loc[at, "ap_difference_vs_native"] = pair["difference"]
    table["margin"] = margin_for("average_precision", margins)
    order = {name: i for i, name in enumerate(PATH_ORDER)}
    variants = {name: i for i, name in enumerate(dict.fromkeys(table["variant"]))}
    return table.sort_values(by=["variant", "path"], key=lambda c: c.map(variants if c.name == "variant" else order),
                             kind="stable").reset_index(drop=True)


def _verdict_words(verdict: str, path: str, lang: str) -> str:
    if not verdict:
        return ""
    return phrase(verdict, path, "native", lang)


def readable(table: pd.DataFrame, lang: str) -> pd.DataFrame:
    """The serving table as people read it (one variant's rows, or all of them)."""
    def number(values, pattern):
        return ["" if pd.isna(v) else pattern.format(v) for v in values]

    return pd.DataFrame({
        label("variant", lang): table["variant"],
        label("serving_path", lang): [f"{p} ({w})" if isinstance(w, str) and w else p
                                      for p, w in zip(table["path"], table["int8_weights"])],
        label("latency_ms_b1_p50", lang): number(table["latency_ms_b1_p50"], "{:.2f}"),
        label("throughput_per_s", lang): number(table["throughput_per_s"], "{:.0f}"),
        label("cold_start_s", lang): number(table["cold_start_s"], "{:.2f}"),
        label("peak_rss_serve_mb", lang): number(table["peak_rss_serve_mb"], "{:.0f}"),
        label("size_mb", lang): number(table["size_mb"], "{:.1f}"),
        label("average_precision", lang): number(table["average_precision"], "{:.4f}"),
        label("flips_vs_native", lang): number(table["flips_vs_native"], "{:.0f}"),
        label("max_proba_change_vs_native", lang): number(table["max_proba_change_vs_native"], "{:.2g}"),
        label("batch_dependence", lang): ["" if pd.isna(c) else f"{c:.2g} / {f:.0f}" for c, f in
                                          zip(table["batch_max_proba_change"], table["batch_flips"])],
        label("verdict_vs_native", lang): [_verdict_words(v, p, lang) for v, p in
                                           zip(table["verdict_vs_native"], table["path"])],
        label("status", lang): [label(s, lang) if s == "ok" else f"{label(s, lang)}: {r}"
                                for s, r in zip(table["status"], table["reason"])],
    })


def caption(table: pd.DataFrame, lang: str) -> str:
    texts = int(table["batch_texts"].max()) if table["batch_texts"].notna().any() else 0
    margin = float(table["margin"].iloc[0])
    return text(f"Serving paths: b1 p50 latency and b32 throughput (tokenization included), cold start and serving "
                f"peak from a fresh process, flips and largest probability change (Δp) against native on the test texts at batch 32 "
                f"(native's validation threshold), batch dependence as largest Δp / flips of {texts} texts scored "
                f"alone against at batch 32, verdict on AP against native (margin ±{margin:g}, Holm)",
                f"服务路径：批量1 延迟中位数与批量32 吞吐量（含分词），新进程的冷启动与服务峰值内存，"
                f"与原生模型相比在测试文本（批量32，原生模型的验证集阈值）上翻转的判定数与最大概率变化 (Δp)，"
                f"批量依赖为 {texts} 条文本单独打分与批量32 打分之间的最大 Δp / 翻转数，"
                f"AP 相对原生模型的结论（容差 ±{margin:g}，Holm 校正）", lang)


def write_serving(out: Path, lang: str, table: pd.DataFrame | None, files: ReportFiles = ON_DISK) -> list[Path]:
    """serving_table.csv/.md and figures/serving.png in DIR (en) or DIR/zh (zh) from the serving frame (computed once
    for every language: serving_frame), made in `files` (report/files.py); [] when no run measured paths."""
    if table is None:
        return []
    target = Path(out) if lang == "en" else Path(out) / "zh"
    shown = readable(table, lang)
    lines = [f"# {caption(table, lang)}{costs_note(out, lang)}", ""]
    for variant in dict.fromkeys(table["variant"]):
        lines += [f"## {variant}", "", shown[table["variant"] == variant].drop(columns=[label("variant", lang)])
                  .to_markdown(index=False), ""]
    paths = [files.text(target / SERVING_TABLE_CSV, table.to_csv(index=False, float_format="%.6g")),
             files.text(target / SERVING_TABLE_MD, "\n".join(lines))]
    measured = table[(table["status"] == "ok") & table["latency_ms_b1_p50"].notna()]
    if not measured.empty:
        paths.append(_figure(measured, lang, target / "figures" / "serving.png", files))
    return paths


MARKERS = {"native": "o", "native-bf16": "v", "onnx": "s", "onnx-int8": "D", "torch-int8": "^"}


def _figure(measured: pd.DataFrame, lang: str, path: Path, files: ReportFiles) -> Path:
    """AP against b1 latency (log scale), one colour per variant, one marker per path."""
    setup_matplotlib(lang)
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    fig, ax = plt.subplots(figsize=(8.5, 5))
    colours = {variant: f"C{i}" for i, variant in enumerate(dict.fromkeys(measured["variant"]))}
    for _, row in measured.iterrows():
        ax.scatter(row["latency_ms_b1_p50"], row["average_precision"], color=colours[row["variant"]],
                   marker=MARKERS.get(row["path"], "x"), s=45)
    for variant, rows in measured.groupby("variant", sort=False):  # a spoke from native to each other path
        native = rows[rows["path"] == "native"]
        for _, row in rows[rows["path"] != "native"].iterrows():
            if len(native):
                ax.plot([native["latency_ms_b1_p50"].iloc[0], row["latency_ms_b1_p50"]],
                        [native["average_precision"].iloc[0], row["average_precision"]], color=colours[variant],
                        alpha=0.35, lw=1)
    for variant, colour in colours.items():
        ax.plot([], [], color=colour, lw=6, label=variant)
    for name, marker in MARKERS.items():
        if name in set(measured["path"]):
            ax.scatter([], [], color="black", marker=marker, label=name)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(label("latency_ms_b1_p50", lang) + text(" (log scale)", "（对数刻度）", lang))
    ax.set_ylabel(label("average_precision", lang))
    ax.set_title(text("Serving paths: quality against batch-1 latency (up and left is better)",
                      "服务路径：质量与批量1 延迟（越靠左上越好）", lang))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    return files.figure(fig, path)


def serving_tables_html(target: Path, lang: str, machine: str = "") -> str:
    """report.html's serving tables, one per variant, from serving_table.csv ('' when there is none); `machine`: the
    sentence naming the CPU kind and threads the costs were measured on (report/measured_on.costs_note)."""

    path = Path(target) / SERVING_TABLE_CSV
    if not path.exists():
        return ""
    words = ("status", "reason", "int8_weights", "verdict_vs_native")
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={name: str for name in words})
    frame[list(words)] = frame[list(words)].fillna("")
    shown = readable(frame, lang)
    parts = [paragraph(caption(frame, lang) + machine)]  # what the columns hold, once; then one table per variant
    for variant in dict.fromkeys(frame["variant"]):
        rows = shown[frame["variant"] == variant].drop(columns=[label("variant", lang)])
        parts.append(html_table(list(rows.columns), rows.values.tolist(),
                                caption=f"{variant}: {text('serving paths', '服务路径', lang)}",
                                wrap={len(rows.columns) - 1}))
    return "\n".join(parts)
