"""The small-budget policy, in one place: when validation is too small to choose, and what chooses instead.

A recipe makes choices (an epoch, a regularisation strength, which n-grams to count, a decision threshold).
At full size a validation part of hundreds of texts chooses them. At 50 labels the validation part carved from
the budget holds 10 texts, one or two of them spam; on that, every epoch after the second scores validation AP
1.0 and the earliest wins (the committed curve's frozen MiniLM kept epoch 2 of 30 and reached AP 0.18 on some
draws), and a threshold is fitted to one message. docs/measurement.md "Small label budgets" derives the rule:

- validation can choose when its rarer class holds at least MIN_RARER_IN_VALIDATION texts (10: one text then
  moves a class's AP by at most about a tenth; below it the choice follows single texts). On the SMS data
  (13.4% spam, a fifth of the budget for validation) the rule holds from 500 labels up: at 50, 100 and 200
  labels the validation part holds 1-2, 2-3 and 5 spam messages.
- cheap recipes (TF-IDF + logistic regression, the frozen encoder's head) use the budget whole (training and
  validation texts together, `labelled_budget`) at every size: they choose by stratified inner
  cross-validation on it (`choose_by_inner_cv`: out-of-fold probabilities, pooled AP over the budget), refit the
  chosen candidate on all of it, and take the decision threshold from its out-of-fold probabilities;
- expensive recipes follow a fixed schedule where validation cannot choose: hf_bert:full (its schedule piloted
  on another corpus) and SetFit (always) train on the whole budget, keep the last step's weights, and decide at
  the arg-max (0.5 on two classes): no held-out text is left to choose a threshold on. Above the rule
  validation chooses their epoch as before. The scratch encoders (torch_scratch and its twin keras_layers) do
  the same with their recipe's planned budget (common/batching.training_budget: at least `min_steps` steps,
  at most `max_epochs`), run to the end (`fixed_schedule_applies`, `schedule_selection`).

The test part is never seen here: backends receive only the run's training and validation texts.
A backend records what chose in `selection_` (a `Selection`); common/scoring.py reads it for the threshold.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from common.errors import UserInputError
from common.labelled_texts import LabelledTexts

MIN_RARER_IN_VALIDATION = 10  # the rarer class's texts in the validation part for validation to choose
INNER_FOLDS = 5               # stratified inner folds, fewer when the rarer class has fewer texts
FIXED_SCHEDULE_RULE = "arg-max (0.5): a fixed schedule trained on the whole budget, no held-out text to choose on"


def rarer_class_count(labels) -> int:
    """Texts of the rarest class present (0 for no labels)."""
    counts = np.bincount(np.asarray(labels, dtype=np.int64))
    present = counts[counts > 0]
    return int(present.min()) if len(present) > 1 else 0


def validation_can_choose(valid_labels, n_classes: int) -> bool:
    """True when every class of the data has at least MIN_RARER_IN_VALIDATION texts in the validation part."""
    counts = np.bincount(np.asarray(valid_labels, dtype=np.int64), minlength=n_classes)
    return bool(counts.size) and int(counts.min()) >= MIN_RARER_IN_VALIDATION


CHOOSE_ON = ("auto", "validation")  # auto: this policy decides; validation: the validation part always chooses


def fixed_schedule_applies(choose_on: str, valid_labels, n_classes: int) -> bool:
    """An expensive recipe's switch: True when choose_on is "auto" and validation is too small to choose."""
    if choose_on not in CHOOSE_ON:
        raise UserInputError(f"choose_on={choose_on!r} is not one of {CHOOSE_ON}")
    return choose_on == "auto" and not validation_can_choose(valid_labels, n_classes)


def schedule_selection(fixed: bool, **chosen) -> "Selection":
    """What an expensive recipe records: the fixed schedule it followed (`chosen`), or that validation chose."""
    return Selection(rule="fixed_schedule", chosen=chosen) if fixed else Selection(rule="validation")


def labelled_budget(train: LabelledTexts, valid: LabelledTexts) -> LabelledTexts:
    """The whole label budget: training texts, then validation texts."""
    return LabelledTexts(list(train.texts) + list(valid.texts), np.concatenate([train.labels, valid.labels]),
                         train.class_names, train.positive_index, train.origin)


@dataclass(frozen=True)
class Selection:
    """How a fit made its choices: what the worker records and scoring reads.

    rule: "validation" (the validation part chose), "inner_cv" (stratified inner CV on the whole budget) or
    "fixed_schedule" (no choice made on labels). For inner_cv, `labels` and `proba` are the out-of-fold
    labels and probabilities of the chosen candidate (the threshold is chosen on them); `candidates` holds
    every candidate's score."""

    rule: str
    chosen: Any = None
    candidates: list = field(default_factory=list)
    folds: int = 0
    labels: np.ndarray | None = None
    proba: np.ndarray | None = None

    def summary(self) -> dict:
        """JSON-able: the rule, the choice and every candidate's score (no text, no probability)."""
        return {"rule": self.rule, "chosen": self.chosen, "folds": self.folds, "candidates": self.candidates,
                "min_rarer_in_validation": MIN_RARER_IN_VALIDATION}


def inner_folds(labels, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified inner folds of the budget: min(INNER_FOLDS, rarer class count) folds, at least 2, seeded."""
    from sklearn.model_selection import StratifiedKFold

    labels = np.asarray(labels)
    folds = max(2, min(INNER_FOLDS, rarer_class_count(labels)))
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed % 2**32)
    return list(splitter.split(np.zeros(len(labels)), labels))


def pooled_average_precision(labels, proba: np.ndarray, positive_index: int | None) -> float:
    """AP of out-of-fold probabilities pooled over the budget (macro over classes without a positive one)."""
    from common.metrics import classification_metrics

    return float(classification_metrics(np.asarray(labels), np.asarray(proba, dtype=np.float64),
                                        positive_index)["average_precision"])


def choose_by_inner_cv(candidates: Sequence[Any], fit_predict: Callable[[Any, np.ndarray, np.ndarray], np.ndarray],
                       labels, n_classes: int, positive_index: int | None, seed: int) -> Selection:
    """The candidate whose out-of-fold probabilities score the best pooled AP (ties: the earlier).

    fit_predict(candidate, train_rows, held_out_rows) -> (len(held_out_rows), n_classes) probabilities, fitted
    on train_rows of the budget only. Returns a Selection with the chosen candidate's out-of-fold proba."""
    labels = np.asarray(labels)
    folds = inner_folds(labels, seed)
    scored, best = [], None
    for candidate in candidates:
        proba = np.zeros((len(labels), n_classes))
        for fit_rows, held_rows in folds:
            proba[held_rows] = fit_predict(candidate, fit_rows, held_rows)
        score = pooled_average_precision(labels, proba, positive_index) if np.isfinite(proba).all() else np.nan
        scored.append({"candidate": candidate, "inner_cv_average_precision": score})
        if best is None or score > best[1]:  # NaN never wins
            best = (candidate, score, proba)
    if best is None or not np.isfinite(best[1]):
        best = (candidates[0], np.nan, None)
    return Selection(rule="inner_cv", chosen=best[0], candidates=scored, folds=len(folds), labels=labels,
                     proba=best[2])
