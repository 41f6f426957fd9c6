"""The parity map: torch_scratch's parameter names and layouts -> keras_layers weight paths.

Framework-free (numpy in, numpy out), so the keras_layers backend uses it to load the shared
initial state (common.initial_weights) without importing torch, and tests use it to copy a
torch model's weights into its Keras twin. Layout differences: nn.Linear weight is (out, in),
a Keras Dense kernel is (in, out); Keras MultiHeadAttention keeps q/k/v kernels as (d, H, d_k)
with biases (H, d_k), and the output kernel as (H, d_k, d).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from common.config import EncoderConfig


def keras_weights_from_state(state: Mapping[str, np.ndarray], config: EncoderConfig) -> dict[str, np.ndarray]:
    """Keras weight path -> value, from a torch-named state (numpy arrays, torch layouts)."""
    state = {name: np.asarray(value, dtype="float32") for name, value in state.items()}
    heads, head_dim, d = config.num_heads, config.head_dim, config.d_model
    out = {"embedding/token_embedding/embeddings": state["embedding.token_embedding.weight"]}  # (V, d)
    if config.positional == "learned":
        out["embedding/position_embedding/embeddings"] = state["embedding.position_embedding.weight"]  # (L, d)
    if config.pooling == "cls":
        out["embedding/cls_token"] = state["embedding.cls_token"]  # (1, 1, d)
    for i in range(config.num_layers):
        torch_block, keras_block = f"blocks.{i}", f"block_{i}"
        for norm in ("norm1", "norm2"):
            out[f"{keras_block}/{norm}/gamma"] = state[f"{torch_block}.{norm}.weight"]
            out[f"{keras_block}/{norm}/beta"] = state[f"{torch_block}.{norm}.bias"]
        for torch_name, keras_name in (("q_proj", "query"), ("k_proj", "key"), ("v_proj", "value")):
            weight = state[f"{torch_block}.attn.{torch_name}.weight"]  # (d_out = H * d_k, d_in)
            out[f"{keras_block}/attn/{keras_name}/kernel"] = weight.T.reshape(d, heads, head_dim)  # (d, H, d_k)
            bias = state[f"{torch_block}.attn.{torch_name}.bias"]  # (H * d_k,)
            out[f"{keras_block}/attn/{keras_name}/bias"] = bias.reshape(heads, head_dim)  # (H, d_k)
        weight = state[f"{torch_block}.attn.out_proj.weight"]  # (d_out, d_in = H * d_k)
        out[f"{keras_block}/attn/attention_output/kernel"] = weight.T.reshape(heads, head_dim, d)  # (H, d_k, d)
        out[f"{keras_block}/attn/attention_output/bias"] = state[f"{torch_block}.attn.out_proj.bias"]
        for fc in ("fc1", "fc2"):
            out[f"{keras_block}/ff/{fc}/kernel"] = state[f"{torch_block}.ff.{fc}.weight"].T  # (in, out)
            out[f"{keras_block}/ff/{fc}/bias"] = state[f"{torch_block}.ff.{fc}.bias"]
    out["final_norm/gamma"], out["final_norm/beta"] = state["final_norm.weight"], state["final_norm.bias"]
    out["head/kernel"], out["head/bias"] = state["head.weight"].T, state["head.bias"]  # (d, C), (C,)
    return out


def load_state(keras_model, state: Mapping[str, np.ndarray], config: EncoderConfig) -> None:
    """Assign a torch-named numpy state to the Keras twin; fail loudly on any unmatched name or shape."""
    values = keras_weights_from_state(state, config)
    assert len(values) == len(state), f"mapped {len(values)} weights but the state holds {len(state)}"
    keras_paths = {weight.path for weight in keras_model.weights}
    missing, unused = sorted(keras_paths - set(values)), sorted(set(values) - keras_paths)
    assert not missing and not unused, f"keras weights without a torch twin: {missing}; unused: {unused}"
    for weight in keras_model.weights:
        value = values[weight.path]
        assert tuple(weight.shape) == value.shape, f"{weight.path}: keras {tuple(weight.shape)} != {value.shape}"
        weight.assign(value)


def torch_state(torch_model) -> dict[str, np.ndarray]:
    """A torch model's persistent state as float32 numpy arrays (no torch import needed here)."""
    return {name: value.detach().cpu().numpy().astype("float32") for name, value in torch_model.state_dict().items()}
