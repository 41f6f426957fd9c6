"""The line a preview run (the `fast` or `tiny` budget) carries on its page and at the end of its
terminal summary: which budget, how many seeds, and where the reference is."""
from __future__ import annotations

from comparisons.report.i18n import text

# Where the suite's finding is: the committed full-budget run (3 x 5 group-aware partitions), and the command that remakes it.
REFERENCE_PAGE = "results/reference/report.html"
REFERENCE_COMMAND = "make reference"


def preview_note(profile_name: str, seeds: int, lang: str = "en") -> str | None:
    """One line for a run whose budget is a preview (`fast`, `tiny`): which budget, how many seeds,
    and where the reference is, so that no one reads its ranking as the suite's finding. None for
    `full`, the reference's budget."""
    if profile_name in (None, "full"):
        return None
    seeds_en = "one seed" if seeds == 1 else f"{seeds} seeds"
    return text(f"Preview: the {profile_name} budget, {seeds_en}; not the suite's finding. The reference "
                f"(full budget, verdicts over 3 x 5 partitions) is {REFERENCE_PAGE}; `{REFERENCE_COMMAND}` remakes it.",
                f"预览：{profile_name} 预算，{seeds} 个种子；不是本套件的结论。参考结果（full 预算，"
                f"3 x 5 个划分上的结论）见 {REFERENCE_PAGE}；`{REFERENCE_COMMAND}` 可重新生成。", lang)
