"""Learning curves: test quality against the number of training messages, from a sweep's run folder.

Each training size is one group of runs, compared as a run folder's runs are (comparisons.stats.bootstrap):
per variant the mean over seeds, the ± over seeds (training randomness) and the 95% interval over
test items (test-set sampling); per pair the paired difference, its interval and the verdict.
Written, in DIR (en) or DIR/zh (zh):
  learning_curve.csv            one row per (variant, train_size): seeds, {metric}_mean/_std/_ci_low/_ci_high
  learning_curves/size_<n>.*    the readable table of one size (n, or `all` for the whole split)
  learning_curve_verdicts.csv   verdicts.csv's columns with train_size first, every size
  learning_curves/verdicts_<n>.md   the pairs of one size, AP and macro-F1
  pretrained_vs_scratch.{csv,md}    per size, each pretrained variant against the best variant without
                                pretraining: difference, interval, verdict
  figures/learning_curves.png   AP and macro-F1 against training messages (log x), band = interval
Two classes: macro-F1 at the validation-chosen threshold beside the 0.5 cut (a model that ranks well
but is not yet calibrated, as briefly fine-tuned MiniLM on a few hundred messages, fails only the
latter); more classes: macro-F1 of the arg-max.
Framework-free (pandas, scipy, matplotlib); nothing is written for a single training size.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from backends.base import VARIANTS
from comparisons.report.i18n import label, setup_matplotlib, text
from comparisons.report.spread import mean_spread
from comparisons.report.files import ON_DISK, ReportFiles
from comparisons.stats.contrasts import as_pairs
from comparisons.stats.family import correct_family, in_schema
from common.metric_names import CURVE_METRICS
from comparisons.report.pair_tables import markdown_table, pair_table
from comparisons.stats.bootstrap import compare
from comparisons.report.predictions import load_predictions
from comparisons.run_folder import RunFolder
from comparisons.report.names import LEARNING_CURVE_VERDICTS_CSV, PRETRAINED_VS_SCRATCH_CSV, PRETRAINED_VS_SCRATCH_MD

METRICS = CURVE_METRICS  # the first two: those the runs have
PRETRAINED = ("hf_bert:frozen", "hf_bert:full")


def numeric_sizes(summary: pd.DataFrame, full_size: int) -> pd.Series:
    """train_size as messages: 'all' (or empty) is the whole training split, `full_size`."""
    return pd.to_numeric(summary["train_size"], errors="coerce").fillna(full_size).astype(int)


def size_label(size: int, full_size: int, lang: str = "en") -> str:
    """'200', or 'all (3901)' for the whole training split."""
    return f"{label('all', lang)} ({full_size})" if size == full_size else str(size)


def compare_sizes(out: Path, summary: pd.DataFrame, test_ids: np.ndarray, labels: np.ndarray,
                  positive_index: int | None, full_size: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(curve, pairs) of a run folder: its finished runs grouped by training size, predictions from disk."""
    ok = summary[summary["status"] == "ok"].copy()
    ok["train_size"] = numeric_sizes(ok, full_size)
    plan = out.plan if isinstance(out, RunFolder) and out.plan else None
    order = {name: i for i, name in enumerate([*(plan.variants if plan else []), *VARIANTS])}  # the plan's order
    ok = ok.sort_values(["variant", "seed"], key=lambda s: s.map(order) if s.name == "variant" else s)
    records = [{"variant": r.variant, "seed": int(r.seed), "threshold": _number(r.threshold),
                "train_size": None if r.train_size == full_size else int(r.train_size)} for r in ok.itertuples()]
    predictions = load_predictions(out, records, test_ids)
    predictions["train_size"] = ok["train_size"].to_numpy()
    return curve_and_pairs(predictions, ok, labels, positive_index, plan and plan.margins,
                           as_pairs(plan and plan.contrasts))


def curve_and_pairs(predictions: pd.DataFrame, runs: pd.DataFrame, labels: np.ndarray,
                    positive_index: int | None, margins: dict | None = None,
                    contrasts: list[tuple[str, str]] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The verdicts module called once per training size.

    predictions: verdicts.compare's frame plus a numeric train_size column; runs: one row per run
    with variant, seed, train_size, the METRICS and train_seconds (for the ± over seeds)."""
    curves, pairs = [], []
    for size in sorted(predictions["train_size"].unique()):
        at_size = runs[runs["train_size"] == size]
        verdicts = compare(predictions[predictions["train_size"] == size].drop(columns="train_size"), labels,
                           positive_index, margins, contrasts, corrected=False)
        curve = verdicts.variants[["variant", "seeds"]].copy()
        for metric in curve_metrics(runs):
            spread = at_size.groupby("variant")[metric].agg(lambda v: v.astype(float).std(ddof=1))
            curve[f"{metric}_mean"] = verdicts.variants[f"{metric}_mean"]
            curve[f"{metric}_std"] = curve["variant"].map(spread).fillna(0.0).to_numpy()
            curve[f"{metric}_ci_low"] = verdicts.variants[f"{metric}_ci_low"]
            curve[f"{metric}_ci_high"] = verdicts.variants[f"{metric}_ci_high"]
        seconds = at_size.groupby("variant")["train_seconds"].mean()
        curve["train_seconds_mean"] = curve["variant"].map(seconds).to_numpy()
        curve.insert(1, "train_size", int(size))
        curves.append(curve)
        pairs.append(verdicts.pairs.assign(train_size=int(size)))
    curve = pd.concat(curves, ignore_index=True)
    pairs = correct_family(pd.concat(pairs, ignore_index=True), contrasts)  # the family spans every training size
    return curve, in_schema(pairs)


def curve_metrics(frame: pd.DataFrame) -> list[str]:
    """The METRICS a runs frame or a curve holds values of: the validation-threshold macro-F1 only with
    two classes (a run of more classes records none)."""
    present = [m for m in METRICS if any(c in frame and frame[c].notna().any() for c in (m, f"{m}_mean"))]
    return present if "macro_f1_at_threshold" in present else [m for m in present if m != "macro_f1_at_threshold"]


def metric_label(metric: str, metrics: list[str], lang: str) -> str:
    """macro-F1 names its cut when both cuts are shown."""
    both = metric == "macro_f1" and "macro_f1_at_threshold" in metrics
    return label("macro_f1_0_5_cut" if both else metric, lang)


def _number(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def pretrained_vs_scratch(curve: pd.DataFrame, pairs: pd.DataFrame, metric: str = "average_precision") -> pd.DataFrame:
    """Per size and pretrained variant: the best variant without pretraining (highest mean) and the verdict."""
    rows = []
    for size, at_size in curve.groupby("train_size"):
        scratch = at_size[~at_size["variant"].isin(PRETRAINED)]
        if scratch.empty:
            continue
        best = scratch.loc[scratch[f"{metric}_mean"].idxmax(), "variant"]
        for pretrained in at_size.loc[at_size["variant"].isin(PRETRAINED), "variant"]:
            pair = pairs[(pairs["train_size"] == size) & (pairs["metric"] == metric)
                         & pairs["variant_a"].isin([pretrained, best]) & pairs["variant_b"].isin([pretrained, best])]
            if pair.empty:
                continue
            row = pair.iloc[0]
            sign = 1.0 if row["variant_a"] == pretrained else -1.0  # difference as pretrained − best scratch
            low, high = sorted((sign * row["ci_low"], sign * row["ci_high"]))
            better = {"A better": row["variant_a"], "B better": row["variant_b"]}.get(row["verdict"])
            rows.append({"train_size": int(size), "pretrained": pretrained, "best_without_pretraining": best,
                         "metric": metric, "difference": sign * row["difference"], "ci_low": low, "ci_high": high,
                         "p_holm": row["p_holm"],
                         "verdict": row["verdict"] if better is None else
                         ("pretrained better" if better == pretrained else "pretrained worse")})
    return pd.DataFrame(rows, columns=["train_size", "pretrained", "best_without_pretraining", "metric", "difference",
                                       "ci_low", "ci_high", "p_holm", "verdict"])


def size_table(curve: pd.DataFrame, size: int, lang: str) -> pd.DataFrame:
    """The readable table of one size: mean ± std over seeds [95% interval over test items]."""
    rows = curve[curve["train_size"] == size]
    table = pd.DataFrame({label("variant", lang): rows["variant"], label("seeds", lang): rows["seeds"]})
    metrics = curve_metrics(curve)
    for metric in metrics:
        table[metric_label(metric, metrics, lang)] = [
            f"{mean_spread(m, s, n, lang=lang)} [{lo:.4f}, {hi:.4f}]"
            for m, s, n, lo, hi in zip(rows[f"{metric}_mean"], rows[f"{metric}_std"], rows["seeds"],
                                       rows[f"{metric}_ci_low"], rows[f"{metric}_ci_high"])]
    table[label("train_seconds", lang)] = [f"{v:.1f}" for v in rows["train_seconds_mean"]]
    return table


TRAINING_MESSAGES = ("training messages", "训练样本数")  # what a size counts; a caller under the label budget
LABELLED_MESSAGES = ("labelled messages (training + validation)", "标注短信数（训练 + 验证）")  # passes this one


def plot_curves(curve: pd.DataFrame, full_size: int, lang: str, path: Path,
                size_words: tuple[str, str] = TRAINING_MESSAGES, files: ReportFiles = ON_DISK) -> Path:
    """AP and macro-F1 against training messages (log x): mean per variant, its 95% item interval as a band."""
    setup_matplotlib(lang)
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    sizes = sorted(curve["train_size"].unique())
    metrics = curve_metrics(curve)
    fig, axes = plt.subplots(1, len(metrics), figsize=(6 * len(metrics), 4.8), sharex=True)
    for ax, metric in zip(axes, metrics):
        for variant, rows in curve.groupby("variant", sort=False):
            rows = rows.sort_values("train_size")
            style = "-" if variant in PRETRAINED else "--"
            line, = ax.plot(rows["train_size"], rows[f"{metric}_mean"], style, marker="o", label=variant)
            ax.fill_between(rows["train_size"], rows[f"{metric}_ci_low"], rows[f"{metric}_ci_high"],
                            color=line.get_color(), alpha=0.15, linewidth=0)
        ax.set_xscale("log")
        ax.set_xticks(sizes, [size_label(s, full_size, lang) for s in sizes])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(text(f"{size_words[0]} (log scale)", f"{size_words[1]}（对数刻度）", lang))
        ax.set_ylabel(metric_label(metric, metrics, lang))
        ax.grid(alpha=0.3)
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle(text(f"Test quality against {size_words[0]}: mean over seeds, band = 95% interval over test items",
                      f"测试集质量随{size_words[1]}的变化：多种子均值，阴影 = 测试样本上的 95% 区间", lang))
    return files.figure(fig, path)


def size_verdicts_markdown(pairs: pd.DataFrame, size: int, full_size: int, lang: str, metrics: list[str]) -> str:
    """The pairs of one training size, as people read them (the one renderer, comparisons/report/pair_tables.py)."""
    lines = [f"# {text('Paired verdicts at', '配对结论：训练样本数', lang)} {size_label(size, full_size, lang)}", ""]
    for metric in metrics:
        rows = pairs[(pairs["train_size"] == size) & (pairs["metric"] == metric)]
        lines += [f"## {metric_label(metric, metrics, lang)}", "", markdown_table(*pair_table(rows, lang)), ""]
    return "\n".join(lines)


def headline_markdown(headline: pd.DataFrame, full_size: int, lang: str,
                      size_words: tuple[str, str] = TRAINING_MESSAGES) -> str:
    words = {"pretrained better": ("pretrained better", "预训练模型更好"),
             "pretrained worse": ("pretrained worse", "预训练模型更差"),
             "equivalent": ("equivalent within the margin", "在容差内等价"),
             "inconclusive": ("inconclusive", "无定论")}
    shown = pd.DataFrame({
        text(*size_words, lang): [size_label(s, full_size, lang) for s in headline["train_size"]],
        text("pretrained", "预训练模型", lang): headline["pretrained"],
        text("best without pretraining", "不用预训练的最佳模型", lang): headline["best_without_pretraining"],
        text("ΔAP [95% interval over seeds and test items]", "ΔAP [种子与测试样本上的 95% 区间]", lang):
            [f"{d:+.4f} [{lo:+.4f}, {hi:+.4f}]" for d, lo, hi in zip(headline["difference"], headline["ci_low"], headline["ci_high"])],
        text("verdict", "结论", lang): [text(*words[v], lang) for v in headline["verdict"]],
    })
    title = text("What pretraining buys at each training size (AP, paired, Holm-corrected)",
                 "各训练样本数下预训练带来的提升（AP，配对比较，Holm 校正）", lang)
    return f"# {title}\n\n{shown.to_markdown(index=False)}\n"


def write_learning_curves(out: Path, summary: pd.DataFrame, test_ids: np.ndarray, labels: np.ndarray,
                          positive_index: int | None, full_size: int, languages=("en",),
                          files: ReportFiles = ON_DISK) -> list[Path]:
    """Every output listed in the module docstring, in DIR (en) and DIR/zh (zh); nothing for a single size."""
    ok = summary[summary["status"] == "ok"]
    if ok.empty or numeric_sizes(ok, full_size).nunique() < 2:
        return []
    folder = RunFolder.of(out)
    curve, pairs = compare_sizes(folder, summary, test_ids, labels, positive_index, full_size)
    paths: list[Path] = []
    for lang in languages:
        paths += write_curve_outputs(folder.path if lang == "en" else folder.path / "zh", curve, pairs, full_size, lang,
                                     files=files)
    return paths


def write_curve_outputs(target: Path, curve: pd.DataFrame, pairs: pd.DataFrame, full_size: int,
                        lang: str, figure_dir: str = "figures",
                        size_words: tuple[str, str] = TRAINING_MESSAGES, files: ReportFiles = ON_DISK) -> list[Path]:
    """The curve table, the verdicts of every size, the headline, a table per size and the figure, in `target`
    (made in `files`: report/files.py);
    size_words: what a size counts (TRAINING_MESSAGES, or LABELLED_MESSAGES under the train+valid label budget)."""
    headline = pretrained_vs_scratch(curve, pairs)
    paths = files.table(curve, target, "learning_curve")
    paths.append(files.text(target / LEARNING_CURVE_VERDICTS_CSV, pairs.to_csv(index=False, float_format="%.6g")))
    if not headline.empty:
        paths.append(files.text(target / PRETRAINED_VS_SCRATCH_CSV,
                                headline.to_csv(index=False, float_format="%.6g")))
        paths.append(files.text(target / PRETRAINED_VS_SCRATCH_MD, headline_markdown(headline, full_size, lang, size_words)))
    for size in sorted(curve["train_size"].unique()):
        name = "all" if size == full_size else str(size)
        title = text(f"{size_words[0].capitalize()}: {size_label(size, full_size)} (mean ± std over seeds "
                     "[95% interval over test items])",
                     f"{size_words[1]}：{size_label(size, full_size, lang)}（多种子均值 ± 标准差 [测试样本上的 95% 区间]）", lang)
        paths += files.table(size_table(curve, size, lang), target / "learning_curves", f"size_{name}", title=title)
        paths.append(files.text(target / "learning_curves" / f"verdicts_{name}.md",
                                size_verdicts_markdown(pairs, size, full_size, lang, curve_metrics(curve))))
    paths.append(plot_curves(curve, full_size, lang, target / figure_dir / "learning_curves.png", size_words, files))
    return paths
