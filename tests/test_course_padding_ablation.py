"""Padding ablation: the masked model ignores padding, the unmasked one does not."""
import json

import numpy as np
import pytest

from comparisons.course import padding_ablation as module


@pytest.fixture(scope="module")
def fitted(tiny_splits):
    train, valid, _ = tiny_splits
    return module.train_classifier(train, valid, seed=0, quick=True, max_len=64)


def test_masked_model_is_invariant_and_broken_one_moves(fitted, tiny_splits):
    texts = [t for t in tiny_splits[2].texts if len(module.tokenize(t)) <= 16]
    rows = {(r["pad_length"], r["mode"]): r for r in module.padding_shifts(fitted, texts, (16, 64))}
    assert rows[(64, "masked")]["max_abs_shift"] < 1e-6
    for broken in ("ignore_padding", "keys unmasked", "pooling over padding"):
        assert rows[(64, broken)]["max_abs_shift"] > 1e-4, broken  # the masked model: below 1e-6
    assert 0.0 <= rows[(64, "masked")]["called_spam"] == rows[(64, "masked")]["called_spam_unpadded"] <= 1.0
    # with no padding at all the two modes are the same computation
    np.testing.assert_allclose(rows[(64, "masked")]["reference"], rows[(64, "ignore_padding")]["reference"],
                               atol=1e-9)


def test_main_quick_writes_outputs(tmp_path):
    assert module.main(["--out", str(tmp_path), "--quick", "--pad-lengths", "32", "64"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["max_abs_shift_masked"] < 1e-6 < summary["max_abs_shift_ignore_padding"]
    for name in ("padding_shift.csv", "padding_shift.md", "padding_ablation.png"):
        assert (tmp_path / name).stat().st_size > 0
