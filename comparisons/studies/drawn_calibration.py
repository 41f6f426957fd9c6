"""A/A and planted-gap power of the partition verdicts at a small training size, drawn the way the learning curve
now draws: both variance estimates side by side.

`python -m comparisons.studies.drawn_calibration --train-size 100 --draws 5 --comparisons 100 --out results/calibration`

The calibration study at 100 labels (results/calibration/sgd_tfidf_n100.md) found the Nadeau-Bengio correction
calibrated (A/A 0/40) and powerless: a weakened recipe 0.24 AP worse was missed 40 times in 40, because its
factor n_test/n_train (11.4 at 100 labels) models training sets that share most of their texts. This study runs
what the curve runs now: the SMS data in 5 stratified folds; in each comparison, each partition trains `--draws`
draws, each its own training subset of n labelled texts (common/splits.budget_parts with the draw's
subset seed) and its own model seeds, distinct across comparisons, partitions and draws; the production verdict
code (comparisons.stats.partition_verdicts.recipe_verdicts with the recorded training sets, the pair its own family)
under "overlap" (new) and "nadeau_bengio" (old). Per comparison, on the same draws:

- A/A: the recipe (TF-IDF fitted on the training texts, SGD logistic regression, 3 epochs: seed-noisy) against
  itself with other model seeds: what a verdict calls different that is not;
- planted gap: the recipe against the weakened recipe (TF-IDF kept to its 20 most frequent terms), other model
  seeds: power (the weakened recipe called worse) and the mean gap.

Comparisons use disjoint seeds and subsets of their own, so given the data they are independent (Clopper-Pearson
intervals). All comparisons share the one SMS corpus and its folds: the rates are about this data, not a
population of corpora (results/calibration/curve_coverage.md samples the tweets for that). Deterministic given its
arguments. Nothing here is part of the code hash that makes runs comparable (comparisons/studies/).
"""
from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from common.arguments import OneLineParser
from common.errors import UserInputError
from common.partitions import kfold_partitions
from common.splits import DEFAULT_SPLIT_SEED, Split, budget_parts
from comparisons.outputs import atomic_write_json, atomic_write_text
from comparisons.stats.design_variance import VARIANCE_METHODS
from comparisons.stats.family import DEFAULT_MARGINS
from comparisons.stats.partition_verdicts import recipe_verdicts
from comparisons.studies.calibration import SCORERS, average_precision, rate, study_data

FOLDS = 5


def seeds_of(comparison: int, partition: int, draw: int, draws: int, partitions: int = FOLDS) -> tuple[int, int, int]:
    """(subset seed, model seed of side A, model seed of side B): distinct for every comparison, partition, draw
    (partitions: how many a comparison has)."""
    unit = (comparison * partitions + partition) * draws + draw
    return 10_000_019 * (unit + 1) % 2**31, 2 * unit, 2 * unit + 1


def one_comparison(data, partitions, learner: str, comparison: int, size: int, draws: int, cache: dict):
    """(scores rows, training sets) of one comparison: A, A' (A/A) and weak on every partition and draw."""
    scorer, rows, sets = SCORERS[learner], [], {}
    for p, partition in enumerate(partitions):
        test = partition.split.test
        positive = data.labels[test] == data.positive_index
        for d in range(draws):
            subset, seed_a, seed_b = seeds_of(comparison, p, d, draws, len(partitions))
            train, valid = budget_parts(partition.split, data.labels, data.texts, size, subset_seed=subset)
            split = Split(train, valid, test, subset)
            sets[(str(size), partition.name, d)] = np.sort(np.concatenate([train, valid]))
            for variant, seed, weak in (("A", seed_a, False), ("A2", seed_b, False), ("weak", seed_b, True)):
                ap = average_precision(scorer(data, split, seed, weak, cache), positive)
                rows.append({"partition": partition.name, "variant": variant, "seed": d, "train_size": str(size),
                             "n_train": size, "n_test": len(test), "average_precision": ap,
                             "macro_f1_at_threshold": ap, "accuracy_at_threshold": ap})
    return pd.DataFrame(rows), sets


def verdict_row(scores: pd.DataFrame, sets: dict, a: str, b: str, variance: str, margin: float) -> dict:
    both = scores[scores["variant"].isin([a, b])]
    _, pairs = recipe_verdicts(both, {"average_precision": margin}, [b, a], training_sets=sets, variance=variance)
    row = pairs.loc[pairs["metric"] == "average_precision"].iloc[0]
    return {key: row[key] for key in ("difference", "ci_low", "ci_high", "verdict", "variance_method",
                                      "training_overlap", "standard_error")}


def run_study(learner: str, size: int, draws: int, comparisons: int, limit_per_class: int | None = None,
              margin: float = DEFAULT_MARGINS["average_precision"]) -> dict:
    data = study_data(limit_per_class)
    partitions = kfold_partitions(data, FOLDS, 1, DEFAULT_SPLIT_SEED)
    started, samples, cache = time.perf_counter(), [], {}
    for comparison in range(comparisons):
        scores, sets = one_comparison(data, partitions, learner, comparison, size, draws, cache)
        cache.clear()
        for variance in VARIANCE_METHODS:
            for kind, a, b in (("A/A", "A", "A2"), ("planted", "A", "weak")):
                samples.append({"comparison": comparison, "variance": variance, "kind": kind,
                                **verdict_row(scores, sets, a, b, variance, margin)})
    frame = pd.DataFrame(samples)
    summary = {}
    for variance, rows in frame.groupby("variance", sort=False):
        aa, planted = rows[rows["kind"] == "A/A"], rows[rows["kind"] == "planted"]
        summary[variance] = {
            "aa_different": rate(int(aa["verdict"].isin(["A better", "B better"]).sum()), len(aa)),
            "planted_found": rate(int((planted["verdict"] == "A better").sum()), len(planted)),
            "planted_wrong_sign": rate(int((planted["verdict"] == "B better").sum()), len(planted)),
            "mean_interval_width": float((planted["ci_high"] - planted["ci_low"]).mean()),
            "intervals_outside_scale": int(((rows["ci_low"] < -1) | (rows["ci_high"] > 1)).sum()),
            "methods": rows["variance_method"].value_counts().to_dict()}
    gap = frame[(frame["kind"] == "planted") & (frame["variance"] == "overlap")]
    return {"learner": learner, "train_size": size, "draws": draws, "comparisons": comparisons, "folds": FOLDS,
            "texts": len(data), "margin": margin, "mean_planted_gap": float(gap["difference"].mean()),
            "mean_training_overlap": float(gap["training_overlap"].mean()), "summary": summary,
            "seconds": round(time.perf_counter() - started, 1)}, frame


def study_markdown(result: dict, command: str) -> str:
    def cell(values: dict) -> str:
        return f"{values['hits']}/{values['comparisons']} = {values['rate']:.3f} [{values['ci_low']:.3f}, {values['ci_high']:.3f}]"

    lines = [f"# A/A and planted gap at {result['train_size']} labelled texts, {result['draws']} draws a partition",
             "", f"Command: `{command}`. The SMS data ({result['texts']} texts), {result['folds']} folds, "
             f"{result['comparisons']} comparisons of disjoint seeds and subsets, {result['draws']} draws per partition "
             f"(each its own subset and model seed); learner {result['learner']}; AP margin ±{result['margin']}, alpha "
             f"0.05, the pair its own family. Mean planted gap (recipe − weakened): {result['mean_planted_gap']:+.3f} AP; "
             f"mean training overlap of two partitions' draws: {result['mean_training_overlap']:.4f}. Took "
             f"{result['seconds']} s.", "",
             "| variance estimate | A/A called different | planted gap found (power) | planted gap, wrong sign | "
             "mean interval width (planted) | intervals outside [-1, 1] |", "| --- | --- | --- | --- | ---: | ---: |"]
    names = {"overlap": "overlap-capped (new)", "nadeau_bengio": "Nadeau–Bengio (old)"}
    for variance, values in result["summary"].items():
        lines.append(f"| {names[variance]} | {cell(values['aa_different'])} | {cell(values['planted_found'])} | "
                     f"{cell(values['planted_wrong_sign'])} | {values['mean_interval_width']:.4f} | "
                     f"{values['intervals_outside_scale']} |")
    return "\n".join(lines + ["", "Intervals: Clopper–Pearson, 95%. Interval bounds are those of verdicts.csv (the "
                              "t on the atanh scale where the t would leave [-1, 1])."]) + "\n"


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.drawn_calibration", description=__doc__.split("\n")[0])
    parser.add_argument("--learner", choices=tuple(SCORERS), default="sgd_tfidf")
    parser.add_argument("--train-size", type=int, default=100)
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--comparisons", type=int, default=100)
    parser.add_argument("--limit-per-class", type=int, help="the first N texts of each class (quick trials)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.draws < 1 or args.comparisons < 1:
        parser.error("--draws and --comparisons must be at least 1")
    try:
        result, samples = run_study(args.learner, args.train_size, args.draws, args.comparisons, args.limit_per_class)
    except UserInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from pathlib import Path

    out = Path(args.out)
    name = f"{args.learner}_n{args.train_size}_draws{args.draws}"
    command = "python -m comparisons.studies.drawn_calibration " + " ".join(argv if argv is not None else sys.argv[1:])
    atomic_write_json(out / f"{name}.json", {**result, "command": command})
    atomic_write_text(out / f"{name}_samples.csv", samples.to_csv(index=False, float_format="%.6g"))
    atomic_write_text(out / f"{name}.md", study_markdown(result, command))
    print(study_markdown(result, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
