"""report.html of a benchmark folder: the cross-corpus view, in English and Chinese (DIR/zh/report.html).

What may be concluded across corpora first, then the primary metric per corpus with its ranks, each
corpus's own verdicts, the corpora (sizes, caps, skipped ones with their install line) and links to
each corpus's own page. Self-contained, no script (comparisons/report/html.py); numbers only, no text
from the data.
"""
from __future__ import annotations

from html import escape
from pathlib import Path

from comparisons.report.cross_corpus import (BenchmarkReport, conclusion, corpora_headers, corpora_rows, generalises,
                                             pair_rows, scores_rows)
from comparisons.report.decision_section import DEFAULT_CPU_HOUR_PRICE, corpora_decisions
from comparisons.report.cross_corpus_figures import critical_difference_diagram, verdict_grid
from comparisons.report.html import facts, paragraph, png_figure, report_page, table
from comparisons.report.i18n import text


def build_cross_corpus_page(report: BenchmarkReport, lang: str, price: float = DEFAULT_CPU_HOUR_PRICE) -> str:
    parent, plan, results, frame, test = report.path, report.plan, report.corpora, report.table, report.test
    order = [v for v in dict.fromkeys([*plan.variants, *frame["variant"].dropna()])]
    title = text(f"Across corpora: {Path(parent).resolve().name}", f"跨语料库比较：{Path(parent).resolve().name}", lang)
    ranks = {"average rank": text("average rank", "平均名次", lang)}
    scores = [[ranks.get(row[0], row[0]), *row[1:]] for row in scores_rows(frame, test, order)]
    pair_headers, pairs = pair_rows(results, lang)
    links = "".join(
        f'<li><a href="{"" if lang == "en" else "../"}{escape(r.corpus)}/{"" if lang == "en" else "zh/"}report.html">'
        f"{escape(r.corpus)}</a></li>" for r in results if r.status == "ok")
    folds, repeats = plan.folds, plan.repeats
    shape = (text(f"{repeats} x {folds}-fold partitions", f"{repeats} 次 {folds} 折划分", lang)
             if folds else text("single split", "单次划分", lang))
    cd, grid = _figures(Path(parent), lang, test, results)
    sections = [
        corpora_decisions(parent, results, lang, price),
        ("conclusion", text("What may be concluded across corpora", "跨语料库可以得出的结论", lang),
         "".join(paragraph(line) for line in conclusion(test, lang)) + cd),
        ("scores", text("Primary metric per corpus", "各语料库的主指标", lang),
         paragraph(text("Each cell: the variant's primary metric on that corpus, its folder's 95% interval, and its "
                        "rank among the variants there (1 = best); the last row averages the ranks over the corpora "
                        "every variant ran on.",
                        "每格：该变体在该语料库上的主指标、该文件夹的 95% 区间，以及它在该语料库各变体中的名次（1 = 最好）；"
                        "最后一行是所有变体都有结果的语料库上的平均名次。", lang))
         + table([text("corpus", "语料库", lang)] + order, scores)),
        ("verdicts", text("Each corpus's own verdicts", "各语料库自身的结论", lang),
         paragraph(text("On the primary metric, as each corpus's run folder gives them (Holm over its pairs); "
                        "the difference A − B in brackets.",
                        "主指标上的结论，取自各语料库的运行文件夹（在其配对上做 Holm 校正）；括号内为差值 A − B。", lang))
         + grid + table(pair_headers, pairs)),
        ("corpora", text("Corpora", "语料库", lang), table(corpora_headers(lang), corpora_rows(results, lang), wrap={1})
         + (f"<ul>{links}</ul>" if links else "")),
        ("reproduce", text("How to reproduce", "复现方法", lang),
         facts([(text("command", "命令", lang), plan.command or ""),
                (text("design", "设计", lang), shape), (text("profile", "预算档", lang), plan.profile or ""),
                (text("cap per corpus", "每个语料库的上限", lang), plan.limit_total or "—")])),
    ]
    return report_page(title, lang, paragraph(generalises(lang), "lede"), sections)


def _figures(parent: Path, lang: str, test, results) -> tuple[str, str]:
    """The critical-difference diagram (Friedman + Nemenyi only) and the verdict grid, written and embedded."""
    target = (parent if lang == "en" else parent / "zh") / "figures"
    cd = ""
    if test.test == "friedman_nemenyi" and len(test.corpora) >= 2:
        cd = png_figure(critical_difference_diagram(test, lang, target / "critical_difference.png"), text(
            f"Critical-difference diagram: each variant's average rank over {len(test.corpora)} corpora (1 = best) "
            "and the Nemenyi critical difference; variants joined by a blue bar were not told apart",
            f"临界差异图：各变体在 {len(test.corpora)} 个语料库上的平均名次（1 = 最好）与 Nemenyi 临界差异；"
            "由蓝色横条连起的变体未能区分", lang))
    grid = verdict_grid(results, lang, target / "verdict_grid.png")
    shown = "" if grid is None else png_figure(grid, text(
        "Each corpus's verdicts on its primary metric as a grid: one row a pair A − B, one column a corpus; green A "
        "better, red B better, blue equivalent within the margin, grey inconclusive",
        "各语料库在主指标上的结论网格：每行一对 A − B，每列一个语料库；绿色 A 更好，红色 B 更好，蓝色在容差内等价，灰色无定论",
        lang))
    return cd, shown
