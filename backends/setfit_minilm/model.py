"""SetFit (Tunstall et al. 2022) through the `setfit` library, on the shipped all-MiniLM-L6-v2.

The field's few-shot recipe: the sentence encoder is fine-tuned contrastively on pairs of the labelled texts
(same class: similar; different classes: dissimilar; CosineSimilarityLoss), then scikit-learn's
LogisticRegression is fitted on its embeddings of the same texts. Every label of the budget is used (training
and validation texts together): SetFit has no epoch to choose, so this is a fixed schedule in the sense of
common/small_budget.py. Its decisions on two classes are not at the arg-max: the logistic-regression head is refitted
on inner folds of the budget's embeddings (the body already trained on every label) and the threshold is chosen on
those out-of-fold probabilities, as the cheap recipes choose theirs (`threshold="inner_cv"`; "argmax" keeps the
0.5 cut). The body saw the held-out texts, so these probabilities are more confident than a truly held-out text's
would be: the threshold is a choice made on the training labels, never on test.

Cost is bounded: `num_iterations` pairs per text (the SetFit paper's 20) and at most `max_steps` optimisation
steps of `batch_size` pairs: 150, so at 50 labels the library's own schedule runs uncapped (125 steps, 2,000 pairs)
and larger budgets cost the same contrastive steps (the head still sees every label). A 50-label fit takes about
2 minutes on 2 cores. A cap of 80 steps brought it to about 75 s but cost 0.015 AP against setfit's defaults on the
audit's 6 draws (0.017 against 125 steps; results/recipe_audit/README.md), so the default keeps the field's schedule
and `max_steps` stays an argument for a cheaper run. `precision` bf16 runs the contrastive phase and the
embeddings under bf16 autocast (fp32 weights) where the hardware multiplies bf16 natively; `auto` keeps fp32 here,
as bf16 cost 0.03-0.06 AP at 50 labels (backends/precision.py, comparisons/studies/setfit_precision.py).
Saved with the library's save_pretrained (body + head), loaded with from_pretrained, offline.
"""
from __future__ import annotations

import json
import tempfile
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from backends.base import Backend, ParamCount
from backends.hf_bert.pretrained import DEFAULT_NAME, quiet_transformers, resolve as resolve_model
from backends.precision import autocast, check_precision, resolve
from common.datasets import LabelledTexts
from common.errors import UserInputError
from common.small_budget import Selection, choose_by_inner_cv, labelled_budget

THRESHOLDS = ("inner_cv", "argmax")  # how the decision threshold is chosen (two classes)

SETTINGS_FILE = "setfit_minilm.json"



@contextmanager
def quiet_setfit() -> Iterator[None]:
    """A run's terminal as quiet as the other variants': SetFit's expected notes (a fresh head "with random weights",
    "***** Running training *****"), the datasets library's "Map" bars and torch's pin_memory warning on a machine
    without an accelerator silenced while SetFit trains; each library's setting restored after."""
    import datasets
    from setfit import logging as setfit_logging

    verbosity, data_verbosity = setfit_logging.get_verbosity(), datasets.logging.get_verbosity()
    data_bars = datasets.is_progress_bar_enabled()
    setfit_logging.set_verbosity_error()
    datasets.logging.set_verbosity_error()
    datasets.disable_progress_bars()
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*pin_memory.*")
            yield
    finally:
        setfit_logging.set_verbosity(verbosity)
        datasets.logging.set_verbosity(data_verbosity)
        if data_bars:
            datasets.enable_progress_bars()

class SetFitMiniLM(Backend):
    """SetFit: a contrastively fine-tuned sentence encoder and a logistic-regression head."""

    name = "setfit_minilm"

    def __init__(self, model: str | None = None, max_length: int = 64, num_iterations: int = 20,
                 max_steps: int = 150, batch_size: int = 16, body_learning_rate: float = 2e-5,
                 threshold: str = "inner_cv", seed: int = 0, device: str = "auto", precision: str = "fp32",
                 progress: bool = True):
        self.model = model                        # None: the shipped all-MiniLM-L6-v2
        self.max_length = max_length              # tokens per text
        self.num_iterations = num_iterations      # pairs generated per labelled text (SetFit paper: 20)
        self.max_steps = max_steps                # cap on contrastive steps: the cost bound
        self.batch_size = batch_size              # pairs per step
        self.body_learning_rate = body_learning_rate
        self.threshold = threshold                # "inner_cv": out-of-fold head probabilities; "argmax": 0.5
        self.seed = seed
        self.device = device
        self.precision = precision
        self.progress = progress

    def _check_settings(self) -> None:
        for name in ("max_length", "num_iterations", "max_steps", "batch_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise UserInputError(f"hf_bert:setfit {name}={value!r} must be a positive integer")
        if self.threshold not in THRESHOLDS:
            raise UserInputError(f"hf_bert:setfit threshold={self.threshold!r} is not one of {THRESHOLDS}")

    def fit(self, train: LabelledTexts, valid: LabelledTexts) -> "SetFitMiniLM":
        import torch
        from datasets import Dataset
        from setfit import SetFitModel, Trainer, TrainingArguments

        self._check_settings()
        budget = labelled_budget(train, valid)
        if len(np.unique(budget.labels)) < 2:
            raise UserInputError("hf_bert:setfit needs texts of at least two classes in the label budget")
        device = "cuda" if self.device == "auto" and torch.cuda.is_available() else \
            "cpu" if self.device == "auto" else self.device
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise UserInputError(f"device {self.device!r} asked for, but torch sees no CUDA GPU: use --device cpu")
        self.precision_ = resolve(self.precision, device.split(":")[0])
        torch.manual_seed(self.seed)
        source, local_only = resolve_model(self.model)
        started = time.perf_counter()
        with quiet_transformers(), quiet_setfit(), tempfile.TemporaryDirectory(prefix="setfit_") as scratch:
            network = SetFitModel.from_pretrained(source, local_files_only=local_only, device=device)
            network.model_body.max_seq_length = self.max_length
            arguments = TrainingArguments(batch_size=self.batch_size, num_epochs=1, num_iterations=self.num_iterations,
                                          max_steps=self.max_steps, body_learning_rate=self.body_learning_rate,
                                          seed=self.seed, report_to="none", show_progress_bar=self.progress,
                                          save_strategy="no", logging_strategy="no", output_dir=scratch)
            trainer = Trainer(model=network, args=arguments,
                              train_dataset=Dataset.from_dict({"text": list(budget.texts),
                                                               "label": [int(y) for y in budget.labels]}))
            # no log dicts ({'embedding_loss': ...}, {'train_runtime': ...}): with its logging held at errors by
            # quiet_transformers, transformers shows no bar whatever show_progress_bar says and prints each log with
            # its PrinterCallback instead; the run's own line reports the result, as the other variants' do
            from transformers.trainer_callback import PrinterCallback

            trainer.remove_callback(PrinterCallback)
            with autocast(device.split(":")[0], self.precision_):
                trainer.train()
        self.network_, self.n_classes_, self.device_ = network, train.n_classes, device
        schedule = {"max_steps": self.max_steps, "num_iterations": self.num_iterations}
        if self.threshold == "inner_cv" and train.n_classes == 2:
            self.selection_ = self._out_of_fold_head(budget, schedule)
        else:
            self.selection_ = Selection(rule="fixed_schedule", chosen=schedule)
        self.fit_info_ = {"device": device, "precision": self.precision_, "model": self.model or DEFAULT_NAME,
                          "epochs_run": 1, "labelled_texts": len(budget), "selection": self.selection_.summary(),
                          "train_seconds": time.perf_counter() - started}
        return self

    def _out_of_fold_head(self, budget: LabelledTexts, schedule: dict) -> Selection:
        """The head refitted on inner folds of the budget's embeddings: out-of-fold probabilities to choose the
        threshold on (common/scoring.py reads them from the Selection); the body and the fitted head are kept."""
        from sklearn.base import clone

        with autocast(self.device_.split(":")[0], self.precision_):
            embeddings = np.asarray(self.network_.encode(list(budget.texts), show_progress_bar=False), dtype=np.float64)
        labels = np.asarray(budget.labels)

        def fit_predict(_, fit_rows, held_rows) -> np.ndarray:
            head = clone(self.network_.model_head).fit(embeddings[fit_rows], labels[fit_rows])
            proba = np.zeros((len(held_rows), self.n_classes_))
            proba[:, [int(c) for c in head.classes_]] = head.predict_proba(embeddings[held_rows])
            return proba

        selection = choose_by_inner_cv(["the fitted head"], fit_predict, labels, self.n_classes_,
                                       budget.positive_index, self.seed)
        return Selection(rule="inner_cv", chosen={**schedule, "threshold": "out-of-fold head probabilities"},
                         candidates=selection.candidates, folds=selection.folds, labels=selection.labels,
                         proba=selection.proba)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        self._check_fitted("network_")
        proba = np.zeros((len(texts), self.n_classes_))
        if len(texts) == 0:
            return proba
        with autocast(self.device_.split(":")[0], self.precision_):
            scores = np.asarray(self.network_.predict_proba(list(texts), as_numpy=True), dtype=np.float64)
        classes = [int(c) for c in self.network_.model_head.classes_]
        proba[:, classes] = scores
        return proba

    def param_count(self) -> ParamCount:
        self._check_fitted("network_")
        body = sum(p.numel() for p in self.network_.model_body.parameters())
        head = self.network_.model_head
        n_head = int(head.coef_.size + head.intercept_.size)
        return ParamCount(total=int(body + n_head), trainable=int(body + n_head))  # both were trained

    def save(self, directory: Path) -> Path:
        self._check_fitted("network_")
        root = Path(directory) / "setfit"
        root.mkdir(parents=True, exist_ok=True)
        with quiet_transformers():
            self.network_.save_pretrained(str(root))
        settings = {"model": self.model or DEFAULT_NAME, "max_length": self.max_length, "n_classes": self.n_classes_,
                    "precision": self.precision_}
        (root / SETTINGS_FILE).write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
        return root

    @classmethod
    def load(cls, directory: Path, device: str | None = None) -> "SetFitMiniLM":
        """A fitted backend from a folder written by save(), offline."""
        import torch
        from setfit import SetFitModel

        root = Path(directory) / "setfit" if (Path(directory) / "setfit").is_dir() else Path(directory)
        if not (root / SETTINGS_FILE).exists():
            raise UserInputError(f"{directory} holds no {SETTINGS_FILE}: pass a folder written by SetFitMiniLM.save")
        settings = json.loads((root / SETTINGS_FILE).read_text(encoding="utf-8"))
        backend = cls(model=settings["model"], max_length=settings["max_length"], device=device or "auto",
                      precision=settings.get("precision", "fp32"))
        backend.device_ = "cuda" if backend.device == "auto" and torch.cuda.is_available() else \
            "cpu" if backend.device == "auto" else backend.device
        backend.precision_ = check_precision(backend.precision)
        with quiet_transformers():
            backend.network_ = SetFitModel.from_pretrained(str(root), local_files_only=True, device=backend.device_)
        backend.network_.model_body.max_seq_length = backend.max_length
        backend.n_classes_ = settings["n_classes"]
        backend.fit_info_ = {"loaded_from": "a saved folder", "device": backend.device_,
                             "precision": backend.precision_}
        return backend

