"""Full fine-tuning through the Hugging Face Trainer, written the way an HF user would write it.

TrainingArguments carry the recipe: evaluation and a checkpoint every epoch, validation AP as
the metric that picks the checkpoint loaded at the end, length-grouped batches, linear warm-up
then linear decay, fused AdamW with decay on matrices only, gradient clipping, the seed, bf16
autocast when the run's precision is bf16 (on a GPU or CPU that multiplies it natively:
backends/precision.py), no network and no logging service. Checkpoints go to a temporary folder that
is removed when training ends. Progress is ours (EpochReport): a bar over the optimiser steps and
one line per epoch with its validation AP, readable in a log file.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm
from transformers import DataCollatorWithPadding, PrinterCallback, Trainer, TrainerCallback, TrainingArguments

from backends.hf_bert.pretrained import quiet_transformers
from common.metrics import classification_metrics
from common.progress import progress_stream
from common.selection import BestEpoch

METRIC = "average_precision"  # Trainer logs it as eval_average_precision
CHECKPOINTS_PREFIX = "hf_bert_checkpoints_"  # + process id + "_": a killed worker's folder is found later


@dataclass
class Recipe:
    """What the Trainer is given; the backend fills it from its hyperparameters and the data size."""

    epochs: int
    batch_size: int
    learning_rate: float
    weight_decay: float
    warmup_fraction: float
    clip_norm: float
    seed: int
    device: torch.device
    progress: bool
    label: str  # shown in progress lines, e.g. "hf_bert:full"
    bf16: bool = False  # bf16 autocast with fp32 weights (backends/precision.py decides where)
    evaluate: bool = True  # False: a fixed schedule (small budgets): no validation, the last step's weights kept


class EncodedTexts(torch.utils.data.Dataset):
    """Tokenised texts (not padded) and their labels, one dict per example for the collator."""

    def __init__(self, encoded: dict[str, list[list[int]]], labels: np.ndarray):
        self.encoded, self.labels = encoded, np.asarray(labels)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict:
        item = {key: rows[index] for key, rows in self.encoded.items()}
        item["labels"] = int(self.labels[index])
        return item


def average_precision_metric(positive_index: int | None):
    """compute_metrics for the Trainer: validation AP from softmax probabilities (NaN if they are not finite)."""

    def compute(prediction) -> dict[str, float]:
        logits = torch.as_tensor(np.asarray(prediction.predictions, dtype=np.float64))  # (N, C)
        proba = torch.softmax(logits, dim=-1).numpy()
        if not np.isfinite(proba).all():
            return {METRIC: float("nan")}  # diverged: recorded, never chosen (EpochReport raises if none finite)
        return {METRIC: classification_metrics(prediction.label_ids, proba, positive_index)["average_precision"]}

    return compute


class EpochReport(TrainerCallback):
    """Our progress and history: a moving bar over steps, one line per epoch, seconds per epoch."""

    def __init__(self, recipe: Recipe):
        self.recipe, self.bar, self.history, self.best = recipe, None, [], BestEpoch()
        self._epoch_started = self._trained_at = 0.0
        self._loss = float("nan")

    def on_train_begin(self, args, state, control, **kwargs):
        self.stream = progress_stream()  # marked: the orchestrator shows our numbers unredacted
        self.bar = tqdm(total=state.max_steps, desc=f"{self.recipe.label} steps", file=self.stream,
                        disable=not self.recipe.progress, dynamic_ncols=True)

    def on_epoch_begin(self, args, state, control, **kwargs):
        self._epoch_started = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        self.bar.update(state.global_step - self.bar.n)

    def on_epoch_end(self, args, state, control, **kwargs):
        self._trained_at = time.perf_counter()  # the Trainer logs and evaluates after this

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            self._loss = float(logs["loss"])

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        epoch = len(self.history) + 1
        ap = float(metrics[f"eval_{METRIC}"])
        is_best = self.best.update(epoch, ap, lambda: state.global_step)
        self.history.append({"epoch": epoch, "train_loss": self._loss, "valid_average_precision": ap,
                             "seconds": self._trained_at - self._epoch_started,
                             "valid_seconds": time.perf_counter() - self._trained_at})
        if self.recipe.progress:
            self.bar.write(f"{self.recipe.label} epoch {epoch}/{self.recipe.epochs}: train loss {self._loss:.4f}, "
                           f"valid AP {ap:.4f}{' (best so far)' if is_best else ''}", file=self.stream)

    def on_train_end(self, args, state, control, **kwargs):
        self.bar.close()


def training_arguments(recipe: Recipe, output_dir: str) -> TrainingArguments:
    on_gpu = recipe.device.type == "cuda"
    return TrainingArguments(
        output_dir=output_dir,
        num_train_epochs=recipe.epochs,
        per_device_train_batch_size=recipe.batch_size,
        per_device_eval_batch_size=recipe.batch_size,
        learning_rate=recipe.learning_rate,
        lr_scheduler_type="linear",             # linear decay to 0 after the warm-up
        warmup_steps=recipe.warmup_fraction,    # a float in [0, 1) is a fraction of all steps
        weight_decay=recipe.weight_decay,       # not on biases and LayerNorm weights
        optim="adamw_torch_fused",
        max_grad_norm=recipe.clip_norm,
        train_sampling_strategy="group_by_length",  # batches of similar length: little padding
        eval_strategy="epoch" if recipe.evaluate else "no",
        save_strategy="epoch" if recipe.evaluate else "no",
        save_only_model=True,                   # weights only: the best epoch's, no optimiser state
        save_total_limit=1,                     # with load_best_model_at_end: the best and the latest
        load_best_model_at_end=recipe.evaluate,
        metric_for_best_model=METRIC,
        greater_is_better=True,                 # strictly greater: ties keep the earlier epoch
        logging_strategy="epoch",
        disable_tqdm=True,                      # EpochReport shows progress instead
        report_to="none",                       # no logging service unless asked
        seed=recipe.seed,
        use_cpu=not on_gpu,
        bf16=recipe.bf16,                       # autocast on CPU too (Accelerate), fp32 master weights
        dataloader_pin_memory=on_gpu,
    )


def remove_stale_checkpoints() -> None:
    """Delete checkpoint folders left by a process that no longer runs (killed before cleaning up)."""
    for folder in Path(tempfile.gettempdir()).glob(CHECKPOINTS_PREFIX + "*_*"):
        pid = folder.name[len(CHECKPOINTS_PREFIX):].split("_")[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)  # signal 0: only asks whether the process exists
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            pass  # alive, someone else's


def fine_tune(network, tokenizer, train_encoded: dict, train_labels: np.ndarray, valid_encoded: dict | None,
              valid_labels: np.ndarray | None, positive_index: int | None, recipe: Recipe) -> tuple[list[dict], int]:
    """Train every weight of `network` in place; it ends holding the best epoch's weights (recipe.evaluate) or
    the last step's (a fixed schedule: valid_encoded None).

    Returns (history, best epoch; None for a fixed schedule). Raises UnusableValidationError when no epoch had a
    finite AP.
    """
    report = EpochReport(recipe)
    remove_stale_checkpoints()
    prefix = f"{CHECKPOINTS_PREFIX}{os.getpid()}_"
    with tempfile.TemporaryDirectory(prefix=prefix) as checkpoints, quiet_transformers():
        trainer = Trainer(
            model=network,
            args=training_arguments(recipe, checkpoints),
            train_dataset=EncodedTexts(train_encoded, train_labels),
            eval_dataset=EncodedTexts(valid_encoded, valid_labels) if recipe.evaluate else None,
            processing_class=tokenizer,
            data_collator=DataCollatorWithPadding(tokenizer),
            compute_metrics=average_precision_metric(positive_index) if recipe.evaluate else None,
            callbacks=[report],
        )
        trainer.remove_callback(PrinterCallback)  # what disable_tqdm puts in the bar's place: EpochReport prints
        trainer.train()
        if not recipe.evaluate:
            network.eval()
            return [{"epoch": recipe.epochs, "train_loss": report._loss, "steps": trainer.state.global_step}], None
        best = report.best.require()
        kept = trainer.state.best_global_step
        assert kept == best.best_state, f"Trainer kept step {kept}, validation chose step {best.best_state}"
    network.eval()
    return report.history, best.best_epoch

