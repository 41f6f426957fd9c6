"""The partition design's pair test: the corrected repeated k-fold t-test (framework-free), its variance following
the design that ran (comparisons/stats/design_variance.py).

For a pair, d_j = A's metric - B's metric on partition j (each the mean over its seeds), j = 1..J, J = R x K.
The partitions overlap in their training texts, so the plain variance of the mean, s^2 / J, is too small;
the corrected one is s^2 x (1/J + n_test/n_train) (Nadeau & Bengio 2003; Bouckaert & Frank 2004), with t on
J - 1 degrees of freedom. Equivalence within the declared margin is two one-sided tests with the same
statistic. Each training size is its own group, with its own n_test/n_train, its own training overlap and draws:
the correlation is Nadeau-Bengio's capped at the overlap the recorded training sets allow (design_variance.py).

`partition_pair_rows` returns the rows of one schema (comparisons/stats/family.VERDICT_COLUMNS)
before the family's correction; `correct_family` then adds the rest. The single split's pair test, the
two-level bootstrap, is comparisons/stats/bootstrap.py and returns rows of the same schema.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from common.splits import size_key
from comparisons.stats.design_variance import (DEFAULT_VARIANCE, design_correlation, design_mean_se, resample_frame, sets_at,
                                               training_overlap)
from comparisons.stats.family import ALPHA, margin_for


def corrected_t(differences: np.ndarray, test_to_train: float) -> tuple[float, float, int]:
    """(mean, corrected standard error, degrees of freedom) of per-partition differences."""
    differences = np.asarray(differences, dtype=float)
    count = len(differences)
    variance = float(np.var(differences, ddof=1)) if count > 1 else float("nan")
    return float(differences.mean()), float(np.sqrt((1 / count + test_to_train) * variance)), count - 1


def design_interval(values: pd.DataFrame, test_to_train: float, overlap: float | None = None,
                    variance: str = DEFAULT_VARIANCE, bounded: bool = True) -> tuple[float, float, float, str]:
    """(mean, low, high, method) of a recipe's per-resample scores (partition, draw, value) under the design's
    estimate (design_variance.design_mean_se): the t interval, or for a score in [0, 1] (bounded) whose t interval
    would leave it, the t on the logit scale (delta method), mapped back; NaN bounds with fewer than 2 partitions."""
    mean, se, df, _method = design_mean_se(values, test_to_train, overlap, variance)
    if not (df >= 1 and np.isfinite(se)):
        return mean, float("nan"), float("nan"), "t"
    half = float(student_t.ppf(1 - ALPHA / 2, df) * se)
    if not bounded or (0 <= mean - half and mean + half <= 1):
        return mean, mean - half, mean + half, "t"
    if not 0 < mean < 1:
        return mean, 0.0, 1.0, "t on the logit scale"
    logit, se_logit = np.log(mean / (1 - mean)), se / (mean * (1 - mean))
    low, high = logit - half / se * se_logit, logit + half / se * se_logit
    return mean, float(1 / (1 + np.exp(-low))), float(1 / (1 + np.exp(-high))), "t on the logit scale"


def t_tests(mean: float, standard_error: float, df: int, margin: float) -> tuple[float, float, float, float]:
    """(p of 'no difference', TOST p of '|difference| >= margin', 95% interval low, high)."""
    if not np.isfinite(standard_error) or df < 1:
        return 1.0, 1.0, float("nan"), float("nan")
    if standard_error == 0:  # every partition gave the same difference
        return (1.0 if mean == 0 else 0.0), (0.0 if abs(mean) < margin else 1.0), mean, mean
    p = float(2 * student_t.sf(abs(mean) / standard_error, df))
    p_equivalence = float(max(student_t.sf((mean + margin) / standard_error, df),
                              student_t.cdf((mean - margin) / standard_error, df)))
    half = float(student_t.ppf(1 - ALPHA / 2, df) * standard_error)
    return p, p_equivalence, mean - half, mean + half


def per_partition(runs: pd.DataFrame, metrics) -> pd.DataFrame:
    """Seeds averaged within each (training size, variant, partition)."""
    return runs.groupby(["train_size", "variant", "partition"], sort=False).agg(
        seeds=("seed", "nunique"), n_train=("n_train", "first"), n_test=("n_test", "first"),
        **{m: (m, "mean") for m in metrics}).reset_index()


def test_to_train(rows: pd.DataFrame) -> float:
    """The mean n_test / n_train of a group's partitions (the correction's ratio)."""
    return float((rows["n_test"] / rows["n_train"]).mean()) if len(rows) else 0.0


def variant_draws(runs: pd.DataFrame, metric: str, variant: str, sets: dict) -> pd.DataFrame:
    """(partition, draw) -> the variant's metric averaged over the seeds of that draw (design_variance)."""
    rows = runs[runs["variant"] == variant]
    frame = resample_frame(rows, metric, sets)
    return frame.groupby(["partition", "draw"], sort=False)["value"].mean()


def partition_pair_rows(runs: pd.DataFrame, pairs: list[tuple[str, str]], metrics, margins: dict | None,
                        folds: int | None, training_sets: dict | None = None,
                        variance: str = DEFAULT_VARIANCE) -> pd.DataFrame:
    """One row per (training size, metric, pair) with the test's figures, before the family's correction.

    runs: comparisons/run_folder/scores.wide_runs of a partition design; pairs: (A, B) in the report's one order
    (comparisons/stats/contrasts.pair_order); training_sets: {(size, partition, seed): the data indices the run
    learnt from} (the overlaps and the draws, design_variance.py; None: one draw a partition, no overlap known);
    variance: design_variance.VARIANCE_METHODS."""
    grouped = per_partition(runs, metrics)
    rows = []
    sizes = sorted(grouped["train_size"].unique(), key=size_key)  # 50, 100, ..., all: the reading order
    for size in sizes:
        at_size, runs_at = grouped[grouped["train_size"] == size], runs[runs["train_size"] == size]
        ratio = test_to_train(at_size)
        sets = sets_at(training_sets, size)
        overlap = training_overlap(sets) if sets else None
        for metric in metrics:
            seeds = at_size.pivot(index="partition", columns="variant", values="seeds")
            for variant_a, variant_b in pairs:
                if variant_a not in seeds or variant_b not in seeds:
                    continue
                both = pd.concat({"a": variant_draws(runs_at, metric, variant_a, sets),
                                  "b": variant_draws(runs_at, metric, variant_b, sets)}, axis=1).dropna()
                partitions = both.index.get_level_values("partition").unique()
                if len(partitions) < 2:
                    continue
                values = pd.DataFrame({"partition": both.index.get_level_values("partition"),
                                       "draw": both.index.get_level_values("draw"),
                                       "value": (both["a"] - both["b"]).to_numpy()})
                mean, se, df, method = design_mean_se(values, ratio, overlap, variance)
                rho, _ = design_correlation(overlap, ratio, variance)
                margin = margin_for(metric, margins)
                p, p_equivalence, low, high = t_tests(mean, se, df, margin)
                per_partition_differences = values.groupby("partition", sort=False)["value"].mean().to_numpy()
                rows.append({"design": "partitions", "train_size": size, "metric": metric, "variant_a": variant_a,
                             "variant_b": variant_b, "partitions": len(partitions),
                             "seeds": int(seeds.loc[partitions, [variant_a, variant_b]].min().min()),
                             "difference": mean, "ci_low": low, "ci_high": high, "standard_error": se,
                             "spread": float(np.std(per_partition_differences, ddof=1)), "df": df, "p_value": p,
                             "margin": margin, "p_equivalence": p_equivalence, "folds": folds,
                             "test_to_train": ratio, "correction_ratio": rho / (1 - rho), "variance_method": method,
                             "training_overlap": overlap, "draws": float(values.groupby("partition").size().mean())})
    return pd.DataFrame(rows)
