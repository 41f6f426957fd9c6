"""KerasLayersBackend: the Keras 3 encoder behind the Backend contract (fit, predict, save, load).

Trained the Keras way: `model.fit` on a keras.utils.PyDataset with a callback that scores
validation AP after each epoch and restores the best epoch's weights (backends/keras_layers/
training.py), one line per epoch (common.progress) when progress=True. The twin of torch_scratch: the same
numpy initial state (common.initial_weights, loaded through the parity map), the same batches in
the same order (common.batching.epoch_batches), the same AdamW settings, schedule, clipping,
budget that scales with the data and epoch choice (common.selection.BestEpoch). With dropout 0
the two follow the same trajectory (tested to 1e-4 over an epoch); dropout masks are Keras's own,
so with dropout > 0 they differ by that. The recipe and the validation figures behind it:
common/recipe.py, recorded in fit_info_["recipe"].
Inference uses Keras's compiled (traced; XLA on TensorFlow) predict step, not eager `model(x)`.

vectorizer="shared": common.vocabulary (the same ids as torch_scratch, so weights are
interchangeable). vectorizer="textvectorization": keras.layers.TextVectorization adapted on
train, the idiomatic Keras route. Its differences: it lower-cases and strips punctuation, then
splits on whitespace (so "!" and "£" are dropped, and "win!!" == "win"), keeps the
vocab_max_size most frequent tokens with no minimum count (vocab_min_count is ignored), and needs
TensorFlow installed whatever KERAS_BACKEND is. Ids are the same convention: 0 pad, 1 unknown.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Sequence

import keras
import numpy as np
from keras import ops

from backends.base import Backend, ParamCount
from backends.precision import check_precision
from backends.keras_layers.model import build_keras_model
from backends.keras_layers.parity import load_state
from backends.keras_layers.training import BestValidationAP, SharedOrderBatches, compile_for_training
from common.batching import training_budget
from common.config import EncoderConfig
from common.datasets import LabelledTexts
from common.errors import UserInputError
from common.progress import progress_line
from common.initial_weights import initial_state
from common.recipe import RECIPE
from common.selection import check_validation_labels, validation_average_precision
from common.small_budget import fixed_schedule_applies, labelled_budget, schedule_selection
from common.unknown_tokens import ids_unknown_counts
from common.vocabulary import UNK, TOKENIZERS, fit_vocabulary, load_vocabulary, trim_padding, vocabulary_sha256

VECTORIZERS = ("shared", "textvectorization")
INFERENCE_BATCH = 256  # rows per compiled predict call in predict_proba
LENGTH_BUCKET = 16  # batches are trimmed to a multiple of this: few shapes, so few traces/compiles
MODEL_FILE, VOCABULARY_FILE, CONFIG_FILE = "model.keras", "vocabulary.json", "config.json"


def gpu_available() -> bool:
    """Whether the active Keras backend sees a GPU (imports only that backend's framework)."""
    name = keras.backend.backend()
    if name == "tensorflow":
        import tensorflow as tf

        return bool(tf.config.list_physical_devices("GPU"))
    if name == "torch":
        import torch

        return torch.cuda.is_available()
    if name == "jax":
        import jax

        return any(d.platform == "gpu" for d in jax.devices())
    return False


def keras_precision(precision: str) -> str:
    """fp32, or bf16 (mixed_bfloat16) when asked: the driver refused bf16 where the hardware lacks it
    (backends/precision.py). auto is fp32: slower under bf16 where measured (docs/measurement.md, "Precision")."""
    check_precision(precision)
    return "bf16" if precision == "bf16" else "fp32"


@contextmanager
def dtype_policy(precision: str):
    """Layers built inside take the mixed_bfloat16 policy for bf16 (fp32 variables, bf16 compute)."""
    before = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16" if precision == "bf16" else "float32")
    try:
        yield
    finally:
        keras.config.set_dtype_policy(before)


def resolve_device(device: str) -> str:
    """"auto" -> "gpu" when the backend sees a GPU, else "cpu"; "cuda" is read as "gpu".

    No ":0" is added: Keras 3.15's torch backend fails to build layers under keras.device("cpu:0").
    """
    if device == "auto":
        return "gpu" if gpu_available() else "cpu"
    name = str(device).lower().replace("cuda", "gpu")
    kind = name.split(":")[0]
    if kind not in ("cpu", "gpu"):
        raise UserInputError(f"device={device!r} is not known; use 'auto', 'cpu' or 'gpu' ('cuda')")
    if kind == "gpu" and not gpu_available():
        raise UserInputError(f"device={device!r} asked for but Keras sees no GPU; use device='auto' or 'cpu'")
    return name


class KerasLayersBackend(Backend):
    """TokenAndPositionEmbedding + TransformerBlock classifier in Keras 3, trained with AdamW."""

    name = "keras_layers"
    compiles = True  # predict_proba runs an XLA-compiled tf.function (XLA compiles once per trimmed shape)

    def __init__(self, config: dict | None = None, seed: int = 0, device: str = "auto", precision: str = "fp32",
                 vectorizer: str = "shared", tokenizer: str = "regex", vocab_min_count: int = 2,
                 vocab_max_size: int = 8000, choose_on: str = "auto", progress: bool = True):
        self.config = config
        self.seed = seed
        self.device = device
        self.precision = precision  # fp32 | bf16 (Keras's mixed_bfloat16 policy: fp32 weights); auto = fp32 here
        self.vectorizer = vectorizer
        self.tokenizer = tokenizer
        self.vocab_min_count = vocab_min_count
        self.vocab_max_size = vocab_max_size
        self.choose_on = choose_on  # "auto": common/small_budget.py decides; "validation": validation always chooses
        self.progress = progress

    # -- text -> ids --------------------------------------------------------------------------
    def _fit_vectorizer(self, texts: list[str], max_len: int) -> int:
        """Fit the vocabulary on the training texts; return the vocabulary size."""
        if self.vectorizer == "shared":
            self.vocabulary_ = fit_vocabulary(self.tokenizer, texts, self.vocab_min_count, self.vocab_max_size)
            return len(self.vocabulary_)
        self.text_vectorization_ = self._text_vectorization(max_len)
        self.text_vectorization_.adapt(texts)
        return int(self.text_vectorization_.vocabulary_size())

    def _text_vectorization(self, max_len: int, vocabulary: list[str] | None = None):
        """TextVectorization: ids 0 = "" (padding), 1 = "[UNK]", then tokens by falling count."""
        return keras.layers.TextVectorization(
            max_tokens=self.vocab_max_size + 2, output_mode="int", output_sequence_length=max_len,
            vocabulary=vocabulary,
        )

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        """(n, max_len) int32 ids, right-padded with 0."""
        if isinstance(texts, str):
            raise UserInputError("predict_proba takes a list of texts, not one string: wrap it in a list")
        texts = list(texts)
        if self.vectorizer == "shared":
            return self.vocabulary_.encode(texts, self.config_.max_len).astype("int32")
        if not texts:
            return np.zeros((0, self.config_.max_len), dtype="int32")
        return ops.convert_to_numpy(self.text_vectorization_(texts)).astype("int32")

    # -- fitting -------------------------------------------------------------------------------
    def _settings(self, vocab_size: int, num_classes: int) -> EncoderConfig:
        """EncoderConfig from the overrides, with vocab_size and num_classes taken from the data."""
        values = {**RECIPE["config"], **(self.config or {}), "vocab_size": vocab_size, "num_classes": num_classes}
        config = EncoderConfig.from_dict(values)
        if config.ablations:
            raise UserInputError(f"keras_layers builds the standard block only ({', '.join(config.ablations)} is "
                                 "torch_scratch's ablation, taught in the transformer_block lesson); use torch_scratch")
        return config

    def _check_settings(self, train: LabelledTexts, valid: LabelledTexts) -> None:
        if self.config is not None and not isinstance(self.config, dict):
            raise UserInputError(f"config must be a dict of EncoderConfig settings, not {type(self.config).__name__}")
        if self.vectorizer not in VECTORIZERS:
            raise UserInputError(f"vectorizer={self.vectorizer!r} is not one of {VECTORIZERS}")
        if self.tokenizer not in TOKENIZERS:
            raise UserInputError(f"tokenizer={self.tokenizer!r} is not one of {TOKENIZERS}")
        if len(train) == 0 or len(valid) == 0:
            raise UserInputError("train and valid must each hold at least one text")
        self._settings(2, train.n_classes)  # bad settings fail before any work
        check_validation_labels(valid.labels, train.n_classes)

    def fit(self, train: LabelledTexts, valid: LabelledTexts) -> "KerasLayersBackend":
        self._check_settings(train, valid)
        fixed = fixed_schedule_applies(self.choose_on, valid.labels, train.n_classes)
        if fixed:  # validation too small to choose: the whole budget, the recipe's planned epochs, the last kept
            train = labelled_budget(train, valid)
        self.device_ = resolve_device(self.device)
        keras.utils.set_random_seed(self.seed)  # dropout masks only: weights and batch order come from common
        max_len = self._settings(vocab_size=2, num_classes=train.n_classes).max_len  # needed before the vocabulary
        vocab_size = self._fit_vectorizer(list(train.texts), max_len)
        self.config_ = self._settings(vocab_size, train.n_classes)
        self.classes_ = np.arange(train.n_classes)
        cfg = self.config_
        budget = training_budget(len(train), cfg.batch_size, cfg.epochs, cfg.min_steps, cfg.max_epochs)
        batches = SharedOrderBatches(self._encode(train.texts), np.asarray(train.labels, dtype="int32"),
                                     budget.batch_size, self.seed)  # (B, max_len) ids, (B,) labels, (B,) weights

        def valid_ap() -> float:
            return validation_average_precision(valid.labels, self.predict_proba(valid.texts), valid.positive_index)

        self.precision_ = keras_precision(self.precision)
        with keras.device(self.device_), dtype_policy(self.precision_):
            self.model_ = build_keras_model(cfg)
            load_state(self.model_, initial_state(cfg, self.seed), cfg)  # torch_scratch's initial weights
            compile_for_training(self.model_, cfg, budget.total_steps)
            keeper = BestValidationAP(None if fixed else valid_ap, batches, cfg.patience)
            # one line per epoch through common.progress (shown unredacted), not Keras's bar: the
            # orchestrator would redact its unmarked counts and losses as if they were phone numbers
            epoch_line = keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: progress_line(
                f"keras_layers epoch {epoch + 1}/{budget.epochs}: train loss {keeper.history[-1]['train_loss']:.4f}"
                + ("" if fixed else f", valid AP {keeper.history[-1]['valid_average_precision']:.4f}")))
            self.model_.fit(batches, epochs=budget.epochs, callbacks=[keeper, *([epoch_line] if self.progress else [])],
                            shuffle=False, verbose=0)  # ends with the best epoch's weights (fixed: the last)
            # the model kept is an uncompiled twin holding the best weights: no optimizer state to save
            trained, self.model_ = self.model_, build_keras_model(cfg)
            self.model_.set_weights(trained.get_weights())
        best = keeper.best
        self.selection_ = schedule_selection(fixed, epochs=budget.epochs, steps=budget.total_steps,
                                             batch_size=budget.batch_size)
        self.fit_info_ = {"best_epoch": best.best_epoch,
                          "best_valid_average_precision": None if fixed else best.best_score,
                          "epochs_run": len(keeper.history), "epochs_planned": budget.epochs,
                          "batch_size": budget.batch_size, "steps_per_epoch": budget.steps_per_epoch,
                          "train_rows": len(train), "device": self.device_, "precision": self.precision_,
                          "history": keeper.history,
                          "tokenizer": self.tokenizer if self.vectorizer == "shared" else "textvectorization",
                          "vocab_size": vocab_size, "vectorizer": self.vectorizer,
                          "vocabulary_sha256": (vocabulary_sha256(self.vocabulary_) if self.vectorizer == "shared"
                                                else None),
                          "keras_backend": keras.backend.backend(), "recipe": RECIPE,
                          "selection": self.selection_.summary()}
        return self

    # -- inference -----------------------------------------------------------------------------
    def _forward(self):
        """The compiled inference step for model_: ids (B, T) int32 -> logits (B, C) numpy.

        TensorFlow: the model under an XLA-compiled tf.function with one (None, None) signature
        (no retracing; XLA compiles once per trimmed shape). Other backends: predict_on_batch.
        """
        if getattr(self, "_compiled_for", None) is not self.model_:
            model = self.model_
            if keras.backend.backend() == "tensorflow":
                import tensorflow as tf

                step = tf.function(lambda ids: model(ids, training=False), jit_compile=True,
                                   input_signature=[tf.TensorSpec([None, None], tf.int32)])
                self._compiled_step = lambda ids: step(ids).numpy()
            else:
                self._compiled_step = model.predict_on_batch
            self._compiled_for = model
        return self._compiled_step

    def predict_logits(self, ids: np.ndarray) -> np.ndarray:
        """ids (n, T) -> logits (n, C) via the compiled inference step, in chunks of INFERENCE_BATCH."""
        forward, chunks = self._forward(), []
        with keras.device(self.device_):
            for start in range(0, len(ids), INFERENCE_BATCH):
                batch = trim_padding(ids[start : start + INFERENCE_BATCH], LENGTH_BUCKET)
                chunks.append(np.asarray(forward(batch), dtype=np.float64))
        return np.concatenate(chunks) if chunks else np.zeros((0, len(self.classes_)))

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """(n, n_classes) float64 probabilities from raw strings."""
        self._check_fitted("model_")
        logits = self.predict_logits(self._encode(texts))  # (n, C)
        logits -= logits.max(axis=1, keepdims=True)
        proba = np.exp(logits)
        return proba / proba.sum(axis=1, keepdims=True)

    def unknown_tokens(self, texts: Sequence[str]) -> dict:
        """{"tokens", "unknown", "rate"}: the share of the tokens the model sees of `texts` (after
        truncation, no padding) that are unknown, id 1: <unk>, or TextVectorization's [UNK] (how much
        of the input it could not see)."""
        self._check_fitted("model_")
        unknown_token = UNK if self.vectorizer == "shared" else "[UNK]"
        return {**ids_unknown_counts(self._encode(texts)), "unknown_token": unknown_token}

    def param_count(self) -> ParamCount:
        self._check_fitted("model_")
        trainable = sum(int(np.prod(w.shape)) for w in self.model_.trainable_weights)
        return ParamCount(total=int(self.model_.count_params()), trainable=trainable)

    # -- persistence ---------------------------------------------------------------------------
    def save(self, directory: Path) -> Path:
        """Write model.keras (architecture + weights, no optimizer), vocabulary.json and config.json."""
        self._check_fitted("model_")
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.model_.save(directory / MODEL_FILE)
        if self.vectorizer == "shared":
            self.vocabulary_.save(directory / VOCABULARY_FILE)
        else:
            vocabulary = [str(token) for token in self.text_vectorization_.get_vocabulary()]
            (directory / VOCABULARY_FILE).write_text(json.dumps({"text_vectorization": vocabulary}, ensure_ascii=False))
        (directory / CONFIG_FILE).write_text(json.dumps({
            "backend": self.name, "params": self.get_params(), "encoder_config": self.config_.to_dict(),
            "fit_info": self.fit_info_,
        }, indent=2))
        return directory

    @classmethod
    def load(cls, directory: Path, device: str | None = None) -> "KerasLayersBackend":
        """A fitted backend from a folder written by save(); `device` overrides the saved one."""
        directory = Path(directory)
        if not (directory / MODEL_FILE).exists():
            raise UserInputError(f"{directory} holds no {MODEL_FILE}: pass a folder written by KerasLayersBackend.save")
        saved = json.loads((directory / CONFIG_FILE).read_text())
        backend = cls(**saved["params"])
        if device is not None:
            backend.device = device
        backend.device_ = resolve_device(backend.device)
        backend.config_ = EncoderConfig.from_dict(saved["encoder_config"])
        backend.classes_ = np.arange(backend.config_.num_classes)
        backend.fit_info_ = saved["fit_info"]
        backend.precision_ = backend.fit_info_.get("precision", "fp32")
        if backend.vectorizer == "shared":
            backend.vocabulary_ = load_vocabulary(directory / VOCABULARY_FILE)
        else:
            vocabulary = json.loads((directory / VOCABULARY_FILE).read_text())["text_vectorization"]
            backend.text_vectorization_ = backend._text_vectorization(backend.config_.max_len, vocabulary)
        # under the saved policy: the sublayers our layers build in __init__ take the global one
        with keras.device(backend.device_), dtype_policy(backend.precision_):
            backend.model_ = keras.saving.load_model(directory / MODEL_FILE)  # custom layers are registered
        return backend

    # -- serving ---------------------------------------------------------------------------
    def export_onnx(self, folder: Path) -> dict:
        """model.onnx, the tokenizer files and serving.json under `folder` (backends/keras_layers/onnx_export.py)."""
        self._check_fitted("model_")
        from backends.keras_layers.onnx_export import export_onnx

        return export_onnx(self, folder, INFERENCE_BATCH, LENGTH_BUCKET)
