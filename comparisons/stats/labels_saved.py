"""Labels saved by pretraining, read off the learning curves of a partition design.

For each pretrained recipe and training size: how many labelled texts the best recipe without
pretraining needs to reach the same test AP, read off that recipe's curve on the same partition
(interpolated linearly in log size between the sizes measured; Hernandez et al. 2021 call the
difference "effective data transferred"). Per partition, then summarised over partitions: the
geometric mean with a 95% interval from the corrected repeated k-fold t-test on log size (the
partitions share training texts, as for every verdict). Where the curve never reaches the target on a
partition, that partition needs "more than the largest size" and no interval is given; where the
target is at or below the curve's value at its smallest size, it needs "at most the smallest size". A
finite reading lies between the smallest and largest sizes measured, so its interval is clipped to them
(the reading says where).

The best recipe without pretraining: the one with the highest mean test AP over every size and
partition (named in the table). Pretrained recipes: the hf_bert variants (a pretrained MiniLM).

  labels_saved.csv   one row per (pretrained recipe, size): labelled texts it used, the baseline, the texts the
                     baseline needs (geometric mean and interval, or the reason there is none), partitions
                     reaching the target, and the ratio needed / used
  figures/labels_saved.png   the texts needed against the texts used, log-log, the diagonal "no saving"
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from scipy.stats import t as student_t

from common.metric_names import PRIMARY
from comparisons.stats.design_variance import DEFAULT_VARIANCE, design_mean_se

PRETRAINED_BACKENDS = ("hf_bert",)
METRIC = PRIMARY
LABELS_SAVED_COLUMNS = ("pretrained", "train_size", "labelled_texts", "baseline", "metric", "partitions",
                        "partitions_reached", "needed", "needed_ci_low", "needed_ci_high", "ratio", "reading")


def is_pretrained(variant: str) -> bool:
    return variant.split(":")[0] in PRETRAINED_BACKENDS


def needed_size(sizes: np.ndarray, values: np.ndarray, target: float) -> float:
    """The size at which a curve (sizes ascending) first reaches `target`, linear in log size between the measured
    sizes: the smallest size when it is reached there already, inf when never."""
    sizes, values = np.asarray(sizes, dtype=float), np.asarray(values, dtype=float)
    if values[0] >= target:
        return float(sizes[0])
    for k in range(1, len(sizes)):
        if values[k] >= target:
            share = (target - values[k - 1]) / (values[k] - values[k - 1])
            return float(np.exp(np.log(sizes[k - 1]) + share * (np.log(sizes[k]) - np.log(sizes[k - 1]))))
    return float("inf")


def _curves(scores: pd.DataFrame, metric: str) -> pd.DataFrame:
    """(partition, variant, train_size) -> the metric averaged over seeds, with the labelled texts used."""
    rows = scores[scores["metric"] == metric] if "metric" in scores else scores.rename(columns={metric: "value"})
    return (rows.groupby(["partition", "variant", "train_size"], as_index=False)
            .agg(value=("value", "mean"), n_train=("n_train", "mean"), n_test=("n_test", "mean")))


def labels_saved(scores: pd.DataFrame, metric: str = METRIC, overlaps: dict | None = None,
                 variance: str = DEFAULT_VARIANCE) -> pd.DataFrame:
    """The table above from the long scores table (comparisons/run_folder/scores.py) of a design with several sizes.

    overlaps: {size label: the training overlap of its resamples} (design_variance.size_overlaps): the interval of
    the mean log size uses the design's estimate (design_variance.design_mean_se, one value a partition, its draws
    averaged: the overlap bound times the draws, a bound for the means of R draws)."""
    curves = _curves(scores, metric)
    if curves["train_size"].nunique() < 2:
        return pd.DataFrame(columns=LABELS_SAVED_COLUMNS)
    plain = [v for v in dict.fromkeys(curves["variant"]) if not is_pretrained(v)]
    pretrained = [v for v in dict.fromkeys(curves["variant"]) if is_pretrained(v)]
    if not plain or not pretrained:
        return pd.DataFrame(columns=LABELS_SAVED_COLUMNS)
    baseline = max(plain, key=lambda v: curves.loc[curves["variant"] == v, "value"].mean())
    rows = []
    for variant in pretrained:
        own = curves[curves["variant"] == variant]
        for size, at_size in own.groupby("train_size", sort=False):
            needed, ratios = [], []
            for partition in at_size.itertuples():
                curve = curves[(curves["variant"] == baseline) & (curves["partition"] == partition.partition)]
                curve = curve.sort_values("n_train")
                if len(curve) < 2:
                    continue
                needed.append(needed_size(curve["n_train"].to_numpy(), curve["value"].to_numpy(), partition.value))
                ratios.append(float(partition.n_test / partition.n_train))
            needed_array = np.asarray(needed)
            used = float(at_size["n_train"].mean())
            smallest = float(curves.loc[curves["variant"] == baseline, "n_train"].min())
            largest = float(curves.loc[curves["variant"] == baseline, "n_train"].max())
            row = {"pretrained": variant, "train_size": size, "labelled_texts": int(round(used)), "baseline": baseline,
                   "metric": metric, "partitions": len(needed_array),
                   "partitions_reached": int(np.isfinite(needed_array).sum()), "needed": float("nan"),
                   "needed_ci_low": float("nan"), "needed_ci_high": float("nan"), "ratio": float("nan")}
            if len(needed_array) == 0:
                row["reading"] = "no baseline curve on these partitions"
            elif not np.isfinite(needed_array).all():
                unreached = int((~np.isfinite(needed_array)).sum())
                row["reading"] = (f"more than the largest size on {unreached} of {len(needed_array)} partitions")
            else:
                logs = np.log(needed_array)
                overlap = (overlaps or {}).get(str(size))
                draws = scores.loc[(scores["variant"] == variant) & (scores["train_size"] == size), "seed"].nunique()
                frame = pd.DataFrame({"partition": range(len(logs)), "draw": 0, "value": logs})
                mean, se, df, _ = design_mean_se(frame, float(np.mean(ratios)),
                                                 None if overlap is None else min(1.0, overlap * max(1, draws)), variance)
                half = float(student_t.ppf(0.975, df) * se) if df >= 1 else float("nan")
                low, high = mean - half, mean + half
                # a finite reading lies between the smallest and the largest size measured, by construction: the
                # interval is clipped to them (beyond, the curve says nothing), and the reading says so
                clipped = np.exp(low) < smallest or np.exp(high) > largest
                row.update(needed=float(np.exp(mean)), needed_ci_low=float(max(np.exp(low), smallest)),
                           needed_ci_high=float(min(np.exp(high), largest)), ratio=float(np.exp(mean) / used))
                row["reading"] = ("at most the smallest size" if np.all(needed_array <= smallest)
                                  else "read off the curve") + ("; interval clipped to the sizes measured"
                                                                if clipped else "")
            rows.append(row)
    return pd.DataFrame(rows, columns=LABELS_SAVED_COLUMNS).sort_values(["pretrained", "labelled_texts"],
                                                                         kind="stable").reset_index(drop=True)


