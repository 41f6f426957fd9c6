"""One seeded initial state for both scratch twins, drawn once with numpy from (seed, EncoderConfig).

Names and layouts are torch_scratch's state_dict (nn.Linear weight is (out, in)); the parity map
(backends/keras_layers/parity.py) turns the same arrays into Keras's layout, so torch_scratch
and keras_layers start from identical weights. The rule is nanoGPT/BERT's: N(0, 0.02) for
matrices and embeddings, zero biases, LayerNorm gain 1 and shift 0, the <pad> row zero, and
the cls vector zero.

    embedding.token_embedding.weight     (vocab_size, d)       row 0 = <pad> = 0
    embedding.position_embedding.weight  (sequence_length, d)  positional == "learned" only
    embedding.cls_token                  (1, 1, d)             pooling == "cls" only
    blocks.{i}.norm1 / norm2 .weight/.bias           (d,)         not with norm == "none"
    blocks.{i}.attn.{q,k,v,out}_proj .weight (d, d) / .bias (d,)
    blocks.{i}.ff.fc1 .weight (ff, d) / .bias (ff,);  .ff.fc2 .weight (d, ff) / .bias (d,)   feed_forward only
    final_norm.weight / .bias            (d,)                  not with norm == "none"
    head.weight (C, d) / head.bias (C,)
"""
from __future__ import annotations

import numpy as np

from common.config import EncoderConfig
from common.vocabulary import PAD_ID

INIT_STD = 0.02


def parameter_shapes(config: EncoderConfig) -> dict[str, tuple[tuple[int, ...], str]]:
    """name -> (shape, rule) in a fixed order; rule is "normal", "zeros" or "ones"."""
    d, ff = config.d_model, config.ff_dim
    shapes: dict[str, tuple[tuple[int, ...], str]] = {
        "embedding.token_embedding.weight": ((config.vocab_size, d), "normal"),
    }
    if config.positional == "learned":
        shapes["embedding.position_embedding.weight"] = ((config.sequence_length, d), "normal")
    if config.pooling == "cls":
        shapes["embedding.cls_token"] = ((1, 1, d), "zeros")
    for i in range(config.num_layers):
        block = f"blocks.{i}"
        for norm in ("norm1", "norm2")[:2 if config.feed_forward else 1] if config.norm != "none" else ():
            shapes[f"{block}.{norm}.weight"] = ((d,), "ones")
            shapes[f"{block}.{norm}.bias"] = ((d,), "zeros")
        for projection in ("q_proj", "k_proj", "v_proj", "out_proj"):
            shapes[f"{block}.attn.{projection}.weight"] = ((d, d), "normal")
            shapes[f"{block}.attn.{projection}.bias"] = ((d,), "zeros")
        if config.feed_forward:
            shapes[f"{block}.ff.fc1.weight"], shapes[f"{block}.ff.fc1.bias"] = ((ff, d), "normal"), ((ff,), "zeros")
            shapes[f"{block}.ff.fc2.weight"], shapes[f"{block}.ff.fc2.bias"] = ((d, ff), "normal"), ((d,), "zeros")
    if config.norm != "none":
        shapes["final_norm.weight"], shapes["final_norm.bias"] = ((d,), "ones"), ((d,), "zeros")
    shapes["head.weight"], shapes["head.bias"] = ((config.num_classes, d), "normal"), ((config.num_classes,), "zeros")
    return shapes


def initial_state(config: EncoderConfig, seed: int) -> dict[str, np.ndarray]:
    """name -> float32 array: the initial weights both twins load (same seed -> same arrays)."""
    rng = np.random.default_rng(seed)
    state = {}
    for name, (shape, rule) in parameter_shapes(config).items():
        if rule == "normal":
            value = rng.normal(0.0, INIT_STD, size=shape)
        else:
            value = np.full(shape, 1.0 if rule == "ones" else 0.0)
        state[name] = value.astype(np.float32)
    state["embedding.token_embedding.weight"][PAD_ID] = 0.0
    return state
