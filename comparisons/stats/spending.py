"""Alpha spending and its z boundaries (framework-free; the group-sequential rule's first layer).

Lan-DeMets alpha spending of the O'Brien-Fleming shape (Lan & DeMets 1983), per side
alpha(t) = 2 - 2 Phi(Phi^-1(1 - a / 2) / sqrt(t)) for a one-sided level a (gsDesign's sfLDOF, rpact's asOF); the z
boundaries c_1..c_K under the canonical joint distribution of the looks' z statistics (corr(Z_j, Z_k) =
sqrt(t_j / t_k)), integrated by the recursion of Armitage, McPherson & Rowe (1969) on a grid (Jennison & Turnbull
2000, ch. 19), deterministic; their nominal levels and repeated p-values; the information fractions that follow
the design's variance. comparisons/stats/t_boundaries.py finds the boundaries of the design's t statistics from the
same spending; comparisons/stats/sequential.py tests a declared family with them.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

SPENDING = "Lan-DeMets O'Brien-Fleming"
GRID = 201  # points of the recursion's grid on each look's continuation region (Simpson's rule), at least
MOST_POINTS = 4001  # and at most: the spacing is kept at a quarter of the next increment's standard deviation
LOWEST = -10.0  # a one-sided test's continuation region starts here (in z units; its mass below is < 1e-22)


OBRIEN_FLEMING, POCOCK = "obrien-fleming", "pocock"  # the spending shapes (the sequential design: the first)


def spent(t: float, level: float, shape: str = OBRIEN_FLEMING) -> float:
    """The alpha spent on one side by information fraction t (one-sided level): Lan-DeMets O'Brien-Fleming shape
    (little early, the group-sequential design's), or Lan-DeMets Pocock shape, level x ln(1 + (e - 1) t) (evenly
    over the looks: what a selection that should drop a losing candidate early spends, recipe_selection.py)."""
    if t <= 0:
        return 0.0
    if shape == POCOCK:
        return float(level * np.log1p((np.e - 1) * min(t, 1.0)))
    return float(2 * norm.sf(norm.isf(level / 2) / np.sqrt(min(t, 1.0))))  # 2 - 2 Phi(.), without cancellation


def _simpson(count: int) -> np.ndarray:
    weights = np.ones(count)
    weights[1:-1:2], weights[2:-1:2] = 4, 2
    return weights / 3


@lru_cache(maxsize=4096)
def _boundaries(fractions: tuple[float, ...], level: float, sides: int) -> tuple[float, ...]:
    bounds = []
    grid = weights = density = None  # the sub-density of S_k = Z_k sqrt(t_k) on the continuation region
    previous_t, previous_spent = 0.0, 0.0
    for t in fractions:
        share = spent(t, level) - previous_spent  # one side's share of this look (both sides are symmetric)
        if grid is None:
            c = float(norm.isf(share)) if share > 0 else np.inf
        else:
            step = np.sqrt(t - previous_t)

            def crossing(c: float) -> float:
                upper = norm.sf((c * np.sqrt(t) - grid) / step)
                return float(np.sum(weights * density * upper)) - share

            c = float(brentq(crossing, -5.0, 40.0, xtol=1e-10)) if share > 1e-300 else np.inf
        bounds.append(c)
        high = min(c, 40.0) * np.sqrt(t)
        low = -high if sides == 2 else LOWEST * np.sqrt(t)
        following = fractions[len(bounds)] - t if len(bounds) < len(fractions) else 1.0  # the next increment's variance
        points = int(min(MOST_POINTS, max(GRID, 4 * (high - low) / np.sqrt(max(following, 1e-12)))))
        points += 1 - points % 2  # odd, for Simpson's rule
        new_grid = np.linspace(low, high, points)
        if grid is None:
            new_density = norm.pdf(new_grid / np.sqrt(t)) / np.sqrt(t)
        else:
            kernel = np.exp(-0.5 * ((new_grid[:, None] - grid[None, :]) / step) ** 2) / (step * np.sqrt(2 * np.pi))
            new_density = kernel @ (weights * density)
        grid, density = new_grid, new_density
        weights = _simpson(points) * (high - low) / (points - 1)
        previous_t, previous_spent = t, spent(t, level)
    return tuple(bounds)


def boundaries(fractions, level: float, sides: int = 2) -> np.ndarray:
    """The z boundaries c_1..c_K of a test at total `level` (two-sided: |Z_k| >= c_k, level / 2 a side; one-sided:
    Z_k >= c_k) whose looks come at the increasing information fractions `fractions` (the last normally 1)."""
    fractions = tuple(float(f"{float(t):.12g}") for t in fractions)
    if not fractions or any(b <= a for a, b in zip(fractions, fractions[1:])) or not 0 < fractions[0] <= 1:
        raise ValueError(f"information fractions must increase within (0, 1]; got {fractions}")
    side_level = level / 2 if sides == 2 else level
    return np.asarray(_boundaries(fractions, float(f"{float(side_level):.12g}"), sides))


def nominal_level(fractions, look: int, level: float, sides: int = 2) -> float:
    """The p-value (two-sided or one-sided, as `sides`) at or below which look `look` (1-based) rejects."""
    c = boundaries(fractions, level, sides)[look - 1]
    return float((2 if sides == 2 else 1) * norm.sf(c))


def repeated_p(p: float, fractions, look: int, sides: int = 2) -> float:
    """The repeated p-value of a look's p (two-sided, or one-sided as `sides`): the smallest total level whose
    boundary at this look the statistic crosses (1 when none below 1 does)."""
    if not np.isfinite(p) or p >= 1:
        return 1.0
    if p <= 0:
        return 0.0
    p = max(p, 1e-250)  # below it the search's floor (a level of 1e-300) would not bracket it
    earlier = list(fractions)[:look]  # a look's boundary depends on the looks up to it only

    def gap(log_level: float) -> float:
        return np.log(max(nominal_level(earlier, look, float(np.exp(log_level)), sides), 1e-300)) - np.log(p)

    top = np.log(0.999999 if sides == 2 else 0.5)  # a one-sided test's spending needs a level below 1/2
    if gap(top) < 0:  # even that level does not reject here: reported as 1 (no decision turns on it)
        return 1.0
    bottom = np.log(p) - 1.0
    while gap(bottom) > 0:  # the nominal level is at most the total level, so this ends
        bottom -= 5.0
    return float(np.exp(brentq(gap, bottom, top, xtol=1e-9)))


def information_fractions(partitions_at_looks, correction_ratio: float) -> list[float]:
    """t_k = (1/J_K + r) / (1/J_k + r) for the partitions J_k at each planned look (the last the design's most)."""
    counts = np.asarray(partitions_at_looks, dtype=float)
    r = max(float(correction_ratio), 0.0) if np.isfinite(correction_ratio) else 0.0
    return list((1 / counts[-1] + r) / (1 / counts + r))
