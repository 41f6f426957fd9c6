"""Verdicts on one split: which differences between variants the seeds and the test set can carry.

Two spreads, never confused:
- "over seeds" (training randomness): mean ± std of a metric over the model seeds (report.py);
- the 95% interval of the seed-averaged variant from a two-level bootstrap: each resample draws
  the seeds (with replacement) and then the test items (with replacement) and averages the drawn
  seeds' metrics on the drawn items (`variant_intervals`). With one seed it is the items-only
  bootstrap. It covers training randomness and test-set sampling, not which texts were trained
  on: that needs partitions (`--cv`, comparisons/stats/partition_verdicts.py).

Pairs are compared on the identical test items and seed indices (`pairwise_verdicts`): every
variant gets the same item and seed resamples, so the difference of two variants' bootstrap
distributions is the paired distribution of the difference (the twins share initial weights per
seed, so seed i of A is paired with seed i of B). Each pair gets one of four verdicts
(comparisons/stats/family.py): A better, B better, equivalent within the declared margin, or
inconclusive; average precision is the primary metric, corrected over all its pairs; the rest
are secondary. Decisions are compared by one pooled sign-flip test over the test items of the
per-item difference in correctness averaged over the seeds (not the largest per-seed p);
McNemar's exact p of each seed pair is kept for reading.

The rows have the one schema of every design (comparisons/stats/family.VERDICT_COLUMNS, each column
documented in docs/statistics.md): design "split", df infinite (the normal for the power figures), the
posterior columns read off the bootstrap distribution, and the decision columns, which only this design has:
  a_right_b_wrong, a_wrong_b_right   discordant test items, mean over seeds, for the decisions of
                           this metric: the validation-chosen threshold (average precision and the
                           *_at_threshold rows) or the 0.5 cut (macro_f1, accuracy); the arg-max
                           when the task has more than two classes
  mcnemar_p_per_seed       exact McNemar p of each seed pair, ";"-separated, in seed order (for reading)
  decisions_p, decisions_p_holm   the pooled sign-flip p, raw and Holm-corrected over the metric's rows
  verdict_decisions        A better (A makes fewer errors) / B better / inconclusive
A sweep calls `compare(..., corrected=False)` once per training size, then
`verdict_rules.correct_family` once over all sizes so the family spans them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from common.metric_names import PAIR_METRICS
from comparisons.stats.contrasts import pair_order
from comparisons.stats.family import (ALPHA, VERDICT_COLUMNS, VERDICTS, correct_family, holm,  # noqa: F401
                                              in_schema, margin_for)
from common.metrics import CALIBRATION_BINS, calibration_target

N_RESAMPLES = 2000
N_SIGN_FLIPS = 10000
RESAMPLE_SEED = 0  # the same resamples for every variant and pair: a rerun gives the same table
# metric key -> (uses the validation threshold, is a decision metric)
METRICS = {
    "average_precision": False,
    "accuracy": False, "accuracy_at_threshold": True,
    "macro_f1": False, "macro_f1_at_threshold": True,
    "brier": False, "ece": False,  # probability calibration (lower is better: verdict_rules.LOWER_IS_BETTER)
}
assert set(METRICS) == set(PAIR_METRICS)  # common/metric_names.PAIR_METRICS, each with its threshold use here


@dataclass(frozen=True)
class Verdicts:
    variants: pd.DataFrame  # one row per variant: seeds, metric means, 95% intervals over test items
    pairs: pd.DataFrame     # one row per pair: the columns documented above


# -- metrics from resample counts ---------------------------------------------------------
def _counts(indices: np.ndarray, n: int) -> np.ndarray:
    """Resampled item indices (B, m) -> how often each item was drawn (B, n)."""
    indices = np.atleast_2d(indices).astype(np.int64)
    offsets = (np.arange(len(indices)) * n)[:, None]
    return np.bincount((indices + offsets).ravel(), minlength=len(indices) * n).reshape(len(indices), n).astype(float)


def weighted_average_precision(score: np.ndarray, positive: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Average precision (scikit-learn's step definition, ties as one threshold) per row of counts.

    score, positive: (n,); counts: (B, n) item weights -> (B,).
    """
    order = np.argsort(score, kind="mergesort")[::-1]
    sorted_score, is_positive = score[order], positive[order].astype(bool)
    weights = counts[:, order]                                                  # (B, n)
    ends = np.flatnonzero(np.r_[sorted_score[1:] != sorted_score[:-1], True])   # last item of each tie group
    at = ends[np.searchsorted(ends, np.flatnonzero(is_positive))]               # (P,) group end of each positive
    positive_weights = weights[:, is_positive]                                  # (B, P)
    true_positives = np.cumsum(positive_weights, axis=1)                        # (B, P) before each positive's group ends...
    true_positives = true_positives[:, np.searchsorted(np.flatnonzero(is_positive), at, side="right") - 1]
    predicted = np.cumsum(weights, axis=1)[:, at]                               # (B, P)
    precision = np.divide(true_positives, predicted, out=np.zeros_like(predicted), where=predicted > 0)
    total = positive_weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (positive_weights * precision).sum(axis=1) / total, np.nan)


def weighted_calibration(metric: str, proba: np.ndarray, labels: np.ndarray, positive_index: int | None,
                         counts: np.ndarray) -> np.ndarray:
    """Brier score or ECE (common/metrics.py's definitions) under each row of item weights: (B,). The ECE's
    equal-mass bins are cut once, on the test items as they are, and each resample weighs the items in them,
    so with unit weights both are exactly common.metrics' figures."""

    total = counts.sum(axis=1)
    if metric == "brier":
        if proba.shape[1] == 2 and positive_index is not None:
            score, outcome = calibration_target(labels, proba, positive_index)
            return counts @ (score - outcome) ** 2 / total
        return counts @ np.sum((proba - np.eye(proba.shape[1])[labels]) ** 2, axis=1) / total
    score, outcome = calibration_target(labels, proba, positive_index)
    order = np.argsort(score, kind="stable")
    member = np.zeros((len(score), min(CALIBRATION_BINS, len(score))))
    for column, group in enumerate(np.array_split(order, member.shape[1])):
        member[group, column] = 1.0
    gap = np.abs(counts @ (member * outcome[:, None]) - counts @ (member * score[:, None]))  # |Σw·y − Σw·p| per bin
    return gap.sum(axis=1) / total  # Σ (bin weight/total) · |observed − mean score|: the bin weights cancel


def decisions(proba: np.ndarray, positive_index: int | None, threshold: float | None) -> np.ndarray:
    """Predicted classes: the threshold on the positive probability when given, else the arg-max."""
    if threshold is None or positive_index is None or proba.shape[1] != 2 or pd.isna(threshold):
        return proba.argmax(axis=1)
    return np.where(proba[:, positive_index] >= threshold, positive_index, 1 - positive_index)


def weighted_metric(metric: str, proba: np.ndarray, labels: np.ndarray, positive_index: int | None,
                    threshold: float | None, counts: np.ndarray) -> np.ndarray:
    """One metric of one seed's predictions under each row of item weights: (B,)."""
    n_classes = proba.shape[1]
    if metric == "average_precision":
        if n_classes == 2 and positive_index is not None:
            return weighted_average_precision(proba[:, positive_index], labels == positive_index, counts)
        present = [c for c in range(n_classes) if (labels == c).any()]  # macro one-vs-rest, as common.metrics
        return np.mean([weighted_average_precision(proba[:, c], labels == c, counts) for c in present], axis=0)
    if metric in ("brier", "ece"):
        return weighted_calibration(metric, proba, labels, positive_index, counts)
    predicted = decisions(proba, positive_index, threshold if METRICS[metric] else None)
    if metric.startswith("accuracy"):
        return counts @ (predicted == labels) / counts.sum(axis=1)
    scores = []
    for c in range(n_classes):  # macro-F1 over every class, zero where a class is neither true nor predicted
        both = counts @ ((labels == c) & (predicted == c))
        either = counts @ (labels == c) + counts @ (predicted == c)
        scores.append(np.divide(2 * both, either, out=np.zeros_like(both), where=either > 0))
    return np.mean(scores, axis=0)


def per_seed(runs: pd.DataFrame, labels: np.ndarray, positive_index: int | None,
             counts: np.ndarray) -> np.ndarray:
    """Every metric of METRICS for each seed (row of `runs`) under each row of item weights: (S, k, B)."""
    return np.asarray([[weighted_metric(metric, row.proba, labels, positive_index, row.threshold, counts)
                        for metric in METRICS] for row in runs.itertuples()])


def seed_weights(n_seeds: int, n_resamples: int) -> np.ndarray:
    """(B, S) how often each seed is drawn in each resample, over S: the same draws for every variant with S seeds."""
    rng = np.random.default_rng([RESAMPLE_SEED, n_seeds])
    drawn = rng.integers(0, n_seeds, size=(n_resamples, n_seeds))
    return _counts(drawn, n_seeds) / n_seeds


def item_counts(n_items: int, n_resamples: int) -> np.ndarray:
    """(B, n) how often each test item is drawn in each resample: the same draws for every variant."""
    rng = np.random.default_rng(RESAMPLE_SEED)
    return _counts(rng.integers(0, n_items, size=(n_resamples, n_items)), n_items)


def _bootstrap(runs: pd.DataFrame, labels: np.ndarray, positive_index: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(point estimates (k,), two-level bootstrap distribution (k, B)) of the seed-averaged metrics.

    Each resample b draws seeds (seed_weights) and items (item_counts); both generators are seeded
    alike for every variant, so distributions of two variants are paired resample by resample.
    """
    n = len(labels)
    scores = per_seed(runs, labels, positive_index, item_counts(n, N_RESAMPLES))       # (S, k, B)
    distribution = np.einsum("skb,bs->kb", scores, seed_weights(len(runs), N_RESAMPLES))
    point = per_seed(runs, labels, positive_index, np.ones((1, n)))[:, :, 0].mean(axis=0)
    return point, distribution


def _cached_bootstrap(cache: dict, variant: str, runs: pd.DataFrame, labels: np.ndarray,
                      positive_index: int | None) -> tuple[np.ndarray, np.ndarray]:
    key = (variant, tuple(runs["seed"]))
    if key not in cache:
        cache[key] = _bootstrap(runs, labels, positive_index)
    return cache[key]


def interval(distribution: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of a bootstrap distribution (scipy's 'percentile' method)."""
    low, high = np.nanpercentile(distribution, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)])
    return float(low), float(high)


# -- tests ----------------------------------------------------------------------------------
def bootstrap_p(distribution: np.ndarray) -> float:
    """Two-sided p of 'no difference' from a bootstrap distribution of the difference."""
    distribution = distribution[np.isfinite(distribution)]
    tail = min(np.sum(distribution <= 0), np.sum(distribution >= 0))
    return float(min(1.0, 2 * (tail + 1) / (len(distribution) + 1)))  # never 0 from a finite number of resamples


def mcnemar_exact(a_correct: np.ndarray, b_correct: np.ndarray) -> tuple[float, int, int]:
    """Exact McNemar: (p, items only A got right, items only B got right), a binomial test on the discordant items."""
    a_only, b_only = int(np.sum(a_correct & ~b_correct)), int(np.sum(~a_correct & b_correct))
    if a_only + b_only == 0:
        return 1.0, 0, 0
    return float(binomtest(a_only, a_only + b_only, 0.5).pvalue), a_only, b_only


def equivalence_p(distribution: np.ndarray, margin: float) -> float:
    """TOST p of "|difference| >= margin" from a bootstrap distribution: the larger of the two one-sided tails."""
    distribution = distribution[np.isfinite(distribution)]
    below = (np.sum(distribution <= -margin) + 1) / (len(distribution) + 1)
    above = (np.sum(distribution >= margin) + 1) / (len(distribution) + 1)
    return float(min(1.0, max(below, above)))


def sign_flip_p(a_correct: np.ndarray, b_correct: np.ndarray) -> float:
    """Pooled paired test of decisions: (S, n) correctness of S seed pairs -> two-sided sign-flip p.

    The per-item difference in correctness is averaged over the seeds; under "A and B decide alike"
    its sign on each item is a fair coin, so random sign flips give the null distribution of the sum.
    """
    per_item = (np.asarray(a_correct, float) - np.asarray(b_correct, float)).mean(axis=0)
    per_item = per_item[per_item != 0]
    if per_item.size == 0:
        return 1.0
    rng = np.random.default_rng(RESAMPLE_SEED)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(N_SIGN_FLIPS, per_item.size))
    observed = abs(per_item.sum())
    extreme = np.sum(np.abs(signs @ per_item) >= observed - 1e-12)
    return float(min(1.0, (extreme + 1) / (N_SIGN_FLIPS + 1)))


# -- the two tables -------------------------------------------------------------------------
def variant_intervals(bootstrapped: dict) -> pd.DataFrame:
    """Per variant: seeds, each metric's seed mean and its 95% interval over test items."""
    rows = []
    for variant, (seeds, point, distribution) in bootstrapped.items():
        row: dict = {"variant": variant, "seeds": seeds}
        for k, metric in enumerate(METRICS):
            row[f"{metric}_mean"] = float(point[k])
            row[f"{metric}_ci_low"], row[f"{metric}_ci_high"] = interval(distribution[k])
        rows.append(row)
    return pd.DataFrame(rows)


def pairwise_verdicts(predictions: pd.DataFrame, labels: np.ndarray, positive_index: int | None,
                      cache: dict | None = None, margins: dict | None = None,
                      contrasts: list[tuple[str, str]] | None = None, corrected: bool = True) -> pd.DataFrame:
    """Every pair of variants on the identical test items, one row per (metric, pair): see the module docstring.

    Pairs in the report's one order (comparisons/stats/contrasts.pair_order); corrected=False leaves the
    family's correction to the caller (a sweep corrects once over every size), keeping each row's bootstrap
    distribution in a `distribution` column for it."""
    cache = {} if cache is None else cache
    variants = list(dict.fromkeys(predictions["variant"]))
    rows = []
    for variant_a, variant_b in pair_order(variants, contrasts):
        a = predictions[predictions["variant"] == variant_a].set_index("seed")
        b = predictions[predictions["variant"] == variant_b].set_index("seed")
        seeds = sorted(set(a.index) & set(b.index))  # paired by seed as well as by item
        if seeds:
            rows += _pair_rows(variant_a, variant_b, a.loc[seeds].reset_index(), b.loc[seeds].reset_index(),
                               labels, positive_index, cache, margins)
    if not rows:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    pairs = pd.DataFrame(rows)
    pairs["metric"] = pd.Categorical(pairs["metric"], PAIR_METRICS, ordered=True)
    pairs = pairs.sort_values("metric", kind="stable").reset_index(drop=True)
    pairs["metric"] = pairs["metric"].astype(str)
    return in_schema(correct_family(pairs, contrasts)) if corrected else pairs


def _pair_rows(variant_a: str, variant_b: str, a: pd.DataFrame, b: pd.DataFrame, labels: np.ndarray,
               positive_index: int | None, cache: dict, margins: dict | None = None) -> list[dict]:
    (point_a, dist_a), (point_b, dist_b) = (_cached_bootstrap(cache, name, runs, labels, positive_index)
                                            for name, runs in ((variant_a, a), (variant_b, b)))
    mcnemar = {}
    for at_threshold in (True, False):
        a_correct = np.asarray([decisions(r.proba, positive_index, r.threshold if at_threshold else None) == labels
                                for r in a.itertuples()])
        b_correct = np.asarray([decisions(r.proba, positive_index, r.threshold if at_threshold else None) == labels
                                for r in b.itertuples()])
        tests = [mcnemar_exact(ra, rb) for ra, rb in zip(a_correct, b_correct)]
        mcnemar[at_threshold] = {
            "a_right_b_wrong": float(np.mean([t[1] for t in tests])),
            "a_wrong_b_right": float(np.mean([t[2] for t in tests])),
            "mcnemar_p_per_seed": ";".join(f"{t[0]:.4g}" for t in tests),
            "decisions_p": sign_flip_p(a_correct, b_correct),
        }
    rows = []
    for metric in PAIR_METRICS:
        k = list(METRICS).index(metric)
        difference = dist_a[k] - dist_b[k]
        low, high = interval(difference)
        margin = margin_for(metric, margins)
        rows.append({"design": "split", "train_size": "all", "metric": metric, "variant_a": variant_a,
                     "variant_b": variant_b, "seeds": len(a), "df": float("inf"), "distribution": difference,
                     "n_items": len(labels), "difference": float(point_a[k] - point_b[k]), "ci_low": low,
                     "ci_high": high, "standard_error": float(np.nanstd(difference, ddof=1)),
                     "p_value": bootstrap_p(difference), "margin": margin,
                     "p_equivalence": equivalence_p(difference, margin),
                     **(mcnemar[metric == "average_precision" or METRICS[metric]] if metric not in ("brier", "ece")
                        else {})})  # probabilities have no decisions to test
    return rows


PAIR_COLUMNS = VERDICT_COLUMNS


def run_intervals(predictions: pd.DataFrame, labels: np.ndarray, positive_index: int | None) -> pd.DataFrame:
    """Per run (variant, seed): each metric's 95% interval over test items (summary.csv's interval columns)."""
    rows = []
    for row in predictions.itertuples():
        _, distribution = _bootstrap(predictions.loc[[row.Index]], np.asarray(labels), positive_index)
        values: dict = {"variant": row.variant, "seed": row.seed}
        for k, metric in enumerate(METRICS):
            values[f"{metric}_ci_low"], values[f"{metric}_ci_high"] = interval(distribution[k])
        rows.append(values)
    return pd.DataFrame(rows)


def compare(predictions: pd.DataFrame, labels: np.ndarray, positive_index: int | None,
            margins: dict | None = None, contrasts: list[tuple[str, str]] | None = None,
            corrected: bool = True) -> Verdicts:
    """Intervals per variant and verdicts per pair for ONE group of runs (one split, one training size).

    predictions: one row per finished run with columns variant, seed, threshold (None/NaN: arg-max)
    and proba ((n_items, n_classes) test probabilities, rows in the order of `labels`).
    """
    labels = np.asarray(labels)
    for row in predictions.itertuples():
        if row.proba.shape[0] != len(labels):
            raise ValueError(f"{row.variant} seed {row.seed}: {row.proba.shape[0]} predictions for {len(labels)} test items")
    cache: dict = {}
    bootstrapped = {}
    for variant, runs in predictions.groupby("variant", sort=False):
        runs = runs.sort_values("seed").reset_index(drop=True)
        bootstrapped[variant] = (len(runs), *_cached_bootstrap(cache, variant, runs, labels, positive_index))
    return Verdicts(variant_intervals(bootstrapped),
                    pairwise_verdicts(predictions, labels, positive_index, cache, margins, contrasts, corrected))


