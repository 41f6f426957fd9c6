"""The verdicts on the report page: which lead is real, which differences are real, every pair.

Reads DIR/verdicts.csv, whose columns comparisons/stats/bootstrap.py documents (one row per metric and
pair; difference = A − B with its 95% paired interval over seeds and test items, Holm-corrected p,
verdict A better / B better / equivalent within the margin / inconclusive, the pooled test on
decisions). A sweep prepends `train_size`; the digest then speaks of the largest training size.
"""
from __future__ import annotations

import pandas as pd

from comparisons.report.i18n import label, phrase, text
from comparisons.report.html import paragraph, table
from comparisons.report.verdicts_file import largest_group
from comparisons.stats.family import REAL
from comparisons.report.pair_tables import family_line, pair_table


def _p(value) -> str:
    return "—" if pd.isna(value) else ("< 0.001" if value < 0.001 else f"{value:.3f}")


def _oriented(row: pd.Series, first: str) -> tuple[str, str, float, float, float]:
    """(first, other, first − other, low, high) whichever of A and B `first` is."""
    if row["variant_a"] == first:
        return row["variant_a"], row["variant_b"], row["difference"], row["ci_low"], row["ci_high"]
    return row["variant_b"], row["variant_a"], -row["difference"], -row["ci_high"], -row["ci_low"]


def lead(verdicts: pd.DataFrame | None, metric: str, best: str, other: str, lang: str) -> tuple[str, bool] | None:
    """The verdict on `best` against the runner-up `other` for `metric`: (sentence, is it real)."""
    if verdicts is None:
        return None
    rows = largest_group(verdicts)
    rows = rows[(rows["metric"] == metric) & (((rows["variant_a"] == best) & (rows["variant_b"] == other))
                                              | ((rows["variant_a"] == other) & (rows["variant_b"] == best)))]
    if rows.empty:
        return None
    row = rows.iloc[0]
    first, second, difference, low, high = _oriented(row, best)
    sentence = (f"{first} − {second} = {difference:+.4f} [{low:+.4f}, {high:+.4f}]" + text(": ", "：", lang)
                + phrase(row["verdict"], row["variant_a"], row["variant_b"], lang))
    return sentence, row["verdict"] in REAL


def real_differences(verdicts: pd.DataFrame, lang: str) -> str:
    """How many pairwise differences are real, and a table of those (better − worse: positive, negative on the
    metrics where lower is better, Brier and ECE)."""
    rows = largest_group(verdicts)
    if rows.empty:
        return paragraph(text("Fewer than two variants finished: no pair to compare.",
                              "完成的变体少于两个：没有可比较的配对。", lang))
    real = rows[rows["verdict"].isin(REAL)]
    equivalent = int((rows["verdict"] == "equivalent").sum())
    size = ""
    if "train_size" in rows.columns and not rows.empty:
        size = text(f" (training messages: {rows['train_size'].iloc[0]})", f"（训练条数：{rows['train_size'].iloc[0]}）", lang)
    summary = paragraph(text(
        f"{len(real)} of {len(rows)} pairwise differences are real{size}: the bootstrap over seeds and test items "
        "gives p under 0.05 after Holm's correction over the family (the declared contrasts, or every pair when none "
        "are declared, of the primary metric, average precision, difference and equivalence together; each secondary "
        f"metric on its own). {equivalent} are equivalent within the declared margin (two one-sided tests, same "
        "correction); the rest are inconclusive: not shown different, nor shown equal.",
        f"{len(rows)} 个两两差异中有 {len(real)} 个是真实的{size}：对种子和测试样本的自助法在 Holm 校正后 p 仍小于 0.05"
        f"（主指标平均精度上声明的对比——未声明时为所有配对——的差异与等价假设一起为一族；每个次要指标各自为一族）。{equivalent} 个在预先声明的容差内等价"
        "（双单侧检验，同样校正）；其余无定论：既未显示不同，也未显示相等。", lang))
    if real.empty:
        return summary
    body = []
    for _, row in real.iterrows():
        better = row["variant_a"] if row["verdict"] == "A better" else row["variant_b"]
        first, second, difference, low, high = _oriented(row, better)
        body.append([label(row["metric"], lang), first, second, f"{difference:+.4f}", f"[{low:+.4f}, {high:+.4f}]",
                     _p(row["p_holm"]), "—" if pd.isna(row.get("verdict_decisions")) else  # Brier, ECE: no decisions
                     phrase(row["verdict_decisions"], row["variant_a"], row["variant_b"], lang)])
    headers = [label("metric", lang), text("better", "更好", lang), text("than", "优于", lang),
               text("difference (better − worse; Brier and ECE: lower is better, so negative)",
                    "差值（更好 − 更差；Brier 与 ECE 越低越好，故为负）", lang), text("95% interval over seeds and test items", "种子与测试样本上的 95% 区间", lang),
               text("p (Holm)", "p（Holm 校正）", lang),
               text("pooled test on decisions", "基于判定的合并检验", lang)]
    return summary + table(headers, body)


def pairwise_tables(verdicts: pd.DataFrame, lang: str) -> str:
    """Every pair, one table per metric, by the one renderer of verdict rows (comparisons/report/pair_tables.py)."""
    parts = [paragraph(family_line(verdicts, lang))] if "contrast" in verdicts else []
    for metric, rows in verdicts.groupby("metric", sort=False):
        headers, body = pair_table(rows, lang, "main")  # two tables, so that a 1,280-pixel window holds each
        parts.append(table(headers, body, caption=text(f"Every pair on the same test items: {label(metric, 'en')}",
                                                       f"每对模型变体在相同测试样本上的比较：{label(metric, 'zh')}", lang),
                           row_classes=["real" if v in REAL else "" for v in rows["verdict"]]))
        headers, body = pair_table(rows, lang, "decisions")
        if headers:
            parts.append(table(headers, body, caption=text(
                f"The same pairs, tested on their decisions at the threshold: {label(metric, 'en')}",
                f"同样的比较对，在阈值处的判定上检验：{label(metric, 'zh')}", lang)))
    return "\n".join(parts)


def pretrained_vs_scratch(frame: pd.DataFrame | None, lang: str) -> str:
    """A sweep's question: at each training size, is a pretrained variant better than the best model without?
    frame: pretrained_vs_scratch.csv (comparisons/report/learning_curves.py, English values)."""
    if frame is None:
        return ""
    words = {"pretrained better": ("pretrained better", "预训练更好"), "pretrained worse": ("pretrained worse", "预训练更差"),
             "equivalent": ("equivalent within the margin", "在容差内等价"), "inconclusive": ("inconclusive", "无定论")}
    body = [[f"{row['train_size']:,}", row["pretrained"], row["best_without_pretraining"], label(row["metric"], lang),
             f"{row['difference']:+.4f}", f"[{row['ci_low']:+.4f}, {row['ci_high']:+.4f}]", _p(row["p_holm"]),
             text(*words.get(row["verdict"], (row["verdict"], row["verdict"])), lang)] for _, row in frame.iterrows()]
    headers = [label("train_size", lang), text("pretrained", "预训练模型", lang),
               text("best without pretraining", "无预训练的最佳模型", lang), label("metric", lang),
               text("difference (better − worse; Brier and ECE: lower is better, so negative)",
                    "差值（更好 − 更差；Brier 与 ECE 越低越好，故为负）", lang), text("95% interval over seeds and test items", "种子与测试样本上的 95% 区间", lang),
               text("p (Holm)", "p（Holm 校正）", lang), text("verdict", "结论", lang)]
    return (f"<h3>{text('As labels get scarce: what pretraining buys at each training size', '标注变少时：预训练在各训练规模下带来什么', lang)}</h3>"
            + table(headers, body, row_classes=["real" if v.startswith("pretrained") else "" for v in frame["verdict"]]))
