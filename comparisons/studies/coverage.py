"""Coverage of the verdicts on independent samples: do the intervals cover the true difference of two recipes?

`python -m comparisons.studies.coverage --sizes 600 300 --samples 40 --out results/calibration`

The calibration study's A/A compares a recipe with itself: the training-set term of the corrected
t-test cancels there, so it shows the test is conservative against seed noise, not that its
intervals cover the difference of two *different* recipes, which is what every real verdict is
about. This study measures that on the tweets corpus (37,197 texts after cleaning,
binarised: negative against the rest), which holds a large pool and many disjoint samples:

- two different cheap recipes (RECIPES), TF-IDF of word 1-2-grams against TF-IDF of character
  2-5-grams, each feeding the same seeded SGD logistic regression. A hard case: the two share
  their learner and training texts, so their errors are correlated and their difference is
  small; which features win depends on the training texts drawn, so the training-set term the
  correction exists for is large here, unlike in an A/A;
- the truth: the expected test-AP difference of the two recipes trained on n texts drawn from
  the population, estimated from the pool (`--draws` training draws of n texts from its training
  region, each recipe seeded by the draw, tested on its fixed test region), at each training size
  a design uses (the partitions' train + validation parts, the single split's). Its standard error
  adds the spread over draws and an item bootstrap of the test region;
- `--samples` disjoint samples of each `--sizes` texts from outside the pool, each run through the
  production verdict code: the partition design with 5 folds and with 3 x 5
  (comparisons.stats.partition_verdicts: the corrected t-test, the pair its own family), one seed a
  partition, and the single split with `--split-seeds` seeds (comparisons.stats.bootstrap: the
  two-level bootstrap). Every recipe is fitted on a design's training and validation texts (it
  needs no validation) and scored on the test texts;
- an A/A on the same samples with disjoint seeds (recipe A against itself, no seed in two
  comparisons, every comparison on its own sample: independent comparisons).

Reported per size and design: how often the 95% interval covers the true difference
(Clopper-Pearson interval), how often a "better" verdict has the wrong sign, how often
"equivalent" is called (and whether the truth lies outside the margin), the verdicts' counts,
the intervals' mean width, and the A/A false-positive rate. Deterministic given its arguments.
Nothing here is part of the code hash that makes runs comparable (comparisons/studies/).
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from common.arguments import OneLineParser
from common.corpora import load_corpus
from common.errors import UserInputError
from common.labelled_texts import LabelledTexts
from common.partitions import kfold_partitions
from common.splits import DEFAULT_SPLIT_SEED, Split, stratified_split
from comparisons.outputs import atomic_write_json, atomic_write_text
from comparisons.stats.family import DEFAULT_MARGINS
from comparisons.stats.bootstrap import pairwise_verdicts, weighted_average_precision
from comparisons.studies.calibration import partition_pair, rate

RECIPES = {"tfidf_words": {"analyzer": "word", "ngram_range": (1, 2)},
           "tfidf_chars": {"analyzer": "char_wb", "ngram_range": (2, 5)}}
POSITIVE = "negative"  # the tweets' three classes become negative (15,955) against the rest
FOLDS = 5
ITEM_RESAMPLES = 200  # the truth's item bootstrap


def binary_tweets() -> LabelledTexts:
    """The tweets corpus (the `corpora` extra), negative against neutral and positive together."""
    data = load_corpus("tweets")
    positive = np.asarray(data.labels == data.class_names.index(POSITIVE), dtype=np.int64)
    return LabelledTexts(data.texts, positive, (f"not {POSITIVE}", POSITIVE), 1, data.origin)


def fit_scores(data: LabelledTexts, train: np.ndarray, test: np.ndarray, recipe: str, seed: int) -> np.ndarray:
    """Positive-class scores on `test` of a recipe fitted on `train` (TF-IDF fitted on the training texts only)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import SGDClassifier

    vectorizer = TfidfVectorizer(sublinear_tf=True, **RECIPES[recipe])
    features = vectorizer.fit_transform([data.texts[i] for i in train])
    model = SGDClassifier(loss="log_loss", alpha=1e-4, max_iter=5, tol=None, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 5 epochs on purpose: a seeded, noisy learner
        model.fit(features, data.labels[train])
    return model.predict_proba(vectorizer.transform([data.texts[i] for i in test]))[:, 1]


def average_precision(scores: np.ndarray, positive: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    return weighted_average_precision(scores, positive, np.ones((1, len(scores))) if counts is None else counts)


def layout(n_texts: int, pool_train: int, pool_test: int, samples: int, sizes: list[int], seed: int) -> dict:
    """Index arrays: the pool's training and test regions and, for each size, `samples` disjoint samples from
    outside the pool (one seeded permutation). Refuses a size whose samples would not fit."""
    room = n_texts - pool_train - pool_test
    if room < samples:
        raise UserInputError(f"the pool ({pool_train} + {pool_test}) leaves {max(room, 0)} of {n_texts} texts for "
                             f"{samples} samples; make the pool smaller")
    for size in sizes:
        if size * samples > room:
            raise UserInputError(f"--sizes {size}: {samples} disjoint samples of {size} texts need {size * samples} "
                                 f"beside the pool, the corpus leaves {room}; the largest size is {room // samples}")
    order = np.random.default_rng(seed).permutation(n_texts)
    rest = order[pool_train + pool_test:]
    return {"pool_train": order[:pool_train], "pool_test": order[pool_train:pool_train + pool_test],
            "samples": {size: [np.sort(rest[s * size:(s + 1) * size]) for s in range(samples)] for size in sizes}}


def true_difference(data: LabelledTexts, region: dict, n_train: int, draws: int, recipes: tuple[str, str],
                    seed: int) -> dict:
    """The expected test-AP difference (A - B) of the recipes trained on n_train texts, from the pool."""
    test = region["pool_test"]
    positive = data.labels[test] == 1
    counts = np.random.default_rng([seed, 1]).multinomial(len(test), np.full(len(test), 1 / len(test)),
                                                          size=ITEM_RESAMPLES).astype(float)
    rng = np.random.default_rng([seed, n_train])
    per_draw, resampled, ap = [], np.zeros(ITEM_RESAMPLES), {name: [] for name in recipes}
    for draw in range(draws):
        train = rng.choice(region["pool_train"], size=n_train, replace=False)
        scores = {name: fit_scores(data, train, test, name, seed=draw) for name in recipes}
        for name in recipes:
            ap[name].append(float(average_precision(scores[name], positive)[0]))
        per_draw.append(ap[recipes[0]][-1] - ap[recipes[1]][-1])
        resampled += (average_precision(scores[recipes[0]], positive, counts)
                      - average_precision(scores[recipes[1]], positive, counts))
    per_draw_array = np.asarray(per_draw)
    se_draws = float(per_draw_array.std(ddof=1) / np.sqrt(draws)) if draws > 1 else float("nan")
    se_items = float((resampled / draws).std(ddof=1))
    return {"n_train": n_train, "draws": draws, "test_texts": len(test), "difference": float(per_draw_array.mean()),
            "spread_over_draws": float(per_draw_array.std(ddof=1)) if draws > 1 else float("nan"),
            "se_draws": se_draws, "se_items": se_items, "se": float(np.hypot(se_draws, se_items)),
            "ap": {name: float(np.mean(values)) for name, values in ap.items()}}


def partition_rows(data: LabelledTexts, sample: np.ndarray, sides: tuple[tuple[str, int], tuple[str, int]],
                   margin: float, repeats: int) -> list[dict]:
    """The partition design on one sample (1 x 5 and `repeats` x 5 from the same scores): the AP verdict row of
    side A against side B, each side a (recipe, seed)."""
    sub = data.subset(sample)
    partitions = kfold_partitions(sub, FOLDS, repeats, DEFAULT_SPLIT_SEED)
    values = {side: [] for side in range(2)}
    for p in partitions:
        train, test = np.concatenate([p.split.train, p.split.valid]), p.split.test
        for side, (recipe, seed) in enumerate(sides):
            values[side].append(float(average_precision(fit_scores(sub, train, test, recipe, seed),
                                                        sub.labels[test] == 1)[0]))
    rows = []
    for used in sorted({1, repeats}):
        chosen = partitions[:used * FOLDS]
        row = partition_pair(np.asarray(values[0][:len(chosen)]), np.asarray(values[1][:len(chosen)]),
                             chosen, margin)
        rows.append({"design": f"partitions {used} x {FOLDS}", "n_train": int(np.mean(
            [len(p.split.train) + len(p.split.valid) for p in chosen])), **row})
    return rows


def split_row(data: LabelledTexts, sample: np.ndarray, sides: tuple[tuple[str, list[int]], tuple[str, list[int]]],
              margin: float) -> dict:
    """The single split on one sample, each side a recipe with its seeds (paired by position): the AP verdict row of
    the production two-level bootstrap."""
    sub = data.subset(sample)
    split: Split = stratified_split(sub, DEFAULT_SPLIT_SEED)
    train, test = np.concatenate([split.train, split.valid]), split.test
    rows = []
    for name, (recipe, seeds) in reversed(list(zip(("A", "B"), sides))):  # B first: the pair's order is (A, B)
        for position, seed in enumerate(seeds):
            positive_scores = fit_scores(sub, train, test, recipe, seed)
            rows.append({"variant": name, "seed": position, "threshold": 0.5,
                         "proba": np.column_stack([1 - positive_scores, positive_scores])})
    pairs = pairwise_verdicts(pd.DataFrame(rows), sub.labels[test], 1, margins={"average_precision": margin})
    row = pairs[pairs["metric"] == "average_precision"].iloc[0]
    assert (row["variant_a"], row["variant_b"]) == ("A", "B"), "the difference is A - B, as the truth"
    return {"design": f"single split, {len(sides[0][1])} seeds", "n_train": len(train),
            **{key: row[key] for key in ("difference", "ci_low", "ci_high", "verdict")}}


def summarise(rows: pd.DataFrame, truths: dict, margin: float) -> list[dict]:
    """Per (size, design): coverage of the truth, wrong signs, equivalence calls, verdict counts, A/A rate."""
    summary = []
    for (size, design), group in rows.groupby(["size", "design"], sort=False):
        real, aa = group[group["comparison"] == "A-B"], group[group["comparison"] == "A/A"]
        truth = truths[size][int(real["truth_n_train"].iloc[0])]
        covered = ((real["ci_low"] <= truth["difference"]) & (truth["difference"] <= real["ci_high"])).sum()
        better = real["verdict"].isin(["A better", "B better"])
        wrong = (real["verdict"] == ("B better" if truth["difference"] > 0 else "A better")).sum()
        summary.append({
            "size": int(size), "design": design, "samples": len(real), "truth": truth["difference"],
            "truth_se": truth["se"], "truth_outside_margin": bool(abs(truth["difference"]) > margin),
            "coverage": rate(int(covered), len(real)), "wrong_sign": rate(int(wrong), len(real)),
            "wrong_sign_among_better": rate(int(wrong), int(better.sum())),
            "equivalent": rate(int((real["verdict"] == "equivalent").sum()), len(real)),
            "verdicts": {k: int(v) for k, v in real["verdict"].value_counts().items()},
            "mean_width": float((real["ci_high"] - real["ci_low"]).mean()),
            "mean_difference": float(real["difference"].mean()),
            "aa_different": rate(int(aa["verdict"].isin(["A better", "B better"]).sum()), len(aa)),
        })
    return summary


def truth_size(design: str, size: int) -> int:
    """The training size a design's truth is estimated at: the partitions' (K - 1) / K of the sample (train and
    validation parts), the single split's 85% (70/15/15); a partition may differ by a text or two."""
    return size * (FOLDS - 1) // FOLDS if design.startswith("partitions") else round(size * 0.85)


def run_study(data: LabelledTexts, sizes: list[int], samples: int, draws: int, pool_train: int, pool_test: int,
              split_seeds: int = 3, repeats: int = 3, margin: float = DEFAULT_MARGINS["average_precision"],
              recipes: tuple[str, str] = tuple(RECIPES), seed: int = 0) -> dict:
    """Every sample of every size through every design, the truths, and the summary. Deterministic."""
    started = time.perf_counter()
    region = layout(len(data), pool_train, pool_test, samples, sizes, seed)
    a, b = recipes
    seeds = list(range(split_seeds))
    rows, truths = [], {}
    for size in sizes:
        for s, sample in enumerate(region["samples"][size]):
            aa_a, aa_b = (list(range((2 * s + k) * split_seeds, (2 * s + k + 1) * split_seeds)) for k in (0, 1))
            comparisons = [  # A/A seeds disjoint: no seed in two comparisons
                ("A-B", partition_rows(data, sample, ((a, 0), (b, 0)), margin, repeats)),
                ("A/A", partition_rows(data, sample, ((a, 2 * s), (a, 2 * s + 1)), margin, repeats)),
                ("A-B", [split_row(data, sample, ((a, seeds), (b, seeds)), margin)]),
                ("A/A", [split_row(data, sample, ((a, aa_a), (a, aa_b)), margin)])]
            rows += [{"size": size, "sample": s, "comparison": comparison, **row,
                      "truth_n_train": truth_size(row["design"], size)}
                     for comparison, found in comparisons for row in found]
        truths[size] = {n: true_difference(data, region, n, draws, recipes, seed)
                        for n in sorted({truth_size(d, size) for d in ("partitions", "single split")})}
    frame = pd.DataFrame(rows)
    return {"recipes": list(recipes), "positive_class": POSITIVE, "texts": len(data), "sizes": sizes,
            "samples": samples, "draws": draws, "pool_train": pool_train, "pool_test": pool_test,
            "split_seeds": split_seeds, "repeats": repeats, "folds": FOLDS, "margin": margin, "seed": seed,
            "truths": {str(size): {str(n): t for n, t in by_n.items()} for size, by_n in truths.items()},
            "summary": summarise(frame, truths, margin), "seconds": round(time.perf_counter() - started, 1),
            "rows": frame}


def _rate(values: dict) -> str:
    if not values["comparisons"]:
        return "–"
    return f"{values['hits']}/{values['comparisons']} = {values['rate']:.3f} [{values['ci_low']:.3f}, {values['ci_high']:.3f}]"


def study_markdown(result: dict, command: str) -> str:
    a, b = result["recipes"]
    lines = [f"# Coverage of the verdicts on independent samples: {a} against {b}", "",
             f"Command: `{command}`. The tweets corpus ({result['texts']} texts; {result['positive_class']} against the "
             f"rest, AP of the {result['positive_class']} class). Truth: {result['draws']} training draws from a pool "
             f"region of {result['pool_train']} texts, each tested on a fixed {result['pool_test']} texts. Per size, "
             f"{result['samples']} disjoint samples from outside the pool, each through the partition design "
             f"(1 x {result['folds']} and {result['repeats']} x {result['folds']} folds, one seed a partition, "
             "comparisons.stats.partition_verdicts) and the single split "
             f"({result['split_seeds']} seeds a side, comparisons.stats.bootstrap); AP margin ±{result['margin']}, "
             f"alpha 0.05, the pair its own family. A/A: {a} against itself on the same samples, disjoint seeds "
             f"(independent comparisons). Took {result['seconds']:.0f} s.", "",
             "## The truths", "", "| sample size | training size | true ΔAP (A − B) | its standard error (draws, items) "
             "| spread over draws | mean AP A, B |", "| ---: | ---: | ---: | --- | ---: | --- |"]
    for size, by_n in result["truths"].items():
        for n, t in by_n.items():
            lines.append(f"| {size} | {n} | {t['difference']:+.4f} | {t['se']:.4f} ({t['se_draws']:.4f}, "
                         f"{t['se_items']:.4f}) | {t['spread_over_draws']:.4f} | {t['ap'][a]:.4f}, {t['ap'][b]:.4f} |")
    lines += ["", "## Coverage, signs and equivalence", "",
              "| size | design | 95% interval covers the truth | wrong-sign \"better\" (of all; of \"better\") "
              "| \"equivalent\" (truth outside the margin?) | verdicts | mean interval width | A/A called different |",
              "| ---: | --- | --- | --- | --- | --- | ---: | --- |"]
    for row in result["summary"]:
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(row["verdicts"].items()))
        lines.append(f"| {row['size']} | {row['design']} | {_rate(row['coverage'])} | {_rate(row['wrong_sign'])}; "
                     f"{_rate(row['wrong_sign_among_better'])} | {_rate(row['equivalent'])} "
                     f"({'yes' if row['truth_outside_margin'] else 'no'}) | {verdicts} | {row['mean_width']:.4f} "
                     f"| {_rate(row['aa_different'])} |")
    lines += ["", "Intervals: Clopper-Pearson, 95%. The samples are disjoint and every A/A comparison has its own "
              "seeds, so the comparisons of one row are independent; the truth is an estimate (its standard error "
              "above), so a coverage near the nominal level is read against it.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.coverage", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[600, 300], help="texts per sample (default 600 300)")
    parser.add_argument("--samples", type=int, default=40, help="disjoint samples per size (default 40)")
    parser.add_argument("--draws", type=int, default=100, help="training draws for each truth (default 100)")
    parser.add_argument("--pool-train", type=int, default=5000, help="the pool's region to draw training texts from")
    parser.add_argument("--pool-test", type=int, default=8000, help="the pool's fixed test texts")
    parser.add_argument("--split-seeds", type=int, default=3, help="seeds a side on the single split (default 3)")
    parser.add_argument("--repeats", type=int, default=3, help="the larger partition design's repeats (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="the layout's and the draws' seed")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if min(args.sizes) < 2 * FOLDS * 5 or args.samples < 1 or args.draws < 2 or args.split_seeds < 1:
            raise UserInputError(f"--sizes must be at least {2 * FOLDS * 5} texts, --samples at least 1, --draws at "
                                 "least 2 and --split-seeds at least 1")
        data = binary_tweets()
        layout(len(data), args.pool_train, args.pool_test, args.samples, args.sizes, args.seed)  # refuse early
    except UserInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = run_study(data, args.sizes, args.samples, args.draws, args.pool_train, args.pool_test, args.split_seeds,
                       args.repeats, seed=args.seed)
    command = "python -m comparisons.studies.coverage " + " ".join(argv if argv is not None else sys.argv[1:])
    rows = result.pop("rows")
    atomic_write_text(args.out / "coverage_samples.csv", rows.to_csv(index=False))  # numbers only: no text
    atomic_write_json(args.out / "coverage.json", {**result, "command": command})
    atomic_write_text(args.out / "coverage.md", study_markdown(result, command))
    print(study_markdown(result, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
