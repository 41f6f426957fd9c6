"""The suite's one fit-and-score: fit on the training part (validation chooses the epoch), choose the
decision threshold on validation, score the test part once. The worker (comparisons/run/worker.py) scores
what it fitted with `score_fitted` (handing it the test probabilities its throughput pass already made);
the course's lessons fit and score in-process with `fit_and_score`, so a lesson and a run agree on what
"macro-F1 at the validation threshold" means.

Binary data: the threshold is common.metrics.choose_threshold's (best validation F1, the middle of its
plateau; or the highest recall at a precision floor), and `test_at_threshold` holds the test metrics at it.
More classes: the arg-max; no threshold, `test_at_threshold` is None.

At a small label budget (common/small_budget.py) the model was fitted on the validation texts too, so they
cannot choose: a model whose `selection_.rule` is "inner_cv" gives the out-of-fold labels and probabilities
of its budget, and the threshold and the "validation" metrics come from those; one whose rule is
"fixed_schedule" decides at the arg-max and has no validation metrics (AP None).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from common.metrics import choose_threshold, classification_metrics
from common.small_budget import FIXED_SCHEDULE_RULE


@dataclass(frozen=True)
class Scored:
    valid_proba: np.ndarray        # (n_valid, n_classes)
    test_proba: np.ndarray         # (n_test, n_classes): the test part, scored once
    valid: dict                    # classification_metrics on validation (arg-max decisions)
    test: dict                     # classification_metrics on test (arg-max decisions: the 0.5 cut on two classes)
    threshold: float | None = None          # chosen on validation (binary data only)
    threshold_rule: str | None = None
    test_at_threshold: dict | None = None   # classification_metrics on test at that threshold
    fit_seconds: float | None = None        # fit_and_score: the fit's wall time (validation epochs included)

    @property
    def headline(self) -> dict:
        """AP and the decisions a run reports: at the validation threshold where there is one, else arg-max."""
        decided = self.test_at_threshold or self.test
        return {"average_precision": self.test["average_precision"], "macro_f1": decided["macro_f1"],
                "accuracy": decided["accuracy"]}


def choose_decision(model, valid, valid_proba: np.ndarray, positive_index: int | None,
                    precision_floor: float | None = None) -> tuple[dict | None, dict]:
    """(the decision threshold chosen and its rule, or None; the validation metrics) of a fitted model: on its
    validation probabilities, or on its inner-CV out-of-fold view when it was fitted on validation too, or the
    fixed 0.5 cut when nothing was held out (the module's docstring). What `score_fitted` scores the test part at,
    and what a deployed model ships with (comparisons/run/deploy_worker.py)."""
    binary = valid_proba.shape[1] == 2 and positive_index is not None
    selection = getattr(model, "selection_", None)
    rule = getattr(selection, "rule", "validation")
    choose_labels, choose_proba = valid.labels, valid_proba
    if rule == "inner_cv" and selection.proba is not None:  # trained on validation too: its out-of-fold view
        choose_labels, choose_proba = selection.labels, selection.proba
    if rule == "fixed_schedule" or (rule == "inner_cv" and selection.proba is None):
        chosen = {"threshold": 0.5, "rule": FIXED_SCHEDULE_RULE} if binary else None
        return chosen, {"average_precision": None}  # nothing held out to score
    chosen = (choose_threshold(choose_labels, choose_proba[:, positive_index], positive_index, precision_floor)
              if binary else None)
    if chosen and rule == "inner_cv":
        chosen = {**chosen, "rule": chosen["rule"].replace("on validation", "on inner-CV out-of-fold predictions")}
    return chosen, classification_metrics(choose_labels, choose_proba, positive_index)


def score_fitted(model, valid, test, positive_index: int | None, test_proba: np.ndarray | None = None,
                 precision_floor: float | None = None, valid_proba: np.ndarray | None = None) -> Scored:
    """A fitted model scored: validation probabilities, the threshold chosen on them, the test part once.
    `valid`, `test`: LabelledTexts (texts, labels). valid_proba, test_proba: the probabilities when the caller
    has them already (the worker scores validation first and the test part in its throughput pass), so no
    text is scored twice."""
    valid_proba = model.predict_proba(valid.texts) if valid_proba is None else valid_proba
    test_proba = model.predict_proba(test.texts) if test_proba is None else test_proba
    chosen, valid_metrics = choose_decision(model, valid, valid_proba, positive_index, precision_floor)
    return Scored(valid_proba=valid_proba, test_proba=test_proba,
                  valid=valid_metrics,
                  test=classification_metrics(test.labels, test_proba, positive_index),
                  threshold=chosen["threshold"] if chosen else None, threshold_rule=chosen["rule"] if chosen else None,
                  test_at_threshold=classification_metrics(test.labels, test_proba, positive_index, chosen["threshold"])
                  if chosen else None)


def fit_and_score(model, train, valid, test, precision_floor: float | None = None) -> Scored:
    """Fit `model` (a backend: fit(train, valid), predict_proba(texts)) and score it (score_fitted)."""
    started = time.perf_counter()
    model.fit(train, valid)
    seconds = time.perf_counter() - started
    return replace(score_fitted(model, valid, test, train.positive_index, precision_floor=precision_floor),
                   fit_seconds=seconds)
