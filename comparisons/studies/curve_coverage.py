"""Coverage of the partition design's pair test at small training sizes, drawn as the learning curve draws them.

`python -m comparisons.studies.curve_coverage --sizes 50 100 200 --samples 100 --draws 5 --out results/calibration`

At a training size n the learning curve trains, in each partition, `--draws` independent draws: each its own
training subset of n labelled texts (common.splits.budget_parts with its own subset seed, the validation part
carved from the n) and its own model seed (common.splits.draw_seeds, distinct across partitions). The pair test
over partitions then needs a variance for the mean over partitions whose training sets barely overlap (two
subsets of 50 texts drawn from partitions of 4,000 share about 1% of their texts). Nadeau-Bengio's correction
("nadeau_bengio", the former default) takes s^2 x (1/J + n_test/n_train), about 100 times s^2 / J at
n = 50 with 1,000 test texts; the overlap rule ("overlap", comparisons/stats/design_variance.py) caps the
correlation at the measured overlap. coverage.py checks the design at 600 and 300 texts, one draw a partition;
this study checks both variances side by side, on the same runs, where the learning curve uses them:

- recipes: A = the scratch encoder (torch_scratch, the unstable neural recipe) at a reduced budget
  (SCRATCH_BUDGET: d_model 32, 2 heads, 1 layer, feed-forward 128, 32-token inputs, 40 optimisation steps at
  every size, i.e. 5 epochs of 8 batches up to 256 texts; the recipe's tokenizer, learning rate, pooling and
  dropout), fitted on the draw's training part, its validation part choosing the epoch kept; about 0.5 s of
  one core a training here, 15-20 s a sample of 25 draws; B = TF-IDF of word 1-2-grams and
  the seeded SGD logistic regression (coverage.fit_scores), fitted on the training and validation texts
  together (it needs no validation). Both see the same n labelled texts;
- data: the tweets corpus (coverage.binary_tweets: negative against the rest, 37,197 texts), cut by one seeded
  permutation into a truth training region (`--truth-train`), a truth test region (`--truth-test`) and the
  sample region (the rest);
- per size and sample: `--sample-size` texts drawn from the sample region (seeded by size and sample), 5
  stratified group-aware folds (common.partitions.kfold_partitions, test folds of about 1,000 texts), and in
  partition i the draws of draw_seeds(i, draws), each trained with its model seed and scored (AP) on the
  partition's test fold; the verdict through the production code (comparisons.stats.partition_verdicts.
  recipe_verdicts, the pair its own family, AP margin DEFAULT_MARGINS) twice, variance="overlap" and
  variance="nadeau_bengio", with the training sets the runs learnt from. Samples of one size overlap (100 x
  5,000 texts do not fit in the region): two share sample_size^2 / region texts on average (the output says
  how many), so the comparisons of one row are not quite independent;
- an A/A on the same partitions and draws: B against B with disjoint model seeds (seed s against s + AA_OFFSET,
  the same training texts); the truth is 0;
- the truth per size: the expected test-AP difference A - B of the recipes trained on n texts drawn from the
  truth training region by the same budget rule (`--truth-draws` draws, each recipe seeded by the draw), tested
  on the fixed truth test region; its standard error adds the spread over draws and an item bootstrap of the
  test region (as coverage.true_difference).

Reported per size and variance: how often the 95% interval covers the truth (Clopper-Pearson interval), how
often a "better" verdict has the wrong sign, how often the A/A is called different, the verdicts' counts, the
intervals' mean width and how many leave [-1, 1] (AP differences cannot). Two worker processes over samples and
truth draws (`--workers`), each with torch and BLAS at one thread; every task is a function of its arguments
only, so the results do not depend on scheduling. Deterministic given its arguments. Nothing here is part of
the code hash that makes runs comparable (comparisons/studies/).

Time: a sample (5 partitions x 5 draws x 3 fits) took 14, 16 and 20 CPU-seconds at n = 50, 100, 200 on this
suite's 2-core AMD EPYC, a truth draw (scored on 8,000 texts) about 2; the command above is some 5,500
CPU-seconds, 46 minutes on two free cores (twice that when another job holds a core). `--draws 3` takes 60%.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from common.arguments import OneLineParser
from common.errors import UserInputError
from common.labelled_texts import LabelledTexts
from common.partitions import VALID_FOLDS, kfold_partitions
from common.splits import Split, budget_parts, draw_seeds, subset_seed
from comparisons.numerics import cpu_facts
from comparisons.outputs import atomic_write_json, atomic_write_text
from comparisons.stats.family import DEFAULT_MARGINS
from comparisons.stats.partition_verdicts import recipe_verdicts, sequential_verdicts
from comparisons.studies.calibration import rate
from comparisons.studies.coverage import ITEM_RESAMPLES, average_precision, binary_tweets, fit_scores
from comparisons.studies.curve_coverage_markdown import study_markdown

SCRATCH_BUDGET = {"d_model": 32, "num_heads": 2, "num_layers": 1, "ff_dim": 128, "max_len": 32, "min_steps": 40}
LINEAR = "tfidf_words"
RECIPES = {"A": f"torch_scratch ({', '.join(f'{k} {v}' for k, v in SCRATCH_BUDGET.items())})",
           "B": f"{LINEAR} + SGD logistic regression"}
FOLDS = 5
METHODS = ("overlap", "nadeau_bengio")
SEQUENTIAL = "sequential"  # with --repeats R > 1: the group-sequential rule (run --until-decided) beside them
AA_OFFSET = 1_000_000  # the A/A's second side: model seed s + AA_OFFSET (no seed on both sides)
TRUTH_CHUNK = 10  # truth draws per worker task
THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1",
           "TOKENIZERS_PARALLELISM": "false"}  # the workers': one thread each (the WordPiece trainer's too)
_STATE: dict = {}  # a worker's data and regions (_start_worker)


def layout(n_texts: int, truth_train: int, truth_test: int, sample_size: int, seed: int) -> dict:
    """The truth training and test regions and the sample region (the rest), from one seeded permutation."""
    room = n_texts - truth_train - truth_test
    if room < sample_size:
        raise UserInputError(f"the truth regions ({truth_train} + {truth_test}) leave {max(room, 0)} of {n_texts} "
                             f"texts for samples of {sample_size}; make them or --sample-size smaller")
    order = np.random.default_rng(seed).permutation(n_texts)
    cut = truth_train + truth_test
    return {"truth_train": np.sort(order[:truth_train]), "truth_test": np.sort(order[truth_train:cut]),
            "samples": np.sort(order[cut:])}


def draw_sample(region: dict, size: int, sample: int, sample_size: int, seed: int) -> np.ndarray:
    """Sample `sample` of size `size`: sample_size texts of the sample region, seeded by (seed, size, sample)."""
    return np.sort(np.random.default_rng([seed, size, sample]).choice(region["samples"], sample_size, replace=False))


def sample_split_seed(size: int, sample: int, seed: int) -> int:
    """The partitions' seed of one sample (the draws' subset seeds follow from it)."""
    return int(np.random.default_rng([seed, size, sample, 1]).integers(2**31 - 1))


def scratch_scores(data: LabelledTexts, train: np.ndarray, valid: np.ndarray, test: np.ndarray, seed: int,
                   config: dict) -> np.ndarray:
    """Positive-class scores on `test` of the scratch encoder at `config`, fitted on train (valid: the epoch)."""
    from backends.base import build
    from common.recipe import RECIPE

    model = build("torch_scratch", seed=seed, device="cpu", progress=False, tokenizer=RECIPE["tokenizer"],
                  config=config, choose_on="validation")  # as the committed coverage ran (before the small-budget rule)
    model.fit(data.subset(train), data.subset(valid))
    return model.predict_proba([data.texts[i] for i in test])[:, data.positive_index]


def sample_scores(data: LabelledTexts, size: int, draws: int, split_seed: int,
                  config: dict, repeats: int = 1, folds: int = FOLDS) -> tuple[pd.DataFrame, dict]:
    """Every run on one sample (`data`): the scores frame (variants A, B and B', the A/A's other side) and the
    training sets {(size, partition, model seed): indices learnt from, training and validation}."""
    rows, sets = [], {}
    for index, partition in enumerate(kfold_partitions(data, folds, repeats, split_seed)):
        test = partition.split.test
        positive = data.labels[test] == 1
        for seed in draw_seeds(index, draws):
            train, valid = budget_parts(partition.split, data.labels, data.texts, size, "train+valid",
                                        subset_seed=subset_seed(partition.split.seed, seed))
            learnt = np.concatenate([train, valid])
            runs = {("A", seed): scratch_scores(data, train, valid, test, seed, config),
                    ("B", seed): fit_scores(data, learnt, test, LINEAR, seed),
                    ("B'", seed + AA_OFFSET): fit_scores(data, learnt, test, LINEAR, seed + AA_OFFSET)}
            for (variant, model_seed), scores in runs.items():
                sets[(str(size), partition.name, model_seed)] = learnt
                ap = float(average_precision(scores, positive)[0])
                rows.append({"partition": partition.name, "variant": variant, "seed": model_seed,
                             "train_size": str(size), "n_train": len(learnt), "n_test": len(test),
                             "average_precision": ap, "macro_f1_at_threshold": ap, "accuracy_at_threshold": ap})
    return pd.DataFrame(rows), sets


def comparison_frames(scores: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """{"A-B": A against B, "A/A": B' (named A) against B}: the frames recipe_verdicts reads, order (A, B)."""
    aa = scores[scores["variant"].isin(["B", "B'"])].replace({"variant": {"B'": "A"}})
    return {"A-B": scores[scores["variant"].isin(["A", "B"])], "A/A": aa}


def pair_verdict(scores: pd.DataFrame, sets: dict, margin: float, method: str, repeats: int = 1,
                 folds: int = FOLDS) -> dict:
    """The production verdict of A against B (the pair its own family): the AP row's figures; method "sequential":
    the group-sequential rule over the repeats (`run --until-decided`, the overlap variance), its final row."""
    if method == SEQUENTIAL:
        pairs = sequential_verdicts(scores, {"average_precision": margin}, ["B", "A"], None, folds, repeats, sets)
    else:
        _, pairs = recipe_verdicts(scores, {"average_precision": margin}, ["B", "A"], training_sets=sets,
                                   variance=method)
    row = pairs.loc[pairs["metric"] == "average_precision"].iloc[0]
    assert (row["variant_a"], row["variant_b"]) == ("A", "B"), "the difference is A - B, as the truth"
    return {key: (row[key] if isinstance(row[key], str) else float(row[key]))
            for key in ("difference", "ci_low", "ci_high", "p_holm", "p_equivalence_holm", "verdict",
                        "variance_method", "training_overlap", "look") if key in row}


def sample_task(size: int, sample: int, draws: int, settings: dict) -> tuple[list[dict], tuple[float, float]]:
    """One sample's rows (comparison x variance method) and the seconds it took (wall, CPU)."""
    started = time.perf_counter(), time.process_time()
    data, region = _STATE["data"], _STATE["region"]
    indices = draw_sample(region, size, sample, settings["sample_size"], settings["seed"])
    repeats = settings.get("repeats", 1)
    folds = settings.get("folds", FOLDS)
    scores, sets = sample_scores(data.subset(indices), size, draws, sample_split_seed(size, sample, settings["seed"]),
                                 settings["scratch"], repeats, folds)
    rows = []
    for comparison, frame in comparison_frames(scores).items():
        means = frame.groupby("variant")["average_precision"].mean()
        for method in METHODS + ((SEQUENTIAL,) if repeats > 1 else ()):
            rows.append({"size": size, "sample": sample, "method": method, "comparison": comparison,
                         **pair_verdict(frame, sets, settings["margin"], method, repeats, folds),
                         "mean_ap_a": float(means["A"]), "mean_ap_b": float(means["B"])})
    return rows, _seconds(started)


def _seconds(started: tuple[float, float]) -> tuple[float, float]:
    return time.perf_counter() - started[0], time.process_time() - started[1]


def truth_split(region: dict, seed: int) -> Split:
    """The truth training region as a split's labelled part (validation share 1 / VALID_FOLDS, as a partition's)."""
    labelled = np.random.default_rng([seed, 2]).permutation(region["truth_train"])
    cut = len(labelled) // VALID_FOLDS
    return Split(np.sort(labelled[cut:]), np.sort(labelled[:cut]), region["truth_test"], seed)


def truth_task(size: int, first: int, count: int, settings: dict) -> tuple[dict, tuple[float, float]]:
    """Truth draws first .. first + count - 1 at `size`: each recipe's test AP and the item-bootstrap APs' sum."""
    started = time.perf_counter(), time.process_time()
    data, region = _STATE["data"], _STATE["region"]
    split, test = truth_split(region, settings["seed"]), region["truth_test"]
    positive = data.labels[test] == 1
    counts = np.random.default_rng([settings["seed"], 1]).multinomial(
        len(test), np.full(len(test), 1 / len(test)), size=ITEM_RESAMPLES).astype(float)
    out = {"ap_a": [], "ap_b": [], "resampled": np.zeros(ITEM_RESAMPLES)}
    for draw in range(first, first + count):
        train, valid = budget_parts(split, data.labels, data.texts, size, "train+valid",
                                    subset_seed=subset_seed(split.seed, draw))
        a = scratch_scores(data, train, valid, test, draw, settings["scratch"])
        b = fit_scores(data, np.concatenate([train, valid]), test, LINEAR, draw)
        out["ap_a"].append(float(average_precision(a, positive)[0]))
        out["ap_b"].append(float(average_precision(b, positive)[0]))
        out["resampled"] += average_precision(a, positive, counts) - average_precision(b, positive, counts)
    return out, _seconds(started)


def truth_of(chunks: list[dict], base_rate: float, test_texts: int) -> dict:
    """The truth of one size from its chunks (in draw order): as coverage.true_difference reports it."""
    ap_a, ap_b = (np.concatenate([c[key] for c in chunks]) for key in ("ap_a", "ap_b"))
    per_draw, draws = ap_a - ap_b, len(ap_a)
    se_draws = float(per_draw.std(ddof=1) / np.sqrt(draws))
    se_items = float((sum(c["resampled"] for c in chunks) / draws).std(ddof=1))
    return {"draws": draws, "test_texts": test_texts, "difference": float(per_draw.mean()),
            "spread_over_draws": float(per_draw.std(ddof=1)), "se_draws": se_draws, "se_items": se_items,
            "se": float(np.hypot(se_draws, se_items)), "ap": {"A": float(ap_a.mean()), "B": float(ap_b.mean())},
            "base_rate": base_rate}


def _start_worker(data: LabelledTexts, region: dict) -> None:
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    _STATE.update(data=data, region=region, limits=threadpool_limits(1))


@contextmanager
def _worker_environment():
    """One thread for BLAS and OpenMP in the workers, and the scratch encoder's vocabularies cached in a
    temporary folder (the subword tokenizer caches every training set's: thousands here), restored after."""
    with tempfile.TemporaryDirectory() as cache:
        saved = {name: os.environ.get(name) for name in (*THREADS, "AI_COURSE_DATA_DIR")}
        os.environ.update({**THREADS, "AI_COURSE_DATA_DIR": cache})
        try:
            yield
        finally:
            for name, value in saved.items():
                os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)


def run_tasks(tasks: list[tuple], data: LabelledTexts, region: dict, workers: int) -> list:
    """Each task's result, in the tasks' order; workers > 1: spawned processes (one thread each)."""
    with _worker_environment():
        if workers == 1:
            import torch

            threads = torch.get_num_threads()
            _start_worker(data, region)
            try:
                return [function(*args) for function, *args in tasks]
            finally:
                _STATE.pop("limits").restore_original_limits()
                _STATE.clear()
                torch.set_num_threads(threads)
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker,
                                 initargs=(data, region)) as pool:
            futures = [pool.submit(function, *args) for function, *args in tasks]
            return [future.result() for future in futures]


def summarise(rows: pd.DataFrame, truths: dict) -> list[dict]:
    """Per (size, method): coverage of the truth, wrong signs, A/A calls, verdicts, widths, intervals outside [-1, 1]."""
    summary = []
    for (size, method), group in rows.groupby(["size", "method"], sort=False):
        truth = truths[size]["difference"]
        entry = {"size": int(size), "method": method, "truth": truth, "truth_se": truths[size]["se"]}
        for comparison, target in (("A-B", truth), ("A/A", 0.0)):
            part = group[group["comparison"] == comparison]
            n = len(part)
            better = part["verdict"].isin(["A better", "B better"])
            entry[comparison] = {
                "samples": n, "coverage": rate(int(((part["ci_low"] <= target) & (target <= part["ci_high"])).sum()), n),
                "called_different": rate(int(better.sum()), n),
                "verdicts": {k: int(v) for k, v in part["verdict"].value_counts().items()},
                "mean_width": float((part["ci_high"] - part["ci_low"]).mean()),
                "outside_unit": int(((part["ci_low"] < -1) | (part["ci_high"] > 1)).sum()),
                "mean_difference": float(part["difference"].mean()),
                "variance_methods": {k: int(v) for k, v in part["variance_method"].value_counts().items()},
                "mean_training_overlap": float(part["training_overlap"].mean()),
                "mean_ap": {"A": float(part["mean_ap_a"].mean()), "B": float(part["mean_ap_b"].mean())}}
        wrong = int((group[group["comparison"] == "A-B"]["verdict"] == ("B better" if truth > 0 else "A better")).sum())
        entry["A-B"]["wrong_sign"] = rate(wrong, entry["A-B"]["samples"])
        entry["A-B"]["wrong_sign_among_better"] = rate(wrong, entry["A-B"]["called_different"]["hits"])
        summary.append(entry)
    return summary


def run_study(data: LabelledTexts, sizes: list[int], samples: int, draws: int, truth_draws: int = 100,
              truth_train: int = 4000, truth_test: int = 8000, sample_size: int = 5000,
              margin: float = DEFAULT_MARGINS["average_precision"], seed: int = 0, workers: int = 2,
              scratch: dict | None = None, repeats: int = 1, folds: int = FOLDS) -> dict:
    """Every sample of every size through both variances, the truths, and the summary. Deterministic.
    repeats > 1: R x 5 partitions a sample, and the sequential rule's final verdict beside the fixed ones."""
    started = time.perf_counter()
    region = layout(len(data), truth_train, truth_test, sample_size, seed)
    settings = {"sample_size": sample_size, "seed": seed, "margin": margin,
                "scratch": dict(SCRATCH_BUDGET if scratch is None else scratch), "repeats": repeats, "folds": folds}
    chunks = [(size, first, min(TRUTH_CHUNK, truth_draws - first)) for size in sizes
              for first in range(0, truth_draws, TRUTH_CHUNK)]
    tasks = ([(truth_task, *chunk, settings) for chunk in chunks]
             + [(sample_task, size, s, draws, settings) for size in sizes for s in range(samples)])
    results = run_tasks(tasks, data, region, workers)
    truth_results, sample_results = results[:len(chunks)], results[len(chunks):]
    base_rate = float(np.mean(data.labels[region["truth_test"]] == 1))
    truths = {size: truth_of([r for (z, _, _), (r, _) in zip(chunks, truth_results) if z == size], base_rate,
                             truth_test) for size in sizes}
    frame = pd.DataFrame([row for rows, _ in sample_results for row in rows])
    timing = {"sample": {}, "truth": {}}
    for (_, size, *_), (_, seconds) in zip(tasks[len(chunks):], sample_results):
        timing["sample"].setdefault(str(size), []).append(seconds)
    for (size, *_), (_, seconds) in zip(chunks, truth_results):
        timing["truth"].setdefault(str(size), []).append(seconds)
    per_sample = {size: dict(zip(("wall", "cpu"), np.mean(values, axis=0).tolist()))
                  for size, values in timing["sample"].items()}
    per_truth = {size: dict(zip(("wall", "cpu"), np.sum(values, axis=0).tolist()))
                 for size, values in timing["truth"].items()}
    room = len(region["samples"])
    return {"recipes": RECIPES, "scratch_budget": settings["scratch"], "texts": len(data), "sizes": sizes,
            "samples": samples, "draws": draws, "folds": folds, "repeats": repeats, "sample_size": sample_size, "truth_draws": truth_draws,
            "truth_train": truth_train, "truth_test": truth_test, "sample_region": room,
            "expected_shared_texts": sample_size * sample_size / room, "margin": margin, "seed": seed,
            "aa_offset": AA_OFFSET, "workers": workers, "truths": {str(size): t for size, t in truths.items()},
            "summary": summarise(frame, truths), "seconds": round(time.perf_counter() - started, 1),
            "seconds_per_sample": per_sample, "truth_seconds": per_truth, "machine": machine(), "rows": frame}


def machine() -> dict:
    return {"cpu": cpu_facts()["model_name"] or "unknown", "cores": os.cpu_count()}  # comparisons/numerics.py


def write_outputs(result: dict, out: Path, command: str) -> str:
    result = dict(result)
    rows = result.pop("rows")
    text = study_markdown(result, command)
    name = "curve_coverage" if result.get("repeats", 1) == 1 else f"curve_coverage_sequential_r{result['repeats']}"
    if result.get("folds", FOLDS) != FOLDS:  # the powered curve's design: K disjoint folds, its own files
        name += f"_k{result['folds']}_d{result['draws']}"
    atomic_write_text(out / f"{name}_samples.csv", rows.to_csv(index=False))  # numbers only: no text
    atomic_write_json(out / f"{name}.json", {**result, "command": command})
    atomic_write_text(out / f"{name}.md", text)
    return text


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.curve_coverage", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200], help="training sizes (default 50 100 200)")
    parser.add_argument("--samples", type=int, default=100, help="samples per size (default 100)")
    parser.add_argument("--draws", type=int, default=5, help="draws a partition (default 5)")
    parser.add_argument("--truth-draws", type=int, default=100, help="training draws for each truth (default 100)")
    parser.add_argument("--sample-size", type=int, default=5000, help="texts per sample (default 5000)")
    parser.add_argument("--truth-train", type=int, default=4000, help="the truth's region to draw training texts from")
    parser.add_argument("--truth-test", type=int, default=8000, help="the truth's fixed test texts")
    parser.add_argument("--repeats", type=int, default=1,
                        help="repeats of the 5 folds a sample (default 1); above 1 the sequential rule's final "
                             "interval (run --until-decided) is read beside the fixed R x 5 design's")
    parser.add_argument("--folds", type=int, default=FOLDS, help=f"disjoint folds a sample (default {FOLDS}; the "
                        "powered curve's design: --folds 10 --draws 1)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes, one thread each (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="the layout's, the samples' and the draws' seed")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        labelled = args.sample_size * (args.folds - 1) // args.folds
        if not 2 <= args.folds <= 20:
            raise UserInputError(f"--folds {args.folds}: between 2 and 20 disjoint folds, e.g. --folds 10")
        if args.samples < 1 or args.draws < 1 or args.truth_draws < 2 or args.workers < 1 or args.repeats < 1:
            raise UserInputError("--samples, --draws and --workers must be at least 1, --truth-draws at least 2")
        if min(args.sizes) < 10 or max(args.sizes) >= min(labelled, args.truth_train):
            raise UserInputError(f"--sizes must lie from 10 (5 texts of each class) to below a partition's labelled "
                                 f"part ({labelled} texts) and --truth-train ({args.truth_train})")
        data = binary_tweets()
        layout(len(data), args.truth_train, args.truth_test, args.sample_size, args.seed)  # refuse early
    except UserInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = run_study(data, args.sizes, args.samples, args.draws, args.truth_draws, args.truth_train,
                       args.truth_test, args.sample_size, seed=args.seed, workers=args.workers, repeats=args.repeats,
                       folds=args.folds)
    command = "python -m comparisons.studies.curve_coverage " + " ".join(argv if argv is not None else sys.argv[1:])
    print(write_outputs(result, args.out, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
