"""report.html of the partition design (`--cv`): verdicts about recipes first, then what they cost, the
partitions, and how to reproduce. Drawn from the design's report (report/design_report.py: the top folder's tables
and design.json, read once for both languages); English and Chinese (DIR/zh/report.html); self-contained, no script.
Each partition is a run folder of its own: `python -m comparisons report --out DIR/partitions/r0f0`
gives its page (its seeds on its one split).
"""
from __future__ import annotations

import pandas as pd

from comparisons.report.design_report import DesignReport
from comparisons.run_folder.records import Design
from comparisons.numerics import describe as describe_numerics
from comparisons.report.i18n import label, phrase, text
from comparisons.run_folder.scores import COSTS
from comparisons.stats.partition_verdicts import CALIBRATION_METRICS, METRICS
from comparisons.report.calibration_table import calibration_table
from comparisons.report.decision_section import DEFAULT_CPU_HOUR_PRICE, decision_section
from comparisons.report.measured_on import costs_note_of
from comparisons.report.html import facts, paragraph, png_figure, report_page, table
from comparisons.report.partition_curves import curve_figures
from comparisons.report.partition_figures import write_recipe_figures
from comparisons.report.spread import mean_spread
from comparisons.report.sequential_section import looks_frame
from comparisons.stats.family import PRIMARY, REAL
from comparisons.report.pair_tables import dropped_line, family_line, pair_table, seeding_line


def _interval(row: pd.Series, metric: str, lang: str) -> str:
    return (mean_spread(row[f"{metric}_mean"], row[f"{metric}_std"], int(row["partitions"]), "partition", lang)
            + f" [{row[f'{metric}_ci_low']:.4f}, {row[f'{metric}_ci_high']:.4f}]")


def _verdict_table(pairs: pd.DataFrame, metric: str, lang: str, correction: str = "holm") -> str:
    rows = pairs[pairs["metric"] == metric]
    headers, body = pair_table(rows, lang, correction=correction)
    family = text("primary", "主指标", lang) if metric == PRIMARY else text("secondary", "次要指标", lang)
    return table(headers, body, caption=f"{label(metric, lang)} ({family})",
                 row_classes=["real" if v in REAL else "" for v in rows["verdict"]])


def learning_curve_section(report: DesignReport, lang: str) -> str:
    """The curves, each size's verdicts marked, and the labels-saved figure and table (report/partition_curves.py)."""
    budget = report.design.label_budget or "train+valid"
    html = paragraph(text(
        "At each size n a run saw n labelled texts in all, its validation part (epoch, threshold) carved from them; "
        "the test texts are the partition's test fold at every size." if budget == "train+valid" else
        "A different question: at each size n a run trained on n texts and still chose its epoch and threshold on "
        "the partition's whole validation part (label budget 'train').",
        "每个规模 n 下，一次运行共看到 n 条标注文本，其验证部分（轮数、阈值）从中划出；各规模的测试文本都是该划分的测试折。"
        if budget == "train+valid" else
        "另一个问题：每个规模 n 下，一次运行在 n 条文本上训练，仍在该划分的全部验证部分上选择轮数与阈值（标注预算 'train'）。", lang))
    curve, saved = report.curves  # as learning_curve.csv and labels_saved.csv hold them
    for path, caption in curve_figures(report.folder, curve, saved, report.pairs, lang):
        html += png_figure(path, caption)
    if not saved.empty:
        html += table([text("pretrained", "预训练配方", lang), text("labelled texts used", "所用标注文本", lang),
                       text(f"texts {saved['baseline'].iloc[0]} needs [95%]", f"{saved['baseline'].iloc[0]} 所需文本 [95%]", lang),
                       text("reading", "读法", lang)],
                      [[r.pretrained, f"{r.labelled_texts:,}",
                        "—" if pd.isna(r.needed) else f"{r.needed:,.0f} [{r.needed_ci_low:,.0f}, {r.needed_ci_high:,.0f}]",
                        r.reading] for r in saved.itertuples()])
    return html


def looks_html(design: Design, lang: str) -> str:
    """A sequential design's looks (report/sequential_section.py); nothing for a fixed design."""
    sequential = design.sequential
    if not sequential:
        return ""
    looks = looks_frame(design, lang)
    stopped = sequential.get("stopped") or text("not stopped yet", "尚未停止", lang)
    return paragraph(text(f"Run until decided ({sequential['spending']} alpha spending, at most "
                          f"{sequential['max_repeats']} repeats); stopped: {stopped}.",
                          f"直到判定为止（{sequential['spending']} α 消耗，至多 {sequential['max_repeats']} 次重复）；"
                          f"停止原因：{stopped}。", lang)) + \
        table(list(looks.columns), looks.astype(str).values.tolist(),
              caption=text("The looks: after each repeat, each declared contrast's state.",
                           "各次观察：每次重复之后各声明对比的状态。", lang))


def build_recipe_page(report: DesignReport, lang: str, price: float = DEFAULT_CPU_HOUR_PRICE) -> str:
    out, design, variants, pairs = report.folder, report.design, report.variants, report.pairs
    title = text(f"Verdicts about recipes: {out.resolve().name}", f"关于训练配方的结论：{out.resolve().name}", lang)
    count, repeats, folds, seeds = len(design.partitions), design.repeats, design.folds, len(design.seeds)
    if design.sequential:  # a sequential design: at most its repeats (the looks say how many ran)
        looks = design.sequential.get("looks") or []
        count = looks[-1]["partitions"] if looks else count
        repeats = f"≤ {repeats}"
    lede = text(
        f"{repeats} x {folds}-fold group-aware stratified partitions ({count} in all; identical "
        f"texts never straddle train and test; every text tested {repeats} time(s)), "
        f"{seeds} seed(s) per variant and partition. A verdict generalises over training randomness, "
        "the texts trained on and the texts tested, for data of this kind: the corrected repeated k-fold t-test "
        "(Nadeau & Bengio 2003; Bouckaert & Frank 2004) over the partitions, average precision primary and "
        "Holm-corrected over its family (the declared contrasts, or every pair; difference and equivalence together). Equivalent: within the margin declared up front (two one-sided tests); "
        "inconclusive: neither shown different nor shown equal.",
        f"{repeats} 次 {folds} 折、按相同文本分组的分层划分（共 {count} 个；相同文本不会同时出现在训练与"
        f"测试中；每条文本被测试 {repeats} 次），每个变体在每个划分上 {seeds} 个种子。结论推广到训练"
        "随机性、所训练的文本与所测试的文本（同类数据）：各划分上的校正重复 k 折 t 检验（Nadeau & Bengio 2003；"
        "Bouckaert & Frank 2004），主指标为平均精度，在其一族（声明的对比，或全部配对；差异与等价一起）上做 Holm 校正。等价：在预先声明的容差内（双单侧检验）；"
        "无定论：既未显示不同，也未显示相等。", lang)
    real = pairs[(pairs["metric"] == PRIMARY) & pairs["verdict"].isin(REAL) & (pairs.get("contrast", "every pair") != "exploratory")]
    summary = [phrase(r["verdict"], r["variant_a"], r["variant_b"], lang)
               + f" (ΔAP {r['difference']:+.4f} [{r['ci_low']:+.4f}, {r['ci_high']:+.4f}])" for _, r in real.iterrows()]
    headline = paragraph(text("Differences in average precision shown by the family: ", "本族显示的平均精度差异：", lang)
                         + ("; ".join(summary) if summary else text("none.", "无。", lang)))
    headline += paragraph(family_line(pairs, lang, design.family))
    headline += paragraph(seeding_line(design.seeding, lang))
    if dropped_line(design.family_graph, lang):
        headline += paragraph(dropped_line(design.family_graph, lang))
    if design.contrasts_declared == "at report time":
        headline += paragraph(text("These contrasts were declared when the folder was reported, after its runs.",
                                   "这些对比是在报告时（运行之后）声明的。", lang))
    recipes = table([label("variant", lang), text("partitions", "划分数", lang)]
                    + [f"{label(m, lang)} " + text("(mean ± std over partitions [corrected 95%])",
                                                   "（各划分均值 ± 标准差 [校正 95% 区间]）", lang) for m in METRICS],
                    [[r["variant"], int(r["partitions"])] + [_interval(r, m, lang) for m in METRICS]
                     for _, r in variants.iterrows()])
    costs = table([label("variant", lang)] + [label(c, lang) + text(" (median)", "（中位数）", lang) for c in COSTS],
                  [[r["variant"]] + [("—" if pd.isna(r.get(f"{c}_median")) else f"{r[f'{c}_median']:,.4g}")
                                     for c in COSTS] for _, r in variants.iterrows()],
                  caption=text("Costs per recipe, median over its runs.", "各配方的成本，各次运行的中位数。", lang)
                  + costs_note_of(report.manifest, lang))
    partitions = table([text("partition", "划分", lang), text("train / valid / test", "训练 / 验证 / 测试", lang),
                        text("test texts also in training", "测试文本出现在训练中的条数", lang)],
                       [[p["name"], f"{p['sizes']['train']} / {p['sizes']['valid']} / {p['sizes']['test']}",
                         p["test_texts_in_training"]] for p in design.partitions])
    margins = ", ".join(f"{label(k, lang)} ±{v:g}" for k, v in design.margins.items())
    figures = dict((path.stem, png_figure(path, caption)) for path, caption in write_recipe_figures(report, lang))
    scores = report.scores
    decision, front = decision_section(out, lang, price, report.decision(price))
    curves = ("curves", text("Learning curves and labels saved", "学习曲线与节省的标注", lang),
              learning_curve_section(report, lang)) if report.has_sizes else None
    sections = [
        decision, *([curves] if curves else []),
        ("verdicts", text("Verdicts", "结论", lang), headline + looks_html(design, lang) + figures.pop("forest", "")
         + "".join(_verdict_table(pairs, m, lang, design.family)
                   for m in METRICS + CALIBRATION_METRICS if (pairs["metric"] == m).any())),
        ("recipes", text("Each recipe", "各配方", lang), recipes + figures.pop("partitions", "")
         + calibration_table(scores, "partition", lang) + figures.pop("reliability", "")),
        ("costs", text("What each costs (median over runs)", "各自的代价（各次运行的中位数）", lang), costs + front),
        ("partitions", text("Partitions", "划分", lang), partitions),
        ("reproduce", text("How to reproduce", "复现方法", lang),
         facts([(text("command", "命令", lang), design.command), (text("margins", "容差", lang), margins),
                (text("data sha256", "数据 sha256", lang), design.data_sha256[:16] + "…"),
                (text("numerics identity", "数值路径标识", lang), design.numerics_line
                 or describe_numerics(design.numerics))])),  # comparisons/numerics.py
    ]
    return report_page(title, lang, paragraph(lede, "lede"), sections)
