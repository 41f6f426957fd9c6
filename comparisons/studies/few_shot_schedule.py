"""The fixed schedule hf_bert:full follows where validation is too small to choose (issue 63), chosen on tweets.

`python -m comparisons.studies.few_shot_schedule --out results/recipe_audit`

At a small label budget (common/small_budget.py) the fine-tuned MiniLM trains on the whole budget for a fixed
number of steps and keeps the last (Mosbach et al. 2021: no epoch chosen on a handful of texts; a small learning
rate, more steps). Which steps and learning rate is chosen here, on pilot draws of another corpus, the tweets
(sentiment, 2 classes), so that no SMS text, test fold or not, informs the choice the SMS curve then measures.
Each draw: a stratified sample of the budget's size from a pool of tweets, scored on 1,000 other tweets; every
candidate schedule on the same draws (paired); mean AP and its spread per candidate and size. The schedule with
the best mean AP over both sizes is the one backends/hf_bert/backend.py names (SMALL_BUDGET_STEPS and
SMALL_BUDGET_LEARNING_RATE); ties within 0.005 keep the cheaper. Writes few_shot_schedule.{csv,md}.
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

CANDIDATES = ((5e-5, 100), (5e-5, 200), (2e-5, 300))  # (learning rate, steps)
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
    args = parser.parse_args(argv)
    rows = []
    for size, draw, train, valid, test in pilot_draws(args.draws):
        for rate, steps in CANDIDATES:
            started = time.perf_counter()
            model = build("hf_bert:full", seed=draw, precision="auto", progress=False, small_budget_steps=steps,
                          small_budget_learning_rate=rate).fit(train, valid)
            seconds = time.perf_counter() - started
            assert model.selection_.rule == "fixed_schedule", model.selection_.rule
            ap = classification_metrics(test.labels, model.predict_proba(test.texts), test.positive_index)
            rows.append({"size": size, "draw": draw, "learning_rate": rate, "steps": steps,
                         "average_precision": round(float(ap["average_precision"]), 6), "fit_seconds": round(seconds, 1)})
            print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(f"{args.out}/few_shot_schedule.csv", index=False)
    table = frame.groupby(["learning_rate", "steps", "size"])["average_precision"].agg(["mean", "std"]).unstack("size")
    atomic_write_text(f"{args.out}/few_shot_schedule.md",
                      "# hf_bert:full's fixed small-budget schedule, chosen on tweets\n\n"
                      f"`python -m comparisons.studies.few_shot_schedule --draws {args.draws}` ({len(rows)} fits; "
                      f"{TEST_TEXTS} test tweets; draws paired across candidates). Mean and std of test AP:\n\n"
                      + table.round(4).to_markdown() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
