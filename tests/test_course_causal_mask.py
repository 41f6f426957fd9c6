"""Causal mask: the hook really makes attention causal, on real messages, and the module runs."""
import json

import numpy as np
import pytest
import torch

from backends.torch_scratch.attention import MultiHeadAttention
from comparisons.course import causal_mask as module


def test_hook_makes_multihead_attention_causal_and_is_removed():
    torch.manual_seed(0)
    attention = MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 5, 8)
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    with module.causal_attention():
        _, weights = attention(x, x, x, mask, need_weights=True)  # (B, H, T, T)
    assert torch.all(weights.triu(diagonal=1) == 0)
    assert torch.all(weights[1, :, :, 3:] == 0)  # the padding mask still holds
    _, after = attention(x, x, x, mask, need_weights=True)
    assert after[0].triu(diagonal=1).abs().max() > 0  # hook removed: bidirectional again


@pytest.fixture(scope="module")
def pair(tiny_splits):
    train, valid, _ = tiny_splits
    return module.train_pair(train, valid, seed=0, quick=True)


def test_causal_model_puts_no_weight_on_later_tokens(pair, tiny_splits):
    texts = tiny_splits[2].texts
    causal = module.future_weight(pair["causal"], texts)
    assert causal["max_future_weight"] == 0.0 and causal["max_row_sum_error"] < 1e-5
    assert module.future_weight(pair["bidirectional"], texts)["max_future_weight"] > 1e-3
    # the causal switch is kept at prediction time too: outputs differ from the plain model
    assert not np.allclose(pair["causal"].predict_proba(texts[:4]), pair["bidirectional"].predict_proba(texts[:4]))


def test_main_quick(tmp_path):
    assert module.main(["--out", str(tmp_path), "--quick"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["causal_check_passed"]
    assert {row["model"] for row in summary["rows"]} == {"bidirectional", "causal"}
    for name in ("scores.md", "future_weight.md", "causal_mask.png"):
        assert (tmp_path / name).stat().st_size > 0
