"""Choosing the epoch on validation: one helper for every backend that trains for several epochs.

    best = BestEpoch()
    for epoch in range(1, epochs + 1):
        ...train...
        best.update(epoch, valid_ap, lambda: copy.deepcopy(model.state_dict()))
    model.load_state_dict(best.require().best_state)

Framework-free: the snapshot is whatever `snapshot_fn` returns (a state_dict copy, Keras
weights), taken only when the epoch becomes the best, so no copy is made for the others.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from common.errors import UserInputError


class UnusableValidationError(UserInputError):
    """Validation cannot choose an epoch: the message says what is wrong and what to do.

    A UserInputError (so a ValueError): the command line prints it as one `error:` line.
    """


def check_validation_labels(labels, n_classes: int) -> None:
    """Raise UnusableValidationError when the validation labels hold fewer than two classes.

    Average precision is undefined without both positives and negatives, so such a split cannot
    choose an epoch, a recipe or a threshold.
    """
    present = np.unique(np.asarray(labels))
    if len(present) < 2:
        shown = present.tolist() if len(present) else "none"
        raise UnusableValidationError(
            f"the validation split holds {len(np.asarray(labels))} text(s) of class(es) {shown} out of "
            f"{n_classes}: validation needs at least two classes to score average precision; "
            "use a larger or stratified validation split (more data or a larger validation fraction)"
        )


def validation_average_precision(labels, proba: np.ndarray, positive_index: int | None = 1) -> float:
    """Average precision of validation probabilities (n, C); NaN when the model gave non-finite output."""
    from common.metrics import classification_metrics

    proba = np.asarray(proba, dtype=np.float64)
    if not np.isfinite(proba).all():
        return math.nan
    return float(classification_metrics(labels, proba, positive_index)["average_precision"])


class BestEpoch:
    """Keeps the epoch with the best validation score (higher is better; ties keep the earlier).

    Attributes: best_epoch (None until a finite score), best_score (-inf until then),
    best_state (the snapshot of the best epoch), history (one {"epoch", "score"} per update).
    """

    def __init__(self) -> None:
        self.best_epoch: int | None = None
        self.best_score: float = -math.inf
        self.best_state: Any = None
        self.history: list[dict] = []

    def update(self, epoch: int, score: float, snapshot_fn: Callable[[], Any]) -> bool:
        """Record this epoch's score; snapshot and return True when it is the new best.

        A NaN or infinite score is recorded but never becomes the best.
        """
        score = float(score)
        self.history.append({"epoch": int(epoch), "score": score})
        if not math.isfinite(score) or score <= self.best_score:
            return False
        self.best_epoch, self.best_score, self.best_state = int(epoch), score, snapshot_fn()
        return True

    def require(self) -> "BestEpoch":
        """Self, or UnusableValidationError when no epoch had a finite validation score."""
        if self.best_epoch is None:
            scores = [entry["score"] for entry in self.history]
            raise UnusableValidationError(
                f"no epoch had a finite validation score ({len(scores)} epoch(s), scores {scores}): "
                "training diverged or validation cannot be scored; lower the learning rate, "
                "check the data, or use a larger validation split"
            )
        return self
