"""The partition design's pair test: the corrected repeated k-fold t-test (framework-free).

For a pair, d_j = A's metric - B's metric on partition j (each the mean over its seeds), j = 1..J, J = R x K.
The partitions overlap in their training texts, so the plain variance of the mean, s^2 / J, is too small;
the corrected one is s^2 x (1/J + n_test/n_train) (Nadeau & Bengio 2003; Bouckaert & Frank 2004), with t on
J - 1 degrees of freedom. Equivalence within the declared margin is two one-sided tests with the same
statistic. Each training size is its own group, with its own n_test/n_train.

`partition_pair_rows` returns the rows of one schema (comparisons/stats/family.VERDICT_COLUMNS)
before the family's correction; `correct_family` then adds the rest. The single split's pair test, the
two-level bootstrap, is comparisons/stats/bootstrap.py and returns rows of the same schema.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from common.splits import size_key
from comparisons.stats.family import ALPHA, margin_for


def corrected_t(differences: np.ndarray, test_to_train: float) -> tuple[float, float, int]:
    """(mean, corrected standard error, degrees of freedom) of per-partition differences."""
    differences = np.asarray(differences, dtype=float)
    count = len(differences)
    variance = float(np.var(differences, ddof=1)) if count > 1 else float("nan")
    return float(differences.mean()), float(np.sqrt((1 / count + test_to_train) * variance)), count - 1


def corrected_interval(values: np.ndarray, test_to_train: float) -> tuple[float, float, float]:
    """(mean, low, high): the 95% interval of the mean of per-partition values under the corrected t
    (NaN bounds with fewer than 2 partitions); a recipe's figure, a curve's point, a log size."""
    mean, se, df = corrected_t(values, test_to_train)
    half = float(student_t.ppf(1 - ALPHA / 2, df) * se) if df >= 1 else float("nan")
    return mean, mean - half, mean + half


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


def partition_pair_rows(runs: pd.DataFrame, pairs: list[tuple[str, str]], metrics, margins: dict | None,
                        folds: int | None) -> pd.DataFrame:
    """One row per (training size, metric, pair) with the test's figures, before the family's correction.

    runs: comparisons/report/scores.wide_runs of a partition design; pairs: (A, B) in the report's one order
    (comparisons/stats/contrasts.pair_order)."""
    grouped = per_partition(runs, metrics)
    rows = []
    sizes = sorted(grouped["train_size"].unique(), key=size_key)  # 50, 100, ..., all: the reading order
    for size, at_size in ((size, grouped[grouped["train_size"] == size]) for size in sizes):
        ratio = test_to_train(at_size)
        for metric in metrics:
            wide = at_size.pivot(index="partition", columns="variant", values=metric)
            seeds = at_size.pivot(index="partition", columns="variant", values="seeds")
            for variant_a, variant_b in pairs:
                if variant_a not in wide or variant_b not in wide:
                    continue
                both = wide[[variant_a, variant_b]].dropna()
                if len(both) < 2:
                    continue
                differences = (both[variant_a] - both[variant_b]).to_numpy()
                mean, se, df = corrected_t(differences, ratio)
                margin = margin_for(metric, margins)
                p, p_equivalence, low, high = t_tests(mean, se, df, margin)
                rows.append({"design": "partitions", "train_size": size, "metric": metric, "variant_a": variant_a,
                             "variant_b": variant_b, "partitions": len(both),
                             "seeds": int(seeds.loc[both.index, [variant_a, variant_b]].min().min()),
                             "difference": mean, "ci_low": low, "ci_high": high, "standard_error": se,
                             "spread": float(np.std(differences, ddof=1)), "df": df, "p_value": p, "margin": margin,
                             "p_equivalence": p_equivalence, "folds": folds, "test_to_train": ratio})
    return pd.DataFrame(rows)
