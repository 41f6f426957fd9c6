"""The cheap A/A check: the verdict code's false-positive rate and power, with a seeded stochastic stand-in
(logistic regression trained by SGD on TF-IDF) on the real SMS data (comparisons/studies/calibration.py)."""
import pytest

from common.datasets import load_sms_spam
from comparisons.studies.calibration import run_study


def test_a_a_false_positive_rate_is_at_most_0_10_and_a_planted_difference_is_found():
    result = run_study(load_sms_spam(), "sgd_tfidf", pool=20, folds=5)  # 10 disjoint pairs, independent
    false_positives = result["aa_different"]["partitions"]
    assert false_positives["comparisons"] == 10 and false_positives["rate"] <= 0.10
    power = result["ab_weak_called_worse"]["partitions"]
    assert power["comparisons"] == 10 and power["rate"] >= 0.80
    shared = run_study(load_sms_spam(), "sgd_tfidf", pool=5, folds=3, planted=False, all_pairs=True)
    assert shared["pairs"] == "all" and shared["aa_different"]["partitions"]["comparisons"] == 10
    assert result["mean_ap"]["weakened"] < result["mean_ap"]["recipe"] - 0.1
    again = run_study(load_sms_spam(), "sgd_tfidf", pool=4, folds=3, planted=False)
    assert again == run_study(load_sms_spam(), "sgd_tfidf", pool=4, folds=3, planted=False) | {
        "fit_and_score_seconds": again["fit_and_score_seconds"]}, "deterministic given its seeds"


def test_the_a_a_across_kernels_scores_side_b_in_a_child_under_the_other_kernels(tmp_path):
    import json

    from comparisons.studies.calibration import OTHER_KERNELS, main

    assert OTHER_KERNELS == {"ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "COMPATIBLE"}
    assert main(["--learner", "sgd_tfidf", "--pool", "2", "--folds", "2", "--no-planted", "--other-kernels",
                 "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "sgd_tfidf_kernels.json").read_text())
    assert result["aa_across_kernels_different"]["partitions"]["comparisons"] == 1  # pairs a < b, b under other kernels
    assert result["same_seed_across_kernels_different"]["comparisons"] == 1  # side B (seed 1) against itself
    # TF-IDF and SGD use no oneDNN or MKL kernel: the other kernels leave every score where it was
    assert result["kernel_move_ap"]["exact_share"] == 1.0 and result["same_seed_across_kernels_different"]["hits"] == 0
    assert "A/A across kernels (side B: ONEDNN_MAX_CPU_ISA=AVX2 MKL_CBWR=COMPATIBLE)" in (
        tmp_path / "sgd_tfidf_kernels.md").read_text()


def test_a_a_pairs_are_disjoint_by_default_no_seed_in_two_comparisons():
    from comparisons.studies.calibration import disjoint_pairs

    assert disjoint_pairs(7) == [(0, 1), (2, 3), (4, 5)]
    result = run_study(load_sms_spam(), "sgd_tfidf", pool=6, folds=3, planted=False)
    assert result["pairs"] == "disjoint" and result["aa_different"]["partitions"]["comparisons"] == 3


def test_partition_pair_is_the_production_corrected_t_of_a_minus_b():
    import numpy as np
    from scipy.stats import t as student_t

    from common.partitions import kfold_partitions
    from comparisons.studies.calibration import partition_pair

    partitions = kfold_partitions(load_sms_spam(), 5, 1, 0)
    a = np.array([0.95, 0.96, 0.94, 0.97, 0.95])
    b = a - np.array([0.010, 0.012, 0.008, 0.011, 0.009])
    row = partition_pair(a, b, partitions, 0.005)
    ratio = np.mean([len(p.split.test) / (len(p.split.train) + len(p.split.valid)) for p in partitions])
    half = student_t.ppf(0.975, 4) * np.sqrt((1 / 5 + ratio) * np.var(a - b, ddof=1))  # Nadeau-Bengio by hand
    assert row["difference"] == pytest.approx(0.010) and row["verdict"] == "A better"
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.010 - half, 0.010 + half), rel=1e-6)


def test_drawn_calibration_finds_the_planted_gap_that_nadeau_bengio_misses_at_100_labels():
    """At 100 labelled texts with 3 draws a partition, the overlap-capped estimate finds the weakened
    recipe worse in every comparison, where Nadeau-Bengio's factor (11 at 100 labels) misses it mostly; the A/A calls
    nothing different; every subset and seed is the comparison's, partition's and draw's own."""
    from comparisons.studies.drawn_calibration import FOLDS, run_study as drawn_study, seeds_of

    units = [seeds_of(c, p, d, 3) for c in range(4) for p in range(FOLDS) for d in range(3)]
    assert len({u[0] for u in units}) == len(units) and len({s for u in units for s in u[1:]}) == 2 * len(units)
    result, samples = drawn_study("sgd_tfidf", 100, 3, 4)
    new, old = result["summary"]["overlap"], result["summary"]["nadeau_bengio"]
    assert new["planted_found"]["hits"] == 4 and old["planted_found"]["hits"] <= 2
    assert new["aa_different"]["hits"] == 0 and result["mean_training_overlap"] < 0.05
    assert set(samples.loc[samples["variance"] == "nadeau_bengio", "variance_method"]) == {"nadeau_bengio"}
