"""One batch order for both scratch twins, and training budgets that scale with the data.

torch_scratch and keras_layers draw nothing of their own here: each epoch's order and its batch
boundaries come from `epoch_batches(n, batch_size, seed, epoch)`, so the two frameworks see the
same rows in the same batches (only dropout masks stay each framework's own).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def epoch_batches(n_rows: int, batch_size: int, seed: int, epoch: int) -> list[np.ndarray]:
    """Row indices of each batch of one epoch: a permutation seeded by (seed, epoch), cut in order.

    Every batch holds batch_size rows except possibly the last; epoch counts from 1.
    """
    if n_rows <= 0 or batch_size <= 0:
        raise ValueError(f"need n_rows > 0 and batch_size > 0, got {n_rows} and {batch_size}")
    order = np.random.default_rng([seed, epoch]).permutation(n_rows)
    return [order[start : start + batch_size] for start in range(0, n_rows, batch_size)]


@dataclass(frozen=True)
class TrainingBudget:
    """What one fit is given: batch size, planned epochs and the optimisation steps they make."""

    batch_size: int
    epochs: int
    steps_per_epoch: int

    @property
    def total_steps(self) -> int:
        return self.epochs * self.steps_per_epoch


MIN_BATCHES_PER_EPOCH = 8


def training_budget(n_rows: int, batch_size: int, epochs: int, min_steps: int = 0,
                    max_epochs: int | None = None) -> TrainingBudget:
    """Scale the budget to the data: batch never larger than the data, at least `min_steps` steps.

    The batch shrinks on small data so that an epoch holds MIN_BATCHES_PER_EPOCH steps
    (50 rows -> batches of 7); then the epochs grow until min_steps is reached, at most
    max_epochs. With the full SMS training split (3,901 rows, batch 32: 122 steps an epoch)
    `epochs` decides. Validation still chooses the epoch kept (common.selection.BestEpoch).
    """
    if n_rows <= 0:
        raise ValueError("cannot train on an empty training set")
    batch = max(1, min(int(batch_size), math.ceil(n_rows / MIN_BATCHES_PER_EPOCH)))
    steps_per_epoch = math.ceil(n_rows / batch)
    planned = max(int(epochs), math.ceil(min_steps / steps_per_epoch)) if min_steps else int(epochs)
    if max_epochs is not None:
        planned = min(planned, max(int(epochs), int(max_epochs)))
    return TrainingBudget(batch_size=batch, epochs=max(1, planned), steps_per_epoch=steps_per_epoch)
