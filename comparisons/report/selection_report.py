"""A selection's report (selection.md, and zh/selection.md): the pick or why there is none, the candidates still in
with how far below the best each can be, those eliminated and by whom, the budget spent against the budget given,
and each candidate's predicted cost, from selection.json alone (comparisons/select.py writes both)."""
from __future__ import annotations

from pathlib import Path

from comparisons.outputs import atomic_write_text
from comparisons.report.i18n import LANGUAGES, text

REPORT_FILE = "selection.md"


def write_selection_report(out: Path, record: dict) -> list[Path]:
    """selection.md in the folder (English) and under zh/ (Chinese)."""
    written = []
    for language in LANGUAGES:
        target = Path(out) if language == "en" else Path(out) / language
        target.mkdir(parents=True, exist_ok=True)
        written.append(atomic_write_text(target / REPORT_FILE, selection_markdown(record, language)))
    return written


def selection_markdown(record: dict, lang: str = "en") -> str:
    plan, decision = record["plan"], record["decision"]
    delta, confidence = plan["delta"], 1 - plan["alpha"]
    if decision["outcome"] == "selected":
        others = [c for c in decision["claimable"] if c != decision["pick"]]
        headline = text(f"**Selected: {decision['pick']}**, the best candidate or within {delta:g} AP of it, with "
                        f"probability at least {confidence:g}.",
                        f"**选定：{decision['pick']}**，它是最好的候选，或与最好的相差不超过 {delta:g} AP，概率至少 {confidence:g}。",
                        lang)
        if others:
            headline += text(f" Also within {delta:g} of the best: {', '.join(others)} (more expensive, so not picked).",
                             f" 同样在最好者 {delta:g} 之内：{'、'.join(others)}（更贵，故未选）。", lang)
    else:
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
        headline = text(f"**Cannot say within this budget** ({why.get(decision['outcome'], decision['outcome'])}): "
                        f"no candidate is yet shown to be within {delta:g} AP of the best. ",
                        f"**在此预算内无法判定**（{why.get(decision['outcome'], decision['outcome'])}）：尚无候选被证明与最好者"
                        f"相差不超过 {delta:g} AP。", lang)
        headline += remedy.get(decision["outcome"], text("More folds (a larger budget) or more labels would decide it.",
                                                         "更多折（更大预算）或更多标注可以判定。", lang))
    costs = dict(zip(plan["candidates"], plan["run_costs"]))
    ran = {c: sum(c in fold["ran"] for fold in record["folds"]) for c in plan["candidates"]}
    lines = [f"# {text('Which recipe to deploy', '部署哪个配方', lang)}", "", headline, "",
             text(f"{decision['partitions']} folds; predicted CPU {decision['predicted_minutes']:.1f} of "
                  f"{plan['budget']:g} minutes (measured wall time of the runs: {decision['wall_minutes']:.1f}). "
                  f"Correction ratio r = {plan['ratio']:.3g}; bounds at confidence {confidence:g} split over "
                  f"{len(plan['candidates']) - 1} comparisons with the best, over up to {plan['most']} folds "
                  "(docs/statistics.md, 'Selecting a recipe').",
                  f"共 {decision['partitions']} 折；预测 CPU {decision['predicted_minutes']:.1f} / {plan['budget']:g} 分钟"
                  f"（各次运行实测墙钟时间：{decision['wall_minutes']:.1f}）。校正比 r = {plan['ratio']:.3g}；"
                  f"置信度 {confidence:g} 分给与最好者的 {len(plan['candidates']) - 1} 个比较，最多 {plan['most']} 折"
                  "（docs/statistics.md，“Selecting a recipe”）。", lang), "",
             "| " + " | ".join([text("candidate", "候选", lang), text("state", "状态", lang),
                                text("at most this far below the best", "至多比最好者低", lang),
                                text("predicted minutes a run", "每次运行预测分钟", lang),
                                text("folds run", "运行折数", lang)]) + " |",
             "| --- | --- | ---: | ---: | ---: |"]
    for candidate in plan["candidates"]:
        if candidate in decision["eliminated"]:
            state = text(f"out (shown worse than {decision['eliminated'][candidate]})",
                         f"淘汰（被证明不如 {decision['eliminated'][candidate]}）", lang)
            behind = "–"
        else:
            state = text("picked", "选定", lang) if candidate == decision["pick"] else text("still in", "仍在", lang)
            behind = f"{decision['behind_best'].get(candidate, float('nan')):.4f}"
        lines.append(f"| {candidate} | {state} | {behind} | {costs[candidate]:.2f} | {ran[candidate]} |")
    return "\n".join(lines) + "\n"
