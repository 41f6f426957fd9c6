"""The encoder block's ablation switches (residual, norm "none", feed_forward): the recipe's block is the formula,
each switch removes exactly its part, the shared initial state matches every variant, and the twins that do not
implement them refuse with one line."""
from __future__ import annotations

import pytest
import torch

from backends.torch_scratch.encoder import TransformerBlock, build_model
from backends.torch_scratch.seq2seq import Seq2SeqTransformer
from common.config import EncoderConfig
from common.errors import UserInputError
from common.initial_weights import initial_state

SMALL = {"vocab_size": 50, "d_model": 8, "num_heads": 2, "num_layers": 2, "ff_dim": 16, "max_len": 10, "dropout": 0.0}


def _block_and_input(**change):
    torch.manual_seed(0)
    block = TransformerBlock(EncoderConfig(**{**SMALL, **change})).eval()
    x = torch.randn(3, 5, 8)
    real = torch.tensor([[True] * 5, [True] * 3 + [False] * 2, [True] + [False] * 4])
    return block, x, real


def _attend(block, h, real):
    return block.attn(h, h, h, real)[0]


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_the_recipes_block_is_the_textbook_formula(norm):
    block, x, real = _block_and_input(norm=norm)
    with torch.no_grad():
        out, _ = block(x, real)
        if norm == "pre":
            h = x + _attend(block, block.norm1(x), real)
            expected = h + block.ff(block.norm2(h))
        else:
            h = block.norm1(x + _attend(block, x, real))
            expected = block.norm2(h + block.ff(h))
    torch.testing.assert_close(out, expected)
    assert EncoderConfig(**SMALL).ablations == []


def test_each_switch_removes_exactly_its_part():
    block, x, real = _block_and_input(residual=False)
    with torch.no_grad():
        out, _ = block(x, real)
        h = _attend(block, block.norm1(x), real)  # no "x +": the sublayer's output replaces x
        torch.testing.assert_close(out, block.ff(block.norm2(h)))
    block, x, real = _block_and_input(norm="none")
    assert block.norm1 is None and block.norm2 is None
    with torch.no_grad():
        h = x + _attend(block, x, real)
        torch.testing.assert_close(block(x, real)[0], h + block.ff(h))
    block, x, real = _block_and_input(feed_forward=False)
    assert block.ff is None and block.norm2 is None
    with torch.no_grad():
        torch.testing.assert_close(block(x, real)[0], x + _attend(block, block.norm1(x), real))


def test_parameter_counts_and_the_shared_initial_state_follow_the_switches():
    def count(**change):
        config = EncoderConfig(**{**SMALL, **change})
        model = build_model(config, seed=3)  # loads initial_state strictly: its names match the model's
        assert set(initial_state(config, 3)) == set(model.state_dict())
        return sum(p.numel() for p in model.parameters())

    d, ff, layers = SMALL["d_model"], SMALL["ff_dim"], SMALL["num_layers"]
    full = count()
    assert full - count(feed_forward=False) == layers * (d * ff + ff + ff * d + d + 2 * d)  # and its LayerNorm
    assert full - count(norm="none") == (2 * layers + 1) * 2 * d  # two per block and the final norm, gain + shift
    assert count(residual=False) == full == count(norm="post")
    assert EncoderConfig(**SMALL, residual=False, norm="none").ablations == ["no residual", "no LayerNorm"]


def test_bad_switch_values_and_the_twins_without_them_refuse_in_one_line():
    with pytest.raises(UserInputError, match="must be true or false"):
        EncoderConfig(**SMALL, residual="no")
    with pytest.raises(UserInputError, match="norm='mid'"):
        EncoderConfig(**SMALL, norm="mid")
    with pytest.raises(UserInputError, match="sine forecaster builds the standard blocks only"):
        Seq2SeqTransformer(EncoderConfig(**SMALL, feed_forward=False), source_length=8, target_length=4)


def test_keras_twin_refuses_the_ablation_before_any_work():
    pytest.importorskip("keras")
    from backends.keras_layers.backend import KerasLayersBackend

    with pytest.raises(UserInputError, match="use torch_scratch"):
        KerasLayersBackend(config={"residual": False})._settings(100, 2)
