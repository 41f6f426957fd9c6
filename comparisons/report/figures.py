"""Figures people read: metric bars with error bars, the cost Pareto view, PR curves, confusion matrices."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from comparisons.report.calibration import labelled_predictions, reliability_points
from comparisons.report.i18n import label, setup_matplotlib, text
from comparisons.outputs import save_figure
from comparisons.report.tables import QUALITY, quality_label
from comparisons.run_folder import RunFolder


def write_figures(out: "Path | RunFolder", summary: pd.DataFrame, aggregate: pd.DataFrame, test_labels: np.ndarray,
                  class_names: tuple[str, ...], positive_index: int | None, lang: str = "en",
                  pairs: pd.DataFrame | None = None) -> list[Path]:
    """metrics, pareto, confusion matrices, PR curves (binary), forest (given verdicts.csv's pairs)."""
    setup_matplotlib(lang)
    import matplotlib.pyplot as plt

    out = RunFolder.of(out)  # each run's predictions opened once for every figure
    target = (out.path if lang == "en" else out.path / "zh") / "figures"
    done = aggregate[aggregate["seeds"] > 0].reset_index(drop=True)
    if done.empty:
        return []
    paths = [_metric_bars(plt, done, lang, target / "metrics.png")]
    if done["latency_ms_b1_p50_mean"].notna().any():  # a sweep without 'all' measured no serving costs
        paths.append(_pareto(plt, done, lang, target / "pareto.png"))
    paths.append(_confusion(plt, out, summary, class_names, test_labels, lang, target / "confusion_matrices.png"))
    if positive_index is not None and len(class_names) == 2:
        paths.append(_pr_curves(plt, out, summary, test_labels, positive_index, lang, target / "pr_curves.png"))
    if pairs is not None and (pairs["metric"] == "average_precision").any():
        paths.append(_forest(plt, pairs[pairs["metric"] == "average_precision"], lang, target / "forest.png"))
    points = reliability_points(_stored(out, summary), positive_index)
    if points:
        paths.append(reliability_diagram(points, lang, target / "reliability.png"))
    return paths


def _stored(out, summary) -> dict[str, list]:
    """Per variant, (labels, probabilities) of each finished run whose predictions hold their labels."""
    groups = {}
    for _, row in summary[summary["status"] == "ok"].iterrows():
        found = labelled_predictions(out, row)
        if found is not None:
            groups.setdefault(row["variant"], []).append(found)
    return groups


def _metric_bars(plt, done, lang, path):
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / len(QUALITY)
    x = np.arange(len(done))
    for i, metric in enumerate(QUALITY):
        ax.bar(x + i * width, done[f"{metric}_mean"], width, yerr=done[f"{metric}_std"], capsize=3,
               label=quality_label(metric, lang))
    ax.set_xticks(x + width * (len(QUALITY) - 1) / 2, done["variant"], rotation=15)
    low = np.nanmin([done[f"{m}_mean"].min() for m in QUALITY])
    ax.set_ylim(max(0.0, low - 0.05), 1.0)
    ax.set_ylabel(label("value", lang))
    ax.set_title(text("Test quality (mean ± std over seeds)", "测试集质量（多种子均值 ± 标准差）", lang))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)
    ax.grid(axis="y", alpha=0.3)
    return save_figure(fig, path)


def _forest(plt, pairs, lang, path):
    """Each pair's ΔAP (A − B) with its 95% paired interval over test items; the line at 0 is 'no difference'."""
    pairs = pairs.iloc[::-1].reset_index(drop=True)  # first pair on top
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(pairs) + 1.6))
    colors = {"A better": "tab:green", "B better": "tab:red", "equivalent": "tab:blue", "inconclusive": "tab:gray"}
    for y, row in pairs.iterrows():
        ax.errorbar(row["difference"], y, xerr=[[row["difference"] - row["ci_low"]], [row["ci_high"] - row["difference"]]],
                    fmt="o", capsize=3, color=colors.get(row["verdict"], "black"))
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(pairs)), [f"{a} − {b}" for a, b in zip(pairs["variant_a"], pairs["variant_b"])], fontsize=8)
    ax.set_xlabel(text("ΔAP (A − B) with its 95% paired interval over seeds and test items",
                       "ΔAP（A − B）及其种子与测试样本上的 95% 配对区间", lang))
    ax.set_title(text("Pairwise differences: green A better, red B better, blue equivalent, grey inconclusive (Holm)",
                      "两两差异：绿色 A 更好，红色 B 更好，蓝色等价，灰色无定论（Holm 校正）", lang), fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    return save_figure(fig, path)


def _pareto(plt, done, lang, path):
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    memory = "peak_rss_serve_mb" if done["peak_rss_serve_mb_mean"].notna().any() else "peak_rss_train_mb"
    for ax, cost in zip(axes, ("latency_ms_b1_p50", memory)):
        ax.errorbar(done[f"{cost}_mean"], done["average_precision_mean"], yerr=done["average_precision_std"],
                    fmt="o", capsize=3)
        for _, row in done.iterrows():
            ax.annotate(row["variant"], (row[f"{cost}_mean"], row["average_precision_mean"]),
                        textcoords="offset points", xytext=(5, 5), fontsize=8)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.margins(x=0.25, y=0.12)
        ax.set_xlabel(label(cost, lang) + text(" (log scale)", "（对数刻度）", lang))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(label("average_precision", lang))
    fig.suptitle(text("Quality against cost: up and left is better", "质量与代价：越靠左上越好", lang))
    return save_figure(fig, path)


def _first_ok_runs(summary):
    ok = summary[summary["status"] == "ok"]
    return ok.sort_values("seed").groupby("variant", sort=False).head(1)


def _pr_curves(plt, out, summary, test_labels, positive_index, lang, path):
    from sklearn.metrics import precision_recall_curve

    fig, ax = plt.subplots(figsize=(6, 5))
    for _, row in _first_ok_runs(summary).iterrows():
        proba = out.predictions(row).proba
        precision, recall, _ = precision_recall_curve(test_labels == positive_index, proba[:, positive_index])
        ax.plot(recall, precision, label=f"{row['variant']} (AP {row['average_precision']:.3f})")
    ax.set_xlabel(label("recall", lang))
    ax.set_ylabel(label("precision", lang))
    ax.set_title(text("Precision-recall on test (first seed)", "测试集精确率-召回率曲线（第一个种子）", lang))
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def _confusion(plt, out, summary, class_names, test_labels, lang, path):
    runs = _first_ok_runs(summary)
    fig, axes = plt.subplots(1, len(runs), figsize=(3.2 * len(runs), 3.4), squeeze=False)
    names = [label(name, lang) for name in class_names]
    for ax, (_, row) in zip(axes[0], runs.iterrows()):
        matrix = _confusion_from_predictions(out, row, test_labels, len(class_names))
        ax.imshow(matrix, cmap="Blues")
        for (i, j), value in np.ndenumerate(matrix):
            ax.text(j, i, str(value), ha="center", va="center",
                    color="white" if value > matrix.max() / 2 else "black")
        ax.set_xticks(range(len(names)), names)
        ax.set_yticks(range(len(names)), names)
        ax.set_title(row["variant"], fontsize=9)
        ax.set_xlabel(label("predicted", lang))
    axes[0][0].set_ylabel(label("true", lang))
    fig.suptitle(text("Confusion matrices on test (first seed)", "测试集混淆矩阵（第一个种子）", lang))
    return save_figure(fig, path)


def _confusion_from_predictions(out, row, test_labels, n_classes):
    proba = out.predictions(row).proba
    predicted = proba.argmax(axis=1)
    matrix = np.zeros((n_classes, n_classes), dtype=int)
    np.add.at(matrix, (test_labels, predicted), 1)
    return matrix


def reliability_diagram(points: dict[str, dict], lang: str, path: Path) -> Path:
    """One panel per variant: each equal-mass bin's mean probability against the share that came true
    (comparisons/report/calibration.reliability_points); on the diagonal is calibrated."""
    from common.metrics import CALIBRATION_BINS

    setup_matplotlib(lang)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(points), figsize=(2.6 * len(points) + 0.6, 3.2), squeeze=False, sharey=True)
    for ax, (variant, found) in zip(axes[0], points.items()):
        ax.plot([0, 1], [0, 1], color="0.6", linewidth=0.8, linestyle="--")
        ax.plot(found["mean_score"], found["observed"], marker="o", markersize=4, linewidth=1.2, color="tab:blue")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_title(f"{variant}\nECE {found['ece']:.3f}", fontsize=9)
        ax.set_xlabel(text("mean probability", "平均概率", lang), fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(text("share that came true", "实际发生的比例", lang), fontsize=8)
    fig.suptitle(text(f"Reliability: {CALIBRATION_BINS} equal-mass bins of the test items; on the dashed diagonal is "
                      "calibrated", f"可靠性图：测试样本的 {CALIBRATION_BINS} 个等量分箱；落在虚线对角线上即为校准", lang),
                 fontsize=10)
    return save_figure(fig, path)
