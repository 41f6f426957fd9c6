"""What `select` would have picked on the committed designs' own records, and at what cost.

For each committed partition design and training size, the selection procedure (comparisons/stats/recipe_selection.py)
is run over the design's partitions in their order, each partition's scores read from its records (every variant
ran on every partition there, so whatever the procedure asks for is on file; the runs it did not ask for are
ignored). The predicted cost of a variant is its mean recorded training minutes at that size; the correction ratio is
the design's own (stats/design_variance.py, from the recorded training sets). Beside each: the partitions and CPU the
procedure used against the design's whole, and the recipe with the best mean over all the design's partitions (not a
truth: another sample of the same kind) with the pick's distance from it.

    python -m comparisons.studies.selection_replay --out results/selection
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from common.arguments import OneLineParser
from comparisons.outputs import atomic_write_text
from comparisons.report.scores import read_scores
from comparisons.run_folder.training_sets import training_sets
from comparisons.stats.design_variance import design_correlation, sets_at, training_overlap
from comparisons.stats.recipe_selection import DELTA, FIRST, SELECTED, SelectionPlan, select

DESIGNS = ("results/reference", "results/learning_curve_powered", "results/learning_curve_seeded",
           "results/cross_corpus/sms", "results/cross_corpus/zh-reviews", "results/cross_corpus/bbc-news",
           "results/cross_corpus/tweets")
METRIC = "average_precision"


def design_ratio(folder: Path, runs: pd.DataFrame, size: str) -> float:
    """The design's correction ratio r = rho / (1 - rho) at a size (Nadeau-Bengio capped at the recorded overlap)."""
    at_size = runs[runs["train_size"].astype(str) == size]
    test_to_train = float((at_size["n_test"] / at_size["n_train"]).mean())
    overlap = training_overlap(sets_at(training_sets(folder, at_size), size))
    rho, _ = design_correlation(overlap, test_to_train, "overlap")
    return rho / (1 - rho)


def replay_design(folder: Path, size: str, delta: float = DELTA) -> dict | None:
    runs = read_scores(folder)
    if runs is None or "partition" not in runs:
        return None
    at_size = runs[runs["train_size"].astype(str) == size]
    table = at_size.pivot_table(index="partition", columns="variant", values=METRIC, aggfunc="mean")
    table = table.dropna(axis=1, how="any")  # variants every partition has (SetFit only where it ran)
    if table.shape[1] < 2 or table.shape[0] < FIRST:
        return None
    minutes = at_size.groupby("variant")["train_seconds"].mean().reindex(table.columns) / 60
    order = sorted(table.columns, key=lambda v: (minutes[v], list(table.columns).index(v)))
    scores = table[order].to_numpy()
    plan = SelectionPlan(tuple(order), tuple(float(round(minutes[v], 4)) for v in order), delta,
                         ratio=design_ratio(folder, runs, size), most=scores.shape[0])
    look, used = select(plan, lambda p, names: {n: scores[p, order.index(n)] for n in names})
    best = table.mean().idxmax()
    whole = float(minutes.sum() * scores.shape[0])
    spent = float((~np.isnan(used) * np.asarray(plan.run_costs)).sum())
    pick = look.pick if look.outcome == SELECTED else None
    return {"design": str(folder), "labels": size, "candidates": len(order), "partitions": scores.shape[0],
            "ratio r": round(plan.ratio, 4), "outcome": look.outcome, "pick": pick or "–",
            "claimable": ", ".join(look.claimable) or "–", "partitions used": look.partitions,
            "CPU used (min)": round(spent, 2), "CPU of the whole design (min)": round(whole, 2),
            "share": round(spent / whole, 3) if whole else float("nan"), "best mean of the design": best,
            "pick below it": round(float(table[best].mean() - table[pick].mean()), 4) if pick else float("nan"),
            "still in": ", ".join(f"{c} ≤ {b:.3f}" for c, b in look.behind_best(plan).items())}


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.selection_replay", description=__doc__.splitlines()[0])
    parser.add_argument("--designs", nargs="+", default=list(DESIGNS))
    parser.add_argument("--delta", type=float, default=DELTA)
    parser.add_argument("--out", type=Path, default=Path("results/selection"))
    args = parser.parse_args(argv)
    rows = []
    for name in args.designs:
        folder = Path(name)
        runs = read_scores(folder) if folder.is_dir() else None
        if runs is None:
            print(f"skipped {folder}: no scores.csv", file=sys.stderr)
            continue
        for size in dict.fromkeys(runs["train_size"].astype(str)):
            row = replay_design(folder, size, args.delta)
            if row is not None:
                rows.append(row)
    table = pd.DataFrame(rows)
    text = ("# What `select` would have picked on the committed designs' records\n\n"
            f"delta {args.delta} AP, confidence 0.95; the partitions in their recorded order; predicted costs are the "
            "recorded mean training minutes. 'best mean of the design' is over all its partitions (another sample, "
            "not a truth). `python -m comparisons.studies.selection_replay`.\n\n"
            + (table.to_markdown(index=False) if len(table) else "(no design)") + "\n")
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out / "replays.md", text)
    atomic_write_text(args.out / "replays.csv", table.to_csv(index=False))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
