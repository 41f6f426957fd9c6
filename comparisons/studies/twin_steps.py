"""Where do the twins part? Step-by-step comparison of torch_scratch and keras_layers.

    nice .venv/bin/python -m comparisons.studies.twin_steps [--seed 2] [--steps 130] [--no-stop]
    nice .venv/bin/python -m comparisons.studies.twin_steps --against torch --perturb 1e-7 --no-stop

Builds the twins as their backends do (RECIPE config, dropout 0, the shared initial state, the
shared batch order) on the default split's training part and feeds them the same batches: torch
through its backend's loop body (AdamW groups, clip_grad_norm_, LambdaLR), Keras through
`train_on_batch` with the production optimizer (compile_for_training), each batch padded to full
size as SharedOrderBatches pads it. Each step prints both losses (before the step), both pre-clip
global gradient norms (Keras's as its production optimizer clips by, and as Keras's
clip_by_global_norm computes it on TensorFlow's raw sparse embedding gradient, the twins' first
difference, fixed in training.dense_gradients), both learning rates, and the largest weight
difference after the step (key biases left out: their true gradient is 0, so Adam turns float
noise there into full-size steps that change no output). At the first step whose losses differ by
more than --tolerance it prints the per-weight gradient differences there.

--against torch: the second run is torch_scratch again, its initial weights scaled by
(1 + perturb * N(0, 1)): the growth of a float-rounding-sized difference, to set against the twins'.
"""
from __future__ import annotations

import json

import keras
import numpy as np
import tensorflow as tf
import torch
import torch.nn.functional as F
from keras.src.optimizers.base_optimizer import global_norm as keras_global_norm

from common.arguments import OneLineParser
from backends.keras_layers.model import build_keras_model
from backends.keras_layers.parity import keras_weights_from_state, load_state, torch_state
from backends.keras_layers.training import compile_for_training, dense_gradients, full_batch
from backends.torch_scratch.backend import TorchScratchBackend, warmup_then_linear_decay
from backends.torch_scratch.encoder import build_model
from common.batching import epoch_batches, training_budget
from common.datasets import load_sms_spam
from common.initial_weights import initial_state
from common.recipe import RECIPE
from common.splits import stratified_split
from common.vocabulary import fit_vocabulary, trim_padding

NO_GRADIENT = ("key/bias",)  # softmax ignores a shift per query: true gradient 0


class TorchTwin:
    """torch_scratch's model, optimizer and schedule as TorchScratchBackend.fit sets them up."""

    def __init__(self, cfg, seed: int, total_steps: int, perturb: float = 0.0, noise_seed: int = 1234):
        self.model = build_model(cfg, seed=seed).train()
        if perturb:
            noise = np.random.default_rng(noise_seed)
            with torch.no_grad():
                for p in self.model.parameters():
                    p.mul_(1.0 + perturb * torch.as_tensor(noise.standard_normal(p.shape), dtype=p.dtype))
        decay = [p for p in self.model.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.model.parameters() if p.dim() < 2]
        self.optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                            {"params": no_decay, "weight_decay": 0.0}], lr=cfg.learning_rate)
        self.schedule = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, warmup_then_linear_decay(total_steps, cfg.warmup_fraction))
        self.cfg = cfg

    def step(self, ids: np.ndarray, labels: np.ndarray) -> tuple[float, float, float, dict]:
        """The backend's loop body on one batch -> (loss, lr, pre-clip norm, gradients by keras path)."""
        lr = self.optimizer.param_groups[0]["lr"]
        loss = F.cross_entropy(self.model(torch.as_tensor(trim_padding(ids))), torch.as_tensor(labels, dtype=torch.long))  # (,)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grads = {name: p.grad.detach().numpy().copy() for name, p in self.model.named_parameters()}
        norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip_norm))
        self.optimizer.step()
        self.schedule.step()
        return loss.item(), lr, norm, keras_weights_from_state(grads, self.cfg)

    def weights(self) -> dict[str, np.ndarray]:
        return keras_weights_from_state(torch_state(self.model), self.cfg)


class KerasTwin:
    """keras_layers' model compiled with the production optimizer; steps through train_on_batch."""

    def __init__(self, cfg, seed: int, total_steps: int):
        self.model = build_keras_model(cfg)
        load_state(self.model, initial_state(cfg, seed), cfg)
        compile_for_training(self.model, cfg, total_steps)
        self.loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="mean_with_sample_weight")
        self.batch_size = cfg.batch_size

    def step(self, ids: np.ndarray, labels: np.ndarray) -> tuple[float, float, float, float, dict]:
        """-> (loss, lr, clipping norm, Keras's norm of the raw sparse gradients, gradients by path)."""
        batch = full_batch(ids.astype("int32"), labels.astype("int32"), self.batch_size)  # as SharedOrderBatches
        with tf.GradientTape() as tape:
            loss = self.loss_fn(batch[1], self.model(batch[0], training=True), sample_weight=batch[2])
        grads = tape.gradient(loss, self.model.trainable_weights)
        sparse_norm = float(keras_global_norm(grads))
        dense = dense_gradients(grads)
        lr = float(self.model.optimizer.learning_rate)
        self.model.train_on_batch(batch[0], batch[1], sample_weight=batch[2])
        return (float(loss), lr, float(keras_global_norm(dense)), sparse_norm,
                {w.path: g.numpy() for w, g in zip(self.model.trainable_weights, dense)})

    def weights(self) -> dict[str, np.ndarray]:
        return {w.path: w.numpy() for w in self.model.weights}


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--steps", type=int, default=130)
    parser.add_argument("--tokenizer", default=RECIPE["tokenizer"])
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--against", choices=("keras", "torch"), default="keras")
    parser.add_argument("--perturb", type=float, default=1e-7, help="with --against torch: relative weight noise")
    parser.add_argument("--noise-seed", type=int, default=1234, help="with --against torch: seed of that noise")
    parser.add_argument("--no-stop", action="store_true", help="keep going after the first disagreement")
    args = parser.parse_args()
    torch.set_num_threads(2)
    data = load_sms_spam()
    train = data.subset(stratified_split(data).train)
    vocabulary = fit_vocabulary(args.tokenizer, train.texts)
    cfg = TorchScratchBackend(config={"dropout": 0.0})._settings(len(vocabulary), train.n_classes)
    budget = training_budget(len(train), cfg.batch_size, cfg.epochs, cfg.min_steps, cfg.max_epochs)
    ids_all = vocabulary.encode(train.texts, cfg.max_len)  # (N, max_len)
    labels_all = np.asarray(train.labels)
    first = TorchTwin(cfg, args.seed, budget.total_steps)
    second = (KerasTwin(cfg, args.seed, budget.total_steps) if args.against == "keras"
              else TorchTwin(cfg, args.seed, budget.total_steps, args.perturb, args.noise_seed))
    other = "keras" if args.against == "keras" else "perturbed"  # the second run's name in the columns
    print(json.dumps({"against": args.against, "total_steps": budget.total_steps, "batch_size": budget.batch_size,
                      "clip_norm": cfg.clip_norm, "peak_lr": cfg.learning_rate, "vocab": len(vocabulary)}), flush=True)

    step, epoch, first_gap = 0, 1, None
    totals = np.zeros(3)  # this epoch's summed row losses (torch, second run) and rows seen
    while step < args.steps:
        for rows in epoch_batches(len(train), budget.batch_size, args.seed, epoch):
            if step >= args.steps:
                break
            loss, lr, norm, grads = first.step(ids_all[rows], labels_all[rows])
            if args.against == "keras":
                loss2, lr2, norm2, sparse_norm, grads2 = second.step(ids_all[rows], labels_all[rows])
            else:
                (loss2, lr2, norm2, grads2), sparse_norm = second.step(ids_all[rows], labels_all[rows]), None
            theirs, mine = first.weights(), second.weights()
            weight_gap, worst = max((float(np.abs(mine[name] - theirs[name]).max()), name)
                                    for name in theirs if not name.endswith(NO_GRADIENT))
            gap = abs(loss - loss2)
            totals += (loss * len(rows), loss2 * len(rows), len(rows))
            print(json.dumps({"step": step, "loss_torch": round(loss, 6), f"loss_{other}": round(loss2, 6),
                              "loss_gap": float(f"{gap:.2e}"), "norm_torch": round(norm, 5),
                              f"norm_{other}": round(norm2, 5),
                              **({"norm_keras_sparse": round(sparse_norm, 5)} if sparse_norm is not None else {}),
                              "lr_torch": float(f"{lr:.6e}"), f"lr_{other}": float(f"{lr2:.6e}"),
                              "weight_gap": float(f"{weight_gap:.2e}"), "widest_in": worst}), flush=True)
            if gap > args.tolerance and first_gap is None:
                first_gap = step
                for name in theirs:
                    if name in grads2:
                        print(f"  grad {name}: max |difference| {np.abs(grads2[name] - grads[name]).max():.2e}"
                              f" (|torch| max {np.abs(grads[name]).max():.2e})", flush=True)
                if not args.no_stop:
                    return
            step += 1
        if totals[2] == len(train):  # a whole epoch: its mean training loss, as the backends report it
            print(json.dumps({"epoch": epoch, "mean_loss_torch": round(totals[0] / totals[2], 5),
                              f"mean_loss_{other}": round(totals[1] / totals[2], 5)}), flush=True)
        totals[:] = 0
        epoch += 1
    print(json.dumps({"first_step_over_tolerance": first_gap, "tolerance": args.tolerance}), flush=True)


if __name__ == "__main__":
    main()
