"""Each finished run's probability calibration (Brier score, ECE over CALIBRATION_BINS equal-mass bins;
common/metrics.py): the worker records both; an older record's, made before it did, are computed here from its
stored predictions, in memory, unrounded (nothing is written back)."""
from __future__ import annotations

from typing import Mapping

import numpy as np

from common.metric_names import CALIBRATION
from common.metrics import brier_score, expected_calibration_error
from comparisons.run_folder.folder import RunFolder


def run_calibration(folder: RunFolder, record: Mapping, positive_index: int | None) -> dict[str, float]:
    """{'brier', 'ece'} of one finished run: as its record holds them (the worker records them), else
    (an older record) from its stored predictions, in memory; NaN when those or their labels are missing."""
    if all(record.get(name) is not None for name in CALIBRATION):
        return {name: float(record[name]) for name in CALIBRATION}
    found = labelled_predictions(folder, record)
    if found is None:
        return dict.fromkeys(CALIBRATION, float("nan"))
    labels, proba = found
    return {"brier": brier_score(labels, proba, positive_index),
            "ece": expected_calibration_error(labels, proba, positive_index)}


def labelled_predictions(folder: RunFolder, record: Mapping) -> tuple[np.ndarray, np.ndarray] | None:
    """(test labels, probabilities) as the run stored them; None for an older file without labels or none at all."""
    if not folder.has_predictions(record):
        return None
    saved = folder.predictions(record)
    return None if saved.labels is None else (np.asarray(saved.labels), saved.proba)
