"""comparisons/stats/bootstrap.py on synthetic predictions whose answers are known."""
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, average_precision_score, brier_score_loss, f1_score

from scipy.stats import norm

from comparisons.stats.family import correct_family, four_way
from comparisons.stats.bootstrap import (PAIR_COLUMNS, PAIR_METRICS, VERDICTS, compare, holm, mcnemar_exact,
                                  run_intervals, sign_flip_p, weighted_average_precision, weighted_metric)

N_ITEMS = 300


def labels_and_scores(seed=0, noise=0.35):
    rng = np.random.default_rng(seed)
    labels = (rng.random(N_ITEMS) < 0.15).astype(int)
    score = np.clip(labels * 0.6 + rng.normal(0.2, noise, N_ITEMS), 0, 1)
    return labels, score


def frame(variants: dict[str, list[np.ndarray]], threshold=0.5) -> pd.DataFrame:
    """variant -> one positive-class score array per seed."""
    return pd.DataFrame([{"variant": v, "seed": s, "threshold": threshold, "proba": np.c_[1 - p, p]}
                         for v, scores in variants.items() for s, p in enumerate(scores)])


def test_weighted_metrics_equal_scikit_learn_with_sample_weights_and_ties():
    labels, score = labels_and_scores()
    score = np.round(score, 1)  # many ties: one threshold per distinct score, as scikit-learn
    weights = np.random.default_rng(1).integers(0, 3, N_ITEMS).astype(float)
    expected = average_precision_score(labels, score, sample_weight=weights)
    assert weighted_average_precision(score, labels == 1, weights[None])[0] == pytest.approx(expected)
    proba = np.c_[1 - score, score]
    predicted = (score >= 0.3).astype(int)
    assert weighted_metric("macro_f1_at_threshold", proba, labels, 1, 0.3, weights[None])[0] == pytest.approx(
        f1_score(labels, predicted, average="macro", sample_weight=weights))
    assert weighted_metric("accuracy", proba, labels, 1, 0.3, weights[None])[0] == pytest.approx(
        accuracy_score(labels, proba.argmax(axis=1), sample_weight=weights))


def test_weighted_brier_and_ece_are_common_metrics_figures_and_scikit_learn_s_brier_with_weights():
    from common.metrics import brier_score, expected_calibration_error

    labels, score = labels_and_scores()
    proba = np.c_[1 - score, score]
    weights = np.random.default_rng(1).integers(0, 3, N_ITEMS).astype(float)
    assert weighted_metric("brier", proba, labels, 1, None, weights[None])[0] == pytest.approx(
        brier_score_loss(labels, score, sample_weight=weights))
    ones = np.ones((1, N_ITEMS))
    assert weighted_metric("ece", proba, labels, 1, None, ones)[0] == pytest.approx(
        expected_calibration_error(labels, proba, 1))
    # by hand: 20 items, 10 equal-mass bins of 2; the lowest bin's two items drawn twice each, the rest once
    hand_score = np.repeat([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95], 2)
    hand_labels = np.array([0, 1] + [0, 0] * 4 + [1, 0] + [1, 1] * 4)
    counts = np.array([[2, 2] + [1] * 18], float)
    # bins (weight, |Σw·y − Σw·p|): (4, |2 − 0.4|), then (2, |Σy − 2p|) for p = 0.2 ... 0.95
    gaps = [abs(2 - 0.4)] + [2 * p for p in (0.2, 0.3, 0.4, 0.5)] + [abs(1 - 1.2)] + [2 - 2 * p for p in (0.7, 0.8, 0.9, 0.95)]
    expected = sum(gaps) / 22
    assert weighted_metric("ece", np.c_[1 - hand_score, hand_score], hand_labels, 1, None, counts)[0] == \
        pytest.approx(expected)
    assert brier_score(labels, proba, 1) == pytest.approx(weighted_metric("brier", proba, labels, 1, None, ones)[0])


def test_the_same_ranking_with_squashed_probabilities_is_equal_in_ap_and_worse_in_brier_and_ece():
    labels, _ = labels_and_scores()
    rng = np.random.default_rng(3)
    calibrated = [np.clip(np.where(labels == 1, 0.85, 0.05) + rng.normal(0, 0.05, N_ITEMS), 0.01, 0.99)
                  for _ in range(2)]
    squashed = [p ** 0.2 for p in calibrated]  # the same order of the items: the same AP, far from the labels' rates
    pairs = compare(frame({"squashed": squashed, "calibrated": calibrated}), labels, 1).pairs.set_index("metric")
    assert pairs.loc["average_precision", "difference"] == pytest.approx(0, abs=1e-12)
    for metric in ("brier", "ece"):
        row = pairs.loc[metric]
        assert (row["variant_a"], row["variant_b"]) == ("calibrated", "squashed")
        assert row["difference"] < -0.1 and row["ci_high"] < 0 and row["verdict"] == "A better", metric


def test_identical_predictions_give_zero_difference_an_interval_holding_zero_and_p_one():
    labels, score = labels_and_scores()
    result = compare(frame({"a": [score, score], "b": [score, score]}), labels, 1)
    pairs = result.pairs
    assert list(pairs["metric"]) == list(PAIR_METRICS) and list(pairs.columns) == list(PAIR_COLUMNS)
    assert (pairs["variant_a"] == "b").all() and (pairs["variant_b"] == "a").all()
    assert (pairs["difference"] == 0).all() and ((pairs["ci_low"] <= 0) & (0 <= pairs["ci_high"])).all()
    decided = pairs[~pairs["metric"].isin(["brier", "ece"])]  # probabilities have no decisions to test
    assert (pairs["p_value"] == 1).all() and (decided["decisions_p"] == 1).all() and (pairs["p_holm"] == 1).all()
    assert set(pairs["verdict"]) == {"equivalent"}, "no spread at all and no gap: within every margin"
    assert set(decided["verdict_decisions"]) == {"inconclusive"}
    assert set(decided["mcnemar_p_per_seed"]) == {"1;1"}
    assert pairs.loc[pairs["metric"].isin(["brier", "ece"]), "verdict_decisions"].isna().all()


def test_right_on_every_item_against_clearly_wrong_is_better():
    labels, _ = labels_and_scores()
    right = np.where(labels == 1, 0.9, 0.1)
    rng = np.random.default_rng(2)
    wrong = [np.where(rng.random(N_ITEMS) < 0.3, 1 - right, right) for _ in range(2)]  # 30% of items flipped
    result = compare(frame({"weak": wrong, "strong": [right, right]}), labels, 1)
    pairs = result.pairs.set_index("metric")
    pair = pairs.loc["average_precision"]
    assert (pair["variant_a"], pair["variant_b"]) == ("strong", "weak")
    assert pair["difference"] > 0.2 and pair["ci_low"] > 0 and pair["p_holm"] < 0.01
    assert (pairs["verdict"] == "A better").all()  # on Brier and ECE too: lower is better there
    assert (pairs["verdict_decisions"].dropna() == "A better").all() and pairs["verdict_decisions"].isna().sum() == 2
    assert pair["a_wrong_b_right"] == 0 and pair["a_right_b_wrong"] > 60
    strong = result.variants.set_index("variant").loc["strong"]
    assert strong["average_precision_mean"] == 1 and strong["average_precision_ci_low"] == 1
    # the same pair the other way round says "B better"
    flipped = compare(frame({"strong": [right, right], "weak": wrong}), labels, 1).pairs.iloc[0]
    assert flipped["verdict"] == "B better" and flipped["difference"] == pytest.approx(-pair["difference"])


def test_variant_interval_is_over_test_items_for_the_seed_average():
    labels, score = labels_and_scores()
    other = labels_and_scores(seed=5)[1]
    variants = compare(frame({"a": [score, other]}), labels, 1).variants.iloc[0]
    mean = np.mean([average_precision_score(labels, s) for s in (score, other)])
    assert variants["seeds"] == 2 and variants["average_precision_mean"] == pytest.approx(mean)
    assert variants["average_precision_ci_low"] < mean < variants["average_precision_ci_high"]
    assert variants["average_precision_ci_high"] - variants["average_precision_ci_low"] > 0.02  # 300 items: wide


def test_mcnemar_equals_a_hand_computed_binomial_case():
    # 8 items only A gets right, 2 only B: p = 2 * P(X <= 2 | n=10, 1/2) = 2 * (1 + 10 + 45) / 1024
    a = np.array([True] * 8 + [False] * 2 + [True] * 5)
    b = np.array([False] * 8 + [True] * 2 + [True] * 5)
    p, a_only, b_only = mcnemar_exact(a, b)
    assert (a_only, b_only) == (8, 2) and p == pytest.approx(112 / 1024)
    assert mcnemar_exact(a, a) == (1.0, 0, 0)


def test_holm_multiplies_the_smallest_p_by_the_number_of_pairs_and_stays_monotone():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_pairs_use_only_the_seeds_both_variants_finished():
    labels, score = labels_and_scores()
    predictions = frame({"a": [score, score, score], "b": [score]})
    result = compare(predictions, labels, 1)
    assert result.pairs.iloc[0]["seeds"] == 1 and list(result.variants["seeds"]) == [3, 1]
    assert set(result.pairs["verdict"]) <= set(VERDICTS)


def test_predictions_of_another_length_are_refused():
    labels, score = labels_and_scores()
    with pytest.raises(ValueError, match="predictions for"):
        compare(frame({"a": [score[:-1]]}), labels, 1)


def test_a_single_run_interval_is_the_one_seed_variant_interval():
    labels, score = labels_and_scores()
    other = labels_and_scores(seed=5)[1]
    predictions = frame({"a": [score, other]})
    runs = run_intervals(predictions, labels, 1)
    alone = compare(predictions[predictions["seed"] == 1], labels, 1).variants.iloc[0]
    assert list(runs["seed"]) == [0, 1]
    assert runs.loc[1, "average_precision_ci_low"] == pytest.approx(alone["average_precision_ci_low"])
    assert runs.loc[0, "average_precision_ci_low"] != runs.loc[1, "average_precision_ci_low"]


def test_a_gap_well_inside_the_margin_with_a_tight_spread_is_equivalent_and_a_wide_one_is_inconclusive():
    labels, score = labels_and_scores()
    nudged = np.clip(score + np.random.default_rng(3).normal(0, 0.002, N_ITEMS), 0, 1)
    pair = compare(frame({"a": [score, score], "b": [nudged, nudged]}), labels, 1).pairs.set_index("metric")
    ap = pair.loc["average_precision"]
    assert abs(ap["difference"]) < 0.002 and ap["margin"] == 0.005
    assert ap["verdict"] == "equivalent" and ap["p_equivalence_holm"] < 0.05 and ap["family"] == "primary"
    other = labels_and_scores(seed=9, noise=0.45)[1]  # another model: a wide spread of the difference
    wide = compare(frame({"a": [score], "b": [other]}), labels, 1).pairs.set_index("metric").loc["average_precision"]
    assert wide["ci_high"] - wide["ci_low"] > 2 * wide["margin"]
    assert wide["verdict"] in ("inconclusive", "A better", "B better") and wide["verdict"] != "equivalent"


def test_seed_spread_widens_the_interval_beyond_the_items_only_one():
    """The two-level bootstrap draws seeds too: two very different seeds give a wider interval than either alone."""
    labels, good = labels_and_scores(noise=0.1)
    bad = labels_and_scores(seed=4, noise=0.6)[1]
    both = compare(frame({"a": [good, bad]}), labels, 1).variants.iloc[0]
    alone = [compare(frame({"a": [s]}), labels, 1).variants.iloc[0] for s in (good, bad)]
    width = both["average_precision_ci_high"] - both["average_precision_ci_low"]
    assert width > max(r["average_precision_ci_high"] - r["average_precision_ci_low"] for r in alone)
    assert both["average_precision_ci_low"] <= alone[1]["average_precision_mean"] + 0.02


def test_smallest_detectable_difference_is_at_holms_strictest_level():
    labels, score = labels_and_scores()
    others = [labels_and_scores(seed=s)[1] for s in (11, 12)]
    pairs = compare(frame({"a": [score], "b": [others[0]], "c": [others[1]]}), labels, 1).pairs
    ap = pairs[pairs["metric"] == "average_precision"]
    assert (ap["family_size"] == 6).all(), "3 pairs, a difference and an equivalence hypothesis each"
    shift = ap["smallest_detectable_difference"] / ap["standard_error"]
    critical = norm.ppf(1 - 0.05 / 12)  # Holm's strictest level, alpha / 6, two-sided
    power = norm.sf(critical - shift) + norm.cdf(-critical - shift)  # a bootstrap's test: the normal, both tails
    assert np.allclose(power, 0.8, atol=1e-9)
    assert (ap["smallest_detectable_difference"] > 2.8 * ap["standard_error"]).all(), "above the uncorrected 2.80 x se"


def test_pooled_decisions_test_finds_a_small_consistent_edge_that_each_seed_alone_misses():
    """6 seeds, each with 7 items only A gets right and 2 only B (McNemar p 0.18 per seed): pooled, it is clear."""
    n, seeds = 200, 6
    a_correct = np.ones((seeds, n), bool)
    b_correct = np.ones((seeds, n), bool)
    for s in range(seeds):
        b_correct[s, 7 * s:7 * s + 7] = False
        a_correct[s, 100 + 2 * s:100 + 2 * s + 2] = False
    per_seed = [mcnemar_exact(a, b)[0] for a, b in zip(a_correct, b_correct)]
    assert min(per_seed) > 0.15
    assert sign_flip_p(a_correct, b_correct) < 0.01
    assert sign_flip_p(a_correct, a_correct) == 1.0


def test_four_way_rule_and_family_correction():
    assert four_way(0.01, 0.01, 0.5) == "A better" and four_way(-0.01, 0.01, 0.5) == "B better"
    assert four_way(0.001, 0.4, 0.01) == "equivalent" and four_way(0.001, 0.4, 0.2) == "inconclusive"
    rows = pd.DataFrame({"metric": ["average_precision"] * 3 + ["macro_f1"], "difference": [0.02, 0.01, 0.0, 0.02],
                         "variant_a": ["b", "c", "c", "b"], "variant_b": ["a", "a", "b", "a"], "margin": 0.005,
                         "standard_error": 0.004, "df": 4.0,
                         "p_value": [0.001, 0.002, 0.9, 0.01], "p_equivalence": [0.9, 0.9, 0.001, 0.9]})
    corrected = correct_family(rows)
    # one family of claims: the 3 difference and 3 equivalence hypotheses of the primary metric together
    assert list(corrected["p_holm"]) == pytest.approx([0.006, 0.008, 1.0, 0.02])
    assert list(corrected["p_equivalence_holm"]) == pytest.approx([1.0, 1.0, 0.006, 0.9])
    assert list(corrected["verdict"]) == ["A better", "A better", "equivalent", "A better"]
    assert list(corrected["family"]) == ["primary"] * 3 + ["secondary"]
    assert list(corrected["family_size"]) == [6, 6, 6, 2]
