"""The backend contract (scikit-learn's discipline) and the registry of lazily imported backends.

A backend is named by a string and imported only where it runs (in a worker process), so the
orchestrator never imports a deep-learning framework.
"""
from __future__ import annotations

import abc
import importlib
import importlib.util
import inspect
import os
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, Sequence

import numpy as np

from common.datasets import LabelledTexts
from common.errors import UserInputError


class ParamCount(NamedTuple):
    total: int
    trainable: int


class NotFittedError(RuntimeError):
    """predict/save/param_count called before fit."""


class Backend(abc.ABC):
    """fit on train (valid only chooses epochs), then predict probabilities for raw texts.

    Hyperparameters are keyword arguments of __init__, stored as given, with no work and no
    validation there. Learned state ends in an underscore and exists only after fit.

    What the worker (comparisons/run/worker.py) relies on, beyond the four methods:
    - `seed`: every backend's __init__ accepts `seed: int`; the same seed gives the same
      probabilities on CPU (the worker passes the run spec's seed).
    - `device`: a backend that can use a GPU accepts `device` = "auto" | "cpu" | "cuda" (auto: CUDA
      when available); the worker passes it only to backends whose __init__ names it. `model`
      likewise, for a pretrained checkpoint.
    - `precision`: optional, "fp32" | "bf16" (| "auto"), the numeric precision of training and
      inference (backends/precision.py); the worker passes the driver's choice to backends whose
      __init__ names it, and a backend with a bf16 inference path keeps the one in force as
      `precision_` (the native-bf16 serving path sets it on a copy).
    - `fit_info_`: optional, a JSON-able dict set by fit, copied into the run record: what fit
      decided and what it ran on, e.g. "device" (the one actually used; "cpu" when absent),
      "best_epoch", "epochs_run", the recipe. Learned state, so absent before fit.
    - `get_params()` (below): the constructor's arguments, written into the record.
    - `unknown_tokens(texts)`: optional, for a backend with a vocabulary: {"tokens", "unknown",
      "rate", "unknown_token"} of the tokens the model sees of `texts` (common.unknown_tokens); the
      worker records it for the test texts as `unknown_token_rate` and `unknown_tokens`.
    - `export_onnx(folder)`: optional, for the ONNX serving paths (`--serve onnx,onnx-int8`,
      docs/serving.md): writes model.onnx, the tokenizer files and serving.json
      (common.onnx_graph.write_description) and returns the description; raises
      common.onnx_graph.ExportRefused with the reason where the model cannot be served so.
    """

    name: ClassVar[str]
    # True where the inference path compiles or traces on its first call (Keras's tf.function): only
    # then does the worker record `compile_seconds` (the first pass's extra time) as compilation.
    compiles: ClassVar[bool] = False

    @abc.abstractmethod
    def fit(self, train: LabelledTexts, valid: LabelledTexts) -> "Backend":
        """Learn from train; use valid only to choose the epoch. Returns self."""

    @abc.abstractmethod
    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """(n, n_classes) probabilities, rows summing to 1, for raw strings."""

    @abc.abstractmethod
    def param_count(self) -> ParamCount:
        """Parameters, total and trainable."""

    @abc.abstractmethod
    def save(self, directory: Path) -> Path:
        """Write the fitted model under `directory`; return the path written."""

    # -- helpers shared by every backend ---------------------------------------------------
    def get_params(self) -> dict[str, Any]:
        """The constructor's keyword arguments as given (for the manifest)."""
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {name: getattr(self, name) for name in names}

    def _check_fitted(self, attribute: str = "classes_") -> None:
        if not hasattr(self, attribute):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit(train, valid) first")


# backend name -> (module, class, modules it needs)
BACKENDS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "tfidf_logreg": ("backends.tfidf_logreg", "TfidfLogReg", ("sklearn",)),
    "torch_scratch": ("backends.torch_scratch", "TorchScratchBackend", ("torch",)),
    "keras_layers": ("backends.keras_layers", "KerasLayersBackend", ("keras",)),
    "hf_bert": ("backends.hf_bert", "HfBertBackend", ("torch", "transformers")),
    "setfit_minilm": ("backends.setfit_minilm", "SetFitMiniLM", ("torch", "transformers", "setfit")),
}

# The one table of variants: a backend plus parameters.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "tfidf_logreg": ("tfidf_logreg", {}),
    # the seed course's baseline exactly: min_df 2, C 1, analyzer on validation, fitted on the training part
    "tfidf_logreg:seed": ("tfidf_logreg", {"min_df": 2, "C": 1.0, "choose_on": "validation"}),
    "torch_scratch": ("torch_scratch", {}),
    "keras_layers": ("keras_layers", {}),
    "hf_bert:frozen": ("hf_bert", {"mode": "frozen"}),
    "hf_bert:full": ("hf_bert", {"mode": "full"}),
    # SetFit on the same MiniLM (backends/setfit_minilm): the field's few-shot recipe; not in the default plan
    "hf_bert:setfit": ("setfit_minilm", {}),
}


# What a plan runs when it names none (`--backends` default): the five the suite compares; the seed's TF-IDF and
# SetFit are asked for by name (--backends ...,hf_bert:setfit).
DEFAULT_VARIANTS: tuple[str, ...] = ("tfidf_logreg", "torch_scratch", "keras_layers", "hf_bert:frozen", "hf_bert:full")


def resolve_variant(variant: str) -> tuple[str, dict[str, Any]]:
    """Variant name -> (backend name, parameters). A name outside VARIANTS may be an outside backend
    (backends/plugins.py): 'module:Class', with parameters 'module:Class(a=1)', or a registered entry-point name;
    its backend name is then 'module:Class'."""
    from backends.plugins import parse_spec

    if variant in VARIANTS:
        backend, params = VARIANTS[variant]
        return backend, dict(params)
    parsed = parse_spec(variant)
    if parsed is None or parsed[0] in BACKENDS:
        raise UserInputError(f"unknown backend {variant!r}; choose from {', '.join(VARIANTS)}, or name an outside "
                             "backend as MODULE:CLASS (docs/adding_a_backend.md)")
    module, cls, params = parsed
    return f"{module}:{cls}", params


def is_plugin(backend: str) -> bool:
    """An outside backend ('module:Class'), not one of BACKENDS."""
    return backend not in BACKENDS


def missing_modules(backend: str) -> list[str]:
    """Python modules a backend needs that are not installed (-> a 'skipped' row)."""
    if is_plugin(backend):
        top = backend.split(":")[0].split(".")[0]
        return [] if importlib.util.find_spec(top) is not None else [top]
    needed = list(BACKENDS[backend][2])
    if backend == "keras_layers":
        needed.append({"torch": "torch", "jax": "jax"}.get(os.environ.get("KERAS_BACKEND", ""), "tensorflow"))
    return [m for m in needed if importlib.util.find_spec(m) is None]


def backend_class(backend: str) -> type[Backend]:
    """Import a backend's module (and so its framework) and return its class."""
    if is_plugin(backend):
        from backends.plugins import plugin_class

        return plugin_class(*backend.split(":"), Backend)
    module, cls, _ = BACKENDS[backend]
    return getattr(importlib.import_module(module), cls)


def build(variant: str, **overrides: Any) -> Backend:
    """An unfitted backend for a variant, its table parameters updated by `overrides`."""
    backend, params = resolve_variant(variant)
    params.update(overrides)
    return backend_class(backend)(**params)
