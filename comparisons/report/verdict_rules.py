"""The rules every verdict follows, whichever design produced its p-values (framework-free).

A pair (A, B) of variants gets one of four verdicts on a metric:
  "equivalent"             the equivalence test (two one-sided tests, TOST) rejects "|A - B| >= margin"
                           after the family's correction: the difference lies within the margin
                           declared up front, whether or not it is 0 (a region of practical
                           equivalence, as Benavoli et al. 2017 use it);
  "A better" / "B better"  otherwise, the difference test rejects "A = B" after the same correction;
  "inconclusive"           neither: the data cannot say which, nor that they are within the margin.
A difference that is real but smaller than the margin is "equivalent": the margin says which
differences matter, and the interval beside the verdict shows the difference itself.

The family: the report's claims rest on the primary metric (average precision) over every pair (and
every training size of a sweep), so Holm's correction runs over all of those rows together; each
secondary metric is corrected over its own rows and labelled secondary.

Margins are declared before the data are seen (defaults below, `--margin-ap` / `--margin-f1`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm
from scipy.stats import t as student_t

ALPHA = 0.05
POWER = 0.80
PRIMARY = "average_precision"
DEFAULT_MARGINS = {"average_precision": 0.005, "macro_f1": 0.01, "accuracy": 0.005}
VERDICTS = ("A better", "B better", "equivalent", "inconclusive")
DECISION_VERDICTS = ("A better", "B better", "inconclusive")


REAL = ("A better", "B better")  # the verdicts that say one is better


def phrase(verdict: str, variant_a: str, variant_b: str, lang: str = "en") -> str:
    """'A better' -> 'keras_layers better'; the other verdicts in words (English or Chinese)."""
    from comparisons.report.i18n import text

    if verdict == "A better":
        return text(f"{variant_a} better", f"{variant_a} 更好", lang)
    if verdict == "B better":
        return text(f"{variant_b} better", f"{variant_b} 更好", lang)
    words = {"equivalent": ("equivalent within the margin", "在容差内等价"),
             "inconclusive": ("inconclusive", "无定论")}
    return text(*words[verdict], lang) if verdict in words else str(verdict)


def margin_for(metric: str, margins: dict | None = None) -> float:
    """The declared margin of a metric: macro_f1_at_threshold uses macro_f1's, and so on."""
    margins = {**DEFAULT_MARGINS, **(margins or {})}
    return float(margins[metric.removesuffix("_at_threshold")])


def holm(p_values) -> np.ndarray:
    """Holm's step-down correction (controls the chance of any false verdict in the family)."""
    p = np.asarray(p_values, dtype=float)
    if p.size == 0:
        return p
    order = np.argsort(p)
    adjusted = np.minimum(1.0, np.maximum.accumulate((len(p) - np.arange(len(p))) * p[order]))
    out = np.empty_like(p)
    out[order] = adjusted
    return out


def four_way(difference: float, p_difference: float, p_equivalence: float, alpha: float = ALPHA) -> str:
    if p_equivalence < alpha:
        return "equivalent"
    if p_difference < alpha and difference != 0:
        return "A better" if difference > 0 else "B better"
    return "inconclusive"


def decision_verdict(fewer_errors: float, p: float, alpha: float = ALPHA) -> str:
    if p < alpha and fewer_errors != 0:
        return "A better" if fewer_errors > 0 else "B better"
    return "inconclusive"


def smallest_detectable(standard_error: float, family_size: int, df: float = np.inf, alpha: float = ALPHA) -> float:
    """The true difference found 80% of the time at the strictest level the family's correction uses
    (Holm's first step: alpha / family_size, two-sided): (q(1 - alpha/2m) + q(power)) x standard error,
    q from Student's t with the test's degrees of freedom (the normal for a bootstrap)."""
    quantile = norm.ppf if not np.isfinite(df) else (lambda x: student_t.ppf(x, df))
    return float((quantile(1 - alpha / (2 * max(1, family_size))) + quantile(POWER)) * standard_error)


def correct_family(pairs: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """p_holm, p_equivalence_holm, family and verdict for every row, each metric its own family.

    pairs: one row per (metric, pair[, group]) with difference, p_value and p_equivalence. The
    primary metric's family spans every pair and group in the frame (call it on the whole sweep).
    """
    pairs = pairs.copy()
    pairs["family"] = np.where(pairs["metric"] == PRIMARY, "primary", "secondary")
    for _, rows in pairs.groupby("metric", sort=False):
        pairs.loc[rows.index, "p_holm"] = holm(rows["p_value"])
        pairs.loc[rows.index, "p_equivalence_holm"] = holm(rows["p_equivalence"])
        pairs.loc[rows.index, "family_size"] = len(rows)
    pairs["family_size"] = pairs["family_size"].astype(int)
    if "standard_error" in pairs:
        pairs["smallest_detectable_difference"] = [
            smallest_detectable(se, m, df, alpha) for se, m, df in
            zip(pairs["standard_error"], pairs["family_size"], pairs.get("df", pd.Series(np.inf, pairs.index)))]
    pairs["verdict"] = [four_way(d, p, q, alpha) for d, p, q in
                        zip(pairs["difference"], pairs["p_holm"], pairs["p_equivalence_holm"])]
    if "decisions_p" in pairs:
        for _, rows in pairs.groupby("metric", sort=False):
            pairs.loc[rows.index, "decisions_p_holm"] = holm(rows["decisions_p"])
        fewer_errors = pairs["a_right_b_wrong"] - pairs["a_wrong_b_right"]
        pairs["verdict_decisions"] = [decision_verdict(d, p, alpha) for d, p in zip(fewer_errors, pairs["decisions_p_holm"])]
    return pairs
