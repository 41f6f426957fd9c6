"""Verdicts about recipes, from runs on repeated group-aware k-fold partitions (`--cv K --repeats R`).

A recipe is a way of training a model on data of this kind. On R x K partitions each variant is
trained on other texts and tested on other texts (every text is tested once per repeat), with its
own training randomness (seeds, and everything fitted on the training texts). A verdict here
generalises over all three: training randomness, which texts were trained on, which were tested.

The test: the corrected repeated k-fold t-test (Nadeau & Bengio 2003; Bouckaert & Frank 2004). For
a pair, d_j = A's metric - B's metric on partition j (each the mean over its seeds), j = 1..J,
J = R x K. The partitions overlap in their training texts, so the plain variance of the mean,
s^2 / J, is too small; the corrected one is s^2 x (1/J + n_test/n_train), with t on J - 1 degrees
of freedom. Equivalence within the declared margin is two one-sided tests with the same
statistic; the four verdicts and the family's Holm correction are comparisons/stats/family.py's.

With more than two classes no threshold is chosen (the runs record none): the decision rows are the
arg-max's macro-F1 and accuracy (docs/cross_corpus.md).

Which runs: each partition's runs of the plan comparable with it (comparisons/run_folder/scores.py); the
others are named in one line. Written in the top folder: scores.csv (the long scores table: one row per
partition, seed, training size, variant and metric), recipe_variants.csv (mean over partitions with its
corrected 95% interval), verdicts.csv (verdict_rules.VERDICT_COLUMNS) and verdicts.md.
"""
from __future__ import annotations

import pandas as pd

from common.splits import size_key
from common.metric_names import CALIBRATION, DESIGN_QUALITY
from comparisons.stats.contrasts import pair_order
from comparisons.stats.corrected_t import (corrected_t, design_interval,  # noqa: F401
                                          partition_pair_rows, per_partition, test_to_train)
from comparisons.stats.design_variance import DEFAULT_VARIANCE, resample_frame, sets_at, training_overlap
from comparisons.stats.family import VERDICT_COLUMNS, correct_family, in_schema
from comparisons.stats.sequential import look_rows, sequential_family

METRICS = DESIGN_QUALITY
CALIBRATION_METRICS = CALIBRATION  # verdict rows too where every run has them (lower is better)


def verdict_metrics(scores: pd.DataFrame) -> tuple[str, ...]:
    """The metrics with verdict rows: METRICS, then Brier and ECE when every run of the folder has them."""
    return METRICS + tuple(m for m in CALIBRATION_METRICS if m in scores and scores[m].notna().all())
COLUMNS = VERDICT_COLUMNS


def recipe_verdicts(scores: pd.DataFrame, margins: dict | None = None, order: list[str] | None = None,
                    contrasts: list[tuple[str, str]] | None = None,
                    folds: int | None = None, costs: tuple[str, ...] = (), training_sets: dict | None = None,
                    variance: str = DEFAULT_VARIANCE, family: str = "holm",
                    dropped=()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(variants, pairs) from partition_scores: seeds averaged within a draw, draws within a partition, tests over
    partitions with the variance of the design that ran (comparisons/stats/design_variance.py).

    Variants are summarised at the largest training size; pairs come for every size, one family over all.
    training_sets: {(size, partition, seed): the data indices each run learnt from} (None: one draw a partition,
    no overlap known: Nadeau-Bengio's correction); variance: "overlap" (default) or "nadeau_bengio"; dropped: the
    natural-order graph's nodes planned unreachable (comparisons/stats/graphical.dropped_nodes)."""
    scores = scores.copy()
    if "train_size" not in scores:
        scores["train_size"] = "all"
    found = list(dict.fromkeys(scores["variant"]))  # the plan's order first, then any other variant found
    variants = [v for v in dict.fromkeys([*(order or []), *found]) if v in set(found)]
    grouped = per_partition(scores, METRICS)
    largest = grouped[grouped["train_size"] == _largest(grouped["train_size"])]
    ratio = test_to_train(largest)
    size = _largest(grouped["train_size"])
    sets = sets_at(training_sets, size)
    overlap = training_overlap(sets) if sets else None
    variant_rows = []
    for variant in variants:
        rows = largest[largest["variant"] == variant]
        if rows.empty:
            continue
        row = {"variant": variant, "partitions": len(rows), "seeds": int(rows["seeds"].min())}
        runs = scores[(scores["variant"] == variant) & (scores["train_size"] == size)]
        methods = {}
        for metric in METRICS:
            mean, low, high, methods[metric] = design_interval(resample_frame(runs, metric, sets), ratio,
                                                               overlap, variance)
            row.update({f"{metric}_mean": mean, f"{metric}_std": float(rows[metric].std(ddof=1)),
                        f"{metric}_ci_low": low, f"{metric}_ci_high": high})
        row["interval_method"] = "; ".join(f"{m}: {v}" for m, v in methods.items() if v != "t") or "t"
        row.update({f"{cost}_median": float(pd.to_numeric(runs[cost], errors="coerce").median())
                    for cost in costs if cost in runs})  # over every run: partitions and seeds
        variant_rows.append(row)
    rows = partition_pair_rows(scores, pair_order(variants, contrasts), verdict_metrics(scores), margins, folds,
                               training_sets, variance)
    if rows.empty:
        return pd.DataFrame(variant_rows), pd.DataFrame(columns=COLUMNS)
    return pd.DataFrame(variant_rows), in_schema(correct_family(rows, contrasts, family=family, dropped=dropped))


def _largest(sizes: pd.Series):
    return max(sizes, key=size_key) if len(sizes) else "all"




def sequential_verdicts(scores: pd.DataFrame, margins: dict | None, order: list[str], contrasts, folds: int,
                        max_repeats: int, training_sets: dict | None = None,
                        variance: str = DEFAULT_VARIANCE) -> pd.DataFrame:
    """The pairs of a sequential design (`run --until-decided`, comparisons/stats/sequential.py): every look's rows
    (look k: the partitions of repeats 1..k), the group-sequential rule over the declared family, one row per
    (training size, metric, pair) at the look that decided it or else its last look, in VERDICT_COLUMNS."""

    scores = scores.copy()
    if "train_size" not in scores:
        scores["train_size"] = "all"
    found = set(scores["variant"])
    variants = [v for v in dict.fromkeys([*order, *scores["variant"]]) if v in found]
    looks = look_rows(scores, pair_order(variants, contrasts), verdict_metrics(scores), margins, folds,
                      training_sets, variance)
    if looks.empty:
        return pd.DataFrame(columns=COLUMNS)
    rows = sequential_family(looks, [folds * k for k in range(1, max_repeats + 1)], contrasts)
    return in_schema(rows)
