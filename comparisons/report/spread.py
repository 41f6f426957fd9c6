"""How a mean and its spread are written for people: "0.9892 ± 0.0012" over two or more seeds or
partitions, "0.9892 (1 seed)" over one. A standard deviation over one value is not zero but undefined,
so it is never written as "± 0.0000"."""
from __future__ import annotations

import math

from comparisons.report.i18n import text

UNITS = {"seed": ("seed", "seeds", "个种子"), "partition": ("partition", "partitions", "个划分")}


def mean_spread(mean: float, std: float, count: int, unit: str = "seed", lang: str = "en", digits: int = 4) -> str:
    """`mean ± std` when `count` >= 2 and std is a number; else `mean (1 seed)` (unit: seed or partition)."""
    shown = f"{mean:.{digits}f}"
    if count >= 2 and std is not None and not math.isnan(std):
        return f"{shown} ± {std:.{digits}f}"
    one, many, chinese = UNITS[unit]
    return f"{shown} " + text(f"({count} {one if count == 1 else many})", f"（{count} {chinese}）", lang)
