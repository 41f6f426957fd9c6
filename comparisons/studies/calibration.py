"""Calibration and power of the verdicts, measured: A/A runs and a planted difference.

`python -m comparisons.studies.calibration --learner torch_scratch --pool 10 --folds 5 --out results/calibration`

A test is trusted only after it is calibrated. This study trains one stochastic recipe with a pool
of seeds on (a) every partition of the `--cv` design and (b) the seed course's single split, then
compares the recipe with itself, seed a against seed b for every pair of the pool (A/A: the truth
is "no difference", so every "different" verdict is a false positive), through the suite's own
verdict code:
  - items-only (the old verdict): the paired bootstrap over the single split's test items, each side
    one trained model (comparisons.stats.bootstrap with one seed a side);
  - partitions (the new verdict): the production verdict of the partition design, end to end
    (comparisons.stats.partition_verdicts: the corrected repeated k-fold t-test and the family rule, the pair
    its own family of a difference and an equivalence hypothesis), each side one seed per partition.
Then power: the same recipe against a deliberately weakened one (the learner with a 20-word
vocabulary), seed a against seed b; the weak one must be called worse.

Pairs are disjoint by default (seeds 0-1, 2-3, ...: no seed in two comparisons, so the comparisons of
the A/A are independent given the data and their Clopper-Pearson intervals hold; a pool of 2m seeds
gives m comparisons). `--all-pairs` compares every pair of the pool, as the earlier studies
did: more comparisons from the same training, but they share seeds, so the rates are unbiased and
their intervals too narrow (say so when quoting them).

Learners: `sgd_tfidf` (TF-IDF fitted on the training texts, then logistic regression trained by
SGD, seeded: cheap, for the tests) and `torch_scratch` (the scratch encoder at a reduced budget:
1 epoch of the recipe). Single-threaded BLAS/torch is the caller's choice (`--threads`).
Nothing here is part of the code hash that makes runs comparable (comparisons/studies/).
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from common.arguments import OneLineParser
from common.datasets import DataSpec, LabelledTexts, load
from common.errors import UserInputError
from common.partitions import Partition, kfold_partitions
from common.splits import DEFAULT_SPLIT_SEED, Split, budget_parts, stratified_split
from comparisons.outputs import atomic_write_json, atomic_write_text
from comparisons.stats.partition_verdicts import recipe_verdicts
from comparisons.stats.family import ALPHA, DEFAULT_MARGINS, four_way
from comparisons.stats.bootstrap import N_RESAMPLES, bootstrap_p, item_counts, weighted_average_precision

WEAK_VOCABULARY = 20  # the planted difference: TF-IDF kept to its 20 most frequent terms
LEARNERS = ("sgd_tfidf", "torch_scratch")


def subset(data: LabelledTexts, indices: np.ndarray) -> LabelledTexts:
    return LabelledTexts([data.texts[i] for i in indices], data.labels[indices], data.class_names, data.positive_index)


def sgd_tfidf_scores(data: LabelledTexts, split: Split, seed: int, weak: bool, cache: dict) -> np.ndarray:
    """Positive-class scores on split.test: TF-IDF on the training texts (cached per split), SGD seeded."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import SGDClassifier

    key = (split.sha256, weak)
    if key not in cache:
        vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True,
                                     max_features=WEAK_VOCABULARY if weak else None)
        train = vectorizer.fit_transform([data.texts[i] for i in split.train])
        cache[key] = (train, vectorizer.transform([data.texts[i] for i in split.test]))
    train, test = cache[key]
    model = SGDClassifier(loss="log_loss", alpha=1e-4, max_iter=3, tol=None, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 3 epochs on purpose: a noisy learner
        model.fit(train, data.labels[split.train])
    return model.predict_proba(test)[:, list(model.classes_).index(data.positive_index)]


def torch_scratch_scores(data: LabelledTexts, split: Split, seed: int, weak: bool, cache: dict) -> np.ndarray:
    """The scratch encoder's recipe at 1 epoch (the weak one: a 20-piece vocabulary), seeded."""
    from backends.base import build
    from common.recipe import RECIPE

    model = build("torch_scratch", seed=seed, device="cpu", progress=False, tokenizer=RECIPE["tokenizer"],
                  config={"epochs": 1}, vocab_max_size=WEAK_VOCABULARY if weak else 8000,
                  choose_on="validation")  # as the committed calibration ran (before the small-budget rule)
    model.fit(subset(data, split.train), subset(data, split.valid))
    return model.predict_proba([data.texts[i] for i in split.test])[:, data.positive_index]


SCORERS = {"sgd_tfidf": sgd_tfidf_scores, "torch_scratch": torch_scratch_scores}


def average_precision(scores: np.ndarray, positive: np.ndarray) -> float:
    return float(weighted_average_precision(scores, positive, np.ones((1, len(scores))))[0])


def disjoint_pairs(pool: int) -> list[tuple[int, int]]:
    """(0, 1), (2, 3), ...: no seed in two comparisons (an odd pool's last seed is left out)."""
    return [(2 * k, 2 * k + 1) for k in range(pool // 2)]


def partition_pair(a: np.ndarray, b: np.ndarray, partitions: list, margin: float) -> dict:
    """The production verdict of A against B from their test APs on `partitions` (recipe_verdicts: the corrected
    t-test with each partition's n_test / n_train, the pair its own family): the AP row's difference, 95% interval,
    p values and verdict."""
    frame = pd.DataFrame([{"partition": p.name, "variant": name, "seed": 0,
                           "n_train": len(p.split.train) + len(p.split.valid), "n_test": len(p.split.test),
                           "average_precision": values[j], "macro_f1_at_threshold": values[j],
                           "accuracy_at_threshold": values[j]}
                          for name, values in (("B", b), ("A", a)) for j, p in enumerate(partitions)])
    _, pairs = recipe_verdicts(frame, {"average_precision": margin}, ["B", "A"])
    row = pairs.loc[pairs["metric"] == "average_precision"].iloc[0]
    return {key: (row[key] if isinstance(row[key], str) else float(row[key]))
            for key in ("difference", "ci_low", "ci_high", "p_holm", "p_equivalence_holm", "verdict")}


def rate(hits: int, total: int) -> dict:
    if total == 0:
        return {"hits": 0, "comparisons": 0, "rate": float("nan"), "ci_low": float("nan"), "ci_high": float("nan")}
    interval = binomtest(hits, total).proportion_ci(confidence_level=0.95, method="exact")
    return {"hits": hits, "comparisons": total, "rate": hits / total if total else float("nan"),
            "ci_low": float(interval.low), "ci_high": float(interval.high)}


def at_size(data: LabelledTexts, split: Split, train_size: int | None) -> Split:
    """The split a run at `train_size` labelled texts sees (the production rule, common/splits.budget_parts: the
    validation part carved from the n texts); the test part unchanged. None: the split itself."""
    if train_size is None:
        return split
    train, valid = budget_parts(split, data.labels, data.texts, train_size)
    return Split(train, valid, split.test, split.seed)


def pool_scores(data: LabelledTexts, learner: str, pool: int, folds: int, repeats: int = 1,
                split_seed: int = DEFAULT_SPLIT_SEED, planted: bool = True, train_size: int | None = None,
                seeds: list[int] | None = None) -> dict:
    """Every seed of the pool (and the weak recipe's) scored: test AP on every partition ({weak: (pool, J)}) and
    the single split's bootstrap APs ({weak: (pool, B)}), with the partitions and the seconds taken. train_size:
    every partition and the split at that many labelled texts (training and validation together). seeds: only
    these seeds of the pool, in this order (rows follow them)."""
    seeds = list(range(pool)) if seeds is None else seeds
    scorer, cache = SCORERS[learner], {}
    partitions = [Partition(p.repeat, p.fold, at_size(data, p.split, train_size))
                  for p in kfold_partitions(data, folds, repeats, split_seed)]
    started = time.perf_counter()
    ap = {weak: np.array([[average_precision(scorer(data, p.split, seed, weak, cache),
                                             data.labels[p.split.test] == data.positive_index)
                           for p in partitions] for seed in seeds]) for weak in (False, True)[:1 + planted]}
    split = at_size(data, stratified_split(data, split_seed), train_size)
    positive = data.labels[split.test] == data.positive_index
    counts = item_counts(len(split.test), N_RESAMPLES)
    items = {weak: np.array([weighted_average_precision(scorer(data, split, seed, weak, cache), positive, counts)
                             for seed in seeds]) for weak in (False, True)[:1 + planted]}
    return {"ap": ap, "items": items, "partitions": partitions, "seconds": time.perf_counter() - started}


# The other kernels of the A/A across kernels: oneDNN capped at AVX2, MKL in its conditional-numerical-
# reproducibility mode. They act when a library starts, so that side is scored in a child process.
OTHER_KERNELS = {"ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "COMPATIBLE"}


def study_data(limit_per_class: int | None = None) -> LabelledTexts:
    """The shipped SMS data, or its first N texts of each class (quick trials)."""
    return load(DataSpec(limit_per_class=limit_per_class))


def scores_under_other_kernels(learner: str, pool: int, folds: int, repeats: int, split_seed: int,
                               threads: int, limit_per_class: int | None = None, seeds: list[int] | None = None) -> dict:
    """pool_scores (the recipe alone; only `seeds` of the pool when given) computed by a child process of this
    study under OTHER_KERNELS: {"seeds": [...], "ap": {False: rows}, "items": {False: rows}}, rows in seeds' order."""
    seeds = list(range(pool)) if seeds is None else seeds
    import os
    import subprocess
    import tempfile

    from comparisons.comparability import ROOT
    from comparisons.run.measure import thread_environment

    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / "scores.json"
        command = [sys.executable, "-m", "comparisons.studies.calibration", "--learner", learner, "--pool", str(pool),
                   "--folds", str(folds), "--repeats", str(repeats), "--threads", str(threads), "--no-planted",
                   "--out", scratch, "--scores-only", str(target), "--seeds", ",".join(map(str, seeds))]
        if limit_per_class:
            command += ["--limit-per-class", str(limit_per_class)]
        env = {**os.environ, **thread_environment(threads), **OTHER_KERNELS,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        subprocess.run(command, env=env, check=True)
        saved = json.loads(target.read_text())
    return {"seeds": seeds, "ap": {False: np.asarray(saved["ap"])}, "items": {False: np.asarray(saved["items"])}}


def run_study(data: LabelledTexts, learner: str, pool: int, folds: int, repeats: int = 1,
              split_seed: int = DEFAULT_SPLIT_SEED, margin: float = DEFAULT_MARGINS["average_precision"],
              planted: bool = True, other_kernels: dict | None = None, all_pairs: bool = False,
              train_size: int | None = None) -> dict:
    """Every seed of the pool (and the weak recipe's) on every partition and on the single split, then the
    A/A and A/B rates of each verdict. Deterministic given its arguments. `other_kernels`: the pool's scores
    under other kernels (scores_under_other_kernels, at least every pair's side B): A/A pairs then set seed a
    here against seed b there, and each seed scored there against itself here (kernels alone)."""
    scored = pool_scores(data, learner, pool, folds, repeats, split_seed, planted, train_size)
    ap, items, partitions, seconds = scored["ap"], scored["items"], scored["partitions"], scored["seconds"]

    def partition_verdict(a: np.ndarray, b: np.ndarray) -> str:
        return partition_pair(a, b, partitions, margin)["verdict"]

    def items_verdict(a: np.ndarray, b: np.ndarray) -> str:
        return four_way(float(np.mean(a - b)), bootstrap_p(a - b), 1.0)

    pairs = list(itertools.combinations(range(pool), 2)) if all_pairs else disjoint_pairs(pool)
    aa = {"partitions": [partition_verdict(ap[False][a], ap[False][b]) for a, b in pairs],
          "items_only": [items_verdict(items[False][a], items[False][b]) for a, b in pairs]}
    crossed = ([(a, b) for a in range(pool) for b in range(pool) if a != b] if all_pairs else pairs) if planted else []
    ab = {"partitions": [partition_verdict(ap[False][a], ap[True][b]) for a, b in crossed],
          "items_only": [items_verdict(items[False][a], items[True][b]) for a, b in crossed]}
    across = {}
    if other_kernels is not None:  # one side of each A/A pair under the other kernels
        there_seeds = list(other_kernels["seeds"])
        there = dict(zip(there_seeds, other_kernels["ap"][False]))
        there_items = dict(zip(there_seeds, other_kernels["items"][False]))
        across_pairs = {"partitions": [partition_verdict(ap[False][a], there[b]) for a, b in pairs],
                        "items_only": [items_verdict(items[False][a], there_items[b]) for a, b in pairs]}
        kernels_only = [partition_verdict(ap[False][s], there[s]) for s in there_seeds]
        moves = np.abs(ap[False][there_seeds] - other_kernels["ap"][False])  # (seeds there, J): same seed, partition
        seed_moves = np.abs(np.array([ap[False][a] - ap[False][b] for a, b in pairs]))
        across = {"aa_across_kernels_different": {name: rate(sum(v in ("A better", "B better") for v in verdicts),
                                                             len(verdicts)) for name, verdicts in across_pairs.items()},
                  "same_seed_across_kernels_different": rate(sum(v in ("A better", "B better") for v in kernels_only),
                                                             len(kernels_only)),
                  "kernel_move_ap": {"mean": float(moves.mean()), "max": float(moves.max()),
                                     "exact_share": float((moves <= 1e-9).mean())},
                  "seed_move_ap": {"mean": float(seed_moves.mean()), "max": float(seed_moves.max())},
                  "other_kernels": OTHER_KERNELS}
    return {
        **across, "learner": learner, "pool": pool, "pairs": "all" if all_pairs else "disjoint",
        "train_size": train_size, "folds": folds, "repeats": repeats, "split_seed": split_seed,
        "alpha": ALPHA, "margin": margin, "texts": len(data), "fit_and_score_seconds": round(seconds, 1),
        "mean_ap": {"recipe": float(ap[False].mean()), "weakened": float(ap[True].mean()) if planted else None},
        "aa_different": {name: rate(sum(v in ("A better", "B better") for v in verdicts), len(verdicts))
                         for name, verdicts in aa.items()},
        "aa_equivalent": {name: rate(sum(v == "equivalent" for v in verdicts), len(verdicts))
                          for name, verdicts in aa.items()},
        "ab_weak_called_worse": {name: rate(sum(v == "A better" for v in verdicts), len(verdicts))
                                 for name, verdicts in ab.items()} if planted else None,
    }


def study_markdown(result: dict, command: str) -> str:
    def row(name: str, values: dict) -> str:
        return f"| {name} | {values['hits']} / {values['comparisons']} | {values['rate']:.3f} [{values['ci_low']:.3f}, {values['ci_high']:.3f}] |"

    lines = [f"# Calibration of the verdicts: {result['learner']}", "",
             f"Command: `{command}`. {result['texts']} texts"
             + (f" (each partition and the split at {result['train_size']} labelled texts, training and validation "
                "together; the test parts unchanged)" if result.get("train_size") else "")
             + f", a pool of {result['pool']} seeds, "
             f"{result['repeats']} x {result['folds']}-fold partitions and the single split (seed {result['split_seed']}); "
             f"alpha {result['alpha']}, AP margin ±{result['margin']}. Training and scoring took "
             f"{result['fit_and_score_seconds']} s. Mean test AP over partitions: recipe {result['mean_ap']['recipe']:.4f}"
             + (f", weakened {result['mean_ap']['weakened']:.4f}" if result["mean_ap"]["weakened"] is not None else "")
             + (". Every pair of the pool compared (`--all-pairs`): pairs share seeds, so the intervals "
                "(Clopper-Pearson) treat the comparisons as independent, which they are not quite."
                if result.get("pairs") == "all" else
                ". Disjoint seed pairs (0-1, 2-3, ...): no seed in two comparisons, so the comparisons are "
                "independent given the data and the intervals (Clopper-Pearson) hold for it."), "",
             "| A/A: called different (false positives) | count | rate [95% interval] |", "| --- | --- | --- |",
             row("items-only bootstrap, single split (old)", result["aa_different"]["items_only"]),
             row("corrected t-test over partitions (new)", result["aa_different"]["partitions"]), "",
             "| A/A: called equivalent within the margin | count | rate [95% interval] |", "| --- | --- | --- |",
             row("corrected t-test over partitions (new)", result["aa_equivalent"]["partitions"]), ""]
    if "aa_across_kernels_different" in result:  # --other-kernels
        kernels = " ".join(f"{k}={v}" for k, v in result["other_kernels"].items())
        moves, seeds = result["kernel_move_ap"], result["seed_move_ap"]
        lines += [f"| A/A across kernels (side B: {kernels}): called different | count | rate [95% interval] |",
                  "| --- | --- | --- |",
                  row("items-only bootstrap, single split (old)", result["aa_across_kernels_different"]["items_only"]),
                  row("corrected t-test over partitions (new)", result["aa_across_kernels_different"]["partitions"]),
                  row("the same seed, kernels alone (partitions)", result["same_seed_across_kernels_different"]), "",
                  f"The kernels alone move a partition's test AP by {moves['mean']:.6f} on average (at most "
                  f"{moves['max']:.6f}; {moves['exact_share']:.0%} of seed x partition cells unmoved); another seed "
                  f"moves it by {seeds['mean']:.6f} on average (at most {seeds['max']:.6f}).", ""]
    if result["ab_weak_called_worse"] is None:
        return "\n".join(lines + ["(No planted difference in this study: `--no-planted`.)", ""])
    lines += ["| planted difference: weakened recipe called worse (power) | count | rate [95% interval] |",
             "| --- | --- | --- |",
             row("items-only bootstrap, single split (old)", result["ab_weak_called_worse"]["items_only"]),
             row("corrected t-test over partitions (new)", result["ab_weak_called_worse"]["partitions"]), ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.calibration", description=__doc__.split("\n")[0])
    parser.add_argument("--learner", choices=LEARNERS, default="sgd_tfidf")
    parser.add_argument("--pool", type=int, default=10,
                        help="seeds per recipe; A/A comparisons = pool / 2 (disjoint pairs) or pool x (pool-1) / 2")
    parser.add_argument("--all-pairs", action="store_true",
                        help="compare every pair of the pool (pairs share seeds) instead of disjoint pairs")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-planted", action="store_true", help="skip the planted difference (the A/A part only)")
    parser.add_argument("--other-kernels", action="store_true",
                        help="A/A across kernels: side B of each pair scored in a child process under "
                             "ONEDNN_MAX_CPU_ISA=AVX2 MKL_CBWR=COMPATIBLE; writes LEARNER_kernels.{json,md}")
    parser.add_argument("--limit-per-class", type=int, help="the first N texts of each class (quick trials)")
    parser.add_argument("--train-size", type=int,
                        help="every partition and the split at N labelled texts (training and validation together, "
                             "the learning curve's rule); writes LEARNER_nN.{json,md}")
    parser.add_argument("--scores-only", type=Path, help=argparse.SUPPRESS)  # the child's: write pool_scores as JSON
    parser.add_argument("--seeds", help=argparse.SUPPRESS)  # the child's: the pool's seeds it scores, "1,3,5"
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.pool < 2:
        print("error: --pool must be at least 2 (A/A compares two seeds)", file=sys.stderr)
        return 2
    if args.other_kernels and args.train_size:
        print("error: --other-kernels and --train-size do not combine; run them apart", file=sys.stderr)
        return 2
    if args.learner == "torch_scratch":
        import torch
        torch.set_num_threads(args.threads)
    if args.scores_only:  # the child of --other-kernels: the recipe's pool scores under this process's kernels
        seeds = [int(seed) for seed in args.seeds.split(",")] if args.seeds else None
        scored = pool_scores(study_data(args.limit_per_class), args.learner, args.pool, args.folds, args.repeats,
                             planted=False, seeds=seeds)
        atomic_write_text(args.scores_only, json.dumps({"ap": scored["ap"][False].tolist(),  # full precision: a kernel
                                                        "items": scored["items"][False].tolist()}))  # moves the last bits
        return 0
    # disjoint pairs: only each pair's side B is scored under the other kernels (all pairs: every seed)
    side_b = None if args.all_pairs else [b for _, b in disjoint_pairs(args.pool)]
    other = scores_under_other_kernels(args.learner, args.pool, args.folds, args.repeats, DEFAULT_SPLIT_SEED,
                                       args.threads, args.limit_per_class, side_b) if args.other_kernels else None
    try:
        result = run_study(study_data(args.limit_per_class), args.learner, args.pool, args.folds, args.repeats,
                           planted=not args.no_planted, other_kernels=other, all_pairs=args.all_pairs,
                           train_size=args.train_size)
    except UserInputError as exc:  # a training size that does not fit the partitions
        print(f"error: {exc}", file=sys.stderr)
        return 2
    command = "python -m comparisons.studies.calibration " + " ".join(argv if argv is not None else sys.argv[1:])
    name = args.learner + ("_kernels" if args.other_kernels else "") + (f"_n{args.train_size}" if args.train_size else "")
    atomic_write_json(args.out / f"{name}.json", {**result, "command": command})
    atomic_write_text(args.out / f"{name}.md", study_markdown(result, command))
    print(study_markdown(result, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
