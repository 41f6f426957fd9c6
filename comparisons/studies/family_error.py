"""The curve's family simulated where the answer is known: its family-wise error and what it decides.

Each simulated curve has C declared contrasts at K sizes with known true gaps `delta` (C x K); the estimates are
normal around them with standard error `se`, correlated across a contrast's sizes (the sizes share training texts)
and independent across contrasts. A row's difference null holds where its gap is 0, its equivalence null where the
gap is at least the margin. The family-wise error is the share of curves in which any true null is rejected; the
share decided is the share of false nulls rejected (power). Three procedures:

- natural-order: the graph of comparisons/stats/graphical.py (what `run --family natural-order` reports);
- holm: Holm over all 2 x C x K hypotheses at once (the default family);
- naive chain: the tempting rule docs/statistics.md warns about (sizes in sequence, each row's two nulls at
  alpha / C, moving on whenever a row is decided either way), which does not control the error.

`python -m comparisons.studies.family_error --sims 20000 --out results/calibration` writes family_error.md there;
tests/test_graphical_family.py runs the same simulation with fewer curves.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import binomtest, norm

from common.arguments import OneLineParser
from comparisons.outputs import atomic_write_text
from comparisons.stats.family import holm
from comparisons.stats.graphical import curve_graph, reduced_graph, rejected

ALPHA = 0.05
SE, MARGIN, CORRELATION = 0.004, 0.02, 0.5
SE_LEVELS = (0.004, 0.01)  # a precise curve (nearly every row decidable) and a noisy one (where the order matters)

SCENARIOS = {
    # every difference null true (no gap anywhere): the global null of "better"
    "no gap anywhere": np.zeros((4, 5)),
    # a gap exactly at the margin everywhere, measured precisely: every "better" is right, every "equivalent" wrong
    "gap at the margin": np.full((4, 5), 0.02),
    # the curve's shape: wide gaps where labels are scarce closing to nothing, one contrast with no gap at all
    "closing gaps": np.array([[0.10, 0.06, 0.03, 0.0, 0.0], [0.08, 0.04, 0.02, 0.02, 0.0],
                              [0.05, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]]),
}


def curve_procedure(p_difference, p_equivalence, n_contrasts, n_sizes, alpha=ALPHA, dropped: str = ""):
    """The natural-order graph: (difference rejected, equivalence rejected), each flat in contrast-major order;
    dropped "e": every equivalence chain taken out before the data (graphical.reduced_graph: the graph a curve
    whose margins its planned standard errors cannot reach is tested in), never rejected."""
    full = curve_graph(n_contrasts, n_sizes)
    graph = reduced_graph(full, [node for node in full.nodes if node[1] in dropped])
    p = np.array([(p_difference if kind == "d" else p_equivalence)[c * n_sizes + k] for c, kind, k in graph.nodes])
    out = rejected(graph, p, alpha)
    reject_difference, reject_equivalence = np.zeros(p_difference.size, bool), np.zeros(p_difference.size, bool)
    for i, (c, kind, k) in enumerate(graph.nodes):
        (reject_difference if kind == "d" else reject_equivalence)[c * n_sizes + k] = out[i]
    return reject_difference, reject_equivalence


def holm_procedure(p_difference, p_equivalence, n_contrasts, n_sizes, alpha=ALPHA):
    """Holm over every row's two hypotheses at once (comparisons/stats/family.holm)."""
    adjusted = holm(np.r_[p_difference, p_equivalence])
    return adjusted[:p_difference.size] <= alpha, adjusted[p_difference.size:] <= alpha


def naive_decided_chain(p_difference, p_equivalence, n_contrasts, n_sizes, alpha=ALPHA):
    """Sizes in sequence, each row's two nulls at alpha / C, moving on whenever the row is decided either way:
    the tempting rule that does NOT control the error (the equivalence nulls are tested K times)."""
    level = alpha / n_contrasts
    reject_difference, reject_equivalence = np.zeros(p_difference.size, bool), np.zeros(p_difference.size, bool)
    for c in range(n_contrasts):
        for k in range(n_sizes):
            i = c * n_sizes + k
            reject_difference[i], reject_equivalence[i] = p_difference[i] <= level, p_equivalence[i] <= level
            if not (reject_difference[i] or reject_equivalence[i]):
                break
    return reject_difference, reject_equivalence


def reduced_curve_procedure(p_difference, p_equivalence, n_contrasts, n_sizes, alpha=ALPHA):
    """The natural-order graph with its equivalence chains dropped before the data (their level to the differences)."""
    return curve_procedure(p_difference, p_equivalence, n_contrasts, n_sizes, alpha, dropped="e")


PROCEDURES = {"natural-order": curve_procedure, "natural-order, equivalence chains dropped": reduced_curve_procedure,
              "holm": holm_procedure, "naive chain": naive_decided_chain}


def simulate(delta: np.ndarray, n_sim: int, procedure, se: float = SE, margin: float = MARGIN,
             correlation: float = CORRELATION, seed: int = 0) -> tuple[float, float]:
    """(family-wise error: the share of curves with any true null rejected, the share of false nulls rejected)."""
    rng = np.random.default_rng(seed)
    n_contrasts, n_sizes = delta.shape
    covariance = correlation + (1 - correlation) * np.eye(n_sizes)
    true_difference = (delta == 0).ravel()
    true_equivalence = (np.abs(delta) >= margin).ravel()
    false_nulls = int((~true_difference).sum() + (~true_equivalence).sum())
    errors, found = 0, 0
    for _ in range(n_sim):
        estimate = delta + se * rng.multivariate_normal(np.zeros(n_sizes), covariance, size=n_contrasts)
        p_difference = 2 * norm.sf(np.abs(estimate) / se).ravel()
        p_equivalence = np.maximum(norm.sf((estimate + margin) / se), norm.cdf((estimate - margin) / se)).ravel()
        reject_difference, reject_equivalence = procedure(p_difference, p_equivalence, n_contrasts, n_sizes)
        errors += bool((reject_difference & true_difference).any() or (reject_equivalence & true_equivalence).any())
        found += int((reject_difference & ~true_difference).sum() + (reject_equivalence & ~true_equivalence).sum())
    return errors / n_sim, found / (n_sim * false_nulls) if false_nulls else float("nan")


def error_table(n_sim: int) -> list[dict]:
    rows = []
    for se in SE_LEVELS:
        for scenario, delta in SCENARIOS.items():
            for name, procedure in PROCEDURES.items():
                error, decided = simulate(delta, n_sim, procedure, se=se)
                low, high = binomtest(round(error * n_sim), n_sim).proportion_ci(method="exact")
                rows.append({"se": se, "scenario": scenario, "procedure": name, "error": error, "low": low,
                             "high": high, "decided": decided})
    return rows


def error_markdown(rows: list[dict], n_sim: int, seconds: float) -> str:
    lines = ["# The curve's family: family-wise error and power, simulated with known answers", "",
             f"Command: `python -m comparisons.studies.family_error --sims {n_sim} --out results/calibration`. "
             f"{n_sim:,} simulated curves a scenario, procedure and standard error: 4 declared contrasts x 5 sizes, "
             f"estimates normal around the true gaps with standard error {' or '.join(map(str, SE_LEVELS))}, "
             f"correlation {CORRELATION} across a contrast's sizes, "
             f"independent across contrasts; equivalence margin ±{MARGIN}; alpha {ALPHA}. Took {seconds:.1f} s.", "",
             "| standard error | scenario | procedure | family-wise error [95%] | false nulls rejected (power) |",
             "| ---: | --- | --- | --- | ---: |"]
    for r in rows:
        lines.append(f"| {r['se']:g} | {r['scenario']} | {r['procedure']} | {r['error']:.4f} [{r['low']:.4f}, "
                     f"{r['high']:.4f}] | {r['decided']:.3f} |")
    lines += ["", "Intervals: Clopper–Pearson. The scenarios: no gap anywhere (every difference null true); a gap "
              "exactly at the margin everywhere (every equivalence null true, every difference null false); gaps "
              "that close as labels grow, one contrast with none (docs/statistics.md, the curve's family). The "
              "natural-order graph and Holm control the error in the strong sense (Bretz et al. 2009); the naive "
              "chain does not. The graph's first step is alpha / (2C), Holm's alpha / (2CK): with precise estimates "
              "both reject nearly every false null; on a noisy curve the order rejects more of them where the gaps "
              "close as labels grow (the course's question), and fewer where the same gap holds at every size (the "
              "power column).", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.family_error", description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=20000, help="simulated curves a scenario and procedure")
    parser.add_argument("--out", type=Path, default=Path("results/calibration"))
    args = parser.parse_args(argv)
    if args.sims < 100:
        parser.error("--sims must be at least 100, e.g. --sims 20000")
    started = time.perf_counter()
    rows = error_table(args.sims)
    text = error_markdown(rows, args.sims, time.perf_counter() - started)
    atomic_write_text(args.out / "family_error.md", text)
    print(text)
    print(f"wrote {args.out / 'family_error.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
