"""The cheap A/A check: the verdict code's false-positive rate and power, with a seeded stochastic stand-in
(logistic regression trained by SGD on TF-IDF) on the real SMS data (comparisons/studies/calibration.py)."""
from common.datasets import load_sms_spam
from comparisons.studies.calibration import run_study


def test_a_a_false_positive_rate_is_at_most_0_10_and_a_planted_difference_is_found():
    result = run_study(load_sms_spam(), "sgd_tfidf", pool=15, folds=5)
    false_positives = result["aa_different"]["partitions"]
    assert false_positives["comparisons"] >= 100 and false_positives["rate"] <= 0.10
    power = result["ab_weak_called_worse"]["partitions"]
    assert power["comparisons"] >= 100 and power["rate"] >= 0.80
    assert result["mean_ap"]["weakened"] < result["mean_ap"]["recipe"] - 0.1
    again = run_study(load_sms_spam(), "sgd_tfidf", pool=4, folds=3, planted=False)
    assert again == run_study(load_sms_spam(), "sgd_tfidf", pool=4, folds=3, planted=False) | {
        "fit_and_score_seconds": again["fit_and_score_seconds"]}, "deterministic given its seeds"
