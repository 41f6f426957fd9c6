"""KerasLayersBackend: the Keras 3 encoder behind the Backend contract (fit, predict, save, load).

Training mirrors torch_scratch: AdamW (decay on matrices only), global-norm clipping, linear
warm-up then linear decay per step, shuffled mini-batches, epoch chosen on validation AP.
Inference uses `predict_on_batch`, Keras's compiled (traced; XLA on TensorFlow) predict step,
not eager `model(x)`.

vectorizer="shared": common.vocabulary (the same ids as torch_scratch, so weights are
interchangeable). vectorizer="textvectorization": keras.layers.TextVectorization adapted on
train, the idiomatic Keras route. Its differences: it lower-cases and strips punctuation, then
splits on whitespace (so "!" and "£" are dropped, and "win!!" == "win"), keeps the
vocab_max_size most frequent tokens with no minimum count (vocab_min_count is ignored), and needs
TensorFlow installed whatever KERAS_BACKEND is. Ids are the same convention: 0 pad, 1 unknown.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Sequence

import keras
import numpy as np
from keras import ops
from tqdm.auto import tqdm

from backends.base import Backend, ParamCount
from backends.keras_layers.model import build_keras_model
from common.config import EncoderConfig
from common.datasets import LabelledTexts
from common.errors import UserInputError
from common.metrics import classification_metrics
from common.vocabulary import PAD_ID, Vocabulary

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


def trim_padding(ids: np.ndarray, bucket: int = LENGTH_BUCKET) -> np.ndarray:
    """Drop all-padding columns at the right, keeping a multiple of `bucket` (>= 1 column)."""
    longest = int((ids != PAD_ID).sum(axis=1).max(initial=0))
    width = min(ids.shape[1], max(bucket, bucket * math.ceil(longest / bucket)))
    return ids[:, : max(1, width)]


def full_batch(ids: np.ndarray, labels: np.ndarray, batch_size: int) -> tuple[np.ndarray, ...]:
    """Pad a short last batch with all-<pad> rows of weight 0, so every step has one shape.

    TensorFlow traces the train step once per input shape (seconds each). Rows stay at max_len
    (torch_scratch trims them; the logits are the same) and the loss, reduced with
    "mean_with_sample_weight", is the mean over the real rows only, as in torch.
    """
    missing = batch_size - len(ids)
    weights = np.concatenate([np.ones(len(ids), "float32"), np.zeros(missing, "float32")])
    ids = np.concatenate([ids, np.full((missing, ids.shape[1]), PAD_ID, ids.dtype)])
    labels = np.concatenate([labels, np.zeros(missing, labels.dtype)])
    return ids, labels, weights  # (batch_size, max_len), (batch_size,), (batch_size,)


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


def make_optimizer(model: keras.Model, config: EncoderConfig, total_steps: int) -> keras.optimizers.AdamW:
    """AdamW as torch_scratch sets it: torch's epsilon, decay on matrices only, clipped, scheduled."""
    schedule = WarmupLinearDecay(config.learning_rate, total_steps, max(1, round(config.warmup_fraction * total_steps)))
    optimizer = keras.optimizers.AdamW(learning_rate=schedule, weight_decay=config.weight_decay, epsilon=1e-8,
                                       global_clipnorm=config.clip_norm)
    # nanoGPT's rule: no decay on biases (Keras keeps attention biases as (H, d_k)) or LayerNorm gamma/beta
    no_decay = [w for w in model.trainable_weights if len(w.shape) < 2 or w.path.endswith(("/bias", "/gamma", "/beta"))]
    optimizer.exclude_from_weight_decay(var_list=no_decay)
    return optimizer


class KerasLayersBackend(Backend):
    """TokenAndPositionEmbedding + TransformerBlock classifier in Keras 3, trained with AdamW."""

    name = "keras_layers"

    def __init__(self, config: dict | None = None, seed: int = 0, device: str = "auto",
                 vectorizer: str = "shared", vocab_min_count: int = 2, vocab_max_size: int = 8000,
                 progress: bool = True):
        self.config = config
        self.seed = seed
        self.device = device
        self.vectorizer = vectorizer
        self.vocab_min_count = vocab_min_count
        self.vocab_max_size = vocab_max_size
        self.progress = progress

    # -- text -> ids --------------------------------------------------------------------------
    def _fit_vectorizer(self, texts: list[str], max_len: int) -> int:
        """Fit the vocabulary on the training texts; return the vocabulary size."""
        if self.vectorizer == "shared":
            self.vocabulary_ = Vocabulary.fit(texts, self.vocab_min_count, self.vocab_max_size)
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
        values = {**(self.config or {}), "vocab_size": vocab_size, "num_classes": num_classes}
        return EncoderConfig.from_dict(values)

    def _check_settings(self, train: LabelledTexts, valid: LabelledTexts) -> None:
        if self.config is not None and not isinstance(self.config, dict):
            raise UserInputError(f"config must be a dict of EncoderConfig settings, not {type(self.config).__name__}")
        if self.vectorizer not in VECTORIZERS:
            raise UserInputError(f"vectorizer={self.vectorizer!r} is not one of {VECTORIZERS}")
        if len(train) == 0 or len(valid) == 0:
            raise UserInputError("train and valid must each hold at least one text")

    def fit(self, train: LabelledTexts, valid: LabelledTexts) -> "KerasLayersBackend":
        self._check_settings(train, valid)
        self.device_ = resolve_device(self.device)
        keras.utils.set_random_seed(self.seed)
        max_len = self._settings(vocab_size=2, num_classes=train.n_classes).max_len  # needed before the vocabulary
        vocab_size = self._fit_vectorizer(list(train.texts), max_len)
        self.config_ = self._settings(vocab_size, train.n_classes)
        self.classes_ = np.arange(train.n_classes)
        cfg = self.config_
        train_ids = self._encode(train.texts)  # (N, max_len)
        train_labels = np.asarray(train.labels, dtype="int32")
        steps_per_epoch = math.ceil(len(train) / cfg.batch_size)
        shuffler = np.random.default_rng(self.seed)

        with keras.device(self.device_):
            self.model_ = build_keras_model(cfg)
            self.model_.compile(optimizer=make_optimizer(self.model_, cfg, steps_per_epoch * cfg.epochs),
                                loss=keras.losses.SparseCategoricalCrossentropy(
                                    from_logits=True, reduction="mean_with_sample_weight"))
            history, best_weights, best_ap, best_epoch = [], None, -math.inf, 1
            for epoch in range(1, cfg.epochs + 1):
                order = shuffler.permutation(len(train))
                total_loss = 0.0
                bar = tqdm(range(0, len(train), cfg.batch_size), desc=f"keras_layers epoch {epoch}/{cfg.epochs}",
                           disable=not self.progress, leave=False)
                for start in bar:
                    rows = order[start : start + cfg.batch_size]
                    ids, labels, weights = full_batch(train_ids[rows], train_labels[rows], cfg.batch_size)
                    loss = float(self.model_.train_on_batch(ids, labels, sample_weight=weights))
                    total_loss += loss * len(rows)
                    bar.set_postfix(loss=f"{loss:.4f}")
                valid_ap = classification_metrics(
                    valid.labels, self.predict_proba(valid.texts), valid.positive_index
                )["average_precision"]
                history.append({"epoch": epoch, "train_loss": total_loss / len(train),
                                "valid_average_precision": float(valid_ap)})
                if valid_ap > best_ap:  # ties keep the earlier epoch
                    best_ap, best_epoch, best_weights = valid_ap, epoch, self.model_.get_weights()
            # the model kept is an uncompiled twin holding the best weights: no optimizer state to save
            self.model_ = build_keras_model(cfg)
            self.model_.set_weights(best_weights)
        self.fit_info_ = {"best_epoch": best_epoch, "epochs_run": cfg.epochs, "device": self.device_,
                          "history": history, "vocab_size": vocab_size, "vectorizer": self.vectorizer,
                          "keras_backend": keras.backend.backend()}
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
                batch = trim_padding(ids[start : start + INFERENCE_BATCH])
                chunks.append(np.asarray(forward(batch), dtype=np.float64))
        return np.concatenate(chunks) if chunks else np.zeros((0, len(self.classes_)))

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """(n, n_classes) float64 probabilities from raw strings."""
        self._check_fitted("model_")
        logits = self.predict_logits(self._encode(texts))  # (n, C)
        logits -= logits.max(axis=1, keepdims=True)
        proba = np.exp(logits)
        return proba / proba.sum(axis=1, keepdims=True)

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
        if backend.vectorizer == "shared":
            backend.vocabulary_ = Vocabulary.load(directory / VOCABULARY_FILE)
        else:
            vocabulary = json.loads((directory / VOCABULARY_FILE).read_text())["text_vectorization"]
            backend.text_vectorization_ = backend._text_vectorization(backend.config_.max_len, vocabulary)
        with keras.device(backend.device_):
            backend.model_ = keras.saving.load_model(directory / MODEL_FILE)  # custom layers are registered
        return backend
