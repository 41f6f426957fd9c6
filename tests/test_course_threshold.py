"""comparisons.course.threshold: chosen on validation only, scored once on test, files written."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from common.metrics import choose_threshold, classification_metrics
from comparisons.course import threshold


def test_threshold_quick_tfidf(tmp_path, tiny_splits):
    assert threshold.main(["--quick", "--out", str(tmp_path), "--precision-floor", "0.9"]) == 0
    for name in ("threshold.csv", "threshold.md", "threshold.json", "threshold_pr.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    report = json.loads((tmp_path / "threshold.json").read_text())
    choice = report["choice"]
    # the choice is reproducible from validation scores alone
    _, valid, test = tiny_splits
    model = threshold.build("tfidf_logreg:seed").fit(tiny_splits[0], valid)
    again = choose_threshold(valid.labels, model.predict_proba(valid.texts)[:, 1], precision_floor=0.9)
    assert choice["threshold"] == pytest.approx(again["threshold"])
    valid_row, test_row, default_row = report["rows"]
    assert valid_row["split"] == "valid" and test_row["split"] == "test" and default_row["threshold"] == 0.5
    assert valid_row["precision"] >= 0.9 or "no threshold reaches" in choice["rule"]
    expected = classification_metrics(test.labels, model.predict_proba(test.texts), 1, threshold=choice["threshold"])
    assert test_row["recall"] == pytest.approx(expected["positive_recall"])
    assert test_row["precision"] == pytest.approx(expected["positive_precision"])
    frame = pd.read_csv(tmp_path / "threshold.csv")
    assert list(frame["split"]) == ["valid", "test", "test"]


def test_test_scores_never_move_the_threshold(tiny_splits):
    _, valid, test = tiny_splits
    rng = np.random.default_rng(0)
    valid_score = np.clip(valid.labels * 0.6 + rng.random(len(valid)) * 0.5, 0, 1)
    first, _ = threshold.evaluate(valid, test, valid_score, rng.random(len(test)), 0.95)
    second, rows = threshold.evaluate(valid, test, valid_score, 1.0 - rng.random(len(test)), 0.95)
    assert first == second
    assert rows[1]["threshold"] == first["threshold"]


def test_threshold_quick_torch_scratch(tmp_path):
    pytest.importorskip("torch")
    assert threshold.main(["--quick", "--out", str(tmp_path), "--backend", "torch_scratch", "--lang", "zh"]) == 0
    report = json.loads((tmp_path / "threshold.json").read_text())
    assert 0.0 <= report["choice"]["threshold"] <= 1.0
    assert "阈值" in pd.read_csv(tmp_path / "threshold.csv").columns


@pytest.mark.parametrize("argv", [["--precision-floor", "1.5"], ["--backend", "no_such_model"], ["--epochs", "0"],
                                  ["--backend", "tfidf_logreg"]])  # fitted on validation: refused
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, argv):
    assert threshold.main(["--quick", "--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and err.endswith("\n"), err


def test_seeds_give_an_interval_over_seeds(tmp_path):
    pytest.importorskip("torch")
    argv = ["--quick", "--out", str(tmp_path), "--backend", "torch_scratch", "--seeds", "2", "--precision-floor", "0.9"]
    assert threshold.main(argv) == 0
    report = json.loads((tmp_path / "threshold.json").read_text())
    assert report["seeds"] == 2 and [row["seed"] for row in report["per_seed"]] == [0, 1]
    assert report["per_seed"][0]["threshold"] == pytest.approx(report["choice"]["threshold"])
    frame = pd.read_csv(tmp_path / "threshold_seeds.csv")
    assert set(frame["seeds"]) == {2}
    recalls = [row["recall"] for row in report["per_seed"]]
    assert frame.loc[frame.iloc[:, 0] == "recall", "mean"].item() == pytest.approx(np.mean(recalls))


def test_seeds_on_a_deterministic_backend_are_rejected(tmp_path, capsys):
    assert threshold.main(["--quick", "--out", str(tmp_path), "--seeds", "3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --seeds 3") and err.strip().count("\n") == 0
