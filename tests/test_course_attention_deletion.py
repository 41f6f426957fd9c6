"""Attention deletion: the right tokens are deleted, intervals are right, the caveat is written."""
import json

import numpy as np
import pytest
from scipy import stats

from comparisons.course import attention_deletion as module


def test_attention_received_averages_heads_and_real_queries():
    weights = np.zeros((2, 4, 4))  # (H, T, T) with one padded position (length 3)
    weights[0, :3, 2] = 1.0  # head 0: every real query looks at token 2
    weights[1, :3, 0] = 1.0  # head 1: at token 0
    weights[:, 3, 1] = 1.0  # the padded query row must not count
    np.testing.assert_allclose(module.attention_received(weights, 3), [0.5, 0.0, 0.5])


def test_paired_interval_matches_scipy():
    differences = np.random.default_rng(0).normal(0.1, 1.0, size=40)
    interval = module.paired_interval(differences)
    low, high = stats.ttest_1samp(differences, 0.0).confidence_interval(0.95)
    assert interval["t_low"] == pytest.approx(low) and interval["t_high"] == pytest.approx(high)
    assert interval["boot_low"] < interval["mean"] < interval["boot_high"]


def test_deletion_removes_exactly_k_tokens(tiny_splits):
    train, valid, test = tiny_splits
    backend = module.train_classifier(train, valid, seed=0, quick=True)
    spam = [t for t, y in zip(test.texts, test.labels) if y == 1]
    effects = module.deletion_effects(backend, spam, 2, np.random.default_rng(0))
    assert len(effects) > 0 and (effects["tokens"] > 3).all()
    again = module.deletion_effects(backend, spam, 2, np.random.default_rng(0))
    np.testing.assert_allclose(effects["delta_random"], again["delta_random"])  # seeded
    assert np.isfinite(effects[["delta_top", "delta_random"]].to_numpy()).all()
    # deleting nothing changes nothing: the "before" probabilities are the backend's own
    np.testing.assert_allclose(effects["p_before"], backend.predict_proba([spam[i] for i in effects["message"]])[:, 1],
                               atol=1e-6)


def test_main_quick_writes_the_caveat(tmp_path, capsys):
    assert module.main(["--out", str(tmp_path), "--quick", "--seeds", "2", "--k", "2"]) == 0
    assert "not causal explanations" in capsys.readouterr().out
    assert "not causal explanations" in (tmp_path / "note.md").read_text()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert len(summary["per_seed"]) == 2 and summary["all_seeds"]["n"] > 0
    assert (tmp_path / "attention_deletion.png").stat().st_size > 0
