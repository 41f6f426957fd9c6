"""TF-IDF (1-2-grams, min_df 2, 20,000 features, sublinear tf) + balanced LogisticRegression."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import joblib
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from backends.base import Backend, ParamCount
from common.datasets import LabelledTexts
from common.selection import check_validation_labels
from common.errors import UserInputError


class TfidfLogReg(Backend):
    """The seed course's baseline, fitted on the training texts only."""

    name = "tfidf_logreg"

    def __init__(self, ngram_max: int = 2, min_df: int = 2, max_features: int = 20000,
                 sublinear_tf: bool = True, C: float = 1.0, max_iter: int = 1000,
                 class_weight: str | None = "balanced", seed: int = 20260812):
        self.ngram_max = ngram_max
        self.min_df = min_df
        self.max_features = max_features
        self.sublinear_tf = sublinear_tf
        self.C = C
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.seed = seed

    def fit(self, train: LabelledTexts, valid: LabelledTexts) -> "TfidfLogReg":
        # nothing here is chosen by epoch, but the decision threshold is chosen on valid: it must be
        # scorable (both classes), else a clear UnusableValidationError now rather than a NaN later
        check_validation_labels(valid.labels, train.n_classes)
        self.pipeline_ = Pipeline([
            ("tfidf", TfidfVectorizer(ngram_range=(1, self.ngram_max), min_df=self.min_df,
                                      max_features=self.max_features, sublinear_tf=self.sublinear_tf)),
            ("logreg", LogisticRegression(C=self.C, max_iter=self.max_iter,
                                          class_weight=self.class_weight, random_state=self.seed)),
        ])
        self.pipeline_.fit(train.texts, train.labels)
        self.classes_ = np.arange(train.n_classes)
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        self._check_fitted()
        proba = np.zeros((len(texts), len(self.classes_)))
        proba[:, self.pipeline_.classes_] = self.pipeline_.predict_proba(list(texts))
        return proba

    def param_count(self) -> ParamCount:
        self._check_fitted()
        logreg = self.pipeline_.named_steps["logreg"]
        n = int(logreg.coef_.size + logreg.intercept_.size)
        return ParamCount(total=n, trainable=n)

    def save(self, directory: Path) -> Path:
        self._check_fitted()
        path = Path(directory) / "tfidf_logreg.joblib"
        path.parent.mkdir(parents=True, exist_ok=True)
        joblib.dump(self.pipeline_, path)
        return path

    @classmethod
    def load(cls, directory: Path, device: str | None = None) -> "TfidfLogReg":
        """A fitted backend from a folder written by save() (`device` is accepted for a uniform call; CPU only)."""
        path = Path(directory) / "tfidf_logreg.joblib"
        if not path.exists():
            raise UserInputError(f"{directory} holds no tfidf_logreg.joblib: pass a folder written by TfidfLogReg.save")
        backend = cls()
        backend.pipeline_ = joblib.load(path)
        backend.classes_ = np.arange(int(backend.pipeline_.classes_.max()) + 1)
        return backend
