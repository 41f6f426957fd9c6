"""What may be concluded across corpora, on hand-made score tables (Demšar 2006)."""
import numpy as np
import pandas as pd
import pytest

from comparisons.report.cross_corpus import conclusion
from comparisons.stats.across_corpora import (across_corpora, corpus_ranks,
                                                        nemenyi_critical_difference, wilcoxon_smallest_p)


def scores(rows: dict[str, list[float]], variants: str) -> pd.DataFrame:
    return pd.DataFrame(rows, index=list(variants)).T


def test_ranks_put_the_best_first_and_share_ties():
    ranks = corpus_ranks(scores({"c1": [0.9, 0.8, 0.8], "c2": [0.5, 0.7, 0.6]}, "ABC"))
    assert ranks.loc["c1"].tolist() == [1.0, 2.5, 2.5] and ranks.loc["c2"].tolist() == [3.0, 1.0, 2.0]


def test_nemenyi_critical_difference_matches_demsar_table():
    # Demšar (2006), Table 5(a): q_0.05 = 2.343 for k = 3 and 2.728 for k = 5 (q already divided by sqrt 2)
    assert nemenyi_critical_difference(3, 4) == pytest.approx(2.343 * np.sqrt(3 * 4 / (6 * 4)), abs=2e-3)
    assert nemenyi_critical_difference(5, 4) == pytest.approx(2.728 * np.sqrt(5 * 6 / (6 * 4)), abs=2e-3)


def test_friedman_and_nemenyi_on_corpora_that_agree():
    # four corpora ranking A > B > C alike: chi-square = N (k - 1) = 8, p = exp(-4); Iman-Davenport's F is then
    # infinite (p 0); CD = 1.657
    table = scores({f"c{i}": [0.9 + i / 100, 0.8, 0.7 - i / 100] for i in range(4)}, "ABC")
    result = across_corpora(table)
    assert result.test == "friedman_nemenyi" and result.average_ranks == {"A": 1.0, "B": 2.0, "C": 3.0}
    assert result.chi_square == pytest.approx(8.0) and result.chi_square_p == pytest.approx(np.exp(-4))
    assert result.statistic == float("inf") and result.p_value == 0.0
    assert result.can_rule and result.rejected
    different = {(p["a"], p["b"]): p["different"] for p in result.pairs}
    assert different == {("A", "B"): False, ("A", "C"): True, ("B", "C"): False}  # gap 2 >= CD 1.657 > gap 1
    assert any("A > C" in line for line in conclusion(result))


def test_friedman_that_does_not_reject_names_no_pair():
    table = scores({"c1": [0.9, 0.8, 0.7], "c2": [0.7, 0.9, 0.8], "c3": [0.8, 0.7, 0.9], "c4": [0.9, 0.7, 0.8]}, "ABC")
    result = across_corpora(table)
    assert result.can_rule and not result.rejected and not any(p["different"] for p in result.pairs)
    assert "does not reject" in " ".join(conclusion(result))


def test_two_corpora_are_too_few_for_friedman_with_three_variants():
    # the most extreme table two corpora can give: both rank alike, exactly p = 1/3! = 0.167 > 0.05 (the
    # chi-square approximation said exp(-2) = 0.135); three corpora: 1/36 = 0.028
    result = across_corpora(scores({"c1": [0.9, 0.8, 0.7], "c2": [0.95, 0.85, 0.75]}, "ABC"))
    assert result.smallest_p == pytest.approx(1 / 6) and not result.can_rule
    assert result.corpora_needed == 3
    line = " ".join(conclusion(result))
    assert "Too few corpora to rule" in line and "0.167" in line and "at least 3 corpora" in line
    assert "语料库太少" in " ".join(conclusion(result, "zh"))


def test_a_critical_difference_beyond_any_rank_gap_is_too_few_even_when_friedman_could_reject():
    # k = 10 variants, N = 2 corpora: Friedman's smallest p is exactly 1/10!, but CD = 9.6 > k - 1 = 9
    table = scores({"c1": list(np.linspace(0.9, 0.5, 10)), "c2": list(np.linspace(0.8, 0.4, 10))}, "ABCDEFGHIJ")
    result = across_corpora(table)
    assert result.smallest_p == pytest.approx(1 / 3628800) and result.smallest_p < 0.05
    assert result.critical_difference > 9 and not result.can_rule
    assert "no pair could ever be told apart" in " ".join(conclusion(result))


def test_four_corpora_can_never_make_wilcoxon_significant():
    # all four differences of one sign is the most extreme case: exact two-sided p = 2 / 2**4 = 0.125
    assert [wilcoxon_smallest_p(n) for n in (4, 5, 6)] == pytest.approx([0.125, 0.0625, 0.03125])
    result = across_corpora(scores({f"c{i}": [0.9, 0.8 - i / 100] for i in range(4)}, "AB"))
    assert result.test == "wilcoxon" and result.p_value == pytest.approx(0.125)
    assert not result.can_rule and not result.rejected and result.corpora_needed == 6
    line = " ".join(conclusion(result))
    assert "Too few corpora to rule" in line and "0.125" in line and "at least 6 corpora" in line


def test_six_corpora_of_one_sign_make_wilcoxon_significant():
    result = across_corpora(scores({f"c{i}": [0.7, 0.8 + i / 100] for i in range(6)}, "AB"))
    assert result.can_rule and result.rejected and result.p_value == pytest.approx(0.03125)
    assert "B ranks above A" in " ".join(conclusion(result))


def test_a_corpus_without_every_variant_is_left_out_of_the_ranks():
    table = scores({"c1": [0.9, 0.8], "c2": [0.7, np.nan], "c3": [0.6, 0.9]}, "AB")
    result = across_corpora(table)
    assert result.corpora == ["c1", "c3"] and result.average_ranks == {"A": 1.5, "B": 1.5}
    assert result.left_out == ["c2"] and "Left out of the ranks (a variant has no score there): c2." in conclusion(result)
