"""The figures of the cross-corpus page (report/cross_corpus_page.py): a critical-difference diagram of the
variants' average ranks over the corpora (Demšar 2006: the Nemenyi CD bar, the variants no test told apart
joined by a bar), and each corpus's own verdicts on the primary metric as a grid coloured by verdict.
Drawn from what the cross-corpus table already computed (AcrossCorpora, CorpusResult); numbers only."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from comparisons.outputs import save_figure
from comparisons.report.i18n import phrase, setup_matplotlib, text

VERDICT_COLOURS = {"A better": "#2da44e", "B better": "#cf222e", "equivalent": "#54aeff", "inconclusive": "#d0d7de"}


def not_told_apart(order: list[str], pairs: list[dict]) -> list[list[str]]:
    """Runs of variants (in rank order) no pair test told apart: the maximal ones of two or more, as Demšar
    draws them (every pair inside a run has different = False)."""
    different = {frozenset((p["a"], p["b"])) for p in pairs if p.get("different")}
    runs = []
    for start in range(len(order)):
        end = start
        while end + 1 < len(order) and all(frozenset((order[i], order[end + 1])) not in different
                                           for i in range(start, end + 1)):
            end += 1
        if end > start and not any(s <= start and end <= e for s, e in runs):
            runs.append((start, end))
    return [order[s:e + 1] for s, e in runs]


def critical_difference_diagram(test, lang: str, path: Path) -> Path:
    """Average ranks on an axis from 1 (best) to k, the CD bar above it, groups not told apart joined."""
    setup_matplotlib(lang)
    import matplotlib.pyplot as plt

    order = sorted(test.variants, key=lambda v: test.average_ranks[v])
    k = len(order)
    groups = not_told_apart(order, test.pairs)
    half = (k + 1) // 2
    fig, ax = plt.subplots(figsize=(9, 1.3 + 0.3 * half))
    ax.set_xlim(0.8, k + 0.2)
    ax.set_ylim(-(0.6 + half * 0.5), 1.6)
    ax.axis("off")
    ax.plot([1, k], [0, 0], color="black", linewidth=1)
    for tick in range(1, k + 1):
        ax.plot([tick, tick], [0, 0.12], color="black", linewidth=1)
        ax.text(tick, 0.22, str(tick), ha="center", va="bottom", fontsize=9)
    if test.critical_difference:
        cd = float(test.critical_difference)
        ax.plot([1, 1 + cd], [1.15, 1.15], color="black", linewidth=2)
        ax.text(1 + cd / 2, 1.25, f"CD = {cd:.2f} (Nemenyi, α = {test.alpha:g})", ha="center", va="bottom", fontsize=8)
    for i, variant in enumerate(order):  # the better half labelled on the left, the rest on the right
        rank = test.average_ranks[variant]
        left = i < half
        depth = -(0.6 + (i if left else k - 1 - i) * 0.5)
        edge = 0.85 if left else k + 0.15
        ax.plot([rank, rank, edge], [0, depth, depth], color="0.3", linewidth=0.8)
        ax.text(edge + (-0.03 if left else 0.03), depth, f"{variant} ({rank:.2f})", ha="right" if left else "left",
                va="center", fontsize=8)
    base = -(0.25 + 0.12)
    for j, group in enumerate(groups):
        ranks = [test.average_ranks[v] for v in group]
        ax.plot([min(ranks) - 0.03, max(ranks) + 0.03], [base - 0.15 * j] * 2, color="tab:blue", linewidth=3,
                solid_capstyle="round")
    where = text(f"{len(test.corpora)} corpora", f"{len(test.corpora)} 个语料库", lang)
    verdict = (text("Friedman rejects 'all rank alike'", "Friedman 检验拒绝“名次相同”", lang) if test.rejected else
               text("Friedman does not reject 'all rank alike'", "Friedman 检验未拒绝“名次相同”", lang))
    p = "" if test.p_value is None else f" (p {test.p_value:.2f})"
    ax.set_title(text(f"Average rank over {where} (1 = best); blue bars join variants not told apart; {verdict}{p}",
                      f"{where}上的平均名次（1 = 最好）；蓝色横条连起未能区分的变体；{verdict}{p}", lang), fontsize=9)
    return save_figure(fig, path)


def verdict_grid(results: list, lang: str, path: Path) -> Path | None:
    """Rows: the pairs (A − B); columns: the corpora; each cell coloured by that corpus's verdict, with its word."""
    ran = [r for r in results if r.status == "ok" and len(r.pairs)]
    pairs = list(dict.fromkeys((a, b) for r in ran for a, b in zip(r.pairs["variant_a"], r.pairs["variant_b"])))
    if not ran or not pairs:
        return None
    setup_matplotlib(lang)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    fig, ax = plt.subplots(figsize=(2.2 * len(ran) + 3.2, 0.36 * len(pairs) + 1.6))
    for row, (a, b) in enumerate(pairs):
        for column, result in enumerate(ran):
            match = result.pairs[(result.pairs["variant_a"] == a) & (result.pairs["variant_b"] == b)]
            verdict = None if match.empty else match.iloc[0]["verdict"]
            ax.add_patch(Rectangle((column, row), 1, 1, facecolor=VERDICT_COLOURS.get(verdict, "white"),
                                   edgecolor="white", linewidth=2))
            word = "—" if verdict is None else {"A better": "A", "B better": "B", "equivalent": "≈"}.get(verdict, "?")
            ax.text(column + 0.5, row + 0.5, word, ha="center", va="center", fontsize=8)
    ax.set_xlim(0, len(ran))
    ax.set_ylim(len(pairs), 0)
    ax.set_xticks(np.arange(len(ran)) + 0.5, [r.corpus for r in ran], fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks(np.arange(len(pairs)) + 0.5, [f"{a} − {b}" for a, b in pairs], fontsize=8)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    legend = [Patch(color=VERDICT_COLOURS[v], label=f"{mark}{phrase(v, 'A', 'B', lang)}")
              for v, mark in (("A better", ""), ("B better", ""), ("equivalent", "≈ "), ("inconclusive", "? "))]
    ax.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=4, fontsize=8, frameon=False)
    ax.set_title(text("Each corpus's own verdict on its primary metric, pair by pair (Holm over its pairs)",
                      "各语料库自身在主指标上的结论，逐对列出（在其配对上做 Holm 校正）", lang), fontsize=9, pad=22)
    return save_figure(fig, path)
