"""Training and evaluation mode, and the loss that takes logits: dropout moves train-mode scores only, the model is
left in eval mode, the softmax-first switch really reaches the backend's loss (and only while it is on), and the
constructed confidently wrong example's gradient shrinks with the bug."""
import math

import numpy as np
import pytest
import torch

from comparisons.course import train_eval_mode as module

BUG_LOSS_FLOOR = math.log(1 + math.exp(-1))  # two classes, the loss fed probabilities: -log softmax(p)_y >= this


@pytest.fixture(scope="module")
def both_ways(tiny_splits):
    train, valid, _ = tiny_splits
    return {arm: module.train_classifier(train, valid, seed=0, quick=True, softmax_first=arm == "softmax first")
            for arm in module.ARMS}


def test_eval_mode_repeats_itself_train_mode_does_not(both_ways, tiny_splits):
    backend = both_ways["logits"]
    ids = backend.vocabulary_.encode(tiny_splits[2].texts, backend.config_.max_len)
    torch.manual_seed(0)
    evaluated = module.spam_probabilities(backend.model_, ids, "eval", 2)
    np.testing.assert_array_equal(evaluated[0], evaluated[1])
    np.testing.assert_allclose(evaluated[0], backend.predict_proba(tiny_splits[2].texts)[:, 1], atol=1e-6)
    trained = module.spam_probabilities(backend.model_, ids, "train", 2)
    assert np.abs(trained[0] - trained[1]).max() > 1e-4  # dropout 0.1: fresh masks on every pass
    assert not backend.model_.training  # left in eval mode after scoring in train mode


def test_softmax_first_reaches_the_loss_and_only_while_on(both_ways, tiny_splits):
    bug, correct = both_ways["softmax first"], both_ways["logits"]
    bug_losses = [epoch["train_loss"] for epoch in bug.fit_info_["history"]]
    assert min(bug_losses) >= BUG_LOSS_FLOOR - 1e-6  # the loss read probabilities: held above its floor
    assert bug_losses != [epoch["train_loss"] for epoch in correct.fit_info_["history"]]
    ids = torch.as_tensor(bug.vocabulary_.encode(tiny_splits[2].texts[:4], bug.config_.max_len))
    bug.model_.train()
    try:
        with torch.no_grad():
            rows = bug.model_(ids).sum(dim=-1)
    finally:
        bug.model_.eval()
    assert not torch.allclose(rows, torch.ones_like(rows))  # the switch is off again: logits, not probabilities


def test_softmax_first_shrinks_the_gradient_of_a_confidently_wrong_example():
    both = module.logit_gradients(module.CONFIDENTLY_WRONG, target=module.SPAM)
    p = torch.softmax(torch.tensor(module.CONFIDENTLY_WRONG, dtype=torch.float64), dim=0).numpy()
    np.testing.assert_allclose(both["logits"]["gradient"], p - np.eye(2)[module.SPAM])  # softmax(z) - e_y
    correct, bug = (abs(both[arm]["gradient"][module.SPAM]) for arm in module.ARMS)
    assert bug * 100 < correct  # p0 p1 = 0.0025 multiplies the bug's gradient
    assert both["softmax first"]["loss"] >= BUG_LOSS_FLOOR
    table = module.gradient_table("en")
    assert (table["ratio (logits / softmax first)"] > 0).all()
