"""The fixed schedules the expensive recipes follow where validation is too small to choose, chosen on tweets.

`python -m comparisons.studies.few_shot_schedule --variant hf_bert:full --out results/recipe_audit`
`python -m comparisons.studies.few_shot_schedule --variant torch_scratch --draws 3 --out results/recipe_audit`

At a small label budget (common/small_budget.py) the fine-tuned MiniLM trains on the whole budget for a fixed
number of steps and keeps the last (Mosbach et al. 2021: no epoch chosen on a handful of texts; a small learning
rate, more steps). Which steps and learning rate is chosen here, on pilot draws of another corpus, the tweets
(sentiment, 2 classes), so that no SMS text, test fold or not, informs the choice the SMS curve then measures.
Each draw: a stratified sample of the budget's size from a pool of tweets, scored on 1,000 other tweets; every
candidate schedule on the same draws (paired); mean AP and its spread per candidate and size. The schedule with
the best mean AP over both sizes is the one backends/hf_bert/backend.py names (SMALL_BUDGET_STEPS and
SMALL_BUDGET_LEARNING_RATE); ties within 0.005 keep the cheaper. The scratch encoders' fixed schedule is their
recipe's planned budget run to the end (common/batching.training_budget: at least `min_steps` optimiser steps);
here its candidates are min_steps values, the twin keras_layers following whatever torch_scratch's pilot picks
(common/config.py EncoderConfig.min_steps). The pilot of 5 December 2026 (3 draws a size) put 100, 200 and 400
steps within 0.004 AP of each other (the draws' std 0.01 to 0.04): it cannot separate them, so the recipe's
planned 200 steps stay (a smaller min_steps would also move the sizes where validation chooses).
Writes few_shot_schedule[_<variant>].{csv,md}.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from common.arguments import OneLineParser
from common.datasets import DataSpec, load
from common.metrics import classification_metrics
from comparisons.outputs import atomic_write_text

CANDIDATES = {  # variant -> (candidate's name, the backend's keyword arguments)
    "hf_bert:full": [(f"lr {rate:g} x {steps} steps", {"small_budget_steps": steps, "small_budget_learning_rate": rate})
                     for rate, steps in ((5e-5, 100), (5e-5, 200), (2e-5, 300))],
    "torch_scratch": [(f"min_steps {steps}", {"config": {"min_steps": steps}}) for steps in (100, 200, 400)],
    # not a schedule: the recipe audit's check that min_df 2 is no better than scikit-learn's 1 on another corpus
    # (inner CV still chooses C and the analyzer)
    "tfidf_logreg": [(f"min_df {m}", {"min_df": m}) for m in (1, 2)],
}
SIZES = (50, 200)
TEST_TEXTS = 1000


def pilot_draws(draws: int, seed: int = 7):
    """(size, draw, train LabelledTexts, valid LabelledTexts, test LabelledTexts) on tweets; valid: a fifth."""
    data = load(DataSpec(source="corpus", path="tweets"))
    rest, test = train_test_split(np.arange(len(data)), test_size=TEST_TEXTS, stratify=data.labels, random_state=seed)
    for size in SIZES:
        for draw in range(draws):
            chosen, _ = train_test_split(rest, train_size=size, stratify=data.labels[rest], random_state=seed + draw)
            train, valid = train_test_split(chosen, test_size=0.2, stratify=data.labels[chosen], random_state=draw)
            yield size, draw, data.subset(train), data.subset(valid), data.subset(test)


def main(argv=None) -> int:
    from backends.base import build

    parser = OneLineParser(prog="python -m comparisons.studies.few_shot_schedule", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/recipe_audit")
    parser.add_argument("--draws", type=int, default=2)
    parser.add_argument("--variant", choices=sorted(CANDIDATES), default="hf_bert:full")
    args = parser.parse_args(argv)
    rows = []
    for size, draw, train, valid, test in pilot_draws(args.draws):
        for name, params in CANDIDATES[args.variant]:
            started = time.perf_counter()
            extra = {} if args.variant == "tfidf_logreg" else {"precision": "auto", "progress": False}
            model = build(args.variant, seed=draw, **extra, **params).fit(train, valid)
            seconds = time.perf_counter() - started
            assert model.selection_.rule == ("inner_cv" if args.variant == "tfidf_logreg" else "fixed_schedule")
            ap = classification_metrics(test.labels, model.predict_proba(test.texts), test.positive_index)
            steps = model.selection_.chosen.get("steps", 0) if isinstance(model.selection_.chosen, dict) else 0
            rows.append({"size": size, "draw": draw, "candidate": name, "steps": steps,
                         "average_precision": round(float(ap["average_precision"]), 6), "fit_seconds": round(seconds, 1)})
            print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    stem = "few_shot_schedule" + ("" if args.variant == "hf_bert:full" else "_" + args.variant)
    frame.to_csv(f"{args.out}/{stem}.csv", index=False)
    table = frame.groupby(["candidate", "size"]).agg(ap_mean=("average_precision", "mean"),
                                                     ap_std=("average_precision", "std"),
                                                     steps=("steps", "median"), fit_seconds=("fit_seconds", "median"))
    atomic_write_text(f"{args.out}/{stem}.md",
                      f"# {args.variant}'s fixed small-budget schedule, chosen on tweets\n\n"
                      f"`python -m comparisons.studies.few_shot_schedule --variant {args.variant} --draws {args.draws}` "
                      f"({len(rows)} fits; {TEST_TEXTS} test tweets; draws paired across candidates). Test AP mean and "
                      "std over the draws, median steps and fit seconds:\n\n"
                      + table.unstack("size").round(4).to_markdown() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
