"""Peeking, measured: an A/A looked at after every repeat, the sequential rule against the naive one.

`python -m comparisons.studies.sequential_calibration --train-size 100 --draws 2 --comparisons 100 --out results/calibration`

Each comparison runs the recipe (TF-IDF + SGD logistic regression, seed-noisy: comparisons/studies/calibration.py)
on R x 5 partitions of the SMS data at a small training size, each partition with `--draws` draws of its own subset
and model seeds (drawn as the learning curve draws: comparisons/studies/drawn_calibration.one_comparison), seeds and
subsets disjoint between comparisons (independent given the data: Clopper-Pearson intervals). Per comparison:

- A/A (the recipe against itself with other model seeds), read after every repeat by
  - the naive rule: the fixed design's verdict (comparisons/stats/partition_verdicts.recipe_verdicts) at each look,
    stopping at the first look that decides; a "better" there is a false positive;
  - the fixed design read once, at the last look (no peeking): the reference rate;
  - the sequential rule (`run --until-decided`: comparisons/stats/partition_verdicts.sequential_verdicts, alpha
    spending over the looks): a "better" at the look that decided it is a false positive;
- planted gap (the recipe against the weakened one, 20 TF-IDF terms): each rule's power and the sequential rule's
  stopping look (the repeats it would have run).

The pair is its own family (a difference and an equivalence hypothesis). Deterministic given its arguments.
Nothing here is part of the code hash that makes runs comparable (comparisons/studies/).
"""
from __future__ import annotations

import sys
import time

import pandas as pd

from common.arguments import OneLineParser
from common.errors import UserInputError
from common.partitions import kfold_partitions
from common.splits import DEFAULT_SPLIT_SEED
from comparisons.outputs import atomic_write_json, atomic_write_text
from comparisons.stats.family import DEFAULT_MARGINS, REAL
from common.metric_names import PRIMARY
from comparisons.stats.partition_verdicts import recipe_verdicts, sequential_verdicts
from comparisons.stats.sequential import repeat_of
from comparisons.studies.calibration import SCORERS, rate, study_data
from comparisons.studies.drawn_calibration import FOLDS, one_comparison



def primary_row(pairs: pd.DataFrame) -> pd.Series:
    return pairs.loc[pairs["metric"] == PRIMARY].iloc[0]


def rules(scores: pd.DataFrame, sets: dict, a: str, b: str, repeats: int, margin: float) -> dict:
    """The naive, fixed-at-the-end and sequential readings of the pair (a, b) on one comparison's runs."""
    both = scores[scores["variant"].isin([a, b])]
    margins = {PRIMARY: margin}
    naive, naive_look = "inconclusive", repeats
    for look in range(1, repeats + 1):
        upto = both[[repeat_of(p) < look for p in both["partition"]]]
        seen = set(upto["partition"])  # the look's training sets only (their overlap)
        known = {k: v for k, v in sets.items() if k[1] in seen}
        verdict = primary_row(recipe_verdicts(upto, margins, [b, a], training_sets=known)[1])["verdict"]
        if verdict != "inconclusive":
            naive, naive_look = verdict, look
            break
    last = primary_row(recipe_verdicts(both, margins, [b, a], training_sets=sets)[1])  # the later variant is A
    sequential = primary_row(sequential_verdicts(both, margins, [b, a], None, FOLDS, repeats, sets))
    return {"naive": naive, "naive_look": naive_look, "fixed_last": last["verdict"],
            "sequential": sequential["verdict"],
            "sequential_look": int(sequential["look"]),
            "sequential_difference": float(sequential["difference"]),
            "sequential_ci": (float(sequential["ci_low"]), float(sequential["ci_high"])),
            "fixed_ci": (float(last["ci_low"]), float(last["ci_high"]))}


def run_study(learner: str, size: int, draws: int, repeats: int, comparisons: int,
              limit_per_class: int | None = None, margin: float = DEFAULT_MARGINS[PRIMARY]) -> tuple[dict, pd.DataFrame]:
    data = study_data(limit_per_class)
    partitions = kfold_partitions(data, FOLDS, repeats, DEFAULT_SPLIT_SEED)
    started, samples, cache = time.perf_counter(), [], {}
    for comparison in range(comparisons):
        scores, sets = one_comparison(data, partitions, learner, comparison, size, draws, cache)
        cache.clear()
        for kind, a, b in (("A/A", "A", "A2"), ("planted", "A", "weak")):
            samples.append({"comparison": comparison, "kind": kind, **rules(scores, sets, a, b, repeats, margin)})
    frame = pd.DataFrame(samples)
    aa, planted = frame[frame["kind"] == "A/A"], frame[frame["kind"] == "planted"]
    summary = {}
    for rule in ("naive", "fixed_last", "sequential"):
        summary[rule] = {"aa_different": rate(int(aa[rule].isin(REAL).sum()), len(aa)),
                         "planted_found": rate(int((planted[rule] == "A better").sum()), len(planted)),
                         "planted_wrong_sign": rate(int((planted[rule] == "B better").sum()), len(planted))}
    summary["sequential"]["mean_looks_planted"] = float(planted["sequential_look"].mean())
    summary["sequential"]["mean_looks_aa"] = float(aa["sequential_look"].mean())
    summary["naive"]["mean_looks_planted"] = float(planted["naive_look"].mean())
    summary["naive"]["mean_looks_aa"] = float(aa["naive_look"].mean())
    return {"learner": learner, "train_size": size, "draws": draws, "repeats": repeats, "folds": FOLDS,
            "comparisons": comparisons, "texts": len(data), "margin": margin,
            "mean_planted_gap": float(planted["sequential_difference"].mean()), "summary": summary,
            "seconds": round(time.perf_counter() - started, 1)}, frame


def study_markdown(result: dict, command: str) -> str:
    def cell(values: dict) -> str:
        return (f"{values['hits']}/{values['comparisons']} = {values['rate']:.3f} "
                f"[{values['ci_low']:.3f}, {values['ci_high']:.3f}]")

    names = {"naive": "naive: the fixed verdict at every look, stop at the first decision",
             "fixed_last": "fixed: read once, after the last repeat (no peeking)",
             "sequential": "sequential: alpha spending over the looks (--until-decided)"}
    lines = [f"# Peeking: an A/A read after every repeat, at {result['train_size']} labelled texts", "",
             f"Command: `{command}`. The SMS data ({result['texts']} texts), {result['repeats']} x {result['folds']} "
             f"partitions, {result['draws']} draws a partition, {result['comparisons']} comparisons of disjoint seeds "
             f"and subsets; learner {result['learner']}; AP margin ±{result['margin']}, alpha 0.05, the pair its own "
             f"family. Mean planted gap: {result['mean_planted_gap']:+.3f} AP. Took {result['seconds']} s.", "",
             "| rule | A/A called different | planted gap found | planted, wrong sign | mean looks (A/A; planted) |",
             "| --- | --- | --- | --- | --- |"]
    for rule, values in result["summary"].items():
        looks = (f"{values['mean_looks_aa']:.2f}; {values['mean_looks_planted']:.2f}" if "mean_looks_aa" in values
                 else f"{result['repeats']}; {result['repeats']}")
        lines.append(f"| {names[rule]} | {cell(values['aa_different'])} | {cell(values['planted_found'])} | "
                     f"{cell(values['planted_wrong_sign'])} | {looks} |")
    return "\n".join(lines + ["", "Intervals: Clopper–Pearson, 95%. A look is one repeat of the 5 partitions; the "
                              "naive and sequential rules stop at their first decision (better, worse or "
                              "equivalent)."]) + "\n"


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.sequential_calibration",
                           description=__doc__.split("\n")[0])
    parser.add_argument("--learner", choices=tuple(SCORERS), default="sgd_tfidf")
    parser.add_argument("--train-size", type=int, default=100)
    parser.add_argument("--draws", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="the looks: repeats of the 5 partitions (default 3)")
    parser.add_argument("--comparisons", type=int, default=100)
    parser.add_argument("--limit-per-class", type=int, help="the first N texts of each class (quick trials)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.draws < 1 or args.comparisons < 1 or args.repeats < 2:
        print("error: --draws and --comparisons must be at least 1 and --repeats at least 2", file=sys.stderr)
        return 2
    try:
        result, samples = run_study(args.learner, args.train_size, args.draws, args.repeats, args.comparisons,
                                    args.limit_per_class)
    except (UserInputError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from pathlib import Path

    out = Path(args.out)
    name = f"sequential_{args.learner}_n{args.train_size}_draws{args.draws}"
    command = "python -m comparisons.studies.sequential_calibration " + " ".join(argv or sys.argv[1:])
    atomic_write_text(out / f"{name}.md", study_markdown(result, command))
    atomic_write_json(out / f"{name}.json", result)
    atomic_write_text(out / f"{name}_samples.csv", samples.to_csv(index=False, float_format="%.6g"))
    print(f"results: {out}/{name}.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
