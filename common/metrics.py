"""Quality metrics from probabilities (scikit-learn), and a threshold chosen on validation."""
from __future__ import annotations

import numpy as np
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    confusion_matrix,
    f1_score,
    precision_recall_curve,
    precision_score,
    recall_score,
)


def classification_metrics(
    y_true: np.ndarray, proba: np.ndarray, positive_index: int | None = 1, threshold: float | None = None
) -> dict:
    """Accuracy, macro-F1, AP, positive-class precision/recall and the confusion matrix.

    proba is (n, n_classes). AP is from probabilities: binary -> of the positive class;
    multi-class -> macro one-vs-rest. Binary predictions use `threshold` on the positive
    probability when given, else the arg-max.
    """
    y_true = np.asarray(y_true)
    n_classes = proba.shape[1]
    if n_classes == 2 and positive_index is not None:
        score = proba[:, positive_index]
        if threshold is None:
            y_pred = proba.argmax(axis=1)
        else:
            y_pred = np.where(score >= threshold, positive_index, 1 - positive_index)
        ap = average_precision_score(y_true == positive_index, score)
    else:
        y_pred = proba.argmax(axis=1)
        onehot = np.eye(n_classes)[y_true]
        present = onehot.sum(axis=0) > 0
        ap = average_precision_score(onehot[:, present], proba[:, present], average="macro")
    result = {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "macro_f1": float(f1_score(y_true, y_pred, average="macro", labels=range(n_classes), zero_division=0)),
        "average_precision": float(ap),
        "confusion_matrix": confusion_matrix(y_true, y_pred, labels=range(n_classes)).tolist(),
    }
    if positive_index is not None:
        is_pos_true, is_pos_pred = y_true == positive_index, y_pred == positive_index
        result["positive_precision"] = float(precision_score(is_pos_true, is_pos_pred, zero_division=0))
        result["positive_recall"] = float(recall_score(is_pos_true, is_pos_pred, zero_division=0))
    return result


def choose_threshold(
    y_true: np.ndarray, score: np.ndarray, positive_index: int = 1, precision_floor: float | None = None
) -> dict:
    """Pick a threshold on validation scores of the positive class.

    precision_floor=None: the threshold with the best F1, in the middle of its plateau: every
    threshold from just above the highest score it rejects up to the lowest score it accepts gives
    the same validation decisions, and the midpoint of that gap (widened over neighbouring
    thresholds of equal F1) is the one least tied to a single validation score. On a nearly
    separable validation set the lowest edge sat at 0.01 for some seeds of the fine-tuned MiniLM.
    precision_floor=p: the threshold with the highest recall whose precision is at least p
    (falls back to the highest-precision threshold when no threshold reaches p).
    """
    precision, recall, thresholds = precision_recall_curve(np.asarray(y_true) == positive_index, score)
    precision, recall = precision[:-1], recall[:-1]  # the last point has no threshold
    if precision_floor is None:
        f1 = np.divide(2 * precision * recall, precision + recall, out=np.zeros_like(precision),
                       where=(precision + recall) > 0)
        best = int(np.argmax(f1))
        last = best
        while last + 1 < len(f1) and np.isclose(f1[last + 1], f1[best], rtol=0, atol=1e-12):
            last += 1  # the plateau: neighbouring thresholds with the same F1
        low = thresholds[best - 1] if best > 0 else thresholds[best]
        plateau = (float(low) + float(thresholds[last])) / 2
        rule = "best F1 on validation, middle of its plateau"
    else:
        ok = np.flatnonzero(precision >= precision_floor)
        if ok.size:
            best = int(ok[np.argmax(recall[ok])])
            rule = f"max recall with precision >= {precision_floor} on validation"
        else:
            best = int(np.argmax(precision))
            rule = f"no threshold reaches precision {precision_floor}; highest precision on validation"
    return {
        "threshold": plateau if precision_floor is None else float(thresholds[best]),
        "valid_precision": float(precision[best]),
        "valid_recall": float(recall[best]),
        "rule": rule,
    }
