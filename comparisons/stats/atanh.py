"""The t on the atanh scale: the interval and tests of a difference of two [0, 1] scores whose plain t interval would
leave [-1, 1] (framework-free; comparisons/stats/family.py falls back to it, graphical.py computes its intervals
there for the same rows)."""
from __future__ import annotations

import numpy as np
from scipy.stats import norm, t as student_t

from comparisons.stats.power import ALPHA

ATANH = "t on the atanh scale"  # the fallback of a t interval that would leave [-1, 1]


def atanh_interval(difference: float, standard_error: float, df: float, level: float) -> tuple[float, float]:
    """The (1 - level) interval of a difference of two [0, 1] scores by the t on z = atanh(difference) (delta
    method: se_z = se / (1 - difference^2)), mapped back: always inside (-1, 1)."""
    if abs(difference) >= 1 or not np.isfinite(standard_error):
        return -1.0, 1.0
    z, se_z = np.arctanh(difference), standard_error / (1 - difference ** 2)
    half = (student_t.ppf(1 - level / 2, df) if np.isfinite(df) else norm.ppf(1 - level / 2)) * se_z
    return float(np.tanh(z - half)), float(np.tanh(z + half))


def atanh_tests(difference: float, standard_error: float, df: float, margin: float) -> tuple[float, float, float, float]:
    """(p, TOST p, 95% low, high) of the same row on the atanh scale (the hypotheses are the same: atanh is monotone;
    the margin is atanh(margin) there)."""
    if abs(difference) >= 1 or not np.isfinite(standard_error) or standard_error == 0:
        return 1.0, 1.0, -1.0, 1.0
    z, se_z = np.arctanh(difference), standard_error / (1 - difference ** 2)
    q = np.arctanh(margin)
    p = float(2 * student_t.sf(abs(z) / se_z, df))
    p_equivalence = float(max(student_t.sf((z + q) / se_z, df), student_t.cdf((z - q) / se_z, df)))
    return (p, p_equivalence, *atanh_interval(difference, standard_error, df, ALPHA))
