"""The looks of a sequential design (`run --until-decided`) as verdicts.md and the page show them: per
look the repeats run, the variants run, each declared contrast's state and why the design stopped; read from
design.json's "sequential" (comparisons/sequential_run.py writes it)."""
from __future__ import annotations

import pandas as pd

from comparisons.report.i18n import text
from comparisons.run_folder.records import Design


def looks_frame(design: Design, lang: str = "en") -> pd.DataFrame:
    """One row per look: repeats, partitions, variants run, run minutes so far, each contrast's state."""
    rows = []
    for look in (design.sequential or {}).get("looks", []):
        row = {text("look", "观察", lang): look["look"], text("partitions", "划分数", lang): look["partitions"],
               text("variants run", "所跑变体", lang): ", ".join(look["variants_run"]),
               text("run minutes so far", "累计运行分钟", lang): look["run_minutes"]}
        for contrast in look["contrasts"]:
            row[f"{contrast['a']} vs {contrast['b']}"] = f"{contrast['state']} ({contrast['reason']})"
        rows.append(row)
    return pd.DataFrame(rows)


def sequential_lines(design: Design, lang: str = "en") -> list[str]:
    """verdicts.md's section on the looks ([] for a fixed design)."""
    sequential = design.sequential
    if not sequential:
        return []
    looks = looks_frame(design, lang)
    stopped = sequential.get("stopped") or text("not stopped yet (resume with the same command)",
                                                "尚未停止（用同一命令继续）", lang)
    return [f"## {text('Run until decided: the looks', '直到判定为止：各次观察', lang)}", "", text(
        f"A sequential design: one repeat of the {design.folds} folds at a time, at most "
        f"{sequential['max_repeats']} repeats; after each, the declared contrasts are tested by group-sequential "
        f"{sequential['spending']} alpha spending on the design's t (repeated p-values, Holm over the family), and "
        "the next repeat runs only the variants of contrasts still open. Each row's interval is the repeated "
        "confidence interval at the look that decided it (or its last). Stopped: " + stopped + ".",
        f"序贯设计：每次跑 {design.folds} 折的一次重复，至多 {sequential['max_repeats']} 次；每次之后用设计的 t 统计量按"
        f"分组序贯的 {sequential['spending']} α 消耗检验声明的对比（重复 p 值，在一族上做 Holm），下一次重复只跑仍未判定的"
        "对比所涉及的变体。每行的区间是判定它的那次观察（或最后一次）的重复置信区间。停止原因：" + stopped + "。", lang),
        "", looks.to_markdown(index=False) if not looks.empty else "", ""]
