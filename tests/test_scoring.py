"""common/scoring.py: the one fit-and-score of the worker and the course, checked against scikit-learn and
against what a worker records for the same split."""
import json

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, average_precision_score, f1_score

from backends.base import build
from common.datasets import DataSpec, load
from common.scoring import fit_and_score, score_fitted
from common.splits import stratified_split


class Fixed:
    """A fitted 'model' whose probabilities are given: fit does nothing."""

    def __init__(self, by_text: dict):
        self.by_text = by_text

    def fit(self, train, valid):
        return self

    def predict_proba(self, texts):
        return np.array([self.by_text[t] for t in texts])


def test_the_threshold_comes_from_validation_and_test_is_scored_at_it_as_scikit_learn_scores_it():
    data = load(DataSpec(limit_per_class=60))
    split = stratified_split(data)
    train, valid, test = (data.subset(rows) for rows in (split.train, split.valid, split.test))
    scored = fit_and_score(build("tfidf_logreg:seed", seed=0), train, valid, test)
    positive = data.positive_index
    score, truth = scored.test_proba[:, positive], test.labels == positive
    assert scored.test["average_precision"] == pytest.approx(average_precision_score(truth, score))
    decided = np.where(score >= scored.threshold, positive, 1 - positive)
    assert scored.test_at_threshold["macro_f1"] == pytest.approx(f1_score(test.labels, decided, average="macro"))
    assert scored.headline["macro_f1"] == scored.test_at_threshold["macro_f1"]
    assert scored.headline["accuracy"] == pytest.approx(accuracy_score(test.labels, decided))
    assert scored.test["accuracy"] == pytest.approx(accuracy_score(test.labels, scored.test_proba.argmax(axis=1)))
    assert scored.fit_seconds > 0 and scored.valid_proba.shape == (len(valid), 2)
    # a threshold that would be right on test is not what it chose: only validation's scores move it
    moved = {**{t: p for t, p in zip(test.texts, 1 - scored.test_proba)},
             **{t: p for t, p in zip(valid.texts, scored.valid_proba)}}
    again = score_fitted(Fixed(moved), valid, test, positive)
    assert again.threshold == scored.threshold and again.test["average_precision"] != scored.test["average_precision"]


def test_more_classes_decide_by_arg_max_with_no_threshold():
    rng = np.random.default_rng(0)
    valid = type("Split", (), {"texts": [f"v{i}" for i in range(30)], "labels": rng.integers(0, 3, 30)})()
    test = type("Split", (), {"texts": [f"t{i}" for i in range(30)], "labels": rng.integers(0, 3, 30)})()
    by_text = {t: p for t, p in zip(valid.texts + test.texts, rng.dirichlet([1, 1, 1], 60))}
    scored = score_fitted(Fixed(by_text), valid, test, None)
    assert scored.threshold is None and scored.test_at_threshold is None
    assert scored.headline["macro_f1"] == scored.test["macro_f1"]


def test_a_worker_records_what_the_in_process_fit_and_score_gives(tmp_path):
    from comparisons.cli import main

    out = tmp_path / "run"
    assert main(["run", "--backends", "tfidf_logreg", "--profile", "tiny", "--limit-per-class", "40",
                 "--threads", "1", "--quality-only", "--out", str(out)]) == 0
    record = json.loads((out / "runs" / "tfidf_logreg__seed0.json").read_text())
    data = load(DataSpec(limit_per_class=40))
    split = stratified_split(data)
    scored = fit_and_score(build("tfidf_logreg", seed=0), *(data.subset(r) for r in (split.train, split.valid, split.test)))
    assert record["threshold"] == pytest.approx(scored.threshold, abs=1e-6)  # the record keeps 6 decimals
    assert record["macro_f1_at_threshold"] == pytest.approx(scored.test_at_threshold["macro_f1"], abs=1e-6)
    assert record["average_precision"] == pytest.approx(scored.test["average_precision"], abs=1e-6)
    assert record["valid_average_precision"] == pytest.approx(scored.valid["average_precision"], abs=1e-6)
    assert json.loads((out / "manifest.json").read_text())["quality_only"] is True
    assert "latency_ms_b1_p50" not in record or record["latency_ms_b1_p50"] is None  # quality only: no costs
