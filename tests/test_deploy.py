"""The selected recipe trained on all labels and shipped (comparisons/deploy.py, comparisons/run/deploy_worker.py,
report/model_card.py): the split it trains on, the worker's files, the loaded model's predictions, the card."""
from __future__ import annotations

import json

import numpy as np

from comparisons.deploy import DEPLOY_FOLDER, deploy_pick, deploy_spec, deployment_split
from comparisons.report.model_card import CARD_FILE, write_model_card
from comparisons.run_folder.selection_record import SelectionRecord
from comparisons.select import SelectSettings, selection_plan_of


def _prepared(tmp_path, labels=120):
    from comparisons.plan import prepare

    settings = SelectSettings(30.0, candidates=("tfidf_logreg", "tfidf_logreg:seed"), labels=labels, folds=4,
                              profile="fast", threads=1, out=tmp_path / "sel")
    return prepare(selection_plan_of(settings))


def test_the_deployment_split_holds_every_text_once_with_a_stratified_fifth_for_validation(tmp_path):
    p = _prepared(tmp_path)
    split = deployment_split(p.data, p.plan.split_seed)
    assert len(split.test) == 0
    assert sorted(np.concatenate([split.train, split.valid]).tolist()) == list(range(len(p.data)))
    assert abs(len(split.valid) / len(p.data) - 0.2) < 0.01
    labels = p.data.labels
    assert abs(labels[split.valid].mean() - labels.mean()) < 0.01  # stratified
    valid_texts = {p.data.texts[i] for i in split.valid}
    assert not any(p.data.texts[i] in valid_texts for i in split.train)  # equal texts on one side


def test_the_pick_is_trained_on_the_label_budget_saved_exported_and_carded(tmp_path):
    p = _prepared(tmp_path, labels=120)
    out = tmp_path / "sel"
    trained = deploy_pick(p, "tfidf_logreg", out, {"code_commit": None, "code_dirty": None, "code_sha256": None})
    assert "failed" not in trained, trained
    folder = out / DEPLOY_FOLDER
    assert trained["n_train_texts"] + trained["n_valid_texts"] == 120  # the budget, validation included
    assert 0 < trained["threshold"] < 1 and trained["backend"] == "tfidf_logreg"
    assert trained["onnx"]["exported"] and (folder / "onnx").is_dir()
    assert json.loads((folder / "training.json").read_text())["seed"] == trained["seed"]
    from backends.base import backend_class

    model = backend_class("tfidf_logreg").load(folder / trained["model_folder"])
    proba = model.predict_proba(["free prize call now", "see you at lunch"])
    assert proba.shape == (2, 2) and np.allclose(proba.sum(axis=1), 1)
    record = SelectionRecord({"plan": {"candidates": ["tfidf_logreg", "tfidf_logreg:seed"], "delta": 0.01, "alpha": 0.05},
                              "scores": [[0.95, 0.93], [0.96, None], [0.94, 0.92]],
                              "decision": {"pick": "tfidf_logreg", "behind_best": {"tfidf_logreg": 0.004}},
                              "deployment": trained})
    english, chinese = write_model_card(folder, record)
    card = english.read_text()
    assert english == folder / CARD_FILE and chinese == folder / "zh" / CARD_FILE
    assert "mean 0.9500" in card and "3 selection folds" in card and "120 labelled texts" in card
    assert "ONNX graph" in card and "No ONNX" not in card
    assert "模型卡" in chinese.read_text()
    assert not any(text in card for text in p.data.texts[:500] if len(text) > 20)  # no message of the data


def test_a_failed_training_is_one_reason_not_a_crash(tmp_path, monkeypatch):
    from dataclasses import replace

    import comparisons.deploy as deploy

    p = _prepared(tmp_path)
    wrong = lambda *args: replace(deploy_spec(*args), data_sha256="not-this-data")  # noqa: E731
    monkeypatch.setattr(deploy, "deploy_spec", wrong)
    trained = deploy_pick(p, "tfidf_logreg", tmp_path / "sel", {})
    assert set(trained) == {"failed"} and "not the data of its run spec" in trained["failed"]
    assert "training.log" in trained["failed"] and not (tmp_path / "sel" / DEPLOY_FOLDER / "model").exists()
