"""torch_scratch: attention by hand and against PyTorch, padding invariance, backend contract."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from backends.base import build
from backends.torch_scratch import (
    MultiHeadAttention,
    TorchScratchBackend,
    build_model,
    scaled_dot_product_attention,
    sinusoidal_encoding,
)
from backends.precision import autocast, bf16_native
from common.config import EncoderConfig
from tests.backend_contract import check_backend_contract

TINY = {"d_model": 16, "num_heads": 2, "num_layers": 1, "ff_dim": 32, "epochs": 2, "max_len": 32, "min_steps": 0}


def tiny_model(seed: int = 0, attention: str = "scratch", **overrides):
    """A randomly initialised tiny classifier in eval mode (vocab 50)."""
    torch.manual_seed(seed)
    config = EncoderConfig(**{**TINY, "num_layers": 2, "vocab_size": 50, **overrides})
    return build_model(config, attention).eval()


def random_ids(generator: torch.Generator, lengths: list[int], width: int) -> torch.Tensor:
    """(len(lengths), width) ids in 1..49, right-padded with 0 after each length."""
    ids = torch.randint(1, 50, (len(lengths), width), generator=generator)
    for row, length in enumerate(lengths):
        ids[row, length:] = 0
    return ids


# -- attention ------------------------------------------------------------------------------
def test_hand_worked_single_head_example():
    q = k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)[None, None]  # (1,1,3,2)
    v = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=torch.float64)[None, None]
    out, weights = scaled_dot_product_attention(q, k, v)
    # q k^T = [[1,0,1],[0,1,1],[1,1,2]], divided by sqrt(2). With a = e^(1/sqrt 2) = 2.0281149816:
    # row 0: [a, 1, a] / (2a + 1); row 1: [1, a, a] / (2a + 1); row 2: [a, a, a^2] / (2a + a^2).
    expected_weights = [
        [0.4011120927, 0.1977758146, 0.4011120927],
        [0.1977758146, 0.4011120927, 0.4011120927],
        [0.2482550783, 0.2482550783, 0.5034898435],
    ]
    # output = weights @ v, e.g. row 0: 0.40111 * (1 + 5) + 0.19778 * 3 = 3 (and 4 for column 2)
    expected_out = [[3.0, 4.0], [3.4066725561, 4.4066725561], [3.5104695305, 4.5104695305]]
    np.testing.assert_allclose(weights[0, 0].numpy(), expected_weights, atol=1e-6)
    np.testing.assert_allclose(out[0, 0].numpy(), expected_out, atol=1e-6)


def test_scratch_attention_matches_torch_with_padding_and_causal():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(3, 2, 5, 4, generator=g, dtype=torch.float64) for _ in range(3))
    real = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], dtype=torch.bool)
    out, weights = scaled_dot_product_attention(q, k, v, key_padding_mask=real)
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=real[:, None, None, :])
    np.testing.assert_allclose(out.numpy(), reference.numpy(), atol=1e-6)
    assert (weights[1, :, :, 3:] == 0).all() and (weights[2, :, :, 1:] == 0).all()
    np.testing.assert_allclose(weights.sum(-1).numpy(), 1.0, atol=1e-12)

    out, weights = scaled_dot_product_attention(q, k, v, causal=True)
    reference = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_allclose(out.numpy(), reference.numpy(), atol=1e-6)


def test_causal_gives_exactly_zero_weight_to_the_future():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 6, 4, generator=g) for _ in range(3))
    _, weights = scaled_dot_product_attention(q, k, v, causal=True)
    future = torch.ones(6, 6, dtype=torch.bool).triu(diagonal=1)
    assert (weights[..., future] == 0).all()
    assert (weights[..., ~future] > 0).all()


def test_all_masked_query_gives_zeros_not_nan():
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, 2, 3, 4, generator=g) for _ in range(3))
    real = torch.tensor([[False, False, False], [True, True, False]])
    out, weights = scaled_dot_product_attention(q, k, v, key_padding_mask=real)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    assert (out[0] == 0).all() and (weights[0] == 0).all()
    assert (out[1] != 0).any()
    for kind in ("scratch", "fused"):
        attention = MultiHeadAttention(8, 2, attention=kind).eval()
        x = torch.randn(2, 3, 8, generator=g)
        projected = attention.out_proj.bias.expand(3, 8)  # zero heads -> out_proj(0) = its bias
        out, _ = attention(x, x, x, key_padding_mask=real)
        torch.testing.assert_close(out[0], projected, atol=1e-6, rtol=0)


def test_multi_head_attention_matches_torch_multihead_attention():
    torch.manual_seed(0)
    d_model, heads = 12, 3
    reference = torch.nn.MultiheadAttention(d_model, heads, batch_first=True).eval()
    ours = MultiHeadAttention(d_model, heads).eval()
    with torch.no_grad():
        for index, projection in enumerate((ours.q_proj, ours.k_proj, ours.v_proj)):
            projection.weight.copy_(reference.in_proj_weight[index * d_model : (index + 1) * d_model])
            projection.bias.copy_(reference.in_proj_bias[index * d_model : (index + 1) * d_model])
        ours.out_proj.weight.copy_(reference.out_proj.weight)
        ours.out_proj.bias.copy_(reference.out_proj.bias)
    x = torch.randn(2, 5, d_model)
    real = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]], dtype=torch.bool)
    # nn.MultiheadAttention's key_padding_mask says True = ignore; ours says True = real token
    expected, expected_weights = reference(x, x, x, key_padding_mask=~real, average_attn_weights=False)
    out, weights = ours(x, x, x, key_padding_mask=real, need_weights=True)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=0)
    torch.testing.assert_close(weights, expected_weights, atol=1e-5, rtol=0)
    fused = MultiHeadAttention(d_model, heads, attention="fused").eval()
    fused.load_state_dict(ours.state_dict())
    out_fused, no_weights = fused(x, x, x, key_padding_mask=real)
    assert no_weights is None
    torch.testing.assert_close(out_fused, expected, atol=1e-5, rtol=0)


def test_sinusoidal_encoding_values():
    encoding = sinusoidal_encoding(10, 6)
    assert encoding.shape == (10, 6)
    assert encoding[3, 0] == pytest.approx(math.sin(3)) and encoding[3, 1] == pytest.approx(math.cos(3))
    assert encoding[3, 4] == pytest.approx(math.sin(3 / 10000 ** (4 / 6)), abs=1e-6)


# -- the classifier -------------------------------------------------------------------------
@pytest.mark.parametrize("overrides", [{}, {"pooling": "cls", "norm": "post", "positional": "sinusoidal",
                                           "activation": "relu"}])
def test_padding_and_neighbours_do_not_move_logits(overrides):
    model = tiny_model(**overrides)
    g = torch.Generator().manual_seed(3)
    ids = random_ids(g, [7, 3, 12], 12)  # (3, 12)
    with torch.no_grad():
        logits = model(ids)
        longer = model(torch.cat([ids, torch.zeros(3, 9, dtype=torch.long)], dim=1))
        alone = torch.cat([model(ids[i : i + 1, : int((ids[i] != 0).sum())]) for i in range(3)])
        neighbours = model(torch.cat([ids, random_ids(g, [12, 1], 12)]))[:3]
    torch.testing.assert_close(longer, logits, atol=1e-5, rtol=0)
    torch.testing.assert_close(alone, logits, atol=1e-5, rtol=0)
    torch.testing.assert_close(neighbours, logits, atol=1e-5, rtol=0)


# bf16 keeps 8 mantissa bits (a rounding is at most 0.4% of a value) and a forward pass rounds many times:
# the tolerance is 2% of the largest fp32 logit (measured on this model: bf16 vs fp32 0.6%, padding 0)
BF16_RELATIVE_TOLERANCE = 0.02


@pytest.mark.skipif(not bf16_native("cpu"), reason="this CPU does not multiply bf16 natively (no AVX512-BF16/AMX)")
def test_padding_and_neighbours_do_not_move_logits_under_bf16_autocast():
    """The padding invariance holds under bf16 autocast (fp32 weights) to BF16_RELATIVE_TOLERANCE of the largest
    logit, and bf16 stays within that of fp32: padded keys still get no weight (their scores are -inf)."""
    model = tiny_model()
    g = torch.Generator().manual_seed(3)
    ids = random_ids(g, [7, 3, 12], 12)
    with torch.no_grad():
        fp32 = model(ids)
        with autocast("cpu", "bf16"):
            logits = model(ids).float()
            longer = model(torch.cat([ids, torch.zeros(3, 9, dtype=torch.long)], dim=1)).float()
            alone = torch.cat([model(ids[i : i + 1, : int((ids[i] != 0).sum())]) for i in range(3)]).float()
            neighbours = model(torch.cat([ids, random_ids(g, [12, 1], 12)]))[:3].float()
    tolerance = BF16_RELATIVE_TOLERANCE * float(fp32.abs().max())
    for other in (longer, alone, neighbours, fp32):
        torch.testing.assert_close(other, logits, atol=tolerance, rtol=0)
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_ignore_padding_ablation_moves_logits():
    model = tiny_model()
    ids = random_ids(torch.Generator().manual_seed(4), [4, 6], 6)
    padded = torch.cat([ids, torch.zeros(2, 20, dtype=torch.long)], dim=1)
    with torch.no_grad():
        correct = model(padded)
        broken = model(padded, ignore_padding=True)
        broken_unpadded = model(ids[:1, :4], ignore_padding=True)
    torch.testing.assert_close(model(ids[:1, :4]).detach(), broken_unpadded, atol=1e-5, rtol=0)
    assert (broken - correct).abs().max() > 1e-3, "attending to padding must change the logits"


def test_each_half_of_the_padding_bug_moves_logits_on_its_own():
    model = tiny_model()
    ids = random_ids(torch.Generator().manual_seed(4), [4, 6], 6)
    padded = torch.cat([ids, torch.zeros(2, 20, dtype=torch.long)], dim=1)
    with torch.no_grad():
        correct = model(padded)
        halves = {half: model(padded, ignore_padding=half) for half in ("keys", "pooling")}
    for half, logits in halves.items():
        assert (logits - correct).abs().max() > 1e-3, f"ignoring padding in {half} alone must change the logits"
    assert (halves["keys"] - halves["pooling"]).abs().max() > 1e-3, "the two halves are different bugs"
    with pytest.raises(ValueError, match="ignore_padding='both'"):
        model(padded, ignore_padding="both")


def test_all_padding_and_unknown_ids_give_finite_logits():
    model = tiny_model()
    ids = torch.tensor([[0, 0, 0], [1, 1, 0], [1, 0, 0]])  # empty text; <unk> tokens are real
    with torch.no_grad():
        logits = model(ids)
    assert torch.isfinite(logits).all()
    assert not torch.allclose(logits[0], logits[1]), "<unk> is a real token, not padding"


def test_scratch_and_fused_give_the_same_logits():
    scratch = tiny_model(attention="scratch")
    fused = tiny_model(attention="fused")
    fused.load_state_dict(scratch.state_dict())
    ids = random_ids(torch.Generator().manual_seed(5), [9, 2, 5, 1], 9)
    with torch.no_grad():
        torch.testing.assert_close(fused(ids), scratch(ids), atol=1e-5, rtol=0)


def test_need_weights_returns_one_map_per_layer():
    model = tiny_model(pooling="cls")
    ids = random_ids(torch.Generator().manual_seed(6), [5, 2], 5)
    with torch.no_grad():
        logits, weights = model(ids, need_weights=True)
    assert logits.shape == (2, 2) and len(weights) == 2
    assert weights[0].shape == (2, 2, 6, 6)  # (B, H, 1 + T, 1 + T) with the cls token
    assert (weights[1][1, :, :, 3:] == 0).all()  # cls + 2 real tokens; the rest is padding


# -- the backend ----------------------------------------------------------------------------
def make(seed: int) -> TorchScratchBackend:
    # choose_on="validation": these tests check the epoch validation keeps (the tiny split's validation part is
    # below the small-budget rule; the fixed schedule has its own test in test_keras_layers.py)
    return build("torch_scratch", config=dict(TINY), seed=seed, device="cpu", choose_on="validation", progress=False)


def test_torch_scratch_passes_the_contract(tiny_splits, tmp_path):
    check_backend_contract(make, tiny_splits, tmp_path)


@pytest.fixture(scope="module")
def fitted(tiny_splits):
    train, valid, _ = tiny_splits
    return make(0).fit(train, valid)


def test_fit_info_and_best_epoch(fitted):
    info = fitted.fit_info_
    assert info["epochs_run"] == 2 and info["device"] == "cpu"
    assert [row["epoch"] for row in info["history"]] == [1, 2]
    best = max(info["history"], key=lambda row: row["valid_average_precision"])
    assert info["best_epoch"] == best["epoch"]
    assert fitted.model_.config.vocab_size == len(fitted.vocabulary_)


def test_save_load_round_trip(fitted, tiny_splits, tmp_path):
    texts = tiny_splits[2].texts + ["", "zzqxv"]
    loaded = TorchScratchBackend.load(fitted.save(tmp_path / "saved"))
    np.testing.assert_array_equal(loaded.predict_proba(texts), fitted.predict_proba(texts))
    assert loaded.param_count() == fitted.param_count()


def test_attention_maps_shapes(fitted, tiny_splits):
    texts = tiny_splits[2].texts[:3]
    tokens, weights = fitted.attention_maps(texts)
    assert len(tokens) == 3 and len(weights) == 1
    longest = max(len(t) for t in tokens)
    assert weights[0].shape == (3, 2, longest, longest)
    for i, seen in enumerate(tokens):
        n = len(seen)
        np.testing.assert_allclose(weights[0][i, :, :, :n].sum(-1), 1.0, atol=1e-5)
        assert (weights[0][i, :, :, n:] == 0).all()


def test_bad_settings_raise_user_input_errors(tiny_splits):
    from common.errors import UserInputError

    train, valid, _ = tiny_splits
    with pytest.raises(UserInputError, match="unknown encoder setting"):
        build("torch_scratch", config={"d_modle": 8}, progress=False).fit(train, valid)
    with pytest.raises(UserInputError, match="attention"):
        build("torch_scratch", config=dict(TINY), attention="flash", progress=False).fit(train, valid)


def test_seeded_build_loads_the_shared_numpy_state_and_ignores_torch_rng():
    from common.initial_weights import initial_state

    config = EncoderConfig(**{**TINY, "vocab_size": 50, "pooling": "cls"})
    torch.manual_seed(1)
    first = build_model(config, seed=4)
    torch.manual_seed(2)  # torch's generator plays no part in the seeded start
    second = build_model(config, seed=4)
    state = initial_state(config, 4)
    assert set(first.state_dict()) == set(state)
    for name, value in first.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), state[name])
        torch.testing.assert_close(second.state_dict()[name], value, rtol=0, atol=0)


def test_fit_records_the_budget_and_the_recipe(fitted):
    info = fitted.fit_info_
    assert info["batch_size"] <= 16 and info["steps_per_epoch"] * info["batch_size"] >= info["train_rows"]
    assert info["best_valid_average_precision"] == max(h["valid_average_precision"] for h in info["history"])
    assert info["tokenizer"] == fitted.tokenizer and "decisions" in info["recipe"]


def test_one_class_validation_is_refused(tiny_splits):
    from common.selection import UnusableValidationError

    train, valid, _ = tiny_splits
    one_class = valid.subset(np.flatnonzero(np.asarray(valid.labels) == 0))
    with pytest.raises(UnusableValidationError, match="at least two classes"):
        make(0).fit(train, one_class)
