"""A pretrained BERT-family encoder (all-MiniLM-L6-v2 by default): frozen features or full fine-tuning.

What "head" means here (the decision the issue asked for):
- mode "full": the model's own sequence-classification head, as Hugging Face builds it. For BERT
  that is pooler (dense + tanh on [CLS]) -> dropout -> linear; every weight is trained, so it does
  not matter that sentence-transformers never trained MiniLM's pooler. Saved with save_pretrained,
  it loads back with AutoModelForSequenceClassification alone. It trains through the Hugging Face
  Trainer (fine_tuning.py): validation AP each epoch picks the checkpoint kept.
- mode "frozen": the encoder (embeddings + layers) is frozen and its pooler is dropped; the feature
  is the attention-masked mean of the last hidden state (what sentence-transformers trained
  all-MiniLM-L6-v2 for). The head (`head`):
  - "logreg" (default): the encoder as it is meant to be used: the mean L2-normalised, then
    scikit-learn's LogisticRegression with C chosen by stratified inner cross-validation on the whole
    label budget (training and validation texts, common/small_budget.py), refitted on all of it; its
    weights are copied into the linear head, so save, load, ONNX and serving are one path. On the
    curve's 50-label draws of r0f0 and r0f1 it reached test AP 0.871 and 0.921 (the linear head: 0.47 on
    r0f0's; pilots in results/recipe_audit/README.md, the audit itself still to run).
  - "linear": the course's hand-written head: dropout -> linear on the raw mean, AdamW over cached
    features, validation AP choosing the epoch (a short loop here; the Trainer adds nothing to it).

Small data (a few dozen messages): small_data_budget keeps the batch within the data and gives at
least min_steps updates; validation still chooses the epoch. Validation that cannot score AP (one
class, or NaN every epoch) is an UnusableValidationError, one clear line for the user.
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from backends.base import Backend, ParamCount
from backends.hf_bert.batching import (collate, encode, inference_batches, lengths_of, small_data_budget,
                                       training_batches)
from backends.hf_bert.head import MeanPoolHead, optimizer_groups
from backends.hf_bert.pooling import masked_mean
from backends.hf_bert.pretrained import DEFAULT_NAME, load_pretrained, quiet_transformers
from backends.precision import autocast, check_precision, resolve
from common.datasets import LabelledTexts
from common.errors import UserInputError
from common.metrics import classification_metrics
from common.unknown_tokens import hf_unknown_counts
from common.progress import progress_stream
from common.selection import BestEpoch, check_validation_labels
from common.small_budget import CHOOSE_ON, Selection, choose_by_inner_cv, labelled_budget, validation_can_choose

MODES = ("frozen", "full")
# Full-profile defaults, chosen on validation only. full: 4 epochs, lr 5e-5, warm-up 10%, batch 32.
# With 3 epochs the best epoch was the last on all 5 reference seeds (validation AP 0.9972, 0.9950,
# 0.9971 on seeds 0-2); one schedule over 4 epochs gave 0.9984, 0.9980, 0.9986 (best epoch 4 each
# time; `python -m comparisons.studies.hf_bert_benchmark --modes full --epochs 4 --seed N`, validation read only).
# frozen: best validation epochs were 13, 18 and 10 of 30 (a pass over cached features costs ~0.1 s).
DEFAULT_EPOCHS = {"full": 4, "frozen": 30}
# hf_bert:full where validation is too small to choose (common/small_budget.py): a fixed schedule on the whole
# budget, the last step kept (Mosbach et al. 2021: a small learning rate and more steps, no epoch chosen on a
# handful of texts). Chosen on another corpus (tweets, never an SMS text), `make few-shot-schedule`: mean test AP
# over 2 draws at 50 / 200 labels, lr 5e-5 x 200 steps 0.624 / 0.713, 2e-5 x 300 steps 0.622 / 0.709, 5e-5 x 100
# steps 0.622 / 0.688 (200 steps beat 100 on both 200-label draws; results/recipe_audit/few_shot_schedule.md).
SMALL_BUDGET_STEPS = 200
SMALL_BUDGET_LEARNING_RATE = 5e-5


HEADS = ("logreg", "linear")
HEAD_C = (0.1, 1.0, 10.0, 100.0)  # the logistic regression's C, chosen by inner CV on the budget


class HfBertBackend(Backend):
    """Hugging Face BERT-family classifier, frozen encoder + linear head or fully fine-tuned."""

    name = "hf_bert"

    def __init__(self, mode: str = "full", model: str | None = None, max_length: int = 64, head: str = "logreg",
                 epochs: int | None = None, batch_size: int = 32, learning_rate: float = 5e-5,
                 head_learning_rate: float = 1e-2, weight_decay: float = 0.01,
                 warmup_fraction: float = 0.1, clip_norm: float = 1.0, min_steps: int = 100,
                 small_budget_steps: int = SMALL_BUDGET_STEPS,
                 small_budget_learning_rate: float = SMALL_BUDGET_LEARNING_RATE, choose_on: str = "auto", seed: int = 0,
                 device: str = "auto", precision: str = "fp32", progress: bool = True):
        self.mode = mode                              # "full": train everything; "frozen": head only
        self.head = head                              # frozen mode: "logreg" (default) or the course's "linear"
        self.model = model                            # None: the shipped all-MiniLM-L6-v2
        self.max_length = max_length                  # tokens per text, [CLS] and [SEP] included
        self.epochs = epochs                          # None: 4 (full) or 30 (frozen)
        self.batch_size = batch_size
        self.learning_rate = learning_rate            # full mode, every weight
        self.head_learning_rate = head_learning_rate  # frozen mode, the head
        self.weight_decay = weight_decay
        self.warmup_fraction = warmup_fraction
        self.clip_norm = clip_norm
        self.min_steps = min_steps                    # small data: smaller batches, then more epochs
        self.small_budget_steps = small_budget_steps  # full mode, validation too small to choose: steps on the budget
        self.small_budget_learning_rate = small_budget_learning_rate
        self.choose_on = choose_on                    # "auto": common/small_budget.py decides; "validation": always
        self.seed = seed
        self.device = device
        self.precision = precision                    # fp32 | bf16 (autocast, fp32 weights) | auto (bf16 where native)
        self.progress = progress

    # -- fit --------------------------------------------------------------------------------
    def fit(self, train: LabelledTexts, valid: LabelledTexts) -> "HfBertBackend":
        self._check_settings()
        check_validation_labels(valid.labels, train.n_classes)  # AP needs both classes to choose an epoch
        device = torch.device("cuda" if self.device == "auto" and torch.cuda.is_available()
                              else "cpu" if self.device == "auto" else self.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise UserInputError(f"device {self.device!r} asked for, but torch sees no CUDA GPU: use --device cpu")
        if self.mode == "full" and device.type == "cuda" and device.index not in (None, 0):
            raise UserInputError(f"hf_bert:full trains on the first visible GPU (the Trainer's choice): use device "
                                 f"'cuda' with CUDA_VISIBLE_DEVICES={device.index} instead of {self.device!r}")
        self.precision_ = resolve(self.precision, device.type)  # bf16 refused where not native
        epochs = self.epochs if self.epochs is not None else DEFAULT_EPOCHS[self.mode]
        batch_size, epochs = small_data_budget(len(train), self.batch_size, epochs, self.min_steps)
        torch.manual_seed(self.seed)  # the fresh head's initial weights, then dropout
        tokenizer, network = load_pretrained(self.model, train.n_classes)
        positions = getattr(network.config, "max_position_embeddings", None)
        if positions is not None and self.max_length > positions:
            raise UserInputError(f"hf_bert max_length={self.max_length} exceeds the model's {positions} positions; "
                                 f"set max_length to {positions} or less")
        self.tokenizer_, self.device_, self.n_classes_ = tokenizer, device, train.n_classes
        self.selection_ = Selection(rule="validation")
        self.pad_id_ = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        train_encoded = encode(tokenizer, train.texts, self.max_length)
        valid_encoded = encode(tokenizer, valid.texts, self.max_length)
        started = time.perf_counter()
        label = f"hf_bert:{self.mode}"

        fixed = (self.mode == "full" and self.choose_on == "auto"
                 and not validation_can_choose(valid.labels, train.n_classes))
        if fixed:  # the whole budget, a fixed number of steps, the last kept (SMALL_BUDGET_STEPS)
            budget = labelled_budget(train, valid)  # training then validation texts: their encodings in that order
            train_encoded = {key: train_encoded[key] + valid_encoded[key] for key in train_encoded}
            train_labels = budget.labels
            batch_size = max(1, min(self.batch_size, math.ceil(len(budget) / 4)))  # at least 4 steps an epoch
            epochs = max(1, math.ceil(self.small_budget_steps / math.ceil(len(budget) / batch_size)))
            self.selection_ = Selection(rule="fixed_schedule", chosen={
                "steps": epochs * math.ceil(len(budget) / batch_size), "batch_size": batch_size,
                "learning_rate": self.small_budget_learning_rate})
        else:
            train_labels = np.asarray(train.labels)
        if self.mode == "full":
            # here, not at the top: the Trainer's stack (transformers.Trainer, accelerate, datasets) costs about
            # 3 s of CPU to import (6.1 s -> 3.1 s), which the frozen variant, a load and serving never need
            from backends.hf_bert.fine_tuning import Recipe, fine_tune

            recipe = Recipe(epochs=epochs, batch_size=batch_size,
                            learning_rate=self.small_budget_learning_rate if fixed else self.learning_rate,
                            weight_decay=self.weight_decay, warmup_fraction=self.warmup_fraction,
                            clip_norm=self.clip_norm, seed=self.seed, device=device, progress=self.progress,
                            label=label, bf16=self.precision_ == "bf16", evaluate=not fixed)
            history, best_epoch = fine_tune(network, tokenizer, train_encoded, train_labels,
                                            None if fixed else valid_encoded, np.asarray(valid.labels),
                                            valid.positive_index, recipe)
            self.model_ = network.to(device).eval()
            self.encoder_ = network.base_model  # the same modules, for inspection
            feature_seconds = 0.0
        else:
            self.encoder_ = network.base_model.to(device)
            if getattr(self.encoder_, "pooler", None) is not None:
                self.encoder_.pooler = None  # unused by mean pooling: not counted, not computed
            self.encoder_.requires_grad_(False).eval()
            config = network.config
            dropout = getattr(config, "classifier_dropout", None) or getattr(config, "hidden_dropout_prob", 0.1)
            logreg = self.head == "logreg"
            self.head_ = MeanPoolHead(config.hidden_size, train.n_classes, 0.0 if logreg else dropout,
                                      normalize=logreg).to(device)
            train_features = self._features(train_encoded, f"{label} features (train)").clone()  # (N, H)
            valid_features = self._features(valid_encoded, f"{label} features (valid)").clone()
            feature_seconds = time.perf_counter() - started  # the encoder's forward passes, under autocast for bf16
            if logreg:
                history, best_epoch = [], None
                self._fit_logreg_head(torch.cat([train_features, valid_features]),
                                      np.concatenate([train.labels, valid.labels]), train)
            else:
                history, best_epoch = self._train_head(train_features, train.labels, valid_features, valid,
                                                       batch_size, epochs)
        del network

        self.fit_info_ = {
            "best_epoch": best_epoch,
            "epochs_run": epochs if fixed else (len(history) or 1),  # fixed schedule: one history row, every epoch
            "batch_size": batch_size,
            "device": str(device),
            "precision": self.precision_,  # bf16: autocast with fp32 weights (frozen: the encoder's features)
            "history": history,
            "mode": self.mode,
            "model": self.model or DEFAULT_NAME,
            "feature_seconds": feature_seconds,
            "train_seconds": time.perf_counter() - started,
        }
        if self.mode == "frozen":
            self.fit_info_["head"] = self.head
        self.fit_info_["selection"] = self.selection_.summary()
        return self

    def _fit_logreg_head(self, features: torch.Tensor, labels: np.ndarray, train: LabelledTexts) -> None:
        """LogisticRegression on the L2-normalised features of the whole budget, C by inner CV, then copied."""
        from sklearn.linear_model import LogisticRegression

        x = F.normalize(features.float(), dim=-1).cpu().numpy().astype(np.float64)

        def fit_predict(c: float, fit_rows, held_rows) -> np.ndarray:
            model = LogisticRegression(C=c, max_iter=2000).fit(x[fit_rows], labels[fit_rows])
            proba = np.zeros((len(held_rows), train.n_classes))
            proba[:, model.classes_] = model.predict_proba(x[held_rows])
            return proba

        self.selection_ = choose_by_inner_cv(list(HEAD_C), fit_predict, labels, train.n_classes,
                                             train.positive_index, self.seed)
        logreg = LogisticRegression(C=self.selection_.chosen, max_iter=2000).fit(x, labels)
        self.head_.copy_logistic_regression(logreg, train.n_classes)
        self.head_.eval()

    def _check_settings(self) -> None:
        if self.mode not in MODES:
            raise UserInputError(f"hf_bert mode {self.mode!r} is not one of {MODES}")
        if self.choose_on not in CHOOSE_ON:
            raise UserInputError(f"hf_bert choose_on {self.choose_on!r} is not one of {CHOOSE_ON}")
        if self.head not in HEADS:
            raise UserInputError(f"hf_bert head {self.head!r} is not one of {HEADS}")
        for name in ("max_length", "batch_size", "epochs"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < (2 if name == "max_length" else 1)):
                raise UserInputError(f"hf_bert {name}={value!r} must be a positive integer (max_length at least 2)")
        if not isinstance(self.min_steps, int) or self.min_steps < 0:
            raise UserInputError(f"hf_bert min_steps={self.min_steps!r} must be a non-negative integer")
        if not 0 <= self.warmup_fraction < 1:
            raise UserInputError(f"hf_bert warmup_fraction={self.warmup_fraction!r} must be in [0, 1)")

    def _train_head(self, train_features: torch.Tensor, train_labels, valid_features: torch.Tensor,
                    valid: LabelledTexts, batch_size: int, epochs: int) -> tuple[list[dict], int]:
        """Frozen mode: AdamW on the head over cached features, warm-up then linear decay, clipping;
        keeps the epoch with the best validation AP. One bar over epochs, the AP beside it."""
        from transformers import get_linear_schedule_with_warmup

        head, device = self.head_, self.device_
        trainable = list(head.parameters())
        fused = device.type in ("cpu", "cuda")  # one kernel for all weights
        optimizer = torch.optim.AdamW(optimizer_groups(trainable, self.weight_decay), lr=self.head_learning_rate,
                                      fused=fused)
        total_steps = epochs * math.ceil(len(train_features) / batch_size)
        scheduler = get_linear_schedule_with_warmup(optimizer, round(self.warmup_fraction * total_steps), total_steps)
        labels = torch.as_tensor(train_labels, dtype=torch.long, device=device)
        rng = np.random.default_rng(self.seed)  # batch order
        lengths = np.zeros(len(train_features), dtype=np.int64)  # features have no length: plain shuffling
        history, best = [], BestEpoch()
        bar = tqdm(range(1, epochs + 1), desc=f"hf_bert:{self.mode} head epochs", file=progress_stream(),
                   disable=not self.progress, mininterval=1.0)
        for epoch in bar:
            started = time.perf_counter()
            head.train()
            loss_sum = 0.0
            for indices in training_batches(lengths, batch_size, rng):
                index = torch.as_tensor(indices, device=device)
                loss = F.cross_entropy(head(train_features[index]), labels[index])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(trainable, self.clip_norm)
                optimizer.step()
                scheduler.step()
                loss_sum += loss.item() * len(indices)
            head.eval()
            trained_at = time.perf_counter()
            with torch.inference_mode():
                proba = torch.softmax(head(valid_features).double(), dim=-1).cpu().numpy()
            ap = (classification_metrics(valid.labels, proba, valid.positive_index)["average_precision"]
                  if np.isfinite(proba).all() else float("nan"))
            history.append({"epoch": epoch, "train_loss": loss_sum / len(lengths),
                            "valid_average_precision": float(ap), "seconds": trained_at - started,
                            "valid_seconds": time.perf_counter() - trained_at})
            best.update(epoch, ap, lambda: {k: v.detach().clone() for k, v in head.state_dict().items()})
            bar.set_postfix_str(f"valid AP {ap:.4f}, best {best.best_score:.4f} at epoch {best.best_epoch}",
                                refresh=False)
        bar.close()
        head.load_state_dict(best.require().best_state)
        head.eval()
        return history, best.best_epoch

    # -- inference --------------------------------------------------------------------------
    @torch.inference_mode()
    def _features(self, encoded: dict, progress_label: str | None = None) -> torch.Tensor:
        """Mean-pooled last hidden states, length-bucketed, in the texts' order: (N, H)."""
        lengths = lengths_of(encoded)
        out = torch.empty(len(lengths), self.encoder_.config.hidden_size, device=self.device_)
        batches = list(inference_batches(lengths, self.batch_size))
        for indices in tqdm(batches, desc=progress_label, file=progress_stream(), mininterval=1.0,
                            disable=not (self.progress and progress_label)):
            batch = collate(encoded, indices, self.pad_id_, self.device_)
            with autocast(self.device_.type, self.precision_):
                hidden = self.encoder_(**batch).last_hidden_state  # (B, T, H)
            out[torch.as_tensor(indices, device=self.device_)] = masked_mean(hidden.float(), batch["attention_mask"])
        return out

    @torch.inference_mode()
    def _proba_from_encoded(self, encoded: dict) -> np.ndarray:
        """Softmax probabilities (N, C) in the texts' order."""
        if self.mode == "frozen":
            return torch.softmax(self.head_(self._features(encoded)).double(), dim=-1).cpu().numpy()
        lengths = lengths_of(encoded)
        proba = np.empty((len(lengths), self.n_classes_))
        for indices in inference_batches(lengths, self.batch_size):
            with autocast(self.device_.type, self.precision_):
                logits = self.model_(**collate(encoded, indices, self.pad_id_, self.device_)).logits  # (B, C)
            proba[indices] = torch.softmax(logits.double(), dim=-1).cpu().numpy()
        return proba

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        self._check_fitted("fit_info_")
        if len(texts) == 0:
            return np.empty((0, self.n_classes_))
        return self._proba_from_encoded(encode(self.tokenizer_, texts, self.max_length))

    def unknown_tokens(self, texts: Sequence[str]) -> dict:
        """{"tokens", "unknown", "rate"}: the share of the word pieces the model sees of `texts` (the
        first max_length - 2, beside [CLS] and [SEP]) that are the tokenizer's unknown token."""
        self._check_fitted("fit_info_")
        return {**hf_unknown_counts(self.tokenizer_, list(texts), self.max_length - 2),
                "unknown_token": self.tokenizer_.unk_token}

    # -- size -------------------------------------------------------------------------------
    def param_count(self) -> ParamCount:
        self._check_fitted("fit_info_")
        modules = [self.model_] if self.mode == "full" else [self.encoder_, self.head_]
        parameters = [p for module in modules for p in module.parameters()]
        return ParamCount(total=int(sum(p.numel() for p in parameters)),
                          trainable=int(sum(p.numel() for p in parameters if p.requires_grad)))

    def save(self, directory: Path) -> Path:
        """Full: a plain Hugging Face model folder. Frozen: encoder folder + head.pt + hf_bert.json."""
        self._check_fitted("fit_info_")
        root = Path(directory) / "hf_bert"
        root.mkdir(parents=True, exist_ok=True)
        with quiet_transformers():  # no "Writing model shards" bar in the middle of a measured run
            self.tokenizer_.save_pretrained(root)
            if self.mode == "full":
                self.model_.save_pretrained(root)
            else:
                self.encoder_.save_pretrained(root)
                torch.save(self.head_.state_dict(), root / "head.pt")
        settings = {"mode": self.mode, "model": self.model or DEFAULT_NAME, "max_length": self.max_length,
                    "n_classes": self.n_classes_, "precision": self.precision_,
                    "normalize": bool(self.mode == "frozen" and self.head_.normalize),
                    "features": "model head" if self.mode == "full" else "masked mean of last hidden state, no pooler"}
        (root / "hf_bert.json").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
        return root

    @classmethod
    def load(cls, directory: Path, device: str | None = None) -> "HfBertBackend":
        """A fitted backend from a folder written by save(), offline; `device` overrides "auto"."""
        from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

        root = Path(directory) / "hf_bert" if (Path(directory) / "hf_bert").is_dir() else Path(directory)
        if not (root / "hf_bert.json").exists():
            raise UserInputError(f"{directory} holds no hf_bert.json: pass a folder written by HfBertBackend.save")
        settings = json.loads((root / "hf_bert.json").read_text(encoding="utf-8"))
        backend = cls(mode=settings["mode"], model=settings["model"], max_length=settings["max_length"],
                      device=device or "auto", precision=settings.get("precision", "fp32"))
        backend.precision_ = check_precision(backend.precision)  # served as trained (native-bf16: serving/)
        backend.device_ = torch.device("cuda" if backend.device == "auto" and torch.cuda.is_available()
                                       else "cpu" if backend.device == "auto" else backend.device)
        backend.n_classes_ = settings["n_classes"]
        with quiet_transformers():
            backend.tokenizer_ = AutoTokenizer.from_pretrained(root, local_files_only=True)
            if backend.mode == "full":
                backend.model_ = AutoModelForSequenceClassification.from_pretrained(root, local_files_only=True)
                backend.model_ = backend.model_.to(backend.device_).eval()
                backend.encoder_ = backend.model_.base_model
            else:
                backend.encoder_ = AutoModel.from_pretrained(root, local_files_only=True).to(backend.device_).eval()
                backend.encoder_.pooler = None  # saved without one: mean pooling does not use it
                backend.head_ = MeanPoolHead(backend.encoder_.config.hidden_size, backend.n_classes_, 0.0,
                                             normalize=settings.get("normalize", False))
                backend.head_.load_state_dict(torch.load(root / "head.pt", map_location="cpu", weights_only=True))
                backend.head_ = backend.head_.to(backend.device_).eval()
        tokenizer = backend.tokenizer_
        backend.pad_id_ = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        backend.fit_info_ = {"loaded_from": "a saved folder", "mode": backend.mode, "device": str(backend.device_),
                             "precision": backend.precision_}
        return backend

    # -- serving ---------------------------------------------------------------------------
    def export_onnx(self, folder: Path) -> dict:
        """model.onnx, the tokenizer files and serving.json under `folder` (backends/hf_bert/onnx_export.py)."""
        self._check_fitted("fit_info_")
        from backends.hf_bert.onnx_export import export_onnx

        return export_onnx(self, folder)
