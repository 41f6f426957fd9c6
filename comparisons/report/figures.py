"""Figures people read: metric bars with error bars, the cost Pareto view, PR curves, confusion matrices."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from comparisons.run_folder.record_calibration import labelled_predictions
from comparisons.stats.calibration import reliability_points
from comparisons.report.i18n import label, phrase, setup_matplotlib, text
from comparisons.report.files import ON_DISK, ReportFiles
from comparisons.report.split_tables import QUALITY, quality_label
from comparisons.run_folder import RunFolder
from common.metrics import CALIBRATION_BINS


def write_figures(out: "Path | RunFolder", summary: pd.DataFrame, aggregate: pd.DataFrame, test_labels: np.ndarray,
                  class_names: tuple[str, ...], positive_index: int | None, lang: str = "en",
                  pairs: pd.DataFrame | None = None, files: ReportFiles = ON_DISK) -> list[Path]:
    """metrics, pareto, confusion matrices, PR curves (binary), forest (given verdicts.csv's pairs), made in `files`
    (report/files.py)."""
    setup_matplotlib(lang)
    import matplotlib.pyplot as plt

    out = RunFolder.of(out)  # each run's predictions opened once for every figure
    target = (out.path if lang == "en" else out.path / "zh") / "figures"
    done = aggregate[aggregate["seeds"] > 0].reset_index(drop=True)
    if done.empty:
        return []
    paths = [_metric_bars(plt, done, lang, target / "metrics.png", files)]
    if done["latency_ms_b1_p50_mean"].notna().any():  # a sweep without 'all' measured no serving costs
        paths.append(_pareto(plt, done, lang, target / "pareto.png", files))
    paths.append(_confusion(plt, out, summary, class_names, test_labels, lang, target / "confusion_matrices.png",
                           files))
    if positive_index is not None and len(class_names) == 2:
        paths.append(_pr_curves(plt, out, summary, test_labels, positive_index, lang, target / "pr_curves.png", files))
    if pairs is not None and (pairs["metric"] == "average_precision").any():
        paths.append(forest_plot(pairs[pairs["metric"] == "average_precision"], lang, target / "forest.png",
                                 text("95% paired interval over seeds and test items",
                                      "种子与测试样本上的 95% 配对区间", lang), files))
    points = reliability_points(_stored(out, summary), positive_index)
    if points:
        paths.append(reliability_diagram(points, lang, target / "reliability.png", files))
    return paths


def _stored(out, summary) -> dict[str, list]:
    """Per variant, (labels, probabilities) of each finished run whose predictions hold their labels."""
    groups = {}
    for _, row in summary[summary["status"] == "ok"].iterrows():
        found = labelled_predictions(out, row)
        if found is not None:
            groups.setdefault(row["variant"], []).append(found)
    return groups


def _metric_bars(plt, done, lang, path, files):
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
    return files.figure(fig, path)


def _pareto(plt, done, lang, path, files):
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
    return files.figure(fig, path)


def _first_ok_runs(summary):
    ok = summary[summary["status"] == "ok"]
    return ok.sort_values("seed").groupby("variant", sort=False).head(1)


def _pr_curves(plt, out, summary, test_labels, positive_index, lang, path, files):
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
    return files.figure(fig, path)


def _confusion(plt, out, summary, class_names, test_labels, lang, path, files):
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
    return files.figure(fig, path)


def _confusion_from_predictions(out, row, test_labels, n_classes):
    proba = out.predictions(row).proba
    predicted = proba.argmax(axis=1)
    matrix = np.zeros((n_classes, n_classes), dtype=int)
    np.add.at(matrix, (test_labels, predicted), 1)
    return matrix


def reliability_diagram(points: dict[str, dict], lang: str, path: Path, files: ReportFiles = ON_DISK) -> Path:
    """One panel per variant: each equal-mass bin's mean probability against the share that came true
    (comparisons/stats/calibration.reliability_points); on the diagonal is calibrated."""

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
    return files.figure(fig, path)


COLOURS = {"A better": "tab:green", "B better": "tab:red", "equivalent": "tab:blue", "inconclusive": "0.45"}


def forest_plot(pairs: pd.DataFrame, lang: str, path: Path, interval: str, files: ReportFiles = ON_DISK) -> Path:
    """The primary metric's pair differences A − B (verdicts.csv): each pair's 95% interval (thick) and,
    where the file has them (ci_low_family / ci_high_family), the Holm-adjusted interval of the declared
    family (thin); the ±margin band shaded; the verdict as colour and word. Declared contrasts
    (`contrast` = declared) on top, exploratory pairs below, each group labelled; without the column, one group."""
    from matplotlib.transforms import blended_transform_factory

    setup_matplotlib(lang)
    import matplotlib.pyplot as plt

    pairs = pairs.reset_index(drop=True)
    kinds = pairs["contrast"].fillna("exploratory") if "contrast" in pairs else pd.Series("", index=pairs.index)
    order = sorted(pairs.index, key=lambda i: (kinds[i] != "declared", i))
    groups = [kind for kind in dict.fromkeys(kinds[order])]
    fig, ax = plt.subplots(figsize=(9.5, 0.42 * len(pairs) + 0.5 * len(groups) + 1.5))
    labels = {"declared": text("declared contrasts", "预先声明的对比", lang),
              "exploratory": text("exploratory pairs", "探索性的配对", lang)}
    y, ticks, names = 0.0, [], []
    side = blended_transform_factory(ax.transAxes, ax.transData)
    for kind in groups:
        if kind:
            ax.text(0.005, y, labels.get(kind, kind), transform=side, ha="left", va="center", fontsize=9,
                    fontweight="bold")
            y -= 1
        for i in [i for i in order if kinds[i] == kind]:
            row, colour = pairs.loc[i], COLOURS.get(pairs.loc[i, "verdict"], "black")
            family = [row.get("ci_low_family"), row.get("ci_high_family")]
            if all(v is not None and pd.notna(v) for v in family):
                ax.plot(family, [y, y], color=colour, linewidth=1, alpha=0.6)
            ax.plot([row["ci_low"], row["ci_high"]], [y, y], color=colour, linewidth=4, solid_capstyle="butt")
            ax.plot(row["difference"], y, "o", color="white", markeredgecolor=colour, markersize=6)
            ax.text(1.01, y, phrase(row["verdict"], row["variant_a"], row["variant_b"], lang), transform=side,
                    va="center", fontsize=8, color=colour)
            ticks.append(y)
            names.append(f"{row['variant_a']} − {row['variant_b']}")
            y -= 1
    if "margin" in pairs and pairs["margin"].notna().any():
        margin = float(pairs["margin"].dropna().iloc[0])
        ax.axvspan(-margin, margin, color="tab:blue", alpha=0.12, linewidth=0)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(ticks, names, fontsize=8)
    ax.set_ylim(y + 0.4, 0.6)
    ax.grid(axis="x", alpha=0.3)
    family = "ci_low_family" in pairs and pairs["ci_low_family"].notna().any()
    ax.set_xlabel(text(f"ΔAP (A − B): thick = {interval}", f"ΔAP（A − B）：粗线 = {interval}", lang)
                  + (text("; thin = Holm-adjusted interval of the family", "；细线 = 经 Holm 校正的全族区间", lang)
                     if family else "") + text("; shaded = ±margin", "；阴影 = ±容差", lang), fontsize=8)
    ax.set_title(text("Differences in average precision against the margin: green A better, red B better, "
                      "blue equivalent, grey inconclusive", "平均精度之差与容差：绿色 A 更好，红色 B 更好，蓝色等价，灰色无定论", lang),
                 fontsize=9)
    return files.figure(fig, path)


def partition_plot(scores: pd.DataFrame, lang: str, path: Path, order: list[str] | None = None,
                   metric: str = "average_precision", files: ReportFiles = ON_DISK) -> Path:
    """Each recipe's metric on each partition (seeds averaged), the points of one partition joined across
    the recipes: lines that run together show spread the recipes share (an easy or a hard partition)."""
    setup_matplotlib(lang)
    import matplotlib.pyplot as plt

    wide = scores.groupby(["partition", "variant"], sort=False)[metric].mean().unstack("variant")
    variants = [v for v in dict.fromkeys([*(order or []), *scores["variant"]]) if v in wide.columns]
    wide = wide[variants]
    fig, ax = plt.subplots(figsize=(1.6 * len(variants) + 2.5, 4.2))
    x = np.arange(len(variants))
    for partition, row in wide.iterrows():
        ax.plot(x, row.to_numpy(), marker="o", markersize=4, linewidth=1, alpha=0.75, label=partition)
    ax.set_xticks(x, variants, rotation=15, fontsize=8)
    ax.set_ylabel(label(metric, lang))
    ax.grid(axis="y", alpha=0.3)
    ax.legend(title=text("partition", "划分", lang), fontsize=7, title_fontsize=8, loc="center left",
              bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_title(text(f"{label(metric, lang)} on each partition, one line a partition",
                      f"各划分上的{label(metric, lang)}，每条线一个划分", lang), fontsize=9)
    return files.figure(fig, path)
