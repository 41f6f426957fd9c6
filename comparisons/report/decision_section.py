"""The decision section at the top of a page (comparisons/stats/decision.decide computes it): its sentences, the
cost table of the best's group, the cost-quality front, and each corpus's decision on the cross-corpus page."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from comparisons.report.html import paragraph, png_figure, table
from comparisons.report.i18n import label, setup_matplotlib, text
from comparisons.report.measured_on import measured_on
from comparisons.stats.decision import COSTS, DEFAULT_CPU_HOUR_PRICE, Decision, cost_per_million, decide, pareto_front
from comparisons.stats.family import PRIMARY
from comparisons.outputs import save_figure
from comparisons.report.verdicts_file import largest_group

if TYPE_CHECKING:
    from comparisons.run_folder.records import Manifest


FORMATS = {"latency_ms_b1_p50": "{:.2f}", "throughput_per_s": "{:,.0f}", "peak_rss_serve_mb": "{:,.0f}",
           "size_mb": "{:.2f}", "train_seconds": "{:,.1f}"}


def _costs(decision: Decision, variant: str, lang: str) -> str:
    row = decision.rows.set_index("variant").loc[variant]
    parts = [f"{label(c, lang)} {FORMATS[c].format(row[c])}" for c in COSTS if pd.notna(row[c])]
    if pd.notna(row["cost_per_million"]):
        parts.append(text(f"one million predictions ≈ ${row['cost_per_million']:,.4f} at ${decision.price:g} a CPU-hour",
                          f"一百万次预测 ≈ {row['cost_per_million']:,.4f} 美元（每 CPU 小时 {decision.price:g} 美元）", lang))
    return "; ".join(parts)

RULE = ("A recipe joins the best's group only when it is shown not worse than the best by more than the margin: "
        "its family interval of the difference from the best (at Holm's strictest level) lies above −margin. "
        "Declared contrasts decide (every pair when none is declared); an exploratory pair neither admits nor excludes "
        "a recipe. Costs are the measuring machine's",
        "只有当一个配方被显示不比最好的差出容差以上时，它才加入最好的那一组：它与最好配方之差的族区间（Holm 最严格一级）"
        "整体高于 −容差。由声明的对比作出决定（未声明时为每一对）；探索性的对比既不纳入也不排除配方。成本为测量机器上的数值")


def losses(decision: Decision, lang: str) -> str:
    """'tfidf_logreg up to 0.2017, torch_scratch up to 0.0301' (AP the interval still allows each to lose)."""
    parts = [f"{v} {text('up to', '至多', lang)} {loss:.4f}" if pd.notna(loss) else f"{v} ({text('no interval', '无区间', lang)})"
             for v, loss in decision.open.items()]
    return text(", ", "，", lang).join(parts)


def decision_sentences(decision: Decision, lang: str) -> list[str]:
    """The decision in sentences, recomputable from verdicts.csv and the cost tables."""
    if decision.best is None:
        return [text("No finished runs: nothing to decide yet.", "没有完成的运行：尚无可决定的内容。", lang)]
    margin = "" if decision.margin is None else f" (±{decision.margin:g})"
    lines = []
    if not decision.decided:
        lines.append(text(
            f"Cannot say whether a cheaper recipe would do: on average precision{margin} no recipe is shown within the "
            f"margin of the best by mean, {decision.best}.",
            f"无法判断更便宜的配方是否够用：平均精度{margin}上，没有配方被显示在按均值最好的 {decision.best} 的容差之内。", lang))
    else:
        lines.append(text(
            f"Shown not worse than the best ({decision.best}) by more than the margin on average precision{margin}: "
            f"{', '.join(decision.group)}.",
            f"平均精度{margin}上被显示不比最好的（{decision.best}）差出容差以上的配方：{'、'.join(decision.group)}。", lang))
    if decision.open:
        lines.append(text(f"Neither shown within the margin nor shown worse; the largest loss of AP the family interval "
                          f"still allows: {losses(decision, lang)}.",
                          f"既未显示在容差内，也未显示更差；族区间仍允许的最大 AP 损失：{losses(decision, lang)}。", lang))
    if decision.worse:
        lines.append(text(f"Shown worse than {decision.best}: {', '.join(decision.worse)}.",
                          f"显示比 {decision.best} 更差：{'、'.join(decision.worse)}。", lang))
    if decision.untested:
        lines.append(text(f"No declared contrast with {decision.best}, so neither admitted nor excluded: "
                          f"{', '.join(decision.untested)}.",
                          f"与 {decision.best} 之间没有声明的对比，因此既不纳入也不排除：{'、'.join(decision.untested)}。", lang))
    if decision.cheapest is not None:
        how = (text(f", equivalent to {decision.best} within the margin", f"，在容差内与 {decision.best} 等价", lang)
               if decision.equivalent else "" if decision.cheapest == decision.best else
               text(f", not worse than {decision.best} by more than the margin (not shown equivalent: it may be better)",
                    f"，不比 {decision.best} 差出容差以上（未显示等价：它可能更好）", lang))
        lead = (text("Cheapest to serve among them", "其中服务成本最低的", lang) if decision.decided
                else text("The best by mean, the only recipe in its group", "按均值最好的、也是其组中唯一的配方", lang))
        lines.append(f"{lead}{text(': ', '：', lang)}{decision.cheapest}{how} — {_costs(decision, decision.cheapest, lang)}"
                     + text(".", "。", lang))
    if decision.missing:
        lines.append(text(f"Missing from the cost tables, so not used: {', '.join(decision.missing)}.",
                          f"成本表中缺少以下数据，因此未使用：{'、'.join(decision.missing)}。", lang))
    if decision.open and (not decision.decided or (decision.cheapest != decision.best and not decision.equivalent)):
        if decision.repeats:
            lines.append(text(f"About {decision.repeats} repeats of the design would detect a difference of the margin "
                              "with 80% power (the verdict engine's estimate).",
                              f"约 {decision.repeats} 次重复设计可以以 80% 的检验力检测到容差大小的差异（结论引擎的估计）。", lang))
        elif decision.detectable is not None:
            pair = f"{decision.best} − {next(iter(decision.open))}"
            lines.append(text(f"As run, the test detects (80% power) only a difference of {decision.detectable:.4f} or "
                              f"more in {pair}; more repeats or partitions would let it say.",
                              f"按目前的设计，检验只能（以 80% 检验力）检测到 {pair} 中 {decision.detectable:.4f} 及以上的差异；"
                              "更多的重复或划分才能让它给出结论。", lang))
        else:
            lines.append(text("More repeats (or partitions) would let the data say; this folder gives no power figure.",
                              "更多的重复（或划分）才能让数据给出结论；此目录未给出检验力估计。", lang))
    lines.append(text(*RULE, lang) + (f" ({decision.measured_on})" if decision.measured_on else "") + text(".", "。", lang))
    return lines


def decision_html(decision: Decision, lang: str) -> str:
    """The section: the sentences, then the costs of the best's group (every recipe when none is decided)."""
    shown = decision.group if decision.decided else list(decision.rows["variant"])
    rows = decision.rows.set_index("variant").loc[[v for v in shown if v in set(decision.rows["variant"])]]
    headers = [label("variant", lang), label(PRIMARY, lang)] + [label(c, lang) for c in COSTS] + [
        text(f"$ per million predictions (${decision.price:g}/CPU-hour)", f"每百万次预测的美元成本（每 CPU 小时 {decision.price:g} 美元）", lang)]
    body = [[variant, f"{row['mean']:.4f}"] + [("—" if pd.isna(row[c]) else FORMATS[c].format(row[c])) for c in COSTS]
            + ["—" if pd.isna(row["cost_per_million"]) else f"{row['cost_per_million']:,.4f}"]
            for variant, row in rows.iterrows()]
    classes = ["real" if v == decision.cheapest and decision.decided else "" for v in rows.index]
    return "".join(paragraph(line) for line in decision_sentences(decision, lang)) + table(headers, body,
                                                                                            row_classes=classes)


def cost_front(decision: Decision, lang: str, path):
    """AP against the cost of a million predictions (else b=1 latency), log x: each recipe a point with its
    interval (ci_low/ci_high when the rows have them), the front drawn, the best's group filled."""

    rows = decision.rows
    cost = "cost_per_million" if rows["cost_per_million"].notna().any() else "latency_ms_b1_p50"
    everything = pd.concat([rows, decision.paths], ignore_index=True) if len(decision.paths) else rows
    if rows[cost].notna().sum() < 2:
        return None
    setup_matplotlib(lang)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5, 5))
    front = everything.set_index("variant").loc[pareto_front(everything, cost)].sort_values(cost)
    ax.plot(front[cost], front["mean"], color="tab:orange", linewidth=1.2, zorder=1,
            label=text("front: no other is cheaper and better", "前沿：没有别的配方更便宜且更好", lang))
    for index, r in enumerate(rows.dropna(subset=[cost, "mean"]).sort_values(cost).itertuples()):
        low, high = getattr(r, "ci_low", float("nan")), getattr(r, "ci_high", float("nan"))
        yerr = [[r.mean - low], [high - r.mean]] if pd.notna(low) and pd.notna(high) else None
        tied = r.variant in decision.group and decision.decided
        ax.errorbar(getattr(r, cost), r.mean, yerr=yerr, fmt="o", capsize=3, color="tab:blue", zorder=2,
                    markerfacecolor="tab:blue" if tied else "white")
        ax.annotate(r.variant, (getattr(r, cost), r.mean), textcoords="offset points",
                    xytext=(6, 4 if index % 2 == 0 else -12), fontsize=8)
    shown = decision.paths.dropna(subset=[cost, "mean"]) if len(decision.paths) else decision.paths
    for index, r in enumerate(shown.itertuples()):  # serving paths: squares without an interval, named on the front
        ax.plot(getattr(r, cost), r.mean, "s", color="tab:purple", markerfacecolor="white", markersize=5, zorder=2,
                label=text("another serving path (named when on the front)", "其他服务路径（位于前沿时标出名称）", lang)
                if index == 0 else None)
        if r.variant in front.index:
            ax.annotate(r.variant, (getattr(r, cost), r.mean), textcoords="offset points", ha="right",
                        xytext=(-6, 6 if index % 2 == 0 else -12), fontsize=7, color="tab:purple")
    ax.set_xscale("log")
    ax.margins(x=0.3, y=0.15)
    ax.set_xlabel(text(f"USD per million predictions at USD {decision.price:g} a CPU-hour (log scale)",
                       f"每百万次预测的美元成本，每 CPU 小时 {decision.price:g} 美元（对数刻度）", lang)
                  if cost == "cost_per_million" else label(cost, lang) + text(" (log scale)", "（对数刻度）", lang))
    ax.set_ylabel(label(PRIMARY, lang))
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    ax.set_title(text("Quality against serving cost: up and left is better; filled = shown within the margin of the best",
                      "质量与服务成本：越靠左上越好；实心 = 显示在最好配方的容差之内", lang)
                 if decision.decided else text("Quality against serving cost: up and left is better (no verdict stands)",
                                               "质量与服务成本：越靠左上越好（没有成立的结论）", lang), fontsize=9)
    return save_figure(fig, path)


def tables_decision(frame: pd.DataFrame | None, partitions: bool, verdicts: pd.DataFrame | None, manifest: "Manifest",
                    serving_table, price: float) -> Decision:
    """The decision from a folder's tables: its variants (recipe_variants.csv or aggregate.csv; None: not written
    yet, no variant), its verdicts and manifest, and the serving paths of serving_table.csv when there is one."""
    if frame is None:
        frame = pd.DataFrame(columns=["variant", f"{PRIMARY}_mean"])
    if not partitions and "seeds" in frame:
        frame = frame[frame["seeds"] > 0]
    suffix = "_median" if partitions else "_mean"
    variants = pd.DataFrame({"variant": frame["variant"], "mean": frame[f"{PRIMARY}_mean"],
                             "ci_low": frame.get(f"{PRIMARY}_ci_low"), "ci_high": frame.get(f"{PRIMARY}_ci_high"),
                             **{c: frame.get(f"{c}{suffix}") for c in COSTS}})
    threads = manifest.threads
    decision = decide(variants, None if verdicts is None else largest_group(verdicts), threads, price)
    decision.paths = serving_points(serving_table, threads, price)
    decision.measured_on = measured_on(manifest)
    return decision



def serving_points(path, threads: int | None, price: float) -> pd.DataFrame:
    """The other serving paths of serving_table.csv (--serve) as points of the front: 'variant (path)', AP, costs."""
    if not path.exists():
        return pd.DataFrame()
    table = pd.read_csv(path)
    table = table[(table["status"] == "ok") & (table["path"] != "native")]
    return pd.DataFrame({"variant": [f"{v} ({p})" for v, p in zip(table["variant"], table["path"])],
                         "mean": table["average_precision"], "latency_ms_b1_p50": table["latency_ms_b1_p50"],
                         "cost_per_million": cost_per_million(table["throughput_per_s"], threads, price)})


def decision_section(out, lang: str, price: float, decision: Decision) -> tuple[tuple[str, str, str], str]:
    """((anchor, heading, content) of the page's first section: the decision (its report's `decision(price)`) and
    its costs, and the cost-quality front embedded (written to figures/cost_front.png), which the page shows with its
    costs, after the verdicts)."""
    from pathlib import Path

    target = (Path(out) if lang == "en" else Path(out) / "zh") / "figures"
    front = cost_front(decision, lang, target / "cost_front.png") if decision.best else None
    figure = "" if front is None else png_figure(front, text(
        "Quality against serving cost: each recipe's average precision with its interval against the cost of a "
        f"million predictions at ${price:g} a CPU-hour (log scale); the line joins the recipes no other is cheaper "
        "and better than; filled points are shown not worse than the best by more than the margin",
        f"质量与服务成本：各配方的平均精度及其区间，对照每 CPU 小时 {price:g} 美元下一百万次预测的成本（对数刻度）；"
        "折线连起没有别的配方比它更便宜且更好的配方；实心点为显示不比最好的差出容差以上的配方", lang))
    return ("decision", text("Decision", "决定", lang), decision_html(decision, lang)), figure


def corpora_decisions(parent, results: list, lang: str, price: float = DEFAULT_CPU_HOUR_PRICE) -> tuple[str, str, str]:
    """(anchor, heading, content) of the cross-corpus page's first section: each corpus's own decision in a row
    (the best, its group, the cheapest of it and its cost of a million predictions), from the corpus's report."""
    rows = []
    for result in [r for r in results if r.status == "ok"]:
        decision = result.report.decision(price)
        if decision.best is None:
            continue
        cost = decision.rows.set_index("variant")["cost_per_million"].get(decision.cheapest, float("nan"))
        rows.append([result.corpus, decision.best,
                     ", ".join(decision.group) if decision.decided else text("cannot say", "无法判断", lang)
                     + (text(f" (largest loss: {losses(decision, lang)})", f"（最大损失：{losses(decision, lang)}）", lang)
                        if decision.open else ""),
                     decision.cheapest if decision.decided else "—",
                     "—" if not decision.decided or pd.isna(cost) else f"{cost:,.4f}"])
    headers = [text("corpus", "语料库", lang), text("best by mean", "按均值最好", lang),
               text("shown not worse than the best by more than the margin", "显示不比最好的差出容差以上", lang),
               text("cheapest of them to serve", "其中服务成本最低的", lang),
               text(f"$ per million predictions (${price:g}/CPU-hour)", f"每百万次预测的美元成本（每 CPU 小时 {price:g} 美元）", lang)]
    lede = paragraph(text("A decision holds for one corpus at a time (each corpus's page has its reasons and costs); "
                          "'cannot say': no recipe is shown within the margin of its best on its primary metric; the largest loss is what "
                          "the family interval still allows. " + RULE[0] + ".",
                          "决定只对单个语料库成立（各语料库的页面给出理由与成本）；“无法判断”：在其主指标上没有配方被显示在最好配方的容差之内；"
                          "最大损失为族区间仍允许的值。" + RULE[1] + "。",
                          lang))
    return "decision", text("Decision per corpus", "各语料库的决定", lang), lede + table(headers, rows)
