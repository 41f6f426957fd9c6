"""The group-sequential rule (comparisons/stats/sequential.py): boundaries against published values and an
independent multivariate-normal integration, the error rate under peeking by simulation (the sequential rule holds
alpha where the naive rule's rises), repeated p-values, and the family's decisions over looks."""
import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_normal, norm
from scipy.stats import t as student_t

from comparisons.stats import t_boundaries as t_boundaries_module
from comparisons.stats.t_boundaries import t_nominal_level
from comparisons.stats.sequential import (boundaries, contrast_states, information_fractions, nominal_level,
                                          repeated_p, sequential_family, spent)


def canonical_covariance(fractions):
    t = np.asarray(fractions)
    return np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))


def test_boundaries_match_published_obrien_fleming_type_spending():
    # gsDesign sfLDOF / rpact asOF, one-sided 0.025 (= two-sided 0.05, 0.025 a side), equally spaced looks
    assert boundaries([1 / 3, 2 / 3, 1], 0.05) == pytest.approx([3.7103, 2.5114, 1.9930], abs=2e-3)
    assert boundaries([0.2, 0.4, 0.6, 0.8, 1], 0.05) == pytest.approx([4.8769, 3.3569, 2.6803, 2.2898, 2.0310], abs=2e-3)
    # SeqBounds.jl's README (one-sided, 0.05, looks at quarters; its coarse grid: 2 decimals)
    assert boundaries([0.25, 0.5, 0.75, 1], 0.05, sides=1) == pytest.approx([3.7496, 2.5399, 2.0160, 1.7201], abs=1e-2)
    # one look: the fixed test
    assert boundaries([1.0], 0.05) == pytest.approx([norm.isf(0.025)])


@pytest.mark.parametrize("fractions", [[0.704, 0.905, 1.0], [0.35, 1.0], [0.2, 0.5, 0.7, 1.0]])
def test_crossing_probabilities_agree_with_scipy_multivariate_normal(fractions):
    """scipy's multivariate normal (Genz's integration, an independent implementation) of the looks' canonical joint
    law: P(never crossing up to look k) = 1 - alpha(t_k), both sides, at every look."""
    c = boundaries(fractions, 0.05)
    covariance = canonical_covariance(fractions)
    for k in range(1, len(fractions) + 1):
        inside = multivariate_normal(np.zeros(k), covariance[:k, :k], allow_singular=False).cdf(
            c[:k], lower_limit=-c[:k], rng=np.random.default_rng(0))
        assert 1 - inside == pytest.approx(2 * spent(fractions[k - 1], 0.025), abs=3e-4)


def peeking_rates(correlation: float, folds: int = 5, looks: int = 3, sequences: int = 40_000, seed: int = 1):
    """(naive, sequential z rule, fixed-at-the-end, sequential t rule) false-positive rates of a null pair read after every repeat: partition
    differences equicorrelated at `correlation` (the model behind the corrected t), its t at each look."""
    rng = np.random.default_rng(seed)
    partitions = folds * looks
    shared = rng.standard_normal((sequences, 1)) * np.sqrt(correlation)
    d = shared + rng.standard_normal((sequences, partitions)) * np.sqrt(1 - correlation)
    ratio = correlation / (1 - correlation)
    counts = [folds * k for k in range(1, looks + 1)]
    fractions = information_fractions(counts, ratio)
    naive = sequential = t_scale = np.zeros(sequences, bool)
    for look, j in enumerate(counts, start=1):
        mean, var = d[:, :j].mean(axis=1), d[:, :j].var(axis=1, ddof=1)
        t = mean / np.sqrt(var * (1 / j + ratio))
        p = 2 * student_t.sf(np.abs(t), j - 1)
        naive = naive | (p < 0.05)
        sequential = sequential | (p <= nominal_level(fractions, look, 0.05))
        t_scale = t_scale | (p <= t_nominal_level(counts, ratio, look, 0.05))
    return naive.mean(), sequential.mean(), (p < 0.05).mean(), t_scale.mean()  # the last: the family's rule


@pytest.mark.parametrize("correlation", [0.02, 0.2])
def test_peeking_inflates_the_naive_rule_and_not_the_sequential_one(correlation):
    naive, sequential, fixed, _ = peeking_rates(correlation)
    error = 3 * np.sqrt(0.05 * 0.95 / 40_000)
    assert abs(fixed - 0.05) < error, "the corrected t is exact under its model: the simulation is right"
    # the significance-level approach (t on 4, 9, 14 df against z boundaries) holds alpha to within about 0.008
    # (measured 0.0575 at correlation 0.2 in 40,000 sequences); three naive looks at 0.05 inflate it far more
    assert sequential < 0.05 + 0.0075 + error, "the spending keeps alpha over three looks"
    assert naive > 0.075 and naive - sequential > 0.015, "three looks at 0.05 inflate the naive rule"


@pytest.mark.parametrize("correlation", [0.02, 0.2])
def test_boundaries_on_the_t_scale_hold_alpha_over_three_looks(correlation):
    """The simulation above (its own seed, not the boundaries' SEED): the z rule's 0.0575 at correlation 0.2 is
    above alpha; the t-scale boundaries spend exactly alpha under the model, within the two simulations' error."""
    t_scale = peeking_rates(correlation)[3]
    error = 3 * np.sqrt(0.05 * 0.95 / 40_000) + 3 * np.sqrt(0.05 * 0.95 / t_boundaries_module.SEQUENCES)
    assert abs(t_scale - 0.05) < error


def test_t_boundaries_start_at_the_exact_t_quantile_and_repeated_p_inverts_the_nominal_level():
    counts, ratio = [5, 10, 15], 0.25
    bounds = t_boundaries_module.t_boundaries(counts, ratio, 0.05)
    first = 2 * spent(information_fractions(counts, ratio)[0], 0.025)
    assert bounds[0] == pytest.approx(student_t.isf(first / 2, 4))  # look 1: T_1 is exactly t on 4 df
    assert bounds[0] > bounds[1] > bounds[2] > student_t.isf(0.025, 14)  # spending: stricter than a lone test
    for look in (1, 2, 3):
        nominal = t_nominal_level(counts, ratio, look, 0.01)
        assert t_boundaries_module.t_repeated_p(nominal, counts, ratio, look) == pytest.approx(0.01, rel=0.05)
    assert t_boundaries_module.t_repeated_p(0.9, counts, ratio, 1) == 1.0


def test_repeated_p_inverts_the_nominal_level_and_the_information_fractions_follow_the_variance():
    fractions = information_fractions([5, 10, 15], 0.25)  # the reference: n_test / n_train = 1115 / 4459
    assert fractions == pytest.approx([(1 / 15 + 0.25) / (1 / 5 + 0.25), (1 / 15 + 0.25) / (1 / 10 + 0.25), 1])
    assert information_fractions([5, 10, 15], 0.0) == pytest.approx([1 / 3, 2 / 3, 1])
    for look in (1, 2, 3):
        for level in (0.05, 0.001):
            p = nominal_level(fractions, look, level)
            assert repeated_p(p, fractions, look) == pytest.approx(level, rel=1e-5)
    assert repeated_p(0.9, fractions, 1) == 1.0 and repeated_p(0.0, fractions, 2) == 0.0
    assert nominal_level(fractions, 3, 0.05) < 0.05 and nominal_level(fractions, 1, 0.05) < nominal_level(fractions, 2, 0.05)


def look_frame(rows):
    base = {"design": "partitions", "train_size": "all", "metric": "average_precision", "seeds": 1, "folds": 5,
            "margin": 0.005, "test_to_train": 0.25, "correction_ratio": 0.25, "variance_method": "t",
            "training_overlap": None, "draws": 1.0}
    frame = []
    for look, a, b, difference, se, active in rows:
        df = 5 * look - 1
        t = difference / se
        frame.append({**base, "look": look, "active": active, "variant_a": a, "variant_b": b,
                      "partitions": 5 * look, "difference": difference, "standard_error": se, "df": df,
                      "spread": se / np.sqrt(1 / (5 * look) + 0.25), "ci_low": difference - 2 * se,
                      "ci_high": difference + 2 * se, "p_value": float(2 * student_t.sf(abs(t), df)),
                      "p_equivalence": float(max(student_t.sf((difference + 0.005) / se, df),
                                                 student_t.cdf((difference - 0.005) / se, df)))})
    return pd.DataFrame(frame)


def test_the_family_decides_once_freezes_the_row_and_its_repeated_interval_is_wider():
    looks = look_frame([(1, "x", "y", 0.20, 0.01, True), (1, "x", "z", 0.01, 0.02, True),
                        (2, "x", "y", 0.21, 0.01, False), (2, "x", "z", 0.012, 0.015, True),
                        (3, "x", "z", 0.011, 0.012, True)])
    rows = sequential_family(looks, [5, 10, 15], [("x", "y"), ("x", "z")]).set_index("variant_b")
    assert rows.loc["y", "verdict"] == "A better" and rows.loc["y", "decided_at"] == 1 and rows.loc["y", "look"] == 1
    assert rows.loc["z", "verdict"] == "inconclusive" and np.isnan(rows.loc["z", "decided_at"]) and rows.loc["z", "look"] == 3
    fixed_half = student_t.ppf(0.975, 14) * 0.012
    assert rows.loc["z", "ci_high"] - rows.loc["z", "difference"] > fixed_half, "a repeated interval is wider"
    assert rows["interval_method"].str.startswith("repeated confidence interval").all()
    assert (rows["family_size"] == 4).all()  # 2 pairs x (difference, equivalence), whatever look each stopped at
    states = contrast_states(rows.reset_index(), [("x", "y"), ("x", "z")], max_repeats=3)
    assert states[("x", "y")][0] == "decided"
    assert states[("x", "z")][0] in ("open", "cannot be decided within the repeats allowed")
