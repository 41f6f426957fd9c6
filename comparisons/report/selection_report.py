"""A selection's report: selection.md and the page selection.html (and both under zh/): the pick or why there is
none, the candidates still in with how far below the best each can be, those eliminated and by whom, the budget
spent against the budget given, each candidate's predicted cost, each fold's runs, and the shipped model; from
selection.json alone (comparisons/select.py writes both). The Markdown and the page draw the same content."""
from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path

from comparisons.outputs import atomic_write_text
from comparisons.report.html import facts, paragraph, report_page, table
from comparisons.report.i18n import LANGUAGES, text
from comparisons.report.names import SELECTION_HTML, SELECTION_MD
from comparisons.run_folder.selection_record import SelectionRecord

REPORT_FILE = SELECTION_MD


@dataclass(frozen=True)
class SelectionContent:
    title: str
    verdict: str                  # the headline's first sentence (bold)
    explanation: str              # the rest of the headline
    budget: str                   # the budget and design paragraph
    headers: list[str]            # the candidates' table
    rows: list[list[str]]
    folds: list[list[str]]        # each fold: its name, who ran, measured minutes
    shipped: list[tuple[str, str]]  # the deployment's facts (empty: nothing shipped)


def write_selection_report(out: Path, record: SelectionRecord) -> list[Path]:
    """selection.md and selection.html in the folder (English) and under zh/ (Chinese)."""
    written = []
    for language in LANGUAGES:
        target = Path(out) if language == "en" else Path(out) / language
        target.mkdir(parents=True, exist_ok=True)
        content = selection_content(record, language)
        written.append(atomic_write_text(target / SELECTION_MD, selection_markdown(record, language, content)))
        written.append(atomic_write_text(target / SELECTION_HTML, selection_page(content, language)))
    return written


def _headline(record: SelectionRecord, lang: str) -> tuple[str, str]:
    delta, confidence, outcome, pick = record.delta, record.confidence, record.outcome, record.pick
    if outcome == "selected":
        others = [c for c in record.claimable if c != pick]
        verdict = text(f"Selected: {pick}", f"选定：{pick}", lang)
        rest = text(f", the best candidate or within {delta:g} AP of it, with probability at least {confidence:g}.",
                    f"，它是最好的候选，或与最好的相差不超过 {delta:g} AP，概率至少 {confidence:g}。", lang)
        if others:
            rest += text(f" Also within {delta:g} of the best: {', '.join(others)} (more expensive, so not picked).",
                         f" 同样在最好者 {delta:g} 之内：{'、'.join(others)}（更贵，故未选）。", lang)
        return verdict, rest
    why = {"budget": text("the next fold would pass the budget", "下一折将超出预算", lang),
           "most partitions": text("every planned fold has run", "所有计划的折都已运行", lang),
           "more folds needed": text("stopped early: the planned folds are not predicted to decide",
                                     "提前停止：预计计划内的折数无法判定", lang),
           "more labels needed": text("stopped early: no number of folds is predicted to decide",
                                      "提前停止：预计再多的折也无法判定", lang)}
    remedy = {"more folds needed": text("More folds (a larger budget) are predicted to decide it.",
                                        "预计更多折（更大预算）可以判定。", lang),
              "more labels needed": text("More folds are not predicted to: the folds share most of their texts, so "
                                         "the bound cannot fall below its floor (c·s·√r in docs/statistics.md), "
                                         "and the floor stays above delta. More labels, or a wider delta, would.",
                                         "预计再多的折也不行：各折共享大部分文本，界限降不到其下限"
                                         "（docs/statistics.md 中的 c·s·√r）以下，而该下限高于 delta。"
                                         "更多标注或更宽的 delta 才可以。", lang)}
    verdict = text("Cannot say within this budget", "在此预算内无法判定", lang)
    rest = text(f" ({why.get(outcome, outcome)}): no candidate is yet shown to be within "
                f"{delta:g} AP of the best. ",
                f"（{why.get(outcome, outcome)}）：尚无候选被证明与最好者相差不超过 {delta:g} AP。",
                lang)
    rest += remedy.get(outcome, text("More folds (a larger budget) or more labels would decide it.",
                                                 "更多折（更大预算）或更多标注可以判定。", lang))
    return verdict, rest


def selection_content(record: SelectionRecord, lang: str = "en") -> SelectionContent:
    decision, confidence = record.decision, record.confidence
    verdict, explanation = _headline(record, lang)
    budget = text(f"{decision['partitions']} folds; predicted CPU {decision['predicted_minutes']:.1f} of "
                  f"{record.budget:g} minutes (measured wall time of the runs: {decision['wall_minutes']:.1f}). "
                  f"Correction ratio r = {record.ratio:.3g}; bounds at confidence {confidence:g} split over "
                  f"{len(record.candidates) - 1} comparisons with the best, over up to {record.most} folds "
                  "(docs/statistics.md, 'Selecting a recipe').",
                  f"共 {decision['partitions']} 折；预测 CPU {decision['predicted_minutes']:.1f} / {record.budget:g} 分钟"
                  f"（各次运行实测墙钟时间：{decision['wall_minutes']:.1f}）。校正比 r = {record.ratio:.3g}；"
                  f"置信度 {confidence:g} 分给与最好者的 {len(record.candidates) - 1} 个比较，最多 {record.most} 折"
                  "（docs/statistics.md，“Selecting a recipe”）。", lang)
    headers = [text("candidate", "候选", lang), text("state", "状态", lang),
               text("at most this far below the best", "至多比最好者低", lang),
               text("predicted minutes a run", "每次运行预测分钟", lang), text("folds run", "运行折数", lang)]
    costs = dict(zip(record.candidates, record.run_costs))
    serving = record.serving or {}
    figures, excluded = serving.get("figures") or {}, serving.get("excluded") or {}
    everyone = record.candidates + [c for c in excluded if c not in record.candidates]
    ran = {c: sum(c in fold["ran"] for fold in record.folds) for c in everyone}
    if serving:
        headers += [text("b=1 latency (ms)", "b=1 延迟（毫秒）", lang), text("serving peak (MB)", "服务峰值内存（MB）", lang),
                    text("USD per million predictions", "每百万次预测（美元）", lang)]
    rows = []
    for candidate in everyone:
        if candidate in excluded:
            state = text(f"excluded by the caps ({excluded[candidate]})", f"超出服务上限而排除（{excluded[candidate]}）",
                         lang)
            behind, cost = "–", "–"
        elif candidate in decision["eliminated"]:
            state = text(f"out (shown worse than {decision['eliminated'][candidate]})",
                         f"淘汰（被证明不如 {decision['eliminated'][candidate]}）", lang)
            behind, cost = "–", f"{costs[candidate]:.2f}"
        else:
            state = text("picked", "选定", lang) if candidate == decision["pick"] else text("still in", "仍在", lang)
            behind = f"{decision['behind_best'].get(candidate, float('nan')):.4f}"
            cost = f"{costs[candidate]:.2f}"
        row = [candidate, state, behind, cost, str(ran[candidate])]
        if serving:
            measured = figures.get(candidate) or {}
            row += [_shown(measured.get("latency_ms_b1_p50"), "{:.2f}"), _shown(measured.get("peak_rss_serve_mb"), "{:,.0f}"),
                    _shown(measured.get("cost_per_million"), "{:.4f}")]
        rows.append(row)
    folds = [[fold["partition"], ", ".join(fold["ran"]), f"{sum(fold['minutes'].values()):.2f}"]
             for fold in record.folds]
    return SelectionContent(text("Which recipe to deploy", "部署哪个配方", lang), verdict, explanation, budget,
                            headers, rows, folds, _shipped(record.deployment, lang))


def _shown(value, pattern: str) -> str:
    return "–" if value is None or value != value else pattern.format(value)


def _shipped(trained: dict | None, lang: str) -> list[tuple[str, str]]:
    if not trained:
        return []
    if "failed" in trained:
        return [(text("training for deployment", "部署训练", lang), text("failed: ", "失败：", lang) + trained["failed"])]
    onnx = trained["onnx"]
    return [(text("folder", "文件夹", lang), "deploy/"),
            (text("labelled texts", "标注文本", lang), f"{trained['n_train_texts'] + trained['n_valid_texts']:,}"),
            (text("training minutes", "训练分钟", lang), f"{trained['train_seconds'] / 60:.1f}"),
            ("ONNX", "onnx/" if onnx.get("exported") else text("none: ", "无：", lang) + str(onnx.get("reason"))),
            (text("model card", "模型卡", lang), "deploy/MODEL_CARD.md")]


def selection_markdown(record: SelectionRecord, lang: str = "en", content: SelectionContent | None = None) -> str:
    c = content or selection_content(record, lang)
    lines = [f"# {c.title}", "", f"**{c.verdict}**{c.explanation}", "", c.budget, "",
             "| " + " | ".join(c.headers) + " |", "| --- | --- |" + " ---: |" * (len(c.headers) - 2)]
    lines += ["| " + " | ".join(row) + " |" for row in c.rows]
    if c.shipped:
        lines += ["", f"## {text('Shipped', '已发布', lang)}", ""] + [f"- {name}: {value}" for name, value in c.shipped]
    return "\n".join(lines) + "\n"


def selection_page(c: SelectionContent, lang: str) -> str:
    """The page: the verdict first, the candidates, the budget, each fold's runs, what was shipped."""
    lede = f"<p><strong>{escape(c.verdict)}</strong>{escape(c.explanation)}</p>"
    sections = [("candidates", text("The candidates", "候选", lang), table(c.headers, c.rows, wrap={1})),
                ("budget", text("Budget and design", "预算与设计", lang), paragraph(c.budget)),
                ("folds", text("Each fold", "每一折", lang),
                 table([text("fold", "折", lang), text("ran", "运行", lang), text("measured minutes", "实测分钟", lang)],
                       c.folds, wrap={1}))]
    if c.shipped:
        sections.append(("shipped", text("Shipped", "已发布", lang), facts(c.shipped)))
    return report_page(c.title, lang, lede, sections, page=SELECTION_HTML)
