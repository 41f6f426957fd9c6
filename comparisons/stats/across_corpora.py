"""What may be concluded across corpora: average ranks, Friedman + Nemenyi, Wilcoxon (Demšar 2006).

The unit here is the corpus: each corpus gives one score per variant (its primary metric, the mean
over that folder's partitions or seeds), and the question is whether one recipe ranks above another
over corpora of the kinds sampled. On every corpus the variants are ranked (1 = best, ties share the
mean rank); then

- k > 2 variants: Friedman's test on the ranks, in Iman & Davenport's F form, the usual small-sample one
  (F = (N - 1) chi2 / (N (k - 1) - chi2) on k - 1 and (k - 1)(N - 1) degrees of freedom; chi2 from
  scipy.stats.friedmanchisquare, also reported), and only when it rejects, the Nemenyi post-hoc: two
  variants differ when their average ranks differ by at least the critical difference
  CD = q(1 - alpha; k, inf) / sqrt(2) * sqrt(k (k + 1) / (6 N)), q the studentized range
  (scipy.stats.studentized_range); each pair's Nemenyi p is the studentized range's tail at its gap
  (scikit-posthocs' posthoc_nemenyi_friedman is the oracle in the tests);
- k = 2: the Wilcoxon signed-rank test on the N per-corpus differences (scipy.stats.wilcoxon, exact
  for small N).

With few corpora these tests cannot reject however the scores fall. That is computed, not assumed:
the smallest p-value the test can give with N corpora (every corpus ranking the variants the same
way, exactly (1/k!)^(N-1) under the null of exchangeable ranks; for Wilcoxon, every difference of one sign), and for Nemenyi whether CD exceeds k - 1, the
largest average-rank difference there is. When the smallest p is at least alpha, the statement is
"too few corpora to rule", with the number of corpora that would be needed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import f as f_distribution, friedmanchisquare, rankdata, studentized_range, wilcoxon
from comparisons.stats.family import in_schema

ALPHA = 0.05
LARGEST_N = 60  # how far to look for the number of corpora a test needs


def corpus_ranks(scores: pd.DataFrame) -> pd.DataFrame:
    """Ranks within each corpus (rows: corpora, columns: variants); 1 = the highest score, ties averaged."""
    return scores.apply(lambda row: pd.Series(rankdata(-row.to_numpy(dtype=float)), index=row.index), axis=1)


def nemenyi_critical_difference(k: int, n: int, alpha: float = ALPHA) -> float:
    """Demšar's CD: q(1 - alpha; k, inf) / sqrt(2) * sqrt(k (k + 1) / (6 n))."""
    q = float(studentized_range.ppf(1 - alpha, k, np.inf))
    return q / np.sqrt(2) * np.sqrt(k * (k + 1) / (6 * n))


def friedman_smallest_p(k: int, n: int) -> float:
    """The smallest exact Friedman p with n corpora: every corpus ranks the k variants alike, which under the
    null (each corpus's ranking one of k! equally likely) has probability k! / (k!)^n = (1/k!)^(n-1)."""
    if n < 2:
        return 1.0
    return float(math.factorial(k) ** -(n - 1))


def iman_davenport(chi_square: float, k: int, n: int) -> tuple[float, float]:
    """(F, p) of Iman & Davenport's form of Friedman's statistic (Demšar 2006, eq. 2)."""
    denominator = n * (k - 1) - chi_square
    if denominator <= 0:  # every corpus ranks the variants alike: the largest statistic there is
        return float("inf"), 0.0
    statistic = (n - 1) * chi_square / denominator
    return float(statistic), float(f_distribution.sf(statistic, k - 1, (k - 1) * (n - 1)))


def nemenyi_p(rank_gap: float, k: int, n: int) -> float:
    """Nemenyi's p of a pair whose average ranks differ by rank_gap (the studentized range's tail)."""
    return float(studentized_range.sf(abs(rank_gap) * np.sqrt(2) / np.sqrt(k * (k + 1) / (6 * n)), k, np.inf))


def wilcoxon_smallest_p(n: int) -> float:
    """The smallest two-sided Wilcoxon signed-rank p with n corpora: n differences of one sign, no ties."""
    if n < 1:
        return 1.0
    return float(wilcoxon(np.arange(1, n + 1, dtype=float)).pvalue)


def corpora_needed(smallest_p, alpha: float = ALPHA) -> int | None:
    """The fewest corpora with which `smallest_p(n)` falls below alpha (None beyond LARGEST_N)."""
    return next((n for n in range(1, LARGEST_N + 1) if smallest_p(n) < alpha), None)


@dataclass
class AcrossCorpora:
    """The test across corpora and what it allows one to say."""

    test: str                      # "friedman_nemenyi" | "wilcoxon" | "none"
    corpora: list[str]             # the corpora every variant has a score on (the ranks' rows)
    variants: list[str]
    average_ranks: dict[str, float]
    statistic: float | None = None    # Friedman: Iman-Davenport's F; Wilcoxon: W
    p_value: float | None = None
    chi_square: float | None = None   # Friedman's chi-square (its own p: chi_square_p)
    chi_square_p: float | None = None
    smallest_p: float | None = None   # the smallest p the test can give with this many corpora
    can_rule: bool = False            # smallest_p < alpha (and, for Nemenyi, CD <= k - 1)
    corpora_needed: int | None = None  # the fewest corpora with which the test could reject
    critical_difference: float | None = None  # Nemenyi
    rejected: bool = False            # the test rejected "all variants rank alike"
    pairs: list[dict] = field(default_factory=list)  # Nemenyi or Wilcoxon: a, b, rank difference, different
    alpha: float = ALPHA
    left_out: list[str] = field(default_factory=list)  # corpora lacking some variant's score


def across_corpora(scores: pd.DataFrame, alpha: float = ALPHA) -> AcrossCorpora:
    """scores: rows corpora, columns variants (the primary metric); corpora lacking a variant's score are left out."""
    complete = scores.dropna(axis=0, how="any")
    corpora, variants = list(complete.index), list(complete.columns)
    n, k = len(corpora), len(variants)
    ranks = corpus_ranks(complete) if n else pd.DataFrame(columns=variants)
    average = {v: float(ranks[v].mean()) for v in variants} if n else {v: float("nan") for v in variants}
    result = AcrossCorpora("none", corpora, variants, average, alpha=alpha,
                           left_out=[c for c in scores.index if c not in set(corpora)])
    if k == 2:
        result.test = "wilcoxon"
        result.smallest_p = wilcoxon_smallest_p(n)
        result.corpora_needed = corpora_needed(wilcoxon_smallest_p, alpha)
        result.can_rule = bool(result.smallest_p < alpha)
        a, b = variants
        differences = (complete[a] - complete[b]).to_numpy(dtype=float)
        if n >= 1 and np.any(differences != 0):
            outcome = wilcoxon(differences)
            result.statistic, result.p_value = float(outcome.statistic), float(outcome.pvalue)
        else:
            result.p_value = 1.0 if n else None
        result.rejected = bool(result.p_value is not None and result.p_value < alpha)
        result.pairs = [{"a": a, "b": b, "rank_difference": average[b] - average[a] if n else float("nan"),
                         "median_difference": float(np.median(differences)) if n else float("nan"),
                         "different": result.rejected}]
    elif k > 2:
        result.test = "friedman_nemenyi"
        result.smallest_p = friedman_smallest_p(k, n)
        result.critical_difference = float(nemenyi_critical_difference(k, n, alpha)) if n else float("inf")
        result.corpora_needed = corpora_needed(
            lambda m: friedman_smallest_p(k, m) if nemenyi_critical_difference(k, m, alpha) <= k - 1 else 1.0, alpha)
        result.can_rule = bool(result.smallest_p < alpha and result.critical_difference <= k - 1)
        if n >= 2:
            outcome = friedmanchisquare(*complete.to_numpy(dtype=float).T)
            chi_square, p = float(outcome.statistic), float(outcome.pvalue)
            if np.isnan(p):  # every rank tied
                result.chi_square, result.chi_square_p, result.statistic, result.p_value = 0.0, 1.0, 0.0, 1.0
            else:
                result.chi_square, result.chi_square_p = chi_square, p
                result.statistic, result.p_value = iman_davenport(chi_square, k, n)
        result.rejected = bool(result.p_value is not None and result.p_value < alpha)
        for i, a in enumerate(variants):
            for b in variants[i + 1:]:
                gap = average[b] - average[a]  # > 0: a ranks better (lower rank)
                result.pairs.append({"a": a, "b": b, "rank_difference": gap,
                                     "nemenyi_p": nemenyi_p(gap, k, n) if n else float("nan"),
                                     "different": bool(result.rejected and abs(gap) >= result.critical_difference)})
    return result


def verdict_rules_rows(result: AcrossCorpora) -> "pd.DataFrame":
    """The test across corpora as rows of the one verdict schema (comparisons/stats/family.py):
    design "corpora", metric "average_rank", difference = B's average rank - A's (> 0: A ranks better), p the
    pair's Nemenyi p (itself family-wise over the pairs) or the Wilcoxon p."""

    rows = []
    for pair in result.pairs:  # oriented as every verdict file: A the later variant of the plan, B the earlier
        p = pair.get("nemenyi_p") if result.test == "friedman_nemenyi" else result.p_value
        earlier_ahead = pair["rank_difference"] > 0 if result.test == "friedman_nemenyi" else pair["median_difference"] > 0
        verdict = ("B better" if earlier_ahead else "A better") if pair["different"] else "inconclusive"
        rows.append({"design": "corpora", "train_size": "all", "metric": "average_rank", "variant_a": pair["b"],
                     "variant_b": pair["a"], "contrast": "every pair", "partitions": len(result.corpora),
                     "difference": -pair["rank_difference"], "p_value": p, "p_holm": p,
                     "family": "primary", "family_size": len(result.pairs), "verdict": verdict})
    return in_schema(pd.DataFrame(rows))


