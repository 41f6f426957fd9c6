"""Training the Keras twin the Keras way: model.fit on a PyDataset, a callback that keeps the best epoch.

- SharedOrderBatches (keras.utils.PyDataset): the batches of common.batching.epoch_batches, the
  order torch_scratch uses, each padded to a full batch with weight-0 rows (one input shape, so
  TensorFlow traces the train step once).
- BestValidationAP (keras.callbacks.Callback): scores validation AP after each epoch, keeps the
  best weights in common.selection.BestEpoch, stops early after `patience` epochs without a better
  score, and restores the best weights when training ends.
- make_optimizer: keras.optimizers.AdamW set as torch_scratch's torch.optim.AdamW (decay on
  matrices only, global-norm clipping, warm-up then linear decay per step), with epsilon placed
  as torch places it and the clipping norm taken over dense gradients (AdamWTorchEpsilon). The
  parity test checks this production optimizer as it is.
"""
from __future__ import annotations

from typing import Callable

import keras
import numpy as np
from keras import ops

from common.batching import epoch_batches
from common.config import EncoderConfig
from common.selection import BestEpoch
from common.vocabulary import PAD_ID


def full_batch(ids: np.ndarray, labels: np.ndarray, batch_size: int) -> tuple[np.ndarray, ...]:
    """Pad a short last batch with all-<pad> rows of weight 0, so every step has one shape.

    The loss, reduced with "mean_with_sample_weight", is the mean over the real rows only, as in torch.
    """
    missing = batch_size - len(ids)
    weights = np.concatenate([np.ones(len(ids), "float32"), np.zeros(missing, "float32")])
    ids = np.concatenate([ids, np.full((missing, ids.shape[1]), PAD_ID, ids.dtype)])
    labels = np.concatenate([labels, np.zeros(missing, labels.dtype)])
    return ids, labels, weights  # (batch_size, T), (batch_size,), (batch_size,)


class SharedOrderBatches(keras.utils.PyDataset):
    """(ids, labels, sample_weight) batches in common.batching's order for the current epoch.

    `epoch` (from 1) is set by BestValidationAP.on_epoch_begin; `served` records the epoch each
    batch was drawn for, so a test can check that every step saw the intended batch.
    """

    def __init__(self, ids: np.ndarray, labels: np.ndarray, batch_size: int, seed: int, **kwargs):
        super().__init__(**kwargs)
        self.ids, self.labels = ids, labels  # (N, max_len) int32, (N,) int32
        self.batch_size, self.seed = batch_size, seed
        self.epoch, self.served = 1, []
        self._batches = epoch_batches(len(ids), batch_size, seed, 1)

    def set_epoch(self, epoch: int) -> None:
        self.epoch, self._batches = epoch, epoch_batches(len(self.ids), self.batch_size, self.seed, epoch)

    def __len__(self) -> int:
        return len(self._batches)

    def __getitem__(self, index: int):
        rows = self._batches[index]
        self.served.append((self.epoch, index))
        return full_batch(self.ids[rows], self.labels[rows], self.batch_size)


class BestValidationAP(keras.callbacks.Callback):
    """After each epoch: validation AP via `score`; keep the best weights; restore them at the end.
    score None (a fixed schedule, common/small_budget.py): no validation, the last epoch's weights stay."""

    def __init__(self, score: Callable[[], float] | None, batches: SharedOrderBatches | None = None, patience: int = 0):
        super().__init__()
        self.score, self.batches, self.patience = score, batches, patience
        self.best, self.history = BestEpoch(), []

    def on_epoch_begin(self, epoch, logs=None):
        if self.batches is not None:
            self.batches.set_epoch(epoch + 1)  # Keras counts epochs from 0, common.batching from 1

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        ap = None if self.score is None else float(self.score())  # None: a fixed schedule, no validation
        if ap is not None:
            logs["val_average_precision"] = ap  # shown by the progress bar, which runs after this callback
        self.history.append({"epoch": epoch + 1, "train_loss": float(logs.get("row_loss", logs.get("loss", np.nan))),
                             "valid_average_precision": ap})
        if ap is None:
            return
        self.best.update(epoch + 1, ap, self.model.get_weights)
        if self.patience and epoch + 1 - (self.best.best_epoch or 0) >= self.patience:
            self.model.stop_training = True  # early stopping: no better validation AP for `patience` epochs

    def on_train_end(self, logs=None):
        if self.score is None:
            return
        self.model.set_weights(self.best.require().best_state)


@keras.saving.register_keras_serializable(package="transformer_compare")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """peak * factor(step): 0 -> 1 over the warm-up steps, then linearly to 0 (torch_scratch's rule)."""

    def __init__(self, peak_learning_rate: float, total_steps: int, warmup_steps: int):
        self.peak_learning_rate = peak_learning_rate
        self.total_steps, self.warmup_steps = total_steps, warmup_steps

    def __call__(self, step):
        step = ops.cast(step, "float32")
        warmup = (step + 1.0) / self.warmup_steps
        decay = ops.maximum(0.0, (self.total_steps - step) / max(1, self.total_steps - self.warmup_steps))
        return self.peak_learning_rate * ops.where(step < self.warmup_steps, warmup, decay)

    def get_config(self):
        return {"peak_learning_rate": self.peak_learning_rate, "total_steps": self.total_steps,
                "warmup_steps": self.warmup_steps}


def dense_gradients(grads: list) -> list:
    """TensorFlow's sparse embedding gradients made dense, so global-norm clipping sees the true norm.

    On TensorFlow an embedding lookup's gradient is a tf.IndexedSlices with one row per token
    occurrence. Keras's clip_by_global_norm squares those rows without first summing the repeats
    of a token, so the norm it clips by is not the gradient's: on the full SMS training split
    (seed 2, first batch) 6.358 against torch's 6.393, and 5% to 11% off on some later batches of
    the first epoch, which scaled every clipped step differently from torch_scratch's
    (comparisons/studies/twin_steps.py shows it). Adam densifies these gradients anyway, so
    densifying before clipping costs nothing more. Other Keras backends give dense gradients.
    """
    if keras.backend.backend() != "tensorflow":
        return list(grads)
    import tensorflow as tf

    return [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads]


@keras.saving.register_keras_serializable(package="transformer_compare")
class AdamWTorchEpsilon(keras.optimizers.AdamW):
    """keras AdamW whose epsilon is added after the bias correction, as torch.optim.AdamW adds it.

    Keras: w -= lr sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps); torch divides by
    sqrt(v) / sqrt(1 - b2^t) + eps instead, which is Keras's rule with eps * sqrt(1 - b2^t). The
    two differ where a gradient is as small as eps (1e-8): by up to 2e-3 in one step at lr 1e-2,
    enough to split the twins' trajectories. Its gradients are made dense before clipping
    (dense_gradients), so the global norm is torch's. Everything else is Keras's AdamW.
    """

    def apply(self, grads, trainable_variables=None):
        """Clip (global_clipnorm) and step on dense gradients: see dense_gradients."""
        return super().apply(dense_gradients(grads), trainable_variables)

    def update_step(self, gradient, variable, learning_rate):
        epsilon = self.epsilon
        step = ops.cast(self.iterations + 1, variable.dtype)
        self.epsilon = epsilon * ops.sqrt(1.0 - ops.power(ops.cast(self.beta_2, variable.dtype), step))
        try:
            super().update_step(gradient, variable, learning_rate)
        finally:
            self.epsilon = epsilon


def make_optimizer(model: keras.Model, config: EncoderConfig, total_steps: int) -> keras.optimizers.AdamW:
    """AdamW as torch_scratch sets it: torch's epsilon, decay on matrices only, clipped, scheduled."""
    schedule = WarmupLinearDecay(config.learning_rate, total_steps, max(1, round(config.warmup_fraction * total_steps)))
    optimizer = AdamWTorchEpsilon(learning_rate=schedule, weight_decay=config.weight_decay, epsilon=1e-8,
                                       global_clipnorm=config.clip_norm)
    # nanoGPT's rule: no decay on biases (Keras keeps attention biases as (H, d_k)) or LayerNorm gamma/beta
    no_decay = [w for w in model.trainable_weights if len(w.shape) < 2 or w.path.endswith(("/bias", "/gamma", "/beta"))]
    optimizer.exclude_from_weight_decay(var_list=no_decay)
    # its slots made now, eagerly: Keras 3 (without a distribution strategy) would make them inside the first
    # traced train step, and TensorFlow traces a step that creates variables twice (a tiny fit: 6.2 s -> 4.3 s CPU)
    optimizer.build(model.trainable_variables)
    return optimizer


def compile_for_training(model: keras.Model, config: EncoderConfig, total_steps: int) -> None:
    """Compile with the optimizer above and a cross-entropy over real rows.

    "row_loss" (a weighted metric) is the epoch's mean loss over real rows, torch_scratch's
    definition; Keras's own "loss" averages batches and counts padded rows of the last one.
    """
    model.compile(
        optimizer=make_optimizer(model, config, total_steps),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="mean_with_sample_weight"),
        weighted_metrics=[keras.metrics.SparseCategoricalCrossentropy(from_logits=True, name="row_loss")],
    )
