"""common/selection.py: the best epoch by validation score, and validation that cannot choose."""
import math

import pytest

from common.errors import UserInputError
from common.selection import BestEpoch, UnusableValidationError, check_validation_labels


def test_best_epoch_keeps_the_highest_score_and_its_snapshot_only():
    best, snapshots = BestEpoch(), []

    def snapshot(tag):
        return lambda: snapshots.append(tag) or tag

    assert best.update(1, 0.90, snapshot("w1")) is True
    assert best.update(2, 0.95, snapshot("w2")) is True
    assert best.update(3, 0.95, snapshot("w3")) is False  # a tie keeps the earlier epoch
    assert best.update(4, 0.80, snapshot("w4")) is False
    assert (best.best_epoch, best.best_score, best.best_state) == (2, 0.95, "w2")
    assert snapshots == ["w1", "w2"]  # no copy taken for epochs that are not the best
    assert [h["epoch"] for h in best.history] == [1, 2, 3, 4]
    assert best.require() is best


def test_nan_never_becomes_best_and_require_says_what_to_do():
    best = BestEpoch()
    assert best.update(1, float("nan"), lambda: "nan") is False
    assert best.update(2, math.inf, lambda: "inf") is False
    with pytest.raises(UnusableValidationError, match="no epoch had a finite validation score"):
        best.require()
    assert best.update(3, 0.5, lambda: "w3") is True
    assert best.update(4, float("nan"), lambda: "nan") is False
    assert best.require().best_state == "w3"


def test_validation_with_one_class_is_refused():
    check_validation_labels([0, 1, 0], 2)
    with pytest.raises(UnusableValidationError, match="at least two classes") as raised:
        check_validation_labels([0, 0, 0], 2)
    assert isinstance(raised.value, UserInputError) and isinstance(raised.value, ValueError)
    with pytest.raises(UnusableValidationError):
        check_validation_labels([], 2)
