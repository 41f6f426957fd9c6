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

The family: the report's claims rest on the primary metric (average precision) over the declared
contrasts (every pair when none are declared; comparisons/stats/contrasts.py) and every training size
of a sweep, so Holm's correction runs over all of those rows together, their difference and their
equivalence hypotheses in one family; pairs outside the declared contrasts are exploratory, corrected
among themselves and labelled so; each secondary metric is corrected the same way over its own rows.

Margins are declared before the data are seen (defaults below, `--margin-ap` / `--margin-f1`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm, t as student_t

from common.metric_names import DEFAULT_MARGINS, LOWER_IS_BETTER, PRIMARY  # noqa: F401 (re-exported)
from comparisons.stats.atanh import ATANH, atanh_interval, atanh_tests  # noqa: F401 (re-exported)
from comparisons.stats.graphical import natural_order
from comparisons.stats.contrasts import contrast_label
from comparisons.stats.power import repeats_for_power, smallest_detectable

ALPHA = 0.05
FAMILIES = ("holm", "natural-order")  # the declared family's correction (`run --family`; natural-order: graphical.py)
POWER = 0.80
# PRIMARY, DEFAULT_MARGINS, LOWER_IS_BETTER (probability calibration: "A better" means A's score is lower) are
# common/metric_names's, imported above
VERDICTS = ("A better", "B better", "equivalent", "inconclusive")
DECISION_VERDICTS = ("A better", "B better", "inconclusive")


REAL = ("A better", "B better")  # the verdicts that say one is better
# verdicts.csv, one schema for every design (docs/statistics.md documents each column); a column that does
# not apply to a design is empty (the partition columns on a single split, the decision columns on partitions)
VERDICT_COLUMNS = (
    "design", "train_size", "metric", "variant_a", "variant_b", "contrast", "partitions", "seeds", "n_items",
    "difference", "ci_low", "ci_high", "ci_low_family", "ci_high_family", "standard_error", "spread", "df",
    "p_value", "p_holm", "margin", "p_equivalence", "p_equivalence_holm", "family", "family_size",
    "smallest_detectable_difference", "repeats_for_power_margin", "repeats_for_power_observed",
    "p_a_better", "p_within_margin", "p_b_better", "verdict",
    "a_right_b_wrong", "a_wrong_b_right", "mcnemar_p_per_seed", "decisions_p", "decisions_p_holm", "verdict_decisions",
    "variance_method", "training_overlap", "draws", "interval_method", "look", "decided_at", "nominal_level",
)


def in_schema(pairs: pd.DataFrame) -> pd.DataFrame:
    """The rows in VERDICT_COLUMNS' order, every column present (empty where it does not apply)."""
    return pairs.reindex(columns=list(VERDICT_COLUMNS))



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


def posterior_thirds(difference: float, standard_error: float, df: float, margin: float,
                     distribution=None) -> tuple[float, float, float]:
    """(P(A better), P(within the margin), P(B better)): the posterior of the difference beyond +margin, within
    ±margin, beyond -margin.

    Partitions: the correlated Bayesian t-test (Benavoli et al. 2017; baycomp's `two_on_single`): with its
    flat prior the posterior of the mean difference is Student's t with J - 1 degrees of freedom, located at
    the mean difference, scaled by the corrected standard error. Then the TOST p of the same row equals
    max(P(A better), P(B better)) (uncorrected). A single split's bootstrap: the shares of its distribution
    (a bootstrap reading of the same question, not a Bayesian model)."""
    if isinstance(distribution, np.ndarray):
        finite = distribution[np.isfinite(distribution)]
        if not finite.size:
            return (float("nan"),) * 3
        above, below = float(np.mean(finite > margin)), float(np.mean(finite < -margin))
        return above, 1.0 - above - below, below
    if not np.isfinite(standard_error) or not (df >= 1):
        return (float("nan"),) * 3
    if standard_error == 0:
        return float(difference > margin), float(abs(difference) <= margin), float(difference < -margin)
    above = float(student_t.sf((margin - difference) / standard_error, df))
    below = float(student_t.cdf((-margin - difference) / standard_error, df))
    return above, max(0.0, 1.0 - above - below), below


def correct_family(pairs: pd.DataFrame, contrasts: list[tuple[str, str]] | None = None,
                   alpha: float = ALPHA, family: str = "holm", dropped=()) -> pd.DataFrame:
    """The one family rule: contrast, p_holm, p_equivalence_holm, family, family_size, the family's interval,
    the power figures and the verdict of every row.

    pairs: one row per (metric, pair[, group such as train_size]) with difference, standard_error, df,
    p_value, margin and p_equivalence (a pair test's rows: comparisons/stats/corrected_t.py or the single
    split's bootstrap, comparisons/stats/bootstrap.py). A family is one metric's rows of one contrast kind:
    the declared pairs (every pair when none is declared) or the exploratory rest, over every group in the
    frame (call it once on a whole sweep). Holm runs over the family's difference AND equivalence
    hypotheses together (2 per row: `family_size` counts hypotheses), so the chance of any false claim
    of the family, "better" or "equivalent", is at most alpha.
    The family's interval (ci_low_family, ci_high_family) is the interval at Holm's strictest level,
    alpha / family_size (Bonferroni): it excludes 0 whenever the first step rejects.
    family "natural-order" (a learning curve declared with `run --family natural-order`): the primary metric's
    declared rows are corrected by the natural-order graph instead, less the nodes `dropped` before the runs as
    unreachable (comparisons/stats/graphical.py; p_holm and p_equivalence_holm then hold its adjusted p-values, and
    the family interval is the one compatible with the graph's decisions, never one that holds 0 beside a
    rejection); every other family is Holm's as above.
    """

    pairs = pairs.copy().reset_index(drop=True)
    pairs["family"] = np.where(pairs["metric"] == PRIMARY, "primary", "secondary")
    pairs["contrast"] = [contrast_label((a, b), contrasts) for a, b in zip(pairs["variant_a"], pairs["variant_b"])]
    for _, rows in pairs.groupby(["metric", "contrast"], sort=False):
        pairs.loc[rows.index, "family_size"] = 2 * len(rows)
    pairs["family_size"] = pairs["family_size"].astype(int)
    df = pairs["df"] if "df" in pairs else pd.Series(np.inf, pairs.index)
    pairs["df"] = df.astype(float)
    low, high = [], []
    pairs["interval_method"] = ["bootstrap percentile" if isinstance(d, np.ndarray) else "t"
                                for d in (pairs["distribution"] if "distribution" in pairs else [None] * len(pairs))]
    for row in pairs.itertuples():
        level = alpha / row.family_size
        distribution = getattr(row, "distribution", None)
        if isinstance(distribution, np.ndarray):  # a bootstrap: the percentile interval at the family's level
            finite = distribution[np.isfinite(distribution)]
            bounds = np.percentile(finite, [100 * level / 2, 100 * (1 - level / 2)]) if finite.size else (np.nan,) * 2
        else:
            half = (student_t.ppf(1 - level / 2, row.df) if np.isfinite(row.df) else norm.ppf(1 - level / 2)) \
                * row.standard_error
            bounds = (row.difference - half, row.difference + half)
            if bounds[0] < -1 or bounds[1] > 1:  # outside the scale: the t on the atanh scale (below)
                pairs.loc[row.Index, ["p_value", "p_equivalence", "ci_low", "ci_high"]] = atanh_tests(
                    row.difference, row.standard_error, row.df, row.margin)
                pairs.loc[row.Index, "interval_method"] = ATANH
                bounds = atanh_interval(row.difference, row.standard_error, row.df, level)
        low.append(float(bounds[0]))
        high.append(float(bounds[1]))
    pairs["ci_low_family"], pairs["ci_high_family"] = low, high
    for (metric, contrast), rows in pairs.groupby(["metric", "contrast"], sort=False):
        if family == "natural-order" and metric == PRIMARY and contrast == "declared" and "train_size" in rows:
            for column, values in natural_order(rows, dropped, alpha).items():
                pairs.loc[rows.index, column] = values
            continue
        joint = holm(np.r_[rows["p_value"].to_numpy(float), rows["p_equivalence"].to_numpy(float)])
        pairs.loc[rows.index, "p_holm"] = joint[:len(rows)]
        pairs.loc[rows.index, "p_equivalence_holm"] = joint[len(rows):]
    posterior = [posterior_thirds(row.difference, row.standard_error, row.df, row.margin, getattr(row, "distribution", None))
                 for row in pairs.itertuples()]
    posterior = [(b, w, a) if metric in LOWER_IS_BETTER else (a, w, b)  # "A better" is the lower score there
                 for (a, w, b), metric in zip(posterior, pairs["metric"])]
    pairs["p_a_better"], pairs["p_within_margin"], pairs["p_b_better"] = (list(column) for column in zip(*posterior)) \
        if posterior else ([], [], [])
    pairs["smallest_detectable_difference"] = [
        smallest_detectable(se, m, d, alpha) for se, m, d in zip(pairs["standard_error"], pairs["family_size"], pairs["df"])]
    if {"spread", "folds", "test_to_train"} <= set(pairs.columns):  # the partition design: repeats for 80% power
        # at the observed difference: the repeats to show it equivalent within the margin, and to show it different
        for column, equivalence in (("repeats_for_power_margin", True), ("repeats_for_power_observed", False)):
            pairs[column] = [repeats_for_power(d, s, int(k), r, m, alpha, margin=q if equivalence else None)
                             if pd.notna(k) else None for d, s, k, r, m, q in
                             zip(pairs["difference"], pairs["spread"], pairs["folds"], pairs["correction_ratio"]
                                 if "correction_ratio" in pairs else pairs["test_to_train"],
                                 pairs["family_size"], pairs["margin"])]
    pairs["verdict"] = [four_way(-d if metric in LOWER_IS_BETTER else d, p, q, alpha) for d, p, q, metric in
                        zip(pairs["difference"], pairs["p_holm"], pairs["p_equivalence_holm"], pairs["metric"])]
    if "decisions_p" in pairs:
        for _, rows in pairs.groupby(["metric", "contrast"], sort=False):
            pairs.loc[rows.index, "decisions_p_holm"] = holm(rows["decisions_p"])
        fewer_errors = pairs["a_right_b_wrong"] - pairs["a_wrong_b_right"]
        pairs["verdict_decisions"] = [decision_verdict(d, p, alpha) if pd.notna(p) else None  # rows without decisions
                                      for d, p in zip(fewer_errors, pairs["decisions_p_holm"])]  # (Brier, ECE): none
    return pairs.drop(columns=[c for c in ("distribution",) if c in pairs])
