"""The run-folder contract: one spelling of the training size, typed records, one reader that opens
each file once."""
from __future__ import annotations

import json

import numpy as np
import pytest

from comparisons.outputs import atomic_write_bytes, atomic_write_json
from comparisons.run_folder import (Manifest, RunFolder, RunRecord, as_train_size, prediction_path, run_path,
                                    size_key, size_label)


@pytest.mark.parametrize("spelled", [None, "all", "", "None", "nan", float("nan"), float("inf"), " ALL "])
def test_every_old_spelling_of_the_whole_split_reads_as_none(spelled):
    assert as_train_size(spelled) is None
    assert size_label(spelled) == "all" and size_key(spelled) == float("inf")


@pytest.mark.parametrize("spelled, size", [(200, 200), ("200", 200), (200.0, 200), (np.int64(50), 50), ("50.0", 50)])
def test_a_subset_size_reads_as_an_int(spelled, size):
    assert as_train_size(spelled) == size and isinstance(as_train_size(spelled), int)
    assert size_label(spelled) == str(size) and size_key(spelled) == float(size)


def test_a_record_has_one_spelling_of_its_size_and_a_thread_count():
    record = RunRecord.from_dict({"variant": "hf_bert:full", "seed": 2, "status": "ok", "train_size": "all",
                                  "threads": {"threads": 2, "OMP_NUM_THREADS": "2"}, "macro_f1": 0.9})
    assert (record.variant, record.seed, record.train_size, record.ok, record.threads) == ("hf_bert:full", 2, None,
                                                                                           True, 2)
    assert record["train_size"] is None and record["macro_f1"] == 0.9 and record.get("missing") is None
    assert record.name == "hf_bert-full__seed2"
    failed = RunRecord.from_dict({"variant": "tfidf_logreg", "seed": 0, "status": "failed", "train_size": 100,
                                  "threads": 2})
    assert (failed.ok, failed.threads, failed.name) == (False, 2, "tfidf_logreg__n100__seed0")
    assert json.loads(json.dumps(failed.to_dict()))["train_size"] == 100


def folder_with_two_runs(tmp_path):
    manifest = {"variants": ["tfidf_logreg"], "seeds": [0, 1], "train_sizes": ["all"], "profile": "tiny",
                "data": {"class_names": ["ham", "spam"], "positive_index": 1}}
    atomic_write_json(tmp_path / "manifest.json", manifest)
    for seed in (0, 1):
        atomic_write_json(run_path(tmp_path, "tfidf_logreg", seed), {"variant": "tfidf_logreg", "seed": seed,
                                                                     "status": "ok", "train_size": None})
        buffer = __import__("io").BytesIO()
        np.savez(buffer, test=np.arange(3), labels=np.array([0, 1, 1]), proba=np.full((3, 2), 0.5))
        atomic_write_bytes(prediction_path(tmp_path, "tfidf_logreg", seed), buffer.getvalue())
    return manifest


def test_the_reader_opens_each_predictions_file_once(tmp_path, monkeypatch):
    manifest = folder_with_two_runs(tmp_path)
    opened = []
    real_load = np.load
    monkeypatch.setattr(np, "load", lambda path, *a, **k: opened.append(str(path)) or real_load(path, *a, **k))
    folder = RunFolder(tmp_path)
    assert folder.plan == Manifest(manifest) and folder.plan.train_sizes == [None] and folder.plan.positive_index == 1
    for _ in range(3):  # tables, verdicts, figures: each asks for every run's predictions
        for record in folder.records:
            saved = folder.predictions(record)
            assert saved.labels.tolist() == [0, 1, 1] and saved.proba.shape == (3, 2)
    assert len(opened) == 2
    assert folder.selected() is folder.selected()  # the plan's runs are selected once
    assert [r.seed for r in folder.selected()[0]] == [0, 1]
    assert RunFolder.of(folder) is folder


def test_a_missing_predictions_file_says_how_to_recreate_it(tmp_path):
    from common.errors import UserInputError

    folder_with_two_runs(tmp_path)
    prediction_path(tmp_path, "tfidf_logreg", 1).unlink()
    folder = RunFolder(tmp_path)
    with pytest.raises(UserInputError, match="run the same `python -m comparisons run` again"):
        folder.predictions(folder.records[1])
