"""Group-sequential boundaries on the t scale: the design's own t statistics, not z's.

comparisons/stats/sequential.py spends alpha with the Lan-DeMets O'Brien-Fleming function and finds z boundaries
under the canonical joint distribution of the looks' z statistics; comparing the design's t (on J_k - 1 degrees of
freedom) with those boundaries' nominal levels (the significance-level approach, Jennison & Turnbull 2000, sec. 11.4)
is an approximation that the simulation in tests/test_sequential.py measures at 0.0575 over three looks of 5
partitions (correlation 0.2), above alpha: the looks' t statistics are less correlated than the z's and their tails
heavier. Here the boundaries are found for the t statistics themselves, under the model behind the design's
variance (comparisons/stats/design_variance.py): per-partition differences equicorrelated at rho = r / (1 + r), r
the row's correction ratio, and at look k the corrected t of the first J_k partitions,
T_k = mean_k / sqrt(s_k^2 (1/J_k + r)). Under the null their joint law depends on (J_1..J_K, r) only.

- Look 1: T_1 is exactly Student's t on J_1 - 1 degrees of freedom under the model, so its boundary is the t
  quantile of the alpha spent there (no simulation).
- Later looks: the boundary b_k is the value that the simulated null sequences still running (no earlier
  crossing) cross with probability alpha(t_k) - alpha(t_(k-1)) (Monte Carlo with a fixed seed, so every run
  gives the same boundaries). Where fewer than MIN_CROSSINGS simulated sequences would cross, the share is too
  small to read from the simulation and the marginal t quantile is used, as look 1 (the significance-level
  approach, whose error is then a fraction of that tiny share).
- A look's nominal level is the t's tail beyond b_k on J_k - 1 degrees of freedom; a repeated p-value (the smallest
  total level whose boundary the statistic crosses at its look) is read from nominal levels tabulated over a grid
  of total levels, interpolated on the log scale; below the grid's smallest level it is the z rule's (such p's
  decide at any level a family uses).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.stats import t as student_t

from comparisons.stats.spending import OBRIEN_FLEMING, information_fractions, repeated_p as z_repeated_p, spent

SEQUENCES = 50_000    # simulated null sequences (Monte Carlo standard error of a look's share 0.05: 0.001)
SEED = 20261205       # fixed: the same boundaries in every process and on every machine
MIN_CROSSINGS = 50    # a later look's share read from at least this many simulated crossings, else the marginal t
LEVELS = np.geomspace(1e-5, 0.999, 48)  # total levels the nominal levels are tabulated at (two-sided)


def _key(counts, ratio: float) -> tuple[tuple[int, ...], float]:
    counts = tuple(int(c) for c in counts)
    if not counts or any(b <= a for a, b in zip(counts, counts[1:])) or counts[0] < 2:
        raise ValueError(f"partitions at the looks must increase from at least 2; got {counts}")
    r = max(float(ratio), 0.0) if np.isfinite(ratio) else 0.0
    return counts, float(f"{r:.2g}")  # 2 significant digits: nearby rows share one simulation and table


@lru_cache(maxsize=32)
def null_statistics(counts: tuple[int, ...], ratio: float, sequences: int = SEQUENCES) -> np.ndarray:
    """(sequences, looks) corrected t statistics of null sequences under the design's equicorrelated model."""
    rng = np.random.default_rng(SEED)
    rho = ratio / (1.0 + ratio)
    total = counts[-1]
    differences = (np.sqrt(rho) * rng.standard_normal((sequences, 1))
                   + np.sqrt(1.0 - rho) * rng.standard_normal((sequences, total)))
    sums, squares = np.cumsum(differences, axis=1), np.cumsum(differences ** 2, axis=1)
    columns = []
    for j in counts:
        mean = sums[:, j - 1] / j
        variance = (squares[:, j - 1] - j * mean ** 2) / (j - 1)
        columns.append(mean / np.sqrt(np.maximum(variance, 1e-300) * (1.0 / j + ratio)))
    return np.column_stack(columns).astype(np.float32)  # (SEQUENCES, looks): 0.2 MB a look


def t_boundaries(counts, ratio: float, level: float, sides: int = 2, shape: str = OBRIEN_FLEMING,
                 by_partitions: bool = False, sequences: int = SEQUENCES) -> np.ndarray:
    """The t boundaries b_1..b_K (two-sided: |T_k| >= b_k; one-sided: T_k >= b_k) of a test at total `level` whose
    looks see counts[k] partitions (the last: the most the design plans), correction ratio `ratio`, alpha spent
    with `shape` (spending.spent) by information fraction, or with by_partitions by the share of the partitions
    (J_k / J_K: a design whose correlation makes the first look carry most of the information would otherwise spend
    most of alpha where a t on 2 degrees of freedom can decide nothing). Either way each look's share is found for
    the looks' statistics under the design's model, so the total is `level`. sequences: how many null sequences
    are simulated (a small per-look share, below MIN_CROSSINGS of them, falls back to the marginal t quantile,
    valid but conservative: a selection's many looks at alpha / (k - 1) ask for more)."""
    counts, ratio = _key(counts, ratio)
    fractions = [j / counts[-1] for j in counts] if by_partitions else information_fractions(counts, ratio)
    statistics = null_statistics(counts, ratio, sequences)
    values = np.abs(statistics) if sides == 2 else statistics
    side_level = level / 2 if sides == 2 else level
    running = np.ones(len(values), dtype=bool)
    bounds, previous = [], 0.0
    for look, (t, j) in enumerate(zip(fractions, counts)):
        total = sides * spent(t, side_level, shape)  # alpha spent by this look, both sides together
        share, previous = total - previous, total
        crossings = share * len(values)
        if look == 0 or crossings < MIN_CROSSINGS:
            bound = float(student_t.isf(share / sides, j - 1)) if share > 0 else np.inf
        else:
            candidates = values[running, look]
            m = int(round(crossings))
            bound = (float(np.partition(candidates, len(candidates) - m)[len(candidates) - m])
                     if m < len(candidates) else -np.inf)
        bounds.append(bound)
        running &= values[:, look] < bound
    return np.asarray(bounds)


def t_nominal_level(counts, ratio: float, look: int, level: float, sides: int = 2) -> float:
    """The p-value (two-sided or one-sided, as `sides`) of the look's t at or below which look `look` (1-based)
    rejects at total level `level`."""
    counts, ratio = _key(counts, ratio)
    bound = t_boundaries(counts, ratio, level, sides)[look - 1]
    return float(min(1.0, sides * student_t.sf(bound, counts[look - 1] - 1)))


@lru_cache(maxsize=512)
def _nominal_table(counts: tuple[int, ...], ratio: float, sides: int) -> np.ndarray:
    """(levels, looks) nominal levels at LEVELS (made non-decreasing in the level, as they are in theory)."""
    levels = LEVELS if sides == 2 else LEVELS[LEVELS < 0.5]
    degrees = np.asarray(counts, dtype=float) - 1
    table = np.array([np.minimum(1.0, sides * student_t.sf(t_boundaries(counts, ratio, a, sides), degrees))
                      for a in levels])
    return np.maximum.accumulate(table, axis=0)


def t_repeated_p(p: float, counts, ratio: float, look: int, sides: int = 2) -> float:
    """The repeated p-value of a look's p (its t's two- or one-sided p on J_look - 1 degrees of freedom): the
    smallest total level whose t boundary at this look the statistic crosses (1 when none in the grid does)."""
    counts, ratio = _key(counts, ratio)
    if not np.isfinite(p) or p >= 1:
        return 1.0
    if p <= 0:
        return 0.0
    levels = LEVELS if sides == 2 else LEVELS[LEVELS < 0.5]
    nominal = _nominal_table(counts, ratio, sides)[:, look - 1]
    if p > nominal[-1]:
        return 1.0
    if p < nominal[0]:  # beyond the grid: the z rule's repeated p (decided at any level a family uses)
        return z_repeated_p(p, information_fractions(counts, ratio), look, sides)
    reached = int(np.searchsorted(nominal, p, side="left"))  # first grid level whose nominal is >= p
    if reached == 0 or nominal[reached] == nominal[reached - 1]:
        return float(levels[reached])
    low, high = np.log(nominal[reached - 1]), np.log(nominal[reached])
    weight = (np.log(p) - low) / (high - low)
    return float(np.exp(np.log(levels[reached - 1]) + weight * (np.log(levels[reached]) - np.log(levels[reached - 1]))))
