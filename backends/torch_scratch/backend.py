"""TorchScratchBackend: the scratch encoder behind the Backend contract (fit, predict, save, load).

Trained the way the course teaches it, with a plain loop: AdamW (decay on matrices only),
global-norm clipping, linear warm-up then linear decay per step, the epoch kept chosen on
validation AP (common.selection.BestEpoch). Its twin keras_layers trains the same model with
model.fit; both start from the same numpy initial state (common.initial_weights) and see the
same batches in the same order (common.batching.epoch_batches), so with dropout 0 they follow
the same trajectory. Dropout masks are torch's own: with dropout > 0 the twins differ by that.
The recipe (tokenizer, epochs, learning rate, regularisation) and the validation figures behind
each choice: common/recipe.py, recorded in fit_info_["recipe"].
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from backends.base import Backend, ParamCount
from backends.precision import autocast, resolve
from backends.torch_scratch.attention import ATTENTION_KINDS
from backends.torch_scratch.encoder import TransformerClassifier, build_model
from common.batching import epoch_batches, training_budget
from common.config import EncoderConfig
from common.datasets import LabelledTexts
from common.progress import progress_line, progress_stream
from common.errors import UserInputError
from common.recipe import RECIPE
from common.selection import BestEpoch, check_validation_labels, validation_average_precision
from common.small_budget import fixed_schedule_applies, labelled_budget, schedule_selection
from common.unknown_tokens import ids_unknown_counts
from common.vocabulary import (PAD_ID, TOKENIZERS, UNK, fit_vocabulary, load_vocabulary, trim_padding,
                               vocabulary_sha256)

CLS = "<cls>"
INFERENCE_BATCH = 256  # rows per forward pass in predict_proba / attention_maps


def resolve_device(device: str) -> torch.device:
    """"auto" -> cuda when available, else cpu; anything else as torch names it."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except RuntimeError:
        raise UserInputError(f"device={device!r} is not a torch device; use 'auto', 'cpu' or 'cuda'") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise UserInputError("device='cuda' asked for but CUDA is not available; use device='auto' or 'cpu'")
    return resolved


def warmup_then_linear_decay(total_steps: int, warmup_fraction: float):
    """Learning-rate factor per step: 0 -> 1 over the warm-up steps, then linearly down to 0."""
    warmup = max(1, round(warmup_fraction * total_steps))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    return factor


class TorchScratchBackend(Backend):
    """Transformer encoder classifier written from tensor operations, trained with AdamW."""

    name = "torch_scratch"

    def __init__(self, config: dict | None = None, seed: int = 0, device: str = "auto",
                 attention: str = "scratch", tokenizer: str = "regex", vocab_min_count: int = 2,
                 vocab_max_size: int = 8000, precision: str = "fp32", choose_on: str = "auto", progress: bool = True):
        self.config = config
        self.seed = seed
        self.device = device
        self.attention = attention
        self.tokenizer = tokenizer
        self.vocab_min_count = vocab_min_count
        self.vocab_max_size = vocab_max_size
        self.precision = precision  # fp32 | bf16 (autocast, fp32 weights) | auto (bf16 where native)
        self.choose_on = choose_on  # "auto": common/small_budget.py decides; "validation": validation always chooses
        self.progress = progress

    # -- fitting -----------------------------------------------------------------------------
    def _settings(self, vocab_size: int, num_classes: int) -> EncoderConfig:
        """EncoderConfig from the overrides, with vocab_size and num_classes taken from the data."""
        if self.config is not None and not isinstance(self.config, dict):
            raise UserInputError(f"config must be a dict of EncoderConfig settings, not {type(self.config).__name__}")
        if self.attention not in ATTENTION_KINDS:
            raise UserInputError(f"attention={self.attention!r} is not one of {ATTENTION_KINDS}")
        values = {**RECIPE["config"], **(self.config or {}), "vocab_size": vocab_size, "num_classes": num_classes}
        return EncoderConfig.from_dict(values)

    def fit(self, train: LabelledTexts, valid: LabelledTexts) -> "TorchScratchBackend":
        if len(train) == 0 or len(valid) == 0:
            raise UserInputError("train and valid must each hold at least one text")
        if self.tokenizer not in TOKENIZERS:
            raise UserInputError(f"tokenizer={self.tokenizer!r} is not one of {TOKENIZERS}")
        self._settings(2, train.n_classes)  # bad settings fail before any work
        check_validation_labels(valid.labels, train.n_classes)
        fixed = fixed_schedule_applies(self.choose_on, valid.labels, train.n_classes)
        if fixed:  # validation too small to choose: the whole budget, the recipe's planned epochs, the last kept
            train = labelled_budget(train, valid)
        self.device_ = resolve_device(self.device)
        self.precision_ = resolve(self.precision, self.device_.type)  # bf16 refused where not native
        self.vocabulary_ = fit_vocabulary(self.tokenizer, train.texts, self.vocab_min_count, self.vocab_max_size)
        self.config_ = self._settings(len(self.vocabulary_), train.n_classes)
        self.classes_ = np.arange(train.n_classes)
        cfg = self.config_
        budget = training_budget(len(train), cfg.batch_size, cfg.epochs, cfg.min_steps, cfg.max_epochs)

        torch.manual_seed(self.seed)  # dropout masks only: weights and batch order come from common
        self.model_ = build_model(cfg, self.attention, seed=self.seed).to(self.device_)
        train_ids = self.vocabulary_.encode(train.texts, cfg.max_len)  # (N, max_len)
        train_labels = torch.as_tensor(train.labels, dtype=torch.long)

        # nanoGPT's rule: weight decay on matrices (linears, embeddings), none on biases and norms
        decay = [p for p in self.model_.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.model_.parameters() if p.dim() < 2]
        optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=cfg.learning_rate,
        )
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, warmup_then_linear_decay(budget.total_steps, cfg.warmup_fraction)
        )

        history, best = [], BestEpoch()
        for epoch in range(1, budget.epochs + 1):
            self.model_.train()
            total_loss = 0.0
            bar = tqdm(epoch_batches(len(train), budget.batch_size, self.seed, epoch), disable=not self.progress,
                       desc=f"torch_scratch epoch {epoch}/{budget.epochs}", leave=False, file=progress_stream())
            for rows in bar:
                ids = torch.as_tensor(trim_padding(train_ids[rows]), device=self.device_)  # (B, T)
                labels = train_labels[rows].to(self.device_)  # (B,)
                with autocast(self.device_.type, self.precision_):
                    logits = self.model_(ids)
                loss = F.cross_entropy(logits.float(), labels)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model_.parameters(), cfg.clip_norm)
                optimizer.step()
                schedule.step()
                total_loss += loss.item() * len(rows)
                bar.set_postfix(loss=f"{loss.item():.4f}")
            valid_ap = (None if fixed else
                        validation_average_precision(valid.labels, self.predict_proba(valid.texts), valid.positive_index))
            history.append({"epoch": epoch, "train_loss": total_loss / len(train), "valid_average_precision": valid_ap})
            if self.progress:  # one line per epoch that stays: our numbers, shown unredacted
                progress_line(f"torch_scratch epoch {epoch}/{budget.epochs}: train loss {total_loss / len(train):.4f}"
                              + ("" if fixed else f", valid AP {valid_ap:.4f}"))
            if fixed:
                continue  # the fixed schedule keeps the last epoch
            best.update(epoch, valid_ap, lambda: copy.deepcopy(self.model_.state_dict()))
            if cfg.patience and epoch - (best.best_epoch or 0) >= cfg.patience:
                break  # early stopping: no better validation AP for `patience` epochs
        if not fixed:
            self.model_.load_state_dict(best.require().best_state)
        self.model_.eval()
        self.selection_ = schedule_selection(fixed, epochs=budget.epochs, steps=budget.total_steps,
                                             batch_size=budget.batch_size)
        self.fit_info_ = {"best_epoch": best.best_epoch,
                          "best_valid_average_precision": None if fixed else best.best_score,
                          "epochs_run": len(history), "epochs_planned": budget.epochs,
                          "batch_size": budget.batch_size, "steps_per_epoch": budget.steps_per_epoch,
                          "train_rows": len(train), "device": str(self.device_), "precision": self.precision_,
                          "history": history,
                          "tokenizer": self.tokenizer, "vocab_size": len(self.vocabulary_),
                          "vocabulary_sha256": vocabulary_sha256(self.vocabulary_), "recipe": RECIPE,
                          "selection": self.selection_.summary()}
        return self

    # -- inference ---------------------------------------------------------------------------
    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise UserInputError("predict_proba takes a list of texts, not one string: wrap it in a list")
        return self.vocabulary_.encode(list(texts), self.config_.max_len)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """(n, n_classes) float64 probabilities; eval mode, batched, under inference_mode."""
        self._check_fitted("model_")
        all_ids = self._encode(texts)
        self.model_.eval()
        chunks = []
        with torch.inference_mode(), autocast(self.device_.type, getattr(self, "precision_", "fp32")):
            for start in range(0, len(all_ids), INFERENCE_BATCH):
                ids = torch.as_tensor(trim_padding(all_ids[start : start + INFERENCE_BATCH]),
                                      device=self.device_)
                chunks.append(torch.softmax(self.model_(ids).double(), dim=-1).cpu().numpy())
        return np.concatenate(chunks) if chunks else np.zeros((0, len(self.classes_)))

    def attention_maps(self, texts: Sequence[str]) -> tuple[list[list[str]], list[np.ndarray]]:
        """(tokens per text, one (n, H, T, T) array per layer): what each head looked at.

        tokens[i] are vocabulary strings the model saw (unknown words as <unk>, after truncation,
        no padding; "<cls>" first with cls pooling), so weights[layer][i, h, :len(tokens[i]),
        :len(tokens[i])] is text i's map. T is the longest text here; the rest is zero padding.
        """
        self._check_fitted("model_")
        all_ids = self._encode(texts)
        prefix = [CLS] if self.config_.pooling == "cls" else []
        tokens = [prefix + [self.vocabulary_.itos[i] for i in row if i != PAD_ID] for row in all_ids]
        all_ids = trim_padding(all_ids)
        self.model_.eval()
        per_layer: list[list[np.ndarray]] = [[] for _ in range(self.config_.num_layers)]
        with torch.inference_mode():
            for start in range(0, len(all_ids), INFERENCE_BATCH):
                ids = torch.as_tensor(all_ids[start : start + INFERENCE_BATCH], device=self.device_)
                _, weights = self.model_(ids, need_weights=True)
                for layer, w in enumerate(weights):
                    per_layer[layer].append(w.float().cpu().numpy())  # (b, H, T, T)
        return tokens, [np.concatenate(chunks) for chunks in per_layer]

    def unknown_tokens(self, texts: Sequence[str]) -> dict:
        """{"tokens", "unknown", "rate"}: the share of the tokens the model sees of `texts` (after
        truncation, no padding) that are <unk> (how much of the input it could not see)."""
        self._check_fitted("model_")
        return {**ids_unknown_counts(self._encode(texts)), "unknown_token": UNK}

    def param_count(self) -> ParamCount:
        self._check_fitted("model_")
        total = sum(p.numel() for p in self.model_.parameters())
        trainable = sum(p.numel() for p in self.model_.parameters() if p.requires_grad)
        return ParamCount(total=int(total), trainable=int(trainable))

    # -- persistence -------------------------------------------------------------------------
    def save(self, directory: Path) -> Path:
        """Write model.pt (state_dict), config.json (settings, fit_info) and vocabulary.json."""
        self._check_fitted("model_")
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        torch.save({k: v.cpu() for k, v in self.model_.state_dict().items()}, directory / "model.pt")
        (directory / "config.json").write_text(json.dumps({
            "backend": self.name, "params": self.get_params(), "encoder_config": self.config_.to_dict(),
            "fit_info": self.fit_info_,
        }, indent=2))
        self.vocabulary_.save(directory / "vocabulary.json")
        return directory

    @classmethod
    def load(cls, directory: Path, device: str | None = None) -> "TorchScratchBackend":
        """A fitted backend from a folder written by save(); `device` overrides the saved one."""
        directory = Path(directory)
        if not (directory / "model.pt").exists():
            raise UserInputError(f"{directory} holds no model.pt: pass a folder written by TorchScratchBackend.save")
        saved = json.loads((directory / "config.json").read_text())
        backend = cls(**saved["params"])
        if device is not None:
            backend.device = device
        backend.device_ = resolve_device(backend.device)
        backend.vocabulary_ = load_vocabulary(directory / "vocabulary.json")
        backend.config_ = EncoderConfig.from_dict(saved["encoder_config"])
        backend.classes_ = np.arange(backend.config_.num_classes)
        backend.fit_info_ = saved["fit_info"]
        backend.precision_ = backend.fit_info_.get("precision", "fp32")  # served as trained (native-bf16: serving/)
        model: TransformerClassifier = build_model(backend.config_, backend.attention)
        model.load_state_dict(torch.load(directory / "model.pt", map_location="cpu", weights_only=True))
        backend.model_ = model.to(backend.device_).eval()
        return backend

    # -- serving ---------------------------------------------------------------------------
    def export_onnx(self, folder: Path) -> dict:
        """model.onnx, the tokenizer files and serving.json under `folder` (backends/torch_scratch/onnx_export.py)."""
        self._check_fitted("model_")
        from backends.torch_scratch.onnx_export import export_onnx

        return export_onnx(self, folder, INFERENCE_BATCH)
