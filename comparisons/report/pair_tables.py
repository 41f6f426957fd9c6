"""The one renderer of verdict rows for people: a pair table as (headers, rows) of strings, turned into
Markdown here and into HTML by the pages (comparisons/report/html.table), in English or Chinese.

Every design's verdicts.csv has one schema (verdict_rules.VERDICT_COLUMNS); a column is shown only when the
rows hold values for it (the partition columns on a partition design, the decision columns on a single
split). Declared contrasts come first; an exploratory pair's verdict says so.
"""
from __future__ import annotations

import pandas as pd

from comparisons.report.i18n import label, phrase, text
from comparisons.stats.family import PRIMARY


def p_text(value) -> str:
    return "—" if pd.isna(value) else ("< 0.001" if value < 0.001 else f"{value:.3g}")


def verdict_text(row, lang: str) -> str:
    """The verdict in words, 'exploratory' when the pair is outside the declared family."""
    words = phrase(row["verdict"], row["variant_a"], row["variant_b"], lang)
    if row.get("contrast") == "exploratory":
        words += text(" (exploratory)", "（探索性）", lang)
    return words


def _has(rows: pd.DataFrame, column: str) -> bool:
    return column in rows and rows[column].notna().any() and (rows[column].astype(str) != "").any()


def _repeats(value, lang: str) -> str:
    return text("unreachable", "无法达到", lang) if pd.isna(value) else f"{int(value)}"


def pair_table(rows: pd.DataFrame, lang: str, part: str = "all", correction: str = "holm"
               ) -> tuple[list[str], list[list[str]]]:
    """(headers, body) of one metric's verdict rows, in the rows' order. part: "all" columns (the markdown tables),
    or, for a page a 1,280-pixel window must hold, the "main" columns or the pair and its pooled test on
    "decisions" alone (a single split's second table; ([], []) where the rows have none). correction: the declared
    family's ("natural-order": its primary rows are the graph's, the rest Holm's; the p columns say "family")."""
    corrected = (("p (family-corrected)", "p（族内校正）"), ("equivalence p (family-corrected)", "等价检验 p（族内校正）")) \
        if correction == "natural-order" else (("p (Holm)", "p（Holm 校正）"), ("equivalence p (Holm)", "等价检验 p（Holm 校正）"))
    sizes = _has(rows, "train_size") and rows["train_size"].astype(str).nunique() > 1
    partitions = _has(rows, "partitions")
    columns: list[tuple[str, callable]] = []
    if sizes:
        columns.append((label("train_size", lang), lambda r: str(r["train_size"])))
    pair = (text("pair (A − B)", "比较对（A − B）", lang), lambda r: f"{r['variant_a']} − {r['variant_b']}")
    decisions = [
        (text("items only A gets right", "仅 A 判对的样本", lang), lambda r: f"{r['a_right_b_wrong']:.1f}"),
        (text("items only B gets right", "仅 B 判对的样本", lang), lambda r: f"{r['a_wrong_b_right']:.1f}"),
        (text("decisions p (Holm)", "判定检验 p（Holm 校正）", lang), lambda r: p_text(r["decisions_p_holm"])),
        (text("verdict on decisions", "基于判定的结论", lang),
         lambda r: phrase(r["verdict_decisions"], r["variant_a"], r["variant_b"], lang)),
    ] if _has(rows, "verdict_decisions") else []
    if part == "decisions":
        if not decisions:  # the rows hold no test on decisions (partition designs)
            return [], []
        columns += [pair] + decisions
        return [name for name, _ in columns], [[render(row) for _, render in columns] for _, row in rows.iterrows()]
    columns += [
        pair,
        (text("partitions", "划分数", lang) if partitions else label("seeds", lang),
         lambda r: str(int(r["partitions"] if partitions else r["seeds"]))),
        (text("A − B [95% interval]", "A − B [95% 区间]", lang),
         lambda r: f"{r['difference']:+.4f} [{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]"),
        (text("interval compatible with the family", "与族内结论相容的区间", lang) if correction == "natural-order"
         else text("interval at the family's level", "族水平下的区间", lang), family_interval_text),
        (text(*corrected[0], lang), lambda r: p_text(r["p_holm"])),
        (label("margin", lang), lambda r: "—" if pd.isna(r["margin"]) else f"±{r['margin']:g}"),
        (text(*corrected[1], lang), lambda r: p_text(r["p_equivalence_holm"])),
    ]
    if _has(rows, "p_a_better"):
        columns.append((text("P(A better / within / B better)", "P(A 更好 / 容差内 / B 更好)", lang),
                        lambda r: f"{r['p_a_better']:.2f} / {r['p_within_margin']:.2f} / {r['p_b_better']:.2f}"))
    columns.append((text("smallest detectable (80% power, observed spread)", "可检测的最小差值（80% 功效，按观测离散度）", lang),
                    lambda r: "—" if pd.isna(r["smallest_detectable_difference"]) else f"{r['smallest_detectable_difference']:.4f}"))
    if partitions and "repeats_for_power_margin" in rows:
        columns.append((text("repeats for 80% power at the observed difference: to show it within the margin / "
                             "to show it different", "在观测差值处达到 80% 功效所需的重复次数：显示在容差内 / 显示不同", lang),
                        lambda r: f"{_repeats(r['repeats_for_power_margin'], lang)} / {_repeats(r['repeats_for_power_observed'], lang)}"))
    columns.append((label("verdict", lang), lambda r: verdict_text(r, lang)))
    if part == "all":
        columns += decisions
    body = [[render(row) for _, render in columns] for _, row in rows.iterrows()]
    return [name for name, _ in columns], body


def markdown_table(headers: list[str], body: list[list[str]]) -> str:
    escape = (lambda cell: str(cell).replace("|", "\\|"))
    lines = ["| " + " | ".join(map(escape, headers)) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    return "\n".join(lines + ["| " + " | ".join(map(escape, row)) + " |" for row in body])


def family_interval_text(r) -> str:
    """A row's family interval: a bound at 0 beside a difference the family rejected is open ("(0, +1]": the
    rejection says the difference is not 0); an interval over the whole scale is "—" (the family says nothing of
    the row: the natural-order graph never reached it); so is one that would contradict the row's verdict (a Holm
    family's Bonferroni interval beside a row decided at a later step; verdicts.csv keeps its figures)."""
    low, high = r.get("ci_low_family"), r.get("ci_high_family")
    if pd.isna(low) or pd.isna(high) or (low <= -1 and high >= 1):
        return "—"
    verdict, margin = r.get("verdict"), r.get("margin")
    if (verdict == "A better" and low < 0) or (verdict == "B better" and high > 0) or \
            (verdict == "equivalent" and pd.notna(margin) and not -margin <= low <= high <= margin):
        return "—"  # Holm's interval at its strictest level beside a row Holm decided at a later step: not printed
    def bound(value: float) -> str:  # the scale's ends and an open 0 as they are, not as +0.0000 or +1.0000
        return "0" if value == 0 else f"{value:+.0f}" if abs(value) == 1 else f"{value:+.4f}"

    opening = "(" if low == 0 and verdict == "A better" else "["
    closing = ")" if high == 0 and verdict == "B better" else "]"
    return f"{opening}{bound(low)}, {bound(high)}{closing}"


def seeding_line(seeding: str, lang: str) -> str:
    """What a design's verdicts resample of training randomness: each partition its own seeds, or (a folder made
    with the older, shared scheme) model seed 0 everywhere, which the verdicts then hold fixed."""
    if seeding == "shared":
        return text("Seeding: shared (the older scheme): at every size a partition did not draw (the whole labelled "
                    "part, and every size at one draw a partition) all partitions trained with the same model seed and "
                    "the split's own subset; a seed effect common to all partitions is not resampled there, so those "
                    "verdicts hold that seed fixed.",
                    "种子：共享 (旧方案)：在划分未做独立抽取的规模上 (全部标注数据，以及每划分只抽一次时的每个规模)，"
                    "所有划分都用同一个模型种子和同一个子集；所有划分共有的种子效应在那里没有被重抽样，"
                    "因此这些结论是在固定该种子的条件下成立的。", lang)
    return text("Seeding: per partition: every partition (and draw) trained with its own model seed and, at a "
                "training size, its own subset, every variant of a partition with the same ones (design.json).",
                "种子：按划分：每个划分 (及每次抽取) 都有自己的模型种子，在训练规模下也有自己的子集；同一划分内各变体"
                "使用相同的种子 (见 design.json)。", lang)


def dropped_line(graph: dict | None, lang: str) -> str:
    """Why the natural-order graph used lacks some chains: each dropped before the runs as unreachable, its level
    given to the chains that can decide ("" when none was dropped)."""
    dropped = (graph or {}).get("dropped") or []
    if not dropped:
        return ""
    chains = {}
    for entry in dropped:
        a, b, kind, _ = entry["node"]
        chains.setdefault((a, b, kind), entry["why"])
    names = "; ".join(f"{a} − {b}, {text('equivalence', '等价', lang) if kind == 'e' else text('difference', '差异', lang)}: "
                      f"{why}" for (a, b, kind), why in chains.items())
    return text(f"Chains dropped before the runs as unreachable (design.json family_graph; their level passed to the "
                f"chains that can decide, so those rows read as not tested, p 1): {names}.",
                f"运行前因无法判定而移除的检验链 (design.json 的 family_graph；其显著性水平转给能够判定的链，"
                f"这些行视为未检验，p 为 1)：{names}。", lang)


def family_line(pairs: pd.DataFrame, lang: str, correction: str = "holm") -> str:
    """What the primary family is: the declared contrasts or every pair, and how many hypotheses Holm spans (or,
    for a curve declared with --family natural-order, how the graph orders them)."""
    primary = pairs[pairs["metric"] == PRIMARY]
    if primary.empty or "contrast" not in primary or primary["contrast"].isna().all():
        return ""  # a folder reported before the declared family existed
    declared = primary[primary["contrast"] == "declared"]
    family = declared if not declared.empty else primary[primary["contrast"] == "every pair"]
    hypotheses = int(family["family_size"].iloc[0]) if len(family) else 0
    if not declared.empty:
        names = "; ".join(dict.fromkeys(f"{a} − {b}" for a, b in zip(declared["variant_a"], declared["variant_b"])))
        explored = int((primary["contrast"] == "exploratory").sum())
        if correction == "natural-order":
            return text(f"Declared contrasts (the family): {names}, asked in their natural order (declared before the "
                        f"runs): within each contrast the difference from the smallest budget up and equivalence from "
                        f"the largest down, each size tested once the one before it is decided, the contrasts combined "
                        f"as Holm combines them ({hypotheses} hypotheses a contrast; docs/statistics.md); the "
                        f"{explored} other pair row(s) are exploratory, corrected among themselves.",
                        f"声明的对比（构成一族）：{names}，按自然顺序检验 (运行前声明)：每个对比内，差异从最小预算往上、"
                        f"等价从最大预算往下，前一个规模判定后才检验下一个，各对比之间如 Holm 那样组合 (每个对比 "
                        f"{hypotheses} 个假设；见 docs/statistics.md)；其余 {explored} 行为探索性比较，单独校正。", lang)
        return text(f"Declared contrasts (the family): {names}. Holm's correction spans their difference and equivalence "
                    f"hypotheses together ({hypotheses}); the {explored} other pair row(s) are exploratory, corrected "
                    "among themselves and never a finding on the same footing.",
                    f"声明的对比（构成一族）：{names}。Holm 校正同时覆盖其差异与等价假设（共 {hypotheses} 个）；"
                    f"其余 {explored} 行为探索性比较，单独校正，不与声明的对比同等作为结论。", lang)
    return text(f"No contrasts declared: every pair is the family; Holm's correction spans the difference and "
                f"equivalence hypotheses of all of them together ({hypotheses}).",
                f"未声明对比：所有配对构成一族；Holm 校正同时覆盖全部配对的差异与等价假设（共 {hypotheses} 个）。", lang)


def verdict_sections(pairs: pd.DataFrame, metrics, lang: str, correction: str = "holm") -> list[str]:
    """Markdown: the family line, then one table per metric (primary first)."""
    lines = [family_line(pairs, lang, correction), ""]
    for metric in metrics:
        rows = pairs[pairs["metric"] == metric]
        if rows.empty:
            continue
        family = text("primary", "主指标", lang) if metric == PRIMARY else text("secondary", "次要", lang)
        lines += [f"## {label(metric, lang)} ({family})", "", markdown_table(*pair_table(rows, lang, correction=correction)),
                  ""]
    return lines


def verdicts_markdown(title: str, lede: str, heading: str, variants: pd.DataFrame, pairs: pd.DataFrame, metrics,
                      lang: str, correction: str = "holm") -> str:
    """verdicts.md of any design (the one renderer): its title and what its verdicts generalise over, each variant's
    figures under `heading`, then the family line and one table of pairs per metric (verdict_sections)."""
    lines = [f"# {title}", "", lede, "", f"## {heading}", "", variants.to_markdown(index=False), ""]
    return "\n".join(lines + verdict_sections(pairs, metrics, lang, correction))
