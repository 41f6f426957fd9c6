"""Calibration of probabilities pooled over runs: each variant's reliability points (equal-mass bins: mean probability
against the share that came true) and its ECE, from (labels, probabilities) arrays (common/metrics.py's definitions;
lower ECE is better)."""
from __future__ import annotations

import numpy as np

from common.metrics import calibration_bins, expected_calibration_error


def reliability_points(groups: dict[str, list[tuple[np.ndarray, np.ndarray]]],
                       positive_index: int | None) -> dict[str, dict[str, np.ndarray]]:
    """Per variant, the reliability diagram's points of its runs' test items pooled (partitions: every text once)."""
    points = {}
    for variant, runs in groups.items():
        if runs:
            labels = np.concatenate([labels for labels, _ in runs])
            proba = np.concatenate([proba for _, proba in runs])
            points[variant] = {**calibration_bins(labels, proba, positive_index),
                               "ece": expected_calibration_error(labels, proba, positive_index)}
    return points
