"""The small-budget policy (common/small_budget.py): where it triggers, inner CV, the heads it fits."""
from __future__ import annotations

import numpy as np
import pytest

from common.small_budget import (MIN_RARER_IN_VALIDATION, choose_by_inner_cv, inner_folds, labelled_budget,
                                 validation_can_choose)


@pytest.fixture(scope="module")
def sms():
    from common.datasets import load_sms_spam

    return load_sms_spam()


def test_the_rule_triggers_at_the_curves_small_sizes_and_not_from_500_labels(sms):
    """On the SMS curve's partitions (5 folds, a fifth of each budget for validation): 50, 100 and 200 labels leave
    validation too few spam messages to choose; 500 and 1,000 do not."""
    from common.partitions import kfold_partitions
    from common.splits import budget_parts

    split = kfold_partitions(sms, 5, 1, 20260812)[0].split
    can = {}
    for size in (50, 100, 200, 500, 1000):
        _, valid = budget_parts(split, sms.labels, sms.texts, size, subset_seed=11)
        can[size] = validation_can_choose(sms.labels[valid], 2)
        assert can[size] == (np.bincount(sms.labels[valid], minlength=2).min() >= MIN_RARER_IN_VALIDATION)
    assert can == {50: False, 100: False, 200: False, 500: True, 1000: True}


def test_inner_folds_are_stratified_and_never_more_than_the_rarer_class():
    labels = np.array([0] * 40 + [1] * 3)
    folds = inner_folds(labels, seed=0)
    assert len(folds) == 3  # the rarer class has 3 texts
    held = np.concatenate([h for _, h in folds])
    assert sorted(held) == list(range(len(labels)))  # every text held out once
    assert all(labels[h].sum() == 1 for _, h in folds)
    assert len(inner_folds(np.array([0] * 40 + [1] * 30), seed=0)) == 5


def test_choose_by_inner_cv_keeps_the_best_pooled_ap_and_its_out_of_fold_probabilities():
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(0)
    labels = np.array([0] * 30 + [1] * 10)
    x = rng.normal(size=(40, 5)) + labels[:, None] * np.array([2.0, 0, 0, 0, 0])
    calls = []

    def fit_predict(c, fit_rows, held_rows):
        calls.append((c, set(fit_rows) & set(held_rows)))
        model = LogisticRegression(C=c).fit(x[fit_rows], labels[fit_rows])
        return model.predict_proba(x[held_rows])

    selection = choose_by_inner_cv([1e-4, 1.0], fit_predict, labels, 2, 1, seed=3)
    assert all(not overlap for _, overlap in calls)  # a fold never fits on what it predicts
    scores = {c["candidate"]: c["inner_cv_average_precision"] for c in selection.candidates}
    assert selection.chosen == max(scores, key=scores.get) and selection.rule == "inner_cv"
    assert scores[selection.chosen] == pytest.approx(average_precision_score(labels, selection.proba[:, 1]))
    tie = choose_by_inner_cv(["a", "b"], lambda c, f, h: np.tile([0.5, 0.5], (len(h), 1)), labels, 2, 1, seed=3)
    assert tie.chosen == "a"  # ties keep the earlier candidate


def test_the_budget_is_training_then_validation_texts(tiny_splits):
    train, valid, _ = tiny_splits
    budget = labelled_budget(train, valid)
    assert budget.texts == list(train.texts) + list(valid.texts)
    assert (budget.labels == np.concatenate([train.labels, valid.labels])).all()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_linear_head_copies_a_logistic_regression_exactly(n_classes):
    import torch
    from sklearn.linear_model import LogisticRegression

    from backends.hf_bert.backend import MeanPoolHead

    rng = np.random.default_rng(n_classes)
    features = rng.normal(size=(60, 8))
    labels = rng.integers(0, n_classes, size=60)
    unit = features / np.linalg.norm(features, axis=1, keepdims=True)
    logreg = LogisticRegression(C=3.0).fit(unit, labels)
    head = MeanPoolHead(8, n_classes, 0.0, normalize=True).eval()
    head.copy_logistic_regression(logreg, n_classes)
    with torch.no_grad():
        proba = torch.softmax(head(torch.as_tensor(features, dtype=torch.float64).float()).double(), -1).numpy()
    assert np.abs(proba - logreg.predict_proba(unit)).max() < 1e-5
