"""Power said exactly: the smallest detectable difference and the repeats a design would need (framework-free).

The difference test of a pair rejects when |T| > t(1 - a/2; df), a the level of Holm's strictest step
(alpha / hypotheses in the family). When the true difference is delta, T = mean / se follows the
noncentral t with df degrees of freedom and noncentrality delta / se (the standard error being the
population one; here it is estimated from the observed spread, on df degrees of freedom: the figures are
"at the observed spread", not exact). Power is P(|T| > t_crit) = nct.sf(t_crit) + nct.cdf(-t_crit),
solved for delta at POWER by a root finder (scipy.stats.nct, scipy.optimize.brentq). A bootstrap's df is
infinite: the normal then (noncentral t with df = inf is the shifted normal).

Equivalence (two one-sided tests at the same level): its power is computed exactly, integrating the normal
mean's chance of falling inside the shrunken margin over the chi-square law of the estimated spread
(`equivalence_power`; tested against a simulation of the production TOST).

The partition design's standard error with J = R x K partitions is spread x sqrt(1/J + n_test/n_train)
(Nadeau & Bengio), so more repeats shrink it only down to spread x sqrt(n_test/n_train): a difference
below that floor's detectable size is never detected, however many repeats (`repeats_for_power` says
None then, and the renderer "unreachable").
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.stats import chi2, nct, norm
from scipy.stats import t as student_t

ALPHA = 0.05
POWER = 0.80
LARGEST_REPEATS = 100  # how far `repeats_for_power` looks


def power(delta: float, standard_error: float, df: float, level: float) -> float:
    """P(the two-sided test at `level` rejects) when the true difference is delta."""
    if not (standard_error > 0) or not np.isfinite(standard_error):
        return float("nan")
    shift = abs(delta) / standard_error
    if not np.isfinite(df):
        critical = norm.ppf(1 - level / 2)
        return float(norm.sf(critical - shift) + norm.cdf(-critical - shift))
    critical = student_t.ppf(1 - level / 2, df)
    upper = nct.sf(critical, df, shift)
    if not np.isfinite(upper):
        upper = 1.0 - nct.cdf(critical, df, shift)
    lower = nct.cdf(-critical, df, shift)  # the far tail: scipy's nct gives nan where it is below ~1e-16
    return float(upper + (lower if np.isfinite(lower) else 0.0))


def smallest_detectable(standard_error: float, hypotheses: int, df: float = np.inf, alpha: float = ALPHA,
                        target: float = POWER) -> float:
    """The true difference the test finds with probability `target` at Holm's strictest level,
    alpha / hypotheses (two-sided), from the noncentral t (the normal for df = inf)."""
    if not (standard_error > 0) or not np.isfinite(standard_error) or not (df >= 1):
        return float("nan")
    return _smallest_detectable(float(standard_error), max(1, int(hypotheses)), float(df), float(alpha), float(target))


@functools.lru_cache(maxsize=4096)  # a family's rows and a simulation's replications repeat (se, size, df) exactly
def _smallest_detectable(standard_error: float, hypotheses: int, df: float, alpha: float, target: float) -> float:
    level = alpha / hypotheses
    upper = standard_error
    while power(upper, standard_error, df, level) < target:
        upper *= 2
    return float(brentq(lambda delta: power(delta, standard_error, df, level) - target, 0.0, upper, xtol=1e-12))


def equivalence_power(delta: float, standard_error: float, df: float, margin: float, level: float) -> float:
    """P(the two one-sided tests at `level` both reject) when the true difference is delta, exactly: given the
    estimated standard error s_e, they reject together when the mean lies in (-margin + c s_e, margin - c s_e);
    s_e^2 / se^2 is chi-square on df / df, so the power is that normal interval's probability averaged over it
    (Owen's Q, by quadrature; scipy.integrate.quad)."""
    if not (standard_error > 0) or not np.isfinite(standard_error) or not (df >= 1):
        return float("nan")
    critical = student_t.ppf(1 - level, df)

    def given(u: float) -> float:
        half = margin - critical * standard_error * math.sqrt(u / df)
        if half <= 0:
            return 0.0
        return float(norm.cdf((half - delta) / standard_error) - norm.cdf((-half - delta) / standard_error))

    widest = (margin / (critical * standard_error)) ** 2 * df  # beyond it the interval is empty
    value, _ = quad(lambda u: chi2.pdf(u, df) * given(u), 0.0, widest, limit=200)
    return float(min(1.0, max(0.0, value)))


def partition_standard_error(spread: float, partitions: int, test_to_train: float) -> float:
    """The corrected standard error of the mean of `partitions` per-partition differences of this spread."""
    return float(spread * math.sqrt(1 / partitions + test_to_train))


def repeats_for_power(delta: float, spread: float, folds: int, test_to_train: float, hypotheses: int,
                      alpha: float = ALPHA, target: float = POWER, margin: float | None = None) -> int | None:
    """The fewest repeats of `folds` folds with which, at the observed spread and Holm's strictest level
    (alpha / hypotheses), a true difference `delta` is shown different (margin None: the two-sided
    difference test) or shown equivalent within `margin` (the two one-sided tests) with probability
    `target`; None when no number up to LARGEST_REPEATS does (below the n_test/n_train floor, a zero
    difference to detect, or a difference at or beyond the margin to call equivalent)."""
    if not (spread > 0) or not np.isfinite(spread) or folds < 2 or not np.isfinite(delta):
        return None
    if (margin is None and not abs(delta) > 0) or (margin is not None and abs(delta) >= margin):
        return None
    level = alpha / max(1, int(hypotheses))

    def enough(repeats: int) -> bool:
        partitions = repeats * folds
        se = partition_standard_error(spread, partitions, test_to_train)
        found = power(delta, se, partitions - 1, level) if margin is None else \
            equivalence_power(delta, se, partitions - 1, margin, level)
        return found >= target

    if not enough(LARGEST_REPEATS):
        return None
    low, high = 0, LARGEST_REPEATS  # power grows with the repeats: enough(high), not enough(low) (or low = 0)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high


LARGEST_DRAWS = 50  # how far `draws_for_power` looks (the plan's --draws allows 50)


def draws_for_power(delta: float, between: float, within: float, partitions: int, overlap_term: float,
                    hypotheses: int, alpha: float = ALPHA, target: float = POWER) -> int | None:
    """The fewest draws a partition with which a true difference `delta` is shown different at Holm's strictest
    level with probability `target`: the standard error sqrt(between / P + within / (P R) + overlap_term) on P - 1
    degrees of freedom (comparisons/stats/design_variance.py, variance_components); None when no number up to
    LARGEST_DRAWS does (the partitions' own variance, `between`, is the floor more draws cannot lower)."""
    if not (np.isfinite(between) and np.isfinite(within)) or partitions < 2 or not abs(delta) > 0:
        return None
    level = alpha / max(1, int(hypotheses))

    def enough(draws: int) -> bool:
        se = math.sqrt(between / partitions + within / (partitions * draws) + overlap_term)
        return se == 0 or power(delta, se, partitions - 1, level) >= target

    if not enough(LARGEST_DRAWS):
        return None
    return next(r for r in range(1, LARGEST_DRAWS + 1) if enough(r))


LARGEST_FOLDS = 40  # how far `folds_for_power` looks


def folds_for_power(delta: float, between: float, within: float, pilot_folds: int, draws: int, overlap_term: float,
                    hypotheses: int, test_scales: bool, alpha: float = ALPHA, target: float = POWER) -> int | None:
    """The fewest disjoint folds K (one repeat, `draws` draws a fold) with which a true difference `delta` is shown
    different at Holm's strictest level with probability `target` (a design powered before it runs).

    The pilot's components were measured with `pilot_folds` folds. K folds give K - 1 degrees of freedom and the
    standard error sqrt(between_K / K + within / (K draws) + overlap_term). How `between` moves with K is bounded
    two ways: test_scales=False keeps it as measured (optimistic: the partitions' spread is training randomness);
    test_scales=True lets it grow as K / pilot_folds (pessimistic: all of it is test-set sampling, and a K-fold
    test fold holds pilot_folds / K of the pilot's texts), so its share of the mean's variance does not shrink and
    only the draws and the degrees of freedom gain. None when no K up to LARGEST_FOLDS does."""
    if not (np.isfinite(between) and np.isfinite(within)) or pilot_folds < 2 or draws < 1 or not abs(delta) > 0:
        return None
    level = alpha / max(1, int(hypotheses))

    def enough(folds: int) -> bool:
        spread = between * (folds / pilot_folds if test_scales else 1.0)
        se = math.sqrt(spread / folds + within / (folds * draws) + overlap_term)
        return se == 0 or power(delta, se, folds - 1, level) >= target

    return next((k for k in range(2, LARGEST_FOLDS + 1) if enough(k)), None)


ASSURANCE_POINTS = 64  # quantiles of the pilot variance's law the assurance averages over (midpoints, deterministic)


def assurance(power_at, pilot_df: float) -> float:
    """Power averaged over what the pilot's variance could have been (assurance; O'Hagan, Stevens and Campbell 2005):
    the pilot estimates a variance on pilot_df degrees of freedom, so the true one is the estimate times
    pilot_df / X with X ~ chi-square(pilot_df) (its posterior under the reference prior 1/sigma^2); `power_at(scale)` is
    the power when the true standard error is the planned one times `scale`. Averaged over ASSURANCE_POINTS
    quantile midpoints of X (deterministic). pilot_df infinite or missing: the plain power (the variance taken as
    known, as plans did before)."""
    if pilot_df is None or not np.isfinite(pilot_df) or pilot_df < 1:
        return float(power_at(1.0))
    quantiles = chi2.ppf((np.arange(ASSURANCE_POINTS) + 0.5) / ASSURANCE_POINTS, pilot_df)
    return float(np.mean([power_at(math.sqrt(pilot_df / x)) for x in quantiles]))
