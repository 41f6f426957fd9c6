"""The variance estimate that follows the design (comparisons/stats/design_variance.py), checked against
independent computations: a brute-force overlap, Monte Carlo simulations with a known answer, and the old
Nadeau-Bengio corrected t where the design is full-size k-fold."""
from __future__ import annotations

import numpy as np
import pytest
import pandas as pd
from scipy.stats import t as student_t

from comparisons.stats.corrected_t import corrected_t, design_interval
from comparisons.stats.design_variance import (design_correlation, design_mean_se, resample_frame, sets_at,
                                               training_overlap)
from comparisons.stats.family import ATANH, correct_family


def test_training_overlap_matches_a_brute_force_count():
    rng = np.random.default_rng(0)
    sets = {(f"p{p}", s): rng.choice(200, size=50, replace=False) for p in range(4) for s in range(2)}
    shares = [len(set(a) & set(b)) / 50 for (pa, _), a in sets.items() for (pb, _), b in sets.items() if pa < pb]
    assert np.isclose(training_overlap(sets), np.mean(shares))
    # seeds that share one training set are one set: the same overlap as one seed a partition
    one = {(p, 0): v for (p, s), v in sets.items() if s == 0}
    doubled = {**one, **{(p, 1): v for (p, _), v in one.items()}}
    assert np.isclose(training_overlap(doubled), training_overlap(one))


def test_full_size_kfold_is_the_nadeau_bengio_corrected_t():
    """5-fold at full size: two training sets share 3/4 of their texts, above Nadeau-Bengio's rho = 1/5: the cap
    does not bind and the estimate is the corrected t of before (the committed reference's verdicts unchanged)."""
    items = np.arange(1000)
    folds = np.array_split(items, 5)
    sets = {(f"r0f{k}", 0): np.setdiff1d(items, folds[k]) for k in range(5)}
    overlap = training_overlap(sets)
    assert np.isclose(overlap, 0.75)
    differences = np.array([0.010, 0.004, 0.012, -0.002, 0.007])
    values = pd.DataFrame({"partition": list(map(str, range(5))), "draw": 0, "value": differences})
    mean, se, df, method = design_mean_se(values, test_to_train=200 / 800, overlap=overlap)
    assert method == "nadeau_bengio"
    assert (mean, df) == corrected_t(differences, 0.25)[::2] and np.isclose(se, corrected_t(differences, 0.25)[1])


def _simulate(partitions: int, draws: int, shared: float, rng) -> pd.DataFrame:
    """d = mu + a_p (the partition's test fold, shared by its draws) + e_pr (the draw); partitions independent."""
    a = rng.normal(0, np.sqrt(shared), partitions)
    e = rng.normal(0, np.sqrt(1 - shared), (partitions, draws))
    return pd.DataFrame({"partition": np.repeat(np.arange(partitions), draws), "draw": np.tile(np.arange(draws), partitions),
                         "value": (0.3 + a[:, None] + e).ravel()})


def test_draws_sharing_a_test_fold_cover_at_the_nominal_level():
    """Independent partitions, draws correlated inside a partition: the 95% interval covers the true mean at 95%
    (Monte Carlo, 1,500 designs of 5 partitions x 5 draws), where Nadeau-Bengio at 50 labels (n_test/n_train 22)
    covers nearly always and the plain t over all 25 draws (ignoring the shared fold) covers too rarely."""
    rng = np.random.default_rng(1)
    hits, plain = [], []
    for _ in range(1500):
        values = _simulate(5, 5, shared=0.3, rng=rng)
        mean, se, df, method = design_mean_se(values, test_to_train=22.3, overlap=0.0)
        half = student_t.ppf(0.975, df) * se
        hits.append(abs(mean - 0.3) <= half)
        flat = values["value"].to_numpy()
        plain.append(abs(flat.mean() - 0.3) <= student_t.ppf(0.975, 24) * flat.std(ddof=1) / 5)
    assert method == "overlap"
    assert 0.93 <= np.mean(hits) <= 0.97
    assert np.mean(plain) < 0.85


def test_overlapping_training_sets_are_bounded_by_their_overlap():
    """A linear training effect (the mean of per-text effects over the training set, the texts a fresh sample of the
    population each time) plus a little test noise, training sets of 200 drawn from 600 (a third shared): the
    estimate's expected variance covers the true variance of the mean (the overlap bounds the correlation) and is
    close to it, where the plain t (no correction) is a third too small; 95% intervals cover at >= 95%."""
    rng = np.random.default_rng(2)
    pool, n, partitions = 600, 200, 5
    means, estimates, plain, hits = [], [], [], []
    for _ in range(1200):
        effects = rng.normal(0, 1, pool)  # the population's texts: drawn anew (the truth is 0)
        sets = [rng.choice(pool, n, replace=False) for _ in range(partitions)]
        d = np.array([effects[s].mean() for s in sets]) + rng.normal(0, 0.01, partitions)
        overlap = training_overlap({(p, 0): s for p, s in enumerate(sets)})
        frame = pd.DataFrame({"partition": range(partitions), "draw": 0, "value": d})
        mean, se, df, _ = design_mean_se(frame, test_to_train=10.0, overlap=overlap)
        means.append(mean)
        estimates.append(se ** 2)
        plain.append(np.var(d, ddof=1) / partitions)
        hits.append(abs(mean) <= student_t.ppf(0.975, df) * se)
    true = np.mean(np.square(means))
    assert 0.95 * true <= np.mean(estimates) <= 1.25 * true
    assert np.mean(plain) < 0.75 * true
    assert np.mean(hits) >= 0.94


def test_nadeau_bengio_stays_an_option():
    values = pd.DataFrame({"partition": range(5), "draw": 0, "value": [0.1, 0.2, 0.15, 0.3, 0.25]})
    rho, method = design_correlation(0.02, 22.3, "nadeau_bengio")
    assert method == "nadeau_bengio" and np.isclose(rho / (1 - rho), 22.3)
    _, se_old, _, _ = design_mean_se(values, 22.3, 0.02, "nadeau_bengio")
    _, se_new, _, _ = design_mean_se(values, 22.3, 0.02, "overlap")
    assert np.isclose(se_old, corrected_t(values["value"].to_numpy(), 22.3)[1]) and se_new < se_old / 4


def test_no_interval_leaves_the_scale():
    """A difference of two [0, 1] scores whose t interval would leave [-1, 1] falls back to the t on the atanh
    scale, named on its row; a recipe's [0, 1] score to the logit scale."""
    row = pd.DataFrame([{"metric": "average_precision", "variant_a": "A", "variant_b": "B", "difference": 0.31,
                         "standard_error": 0.4, "df": 4.0, "p_value": 0.5, "p_equivalence": 0.9, "margin": 0.005,
                         "ci_low": -0.8, "ci_high": 1.42}])
    out = correct_family(row)
    assert out["interval_method"].iloc[0] == ATANH
    assert -1 < out["ci_low_family"].iloc[0] < out["ci_low"].iloc[0] < 0.31 < out["ci_high"].iloc[0] \
        < out["ci_high_family"].iloc[0] < 1
    scores = pd.DataFrame({"partition": range(5), "draw": 0, "value": [0.99, 0.97, 0.999, 0.95, 0.998]})
    mean, low, high, method = design_interval(scores, 22.3, None, "nadeau_bengio")
    assert method == "t on the logit scale" and 0 < low < mean < high < 1


def test_draws_for_power_matches_a_simulated_nested_design():
    """The draws the planner proposes give >= 80% power in a simulation of the nested design (partitions' own
    variance plus draws'), and one draw fewer gives less (the estimator's own test, Holm's level of 8 hypotheses)."""
    from comparisons.stats.power import draws_for_power

    between, within, delta, level = 0.0004, 0.01, 0.1, 0.05 / 8
    needed = draws_for_power(delta, between, within, 5, 0.0, 8)
    assert needed is not None and needed > 1
    rng = np.random.default_rng(3)
    critical = student_t.ppf(1 - level / 2, 4)

    def simulated(draws: int) -> float:
        found = 0
        for _ in range(3000):
            means = delta + rng.normal(0, np.sqrt(between), 5) + rng.normal(0, np.sqrt(within), (5, draws)).mean(axis=1)
            found += abs(means.mean()) / (means.std(ddof=1) / np.sqrt(5)) > critical
        return found / 3000

    assert simulated(needed) >= 0.78 and simulated(needed - 1) < 0.80
    assert draws_for_power(delta, 0.01, within, 5, 0.0, 8) is None, "the partitions' own variance is the floor"


def test_folds_for_power_matches_a_simulated_design_of_k_disjoint_folds():
    """The folds K the planner proposes (optimistic bound: the partitions' spread as measured) give >= 80% power in a
    simulation of K partitions with 3 draws each, and K - 1 gives less; the pessimistic bound, whose partitions'
    spread grows with K, asks for at least as many, and a gap the floor cannot reach gets None."""
    from comparisons.stats.power import folds_for_power

    between, within, delta, hypotheses = 0.0004, 0.004, 0.03, 8
    level = 0.05 / hypotheses
    optimistic = folds_for_power(delta, between, within, 5, 3, 0.0, hypotheses, test_scales=False)
    pessimistic = folds_for_power(delta, between, within, 5, 3, 0.0, hypotheses, test_scales=True)
    assert optimistic is not None and 5 < optimistic <= (pessimistic or 41)
    rng = np.random.default_rng(4)

    def simulated(folds: int) -> float:
        critical = student_t.ppf(1 - level / 2, folds - 1)
        found = 0
        for _ in range(3000):
            means = (delta + rng.normal(0, np.sqrt(between), folds)
                     + rng.normal(0, np.sqrt(within), (folds, 3)).mean(axis=1))
            found += abs(means.mean()) / (means.std(ddof=1) / np.sqrt(folds)) > critical
        return found / 3000

    assert simulated(optimistic) >= 0.78 and simulated(optimistic - 1) < 0.80
    assert folds_for_power(0.001, between, within, 5, 3, 0.0, hypotheses, test_scales=True) is None


def test_a_draw_is_a_recorded_training_set_and_pairs_across_variants():
    """Seeds on one set are one draw, sets differ: draws differ; two variants' runs on one set get one label (the
    pair test matches them); the lookup is by (partition, seed) of one size, as sets_at gives them."""
    recorded = {("50", 0, 1): [3, 1, 2], ("50", 0, 2): [3, 1, 2], ("50", 0, 3): [7, 8, 9], ("50", 1, 4): [4, 5, 6],
                ("100", 0, 1): list(range(100))}
    here = sets_at(recorded, 50)
    assert set(here) == {(0, 1), (0, 2), (0, 3), (1, 4)}
    runs = pd.DataFrame({"partition": [0, 0, 0, 1], "seed": [1, 2, 3, 4], "ap": [0.5, 0.6, 0.7, 0.8]})
    frame = resample_frame(runs, "ap", here)
    draws = frame.groupby("partition")["draw"].nunique()
    assert draws.to_dict() == {0: 2, 1: 1}  # seeds 1 and 2 share a set: one draw; seed 3 another
    other = resample_frame(runs.iloc[[3, 2, 1, 0]], "ap", here)  # another variant, its runs in another order
    assert dict(zip(zip(other["partition"], other["value"]), other["draw"]))[(0, 0.5)] == frame["draw"].iloc[0]
    assert set(other["draw"]) == set(frame["draw"])
    assert (resample_frame(runs, "ap", None)["draw"] == 0).all()  # nothing recorded: one draw a partition


def test_assurance_averages_power_over_the_pilot_variance_as_a_simulation_does():
    """A plan that admits its pilot is a sample: assurance is the power averaged over the chi-square law of the
    pilot's variance (checked against a Monte Carlo draw of that law); with infinite pilot degrees of freedom it is
    the plain power, and a pilot of 4 degrees of freedom lowers a planned 0.96 power."""
    import numpy as np
    from scipy.stats import chi2

    from comparisons.stats.power import assurance, power

    se, level = 0.018, 0.05 / 8
    plain = power(0.10, se, 9, level)
    at = lambda scale: power(0.10, se * scale, 9, level)  # noqa: E731
    assert assurance(at, float("inf")) == pytest.approx(plain)
    draws = chi2.rvs(4, size=20000, random_state=np.random.default_rng(0))
    simulated = float(np.mean([at(np.sqrt(4 / x)) for x in draws[:4000]]))
    assert assurance(at, 4) == pytest.approx(simulated, abs=0.015)
    assert plain > 0.9 and assurance(at, 4) < plain - 0.05


def test_the_planner_drops_an_equivalence_chain_its_standard_error_cannot_reach():
    import pandas as pd

    from comparisons.studies.power_sizes import chain_levels, unreachable_chains

    components = pd.DataFrame([{"train_size": 200, "contrast": c, "difference": 0.02, "between": between,
                                "within": 0.0, "pilot_draws": 3, "partitions": 5, "overlap_term": 0.0,
                                "family_size": 8} for c, between in (("a − b", 1e-3), ("c − d", 1e-7))])
    dropped = unreachable_chains(components, 10, 1, 5, "optimistic", {"a − b": 0.005, "c − d": 0.005})
    assert [(d["contrast"], d["kind"]) for d in dropped] == [("a − b", "e")], dropped
    assert "standard error below" in dropped[0]["why"]
    levels = chain_levels(["a − b", "c − d"], dropped, "natural-order", 3)
    # a − b's equivalence start (alpha/4) passes half to its own difference chain, half to c − d's two chain starts
    assert levels == pytest.approx({"a − b": 0.05 * 3 / 8, "c − d": 0.05 * 5 / 16})
