"""The selection procedure simulated where the best is known, beside textbook KN and the fixed 10-partition design.

Each configuration: k candidates with true mean APs mu, per-run costs c (predicted CPU minutes, cheapest first), and
per-partition scores drawn as a committed design's were at one training size: normal with the covariance of its
per-partition APs across recipes (Sigma, estimated from the folder's scores), equicorrelated across partitions at
rho (the design's model behind the corrected t: x_p = mu + sqrt(rho) L z_0 + sqrt(1 - rho) L z_p, L L' = Sigma).
Every procedure sees the same draws (common random numbers):

- select: comparisons/stats/recipe_selection.py (what `transformer-compare select` runs), correction ratio rho / (1 - rho);
- KN: Kim & Nelson (2001), the textbook fully sequential procedure (c = 1, first stage n0 = 10 as in their
  experiments), which takes the partitions as independent and pays every survivor at every stage;
- fixed: every candidate on the first 10 partitions, the top mean picked (what a tool without a procedure does).

Measured per configuration and procedure: the share of correct selections (the pick is the best; configurations
where the best leads every other by at least delta), of good selections (the pick within delta of the best), of
wrong picks, of no pick, and the mean training cost; for select, its cost as a share of KN's.

    python -m comparisons.studies.selection_study --reps 2000 --out results/selection
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from common.arguments import OneLineParser
from comparisons.outputs import atomic_write_text
from comparisons.report.scores import read_scores
from comparisons.stats.recipe_selection import DELTA, MORE_FOLDS, MORE_LABELS, SELECTED, SelectionPlan, select
from comparisons.studies.selection_replay import design_ratio

ALPHA = 0.05
KN_FIRST = 10        # Kim & Nelson's first-stage size in their experiments
FIXED = 10           # the fixed design's partitions
SEED = 20261206


@dataclass(frozen=True)
class Configuration:
    name: str
    mu: np.ndarray       # true mean AP of each candidate (cheapest first)
    costs: np.ndarray    # predicted minutes a run
    sigma: np.ndarray    # (k, k) covariance of one partition's scores
    rho: float           # correlation of a candidate's scores across partitions (through the shared texts)

    @property
    def best(self) -> int:
        return int(np.argmax(self.mu))

    @property
    def separated(self) -> bool:
        """The best leads every other by at least delta (up to rounding): a correct selection is defined."""
        others = np.delete(self.mu, self.best)
        return bool(np.all(self.mu[self.best] - others >= DELTA - 1e-12))


def design_covariance(folder: Path, size: str, metric: str = "average_precision") -> tuple[np.ndarray, list, dict]:
    """(Sigma, variants, mean train_seconds per variant) from a committed design's per-partition scores at one size
    (seeds of a partition averaged first)."""
    runs = read_scores(folder)
    if runs is None:
        raise SystemExit(f"error: {folder} has no scores; report it first (python -m comparisons report --out {folder})")
    runs = runs[runs["train_size"].astype(str) == str(size)]
    table = runs.pivot_table(index="partition", columns="variant", values=metric, aggfunc="mean").dropna()
    seconds = runs.groupby("variant")["train_seconds"].mean().to_dict()
    return np.cov(table.to_numpy(), rowvar=False), list(table.columns), seconds


def extended(sigma: np.ndarray, k: int) -> np.ndarray:
    """A k x k covariance from a measured one: its standard deviations repeated in turn, its correlations where
    measured (shrunk half-way to their mean) and their mean elsewhere; eigenvalues below a millionth of the largest
    are raised to it, so that the draws' Cholesky factor exists."""
    sd = np.sqrt(np.diag(sigma))
    corr = sigma / np.outer(sd, sd)
    m = len(sd)
    mean_corr = float(corr[~np.eye(m, dtype=bool)].mean())
    out = np.full((k, k), mean_corr)
    for i in range(k):
        for j in range(k):
            if i == j:
                out[i, j] = 1.0
            elif i < m and j < m:
                out[i, j] = 0.5 * corr[i, j] + 0.5 * mean_corr
    values, vectors = np.linalg.eigh(out)
    out = vectors @ np.diag(np.maximum(values, 1e-6 * values.max())) @ vectors.T
    out = out / np.sqrt(np.outer(np.diag(out), np.diag(out)))  # back to a correlation matrix
    sds = np.array([sd[i % m] for i in range(k)])
    return out * np.outer(sds, sds)


def configurations(sigma: np.ndarray, k: int, rho: float, costs: np.ndarray, label: str) -> list[Configuration]:
    """The least-favourable and other configurations of one covariance, k and cost ladder (cheapest first)."""
    s = extended(sigma, k)
    last = k - 1
    lfc_expensive = np.zeros(k)
    lfc_expensive[last] = DELTA
    lfc_cheap = np.zeros(k)
    lfc_cheap[0] = DELTA
    spread = -DELTA / 2 * np.arange(k)[::-1]  # the most expensive best, each cheaper one delta / 2 further behind
    dominant = np.zeros(k)
    dominant[last] = 5 * DELTA
    named = [("best leads by delta, most expensive", lfc_expensive), ("best leads by delta, cheapest", lfc_cheap),
             ("all equal", np.zeros(k)), ("gaps of delta/2, most expensive best", spread),
             ("one dominant (+5 delta), most expensive", dominant)]
    return [Configuration(f"{label}, k={k}, rho={rho:g}: {name}", mu, costs, s, rho) for name, mu in named]


def draw_scores(config: Configuration, partitions: int, rng: np.random.Generator) -> np.ndarray:
    k = len(config.mu)
    chol = np.linalg.cholesky(config.sigma + 1e-12 * np.eye(k))
    shared = chol @ rng.standard_normal(k)
    own = rng.standard_normal((partitions, k)) @ chol.T
    return config.mu + np.sqrt(config.rho) * shared + np.sqrt(1 - config.rho) * own


def kn(scores: np.ndarray, delta: float, alpha: float = ALPHA, first: int = KN_FIRST) -> tuple[int | None, np.ndarray]:
    """Kim & Nelson (2001), procedure KN with c = 1: (the pick, or None when the partitions ran out; runs of each)."""
    most, k = scores.shape
    eta = 0.5 * ((2 * alpha / (k - 1)) ** (-2 / (first - 1)) - 1)
    h2 = 2 * eta * (first - 1)
    stage = scores[:first]
    variance = np.var(stage[:, :, None] - stage[:, None, :], axis=0, ddof=1)
    alive = np.arange(k)
    runs = np.zeros(k, dtype=int)
    runs[:] = first
    r = first
    while True:
        means = scores[:r].mean(axis=0)
        w = np.maximum(0.0, delta / (2 * r) * (h2 * variance / delta ** 2 - r))
        keep = [i for i in alive if all(means[i] >= means[l] - w[i, l] for l in alive if l != i)]
        alive = np.asarray(keep)
        if len(alive) == 1:
            return int(alive[0]), runs
        if r >= most:
            return None, runs
        runs[alive] += 1
        r += 1


def one_replication(config: Configuration, rng: np.random.Generator, most: int) -> dict:
    scores = draw_scores(config, most, rng)
    k = len(config.mu)
    names = tuple(f"c{i}" for i in range(k))
    plan = SelectionPlan(names, tuple(float(c) for c in config.costs), DELTA, ALPHA,
                         config.rho / (1 - config.rho), most=most)
    look, used = select(plan, lambda p, runs: {n: scores[p, names.index(n)] for n in runs})
    ours = names.index(look.pick) if look.outcome == SELECTED else None
    ours_cost = float((~np.isnan(used) * config.costs).sum())
    kn_pick, kn_runs = kn(scores, DELTA)
    fixed_pick = int(np.argmax(scores[:FIXED].mean(axis=0)))
    early = look.outcome in (MORE_FOLDS, MORE_LABELS)  # a futility stop: no pick, by the projection
    return {"select": (ours, ours_cost, early), "KN": (kn_pick, float(kn_runs @ config.costs), False),
            "fixed 10": (fixed_pick, float(FIXED * config.costs.sum()), False)}


def wilson_low(successes: int, n: int, z: float = 1.959963984540054) -> float:
    if n == 0:
        return float("nan")
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return float((centre - spread) / (1 + z * z / n))


def simulate(config: Configuration, reps: int, most: int, seed: int = SEED) -> list[dict]:
    rng = np.random.default_rng(seed)
    picks = {name: [] for name in ("select", "KN", "fixed 10")}
    costs = {name: [] for name in picks}
    early = {name: 0 for name in picks}
    for _ in range(reps):
        for name, (pick, cost, stopped) in one_replication(config, rng, most).items():
            picks[name].append(pick)
            costs[name].append(cost)
            early[name] += stopped
    best = config.mu.max()
    rows = []
    for name in picks:
        chosen = picks[name]
        good = sum(p is not None and best - config.mu[p] <= DELTA + 1e-12 for p in chosen)
        correct = sum(p == config.best for p in chosen)
        none = sum(p is None for p in chosen)
        rows.append({"configuration": config.name, "procedure": name, "reps": reps,
                     "correct": correct / reps if config.separated else float("nan"),
                     "correct_wilson_low": wilson_low(correct, reps) if config.separated else float("nan"),
                     "good": good / reps, "good_wilson_low": wilson_low(good, reps),
                     "wrong": (reps - good - none) / reps, "no_pick": none / reps,
                     "stopped_early": early[name] / reps,
                     "mean_cost": float(np.mean(costs[name]))})
    kn_cost = next(r["mean_cost"] for r in rows if r["procedure"] == "KN")
    for row in rows:
        row["cost_vs_KN"] = row["mean_cost"] / kn_cost if kn_cost > 0 else float("nan")
    return rows


def study(sources: list[tuple[Path, str]], reps: int, ks=(4, 6, 8), most: int = 200,
          ratio: float = 1000.0) -> pd.DataFrame:
    """Every configuration of every source: k candidates with costs up to `ratio`:1, partitions independent (rho 0)
    and correlated as the source design's were (its own rho; the measured covariance over its partitions is the
    within part, (1 - rho) Sigma)."""
    rows = []
    for folder, size in sources:
        measured, _variants, _seconds = design_covariance(folder, size)
        r = design_ratio(folder, read_scores(folder), size)
        for rho in sorted({0.0, round(r / (1 + r), 3)}):
            sigma = measured / (1 - rho)
            for k in ks:
                costs = np.geomspace(1.0, ratio, k)  # cost ratios up to `ratio`:1, cheapest first
                for config in configurations(sigma, k, rho, costs, f"{folder.name} at {size}"):
                    rows.extend(simulate(config, reps, most))
    return pd.DataFrame(rows)


def study_markdown(table: pd.DataFrame, reps: int, seconds: float) -> str:
    shown = table.copy()
    for column in ("correct", "correct_wilson_low", "good", "good_wilson_low", "wrong", "no_pick", "stopped_early",
                   "cost_vs_KN"):
        shown[column] = shown[column].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
    shown["mean_cost"] = shown["mean_cost"].map(lambda v: f"{v:,.0f}")
    return ("# Selection simulated: correct and good selection, cost against textbook KN\n\n"
            f"{reps} replications a configuration, delta {DELTA}, confidence {1 - ALPHA}; "
            f"{seconds:.0f} s. Costs are in units of the cheapest candidate's run; 'correct' only where the best "
            "leads every other by at least delta; 'stopped_early' the share of no picks that were futility stops "
            "(the projection predicting the planned partitions would not decide). "
            "`python -m comparisons.studies.selection_study`.\n\n"
            + shown.to_markdown(index=False) + "\n")


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.selection_study", description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="replications a configuration")
    parser.add_argument("--source", action="append", default=None, metavar="FOLDER:SIZE",
                        help="a committed design and training size whose covariance the scores follow "
                             "(default: results/learning_curve_seeded at 50 and at 1000, results/reference at all: "
                             "designs whose partitions each train with their own seeds)")
    parser.add_argument("--ks", type=int, nargs="+", default=[4, 6, 8])
    parser.add_argument("--most", type=int, default=200, help="partitions available to a replication")
    parser.add_argument("--out", type=Path, default=Path("results/selection"))
    args = parser.parse_args(argv)
    if args.reps < 10:
        parser.error("--reps must be at least 10, e.g. --reps 2000")
    sources = [(Path(s.rsplit(":", 1)[0]), s.rsplit(":", 1)[1]) for s in args.source] if args.source else [
        (Path("results/learning_curve_seeded"), "50"), (Path("results/learning_curve_seeded"), "1000"),
        (Path("results/reference"), "all")]
    started = time.perf_counter()
    table = study(sources, args.reps, tuple(args.ks), most=args.most)
    text = study_markdown(table, args.reps, time.perf_counter() - started)
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out / "simulation.csv", table.to_csv(index=False, float_format="%.6g"))
    atomic_write_text(args.out / "simulation.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
