"""TF-IDF (20,000 features, sublinear tf) + balanced LogisticRegression, its choices made by inner CV on the budget.

What the vectorizer counts is a choice made inside fit, like every other recipe choice: each
candidate analyzer is scored by inner cross-validation on the budget (or, with choose_on="validation", fitted on
the training texts and scored once on validation); the best is kept (ties keep the earlier candidate), and
fit_info_ records every candidate's score and the choice. The test split is never seen.

`analyzers` names the candidates, comma-separated, or "auto" (the default), which is
language-aware: on Chinese training texts (at least a tenth hold a CJK character) every analyzer
below competes; on other text only "word", the seed course's baseline. (On the SMS default split
validation would choose char_wb_1_3: AP 0.9943 against word 0.9880 and char_wb_2_4 0.9931; pass
analyzers=ALL_ANALYZERS to let English choose too.)

- "word": word 1..ngram_max-grams, scikit-learn's token pattern (two or more word characters).
  On Chinese, written without spaces, a whole clause is one "word".
- "char_wb_1_3", "char_wb_2_4": character n-grams inside whitespace-separated chunks; for
  Chinese, n-grams of its characters.
- "jieba": word 1..ngram_max-grams over jieba's segmentation (common.vocabulary.jieba_tokens), single
  characters and punctuation kept. Offered only when at least a tenth of the training texts hold
  a CJK character (on other text it would only repeat "word": the SMS data holds one mojibake
  ideograph); skipped, and recorded as skipped, without jieba installed.

A candidate that keeps no n-gram (none seen min_df times) is recorded as skipped.

How choices are made (`choose_on`; common/small_budget.py):
- "inner_cv" (the default, at every budget): the analyzer and C (CHOICES_C unless set) are chosen by stratified
  inner cross-validation on the whole label budget (training and validation texts together), the chosen pipeline
  is refitted on all of it (GridSearchCV's refit), and the decision threshold comes from the chosen candidate's
  out-of-fold probabilities. Fitting is cheap, so every label is used. min_df is 1, scikit-learn's default, and
  not a choice: the recipe audit (results/recipe_audit/) found inner CV choosing min_df 2 on 50 SMS labels (7
  spam), where it keeps few n-grams of 40 texts, and losing 0.07 AP to the textbook peer; on the tweets (another
  corpus) min_df 2 was never better at 50 to 200 labels (results/recipe_audit/README.md).
- "validation": the seed course's way: min_df and C as set, the analyzer chosen on the validation part, fitted
  on the training part. The variant `tfidf_logreg:seed` (min_df 2, C 1) reproduces the seed's figures.
"""
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
from common.errors import UserInputError
from common.segmentation import JIEBA_INSTALL, cjk_share, jieba_available
from common.selection import check_validation_labels, validation_average_precision
from common.small_budget import Selection, choose_by_inner_cv, labelled_budget
from common.unknown_tokens import unknown_token_counts
from common.vocabulary import jieba_tokens

ANALYZERS = ("word", "char_wb_1_3", "char_wb_2_4", "jieba")
ALL_ANALYZERS = ",".join(ANALYZERS)
AUTO = "auto"  # every analyzer on Chinese training texts, "word" on others
MIN_CJK_SHARE = 0.1  # Chinese training texts: at least this share holds a CJK character (auto, jieba)
UNKNOWN_FEATURE = "<not a kept n-gram>"
CHOICES_C = (1.0, 10.0, 100.0)    # C=None: inner CV chooses among these inverse regularisation strengths
CHOOSE_ON = ("inner_cv", "validation")


def parse_analyzers(value: str, texts: Sequence[str] = ()) -> list[str]:
    """The candidate names of `analyzers` ("word,char_wb_2_4", or "auto" read on the training `texts`),
    checked: one line saying what is wrong."""
    if str(value).strip() == AUTO:
        return list(ANALYZERS) if cjk_share(texts) >= MIN_CJK_SHARE else ["word"]
    names = [name.strip() for name in str(value).split(",") if name.strip()]
    unknown = [name for name in names if name not in ANALYZERS]
    if unknown or not names:
        raise UserInputError(f"tfidf_logreg analyzers={value!r}: give auto or one or more of {', '.join(ANALYZERS)}, "
                             "comma-separated (several: the best on validation is kept)")
    return list(dict.fromkeys(names))


def vectorizer_settings(analyzer: str, ngram_max: int) -> dict:
    """TfidfVectorizer arguments of one analyzer name."""
    if analyzer == "word":
        return {"analyzer": "word", "ngram_range": (1, ngram_max)}
    if analyzer == "jieba":
        return {"analyzer": "word", "tokenizer": jieba_tokens, "token_pattern": None, "ngram_range": (1, ngram_max)}
    low, high = (int(n) for n in analyzer.removeprefix("char_wb_").split("_"))
    return {"analyzer": "char_wb", "ngram_range": (low, high)}


class TfidfLogReg(Backend):
    """The seed course's baseline, fitted on the training texts only."""

    name = "tfidf_logreg"

    def __init__(self, ngram_max: int = 2, min_df: int = 1, max_features: int = 20000,
                 sublinear_tf: bool = True, C: float | None = None, max_iter: int = 1000,
                 class_weight: str | None = "balanced", seed: int = 20260812,
                 analyzers: str = AUTO, choose_on: str = "inner_cv"):
        self.choose_on = choose_on  # "inner_cv" (every label used) | "validation" (the seed's way)
        self.analyzers = analyzers
        self.ngram_max = ngram_max
        self.min_df = min_df
        self.max_features = max_features
        self.sublinear_tf = sublinear_tf
        self.C = C
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.seed = seed

    def fit(self, train: LabelledTexts, valid: LabelledTexts) -> "TfidfLogReg":
        if self.choose_on not in CHOOSE_ON:
            raise UserInputError(f"tfidf_logreg choose_on={self.choose_on!r}: give one of {', '.join(CHOOSE_ON)}")
        if self.choose_on == "inner_cv":
            return self._fit_inner_cv(train, valid)
        # the analyzer and the decision threshold are chosen on valid: it must be scorable (both
        # classes), else a clear UnusableValidationError now rather than a NaN later
        check_validation_labels(valid.labels, train.n_classes)
        min_df = self.min_df
        candidates, skipped = self._candidates(train)
        scored, best = [], None
        for analyzer in candidates:
            try:
                pipeline = self._pipeline(analyzer).fit(train.texts, train.labels)
            except ValueError as exc:  # scikit-learn's "empty vocabulary; perhaps the documents only contain stop words"
                if "empty vocabulary" not in str(exc):
                    raise
                skipped.append({"analyzer": analyzer, "skipped": f"no n-gram seen {min_df} times in training"})
                continue
            proba = np.zeros((len(valid), train.n_classes))
            proba[:, pipeline.classes_] = pipeline.predict_proba(list(valid.texts))
            score = validation_average_precision(valid.labels, proba, valid.positive_index)
            scored.append({"analyzer": analyzer, "valid_average_precision": score})
            if best is None or score > best[1]:  # ties keep the earlier candidate; NaN never wins
                best = (analyzer, score, pipeline)
        if best is None:
            raise UserInputError(f"tfidf_logreg: no analyzer of {self.analyzers!r} keeps an n-gram seen {min_df} "
                                 "times in the training texts; use more training data or min_df=1")
        self.analyzer_, _, self.pipeline_ = best
        self.classes_ = np.arange(train.n_classes)
        self.fit_info_ = {"analyzer": self.analyzer_, "best_valid_average_precision": best[1],
                          "analyzers": self.analyzers, "cjk_share_of_training_texts": cjk_share(train.texts),
                          "analyzer_candidates": scored + skipped,
                          "chosen_on": "validation average precision (ties: the earlier candidate); test never scored"}
        self.selection_ = Selection(rule="validation", chosen=self.analyzer_, candidates=scored)
        self.fit_info_["selection"] = self.selection_.summary()
        return self

    def _fit_inner_cv(self, train: LabelledTexts, valid: LabelledTexts) -> "TfidfLogReg":
        """Analyzer and C chosen by inner CV on the whole budget; the choice refitted on all of it."""
        budget = labelled_budget(train, valid)
        check_validation_labels(budget.labels, train.n_classes)  # the budget must hold two classes
        analyzers, skipped = self._candidates(budget)
        grid = [{"analyzer": a, "min_df": self.min_df, "C": c} for a in analyzers
                for c in (CHOICES_C if self.C is None else (self.C,))]

        features: dict[tuple, tuple] = {}  # the grid is analyzer-major: C changes only the model, not the n-grams

        def fold_features(candidate: dict, fit_rows, held_rows) -> tuple | None:
            """The inner fold's TF-IDF matrices (fitted on fit_rows), made once for every C of an analyzer: the
            same vectorizer a pipeline would fit, so the probabilities are bit for bit a pipeline's."""
            key = (candidate["analyzer"], candidate["min_df"], fit_rows.tobytes())
            if key not in features:
                if features and next(iter(features))[:2] != key[:2]:
                    features.clear()  # the next analyzer: the last one's matrices are not needed again
                vectorizer = self._pipeline(**candidate).named_steps["tfidf"]
                try:
                    fitted = vectorizer.fit_transform([budget.texts[i] for i in fit_rows])
                except ValueError as exc:  # an inner fold that keeps no n-gram at this min_df
                    if "empty vocabulary" not in str(exc) and "no terms remain" not in str(exc):
                        raise
                    features[key] = None
                else:
                    features[key] = (fitted, vectorizer.transform([budget.texts[i] for i in held_rows]))
            return features[key]

        def fit_predict(candidate: dict, fit_rows, held_rows) -> np.ndarray:
            proba = np.full((len(held_rows), budget.n_classes), np.nan)
            matrices = fold_features(candidate, fit_rows, held_rows)
            if matrices is None:
                return proba
            model = self._pipeline(**candidate).named_steps["logreg"].fit(matrices[0], budget.labels[fit_rows])
            proba[:] = 0.0
            proba[:, model.classes_] = model.predict_proba(matrices[1])
            return proba

        self.selection_ = choose_by_inner_cv(grid, fit_predict, budget.labels, budget.n_classes,
                                             budget.positive_index, self.seed)
        chosen = self.selection_.chosen
        self.analyzer_ = chosen["analyzer"]
        self.pipeline_ = self._pipeline(**chosen).fit(budget.texts, budget.labels)
        self.classes_ = np.arange(train.n_classes)
        self.fit_info_ = {"analyzer": self.analyzer_, "analyzers": self.analyzers, "min_df": chosen["min_df"],
                          "C": chosen["C"], "cjk_share_of_training_texts": cjk_share(budget.texts),
                          "analyzer_candidates": self._best_per_analyzer(analyzers) + skipped,
                          "selection": self.selection_.summary(),
                          "chosen_on": "inner cross-validation on training and validation texts together "
                                       "(common/small_budget.py); test never scored"}
        return self

    def _best_per_analyzer(self, analyzers: list[str]) -> list[dict]:
        """{"analyzer", "inner_cv_average_precision"}: each analyzer's best candidate score under inner CV."""
        best = {}
        for entry in self.selection_.candidates:
            name, score = entry["candidate"]["analyzer"], entry["inner_cv_average_precision"]
            if name not in best or score > best[name]:
                best[name] = score
        return [{"analyzer": name, "inner_cv_average_precision": best[name]} for name in analyzers if name in best]

    def _candidates(self, train: LabelledTexts) -> tuple[list[str], list[dict]]:
        """The analyzers to try, and {"analyzer", "skipped"} for those that cannot apply here."""
        wanted, candidates, skipped = parse_analyzers(self.analyzers, train.texts), [], []
        for analyzer in wanted:
            if analyzer == "jieba" and not jieba_available():
                if wanted == ["jieba"]:
                    raise UserInputError(f"tfidf_logreg analyzers=jieba needs the package jieba: {JIEBA_INSTALL}")
                skipped.append({"analyzer": analyzer, "skipped": "jieba is not installed"})
            elif analyzer == "jieba" and len(wanted) > 1 and cjk_share(train.texts) < MIN_CJK_SHARE:
                skipped.append({"analyzer": analyzer, "skipped": f"under {MIN_CJK_SHARE:.0%} of the training texts "
                                                                 "hold a CJK character"})
            else:
                candidates.append(analyzer)
        return candidates, skipped

    def _pipeline(self, analyzer: str, min_df: int | None = None, C: float | None = None) -> Pipeline:
        min_df = self.min_df if min_df is None else min_df
        C = (self.C if self.C is not None else 1.0) if C is None else C
        return Pipeline([
            ("tfidf", TfidfVectorizer(min_df=min_df, max_features=self.max_features,
                                      sublinear_tf=self.sublinear_tf, **vectorizer_settings(analyzer, self.ngram_max))),
            ("logreg", LogisticRegression(C=C, max_iter=self.max_iter,
                                          class_weight=self.class_weight, random_state=self.seed)),
        ])

    def unknown_tokens(self, texts: Sequence[str]) -> dict:
        """{"tokens", "unknown", "rate", "unknown_token"} over the n-grams the chosen analyzer cuts from
        `texts`: unknown are those the fitted vocabulary does not hold (unseen, too rare, or past max_features)."""
        self._check_fitted()
        vectorizer = self.pipeline_.named_steps["tfidf"]
        analyze, vocabulary = vectorizer.build_analyzer(), vectorizer.vocabulary_
        features = [analyze(text) for text in texts]
        return {**unknown_token_counts(([f if f in vocabulary else UNKNOWN_FEATURE for f in text_features]
                                        for text_features in features), UNKNOWN_FEATURE),
                "unknown_token": UNKNOWN_FEATURE}

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

    # -- serving ---------------------------------------------------------------------------
    def export_onnx(self, folder: Path) -> dict:
        """model.onnx, the tokenizer files and serving.json under `folder` (backends/tfidf_logreg/onnx_export.py)."""
        self._check_fitted()
        from backends.tfidf_logreg.onnx_export import export_onnx

        return export_onnx(self, folder)
