"""The variance of a mean over resamples, derived for the design that ran.

A partition design scores each variant on resamples j: partition p's test fold, a training set T_j (the whole
labelled part at full size; a drawn subset at a training size), a model seed. For a pair, d_j = A - B on resample
j. The mean over J resamples with a common variance s2 and mean pairwise correlation rho has

    Var(mean) = s2 / J x (1 + (J - 1) rho),    E[sample variance] = s2 (1 - rho),

so Var(mean) = E[sample variance] x (1/J + rho / (1 - rho)) exactly, whatever the correlations' pattern (rho is
their mean). The Nadeau-Bengio correction (2003) is this with rho / (1 - rho) = n_test / n_train, i.e. rho =
n_test / (n_train + n_test): a heuristic for k-fold's resamples, whose training sets share (k-2)/(k-1) of their
texts (Bouckaert & Frank 2004 checked it there by simulation; results/calibration/ checks it on this suite).

What bounds rho is what two resamples share. Their test folds are disjoint (different partitions) and their seeds
differ, so what correlates d_j and d_k is the training texts they share. Write the training set's effect on d as a
symmetric function of an exchangeable sample of n texts and expand it (Hoeffding's decomposition): its order-c
part's covariance between two sets sharing m of their n texts is a share C(m, c) / C(n, c) <= m / n of its
variance, so the training part's correlation is at most o = m / n, and the whole difference's (which adds test and
seed variance that are not shared) at most that. The engine reads m from the recorded indices (splits.json) and
uses, per training size,

    rho = min(o_bar, n_test / (n_train + n_test)),   o_bar = the mean training overlap of resamples in different
                                                              partitions (|T_j & T_k| / sqrt(|T_j| |T_k|)),

the Nadeau-Bengio correlation capped at what the overlap allows. At full-size k-fold o_bar is (k-2)/(k-1) or
more and the cap does not bind: the correction is Nadeau-Bengio's, unchanged (the reference's verdicts). At 50
labelled texts in partitions of 4,459 two training sets share about 1-2% of their texts, where Nadeau-Bengio's
rho is 0.96 (a factor of 22.5 on the variance); the cap is 0.01-0.02. The cross term (a text in one resample's
training set and another's test fold) is left out, as Nadeau and Bengio leave it out.

Draws (several training subsets per partition, each with its own subset and model seed): the partition's draws
share its test fold, so they are averaged first (m_p, as seeds are), and the estimate is made from the P
partition means:

    Var(mean) = s_m2 / P + rho x sigma2,   sigma2 = (MS_between + (R - 1) MS_within) / (R (1 - rho)),

(one-way analysis of variance over partitions, R draws each; with R = 1 it is s2 (1/P + rho/(1 - rho)), the
formula above), on P - 1 degrees of freedom: exact when partitions share nothing (rho = 0), whatever the draws of
one partition share. Seeds of one training set are not draws: they are averaged inside the draw.

Methods: "overlap" (the default above; it names itself "nadeau_bengio" on the rows where the cap does not bind,
and falls back to it where no training sets were recorded) and "nadeau_bengio" (the former default, uncapped,
kept as an option: `report --variance nadeau_bengio`).
"""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

VARIANCE_METHODS = ("overlap", "nadeau_bengio")
DEFAULT_VARIANCE = "overlap"


def check_variance(method: str) -> str:
    if method not in VARIANCE_METHODS:
        raise ValueError(f"variance method {method!r}: use one of {', '.join(VARIANCE_METHODS)}")
    return method


def distinct_sets(sets: dict) -> dict:
    """{partition: [the distinct training sets of its resamples]} from {(partition, seed): indices}."""
    out: dict = {}
    for (partition, _seed), indices in sets.items():
        indices = np.unique(np.asarray(indices, dtype=np.int64))
        known = out.setdefault(partition, [])
        if not any(len(k) == len(indices) and np.array_equal(k, indices) for k in known):
            known.append(indices)
    return out


def training_overlap(sets: dict) -> float | None:
    """o_bar: the mean of |T_j & T_k| / sqrt(|T_j| |T_k|) over pairs of training sets of different partitions
    (sets: {(partition, seed): data indices}); None with fewer than two partitions."""
    by_partition = distinct_sets(sets)
    names = list(by_partition)
    shares = [len(np.intersect1d(a, b, assume_unique=True)) / np.sqrt(len(a) * len(b))
              for i, p in enumerate(names) for q in names[i + 1:] for a in by_partition[p] for b in by_partition[q]
              if len(a) and len(b)]
    return float(np.mean(shares)) if shares else None


def design_correlation(overlap: float | None, test_to_train: float, method: str) -> tuple[float, str]:
    """(rho, the method that set it): Nadeau-Bengio's n_test / (n_train + n_test), capped at the overlap."""
    nadeau_bengio = test_to_train / (1 + test_to_train)
    if check_variance(method) == "nadeau_bengio" or overlap is None or overlap >= nadeau_bengio:
        return nadeau_bengio, "nadeau_bengio"
    return float(overlap), "overlap"


def design_mean_se(values: pd.DataFrame, test_to_train: float, overlap: float | None = None,
                   method: str = DEFAULT_VARIANCE) -> tuple[float, float, int, str]:
    """(mean, standard error, degrees of freedom, method) of the mean of per-resample values.

    values: columns partition, draw (one training set of the partition: seeds on one set are averaged before)
    and value. The mean is over partitions of their draws' mean."""
    draws = values.groupby(["partition", "draw"], sort=False)["value"].mean().reset_index()
    means = draws.groupby("partition", sort=False)["value"].mean()
    partitions = len(means)
    if partitions < 2:
        return float(means.mean()) if partitions else float("nan"), float("nan"), partitions - 1, method
    rho, used = design_correlation(overlap, test_to_train, method)
    spread = float(np.var(means.to_numpy(), ddof=1))
    counts = draws.groupby("partition", sort=False)["value"].size()
    per = float(counts.mean())
    if per > 1 and used == "overlap":
        within = draws.groupby("partition", sort=False)["value"].var(ddof=1).fillna(0.0)
        ms_within = float(((counts - 1) * within).sum() / max(1, int((counts - 1).sum())))
        sigma2 = (per * spread + (per - 1) * ms_within) / (per * (1 - rho))
    else:  # one training set a partition (or Nadeau-Bengio's own form): s2 / (1 - rho) of the partition means
        sigma2 = spread / (1 - rho)
    variance = spread / partitions + rho * sigma2
    return float(means.mean()), float(np.sqrt(variance)), partitions - 1, used


def resample_frame(rows: pd.DataFrame, column: str, sets: dict | None) -> pd.DataFrame:
    """(partition, draw, value) of one training size's per-run rows (partition, seed, column); sets: that size's
    {(partition, seed): indices} (sets_at). A draw is a distinct recorded training set of the partition, labelled by
    a digest of its indices, so that two variants' runs on one set pair up (seeds on the same set are one draw; none
    recorded: one draw a partition)."""
    frame = pd.DataFrame({"partition": rows["partition"].to_numpy(), "value": rows[column].to_numpy(float)})
    if not sets:
        frame["draw"] = 0
        return frame
    labels = []
    for partition, seed in zip(rows["partition"], rows["seed"]):
        indices = sets.get((partition, int(seed)))
        labels.append(_digest(indices) if indices is not None else 0)
    frame["draw"] = labels
    return frame


def _digest(indices) -> int:
    """A label of one training set, the same in every process (Python's hash of bytes is salted per process)."""
    return int.from_bytes(hashlib.blake2b(np.asarray(indices, dtype=np.int64).tobytes(), digest_size=7).digest(), "big")


def sets_at(sets: dict | None, size) -> dict:
    """{(partition, seed): indices} of one training size from {(size, partition, seed): indices}."""
    return {(p, s): v for (z, p, s), v in (sets or {}).items() if z == str(size)}


def size_overlaps(sets: dict) -> dict:
    """{size label: training_overlap} of {(size, partition, seed): indices}."""
    return {size: training_overlap(sets_at(sets, size)) for size in dict.fromkeys(z for z, _p, _s in sets)}


def variance_components(values: pd.DataFrame) -> tuple[float, float, float]:
    """(between, within, draws): the one-way analysis of variance of per-draw values over partitions (partition,
    draw, value): within = the pooled variance of a partition's draws (MS_within), between = the partition means'
    variance beyond what their draws explain (max(0, s_m2 - within / R)), draws = R, the mean draws a partition.
    With R draws, P partitions and the overlap term rho x sigma2, Var(mean) = between / P + within / (P R) +
    rho sigma2 (design_mean_se's estimate, expected)."""
    draws = values.groupby(["partition", "draw"], sort=False)["value"].mean().reset_index()
    counts = draws.groupby("partition", sort=False)["value"].size()
    per = float(counts.mean())
    means = draws.groupby("partition", sort=False)["value"].mean()
    within_each = draws.groupby("partition", sort=False)["value"].var(ddof=1).fillna(0.0)
    within = float(((counts - 1) * within_each).sum() / max(1, int((counts - 1).sum()))) if per > 1 else float("nan")
    spread = float(np.var(means.to_numpy(), ddof=1)) if len(means) > 1 else float("nan")
    between = max(0.0, spread - within / per) if per > 1 else float("nan")
    return between, within, per
