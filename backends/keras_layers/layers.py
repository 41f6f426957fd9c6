"""Keras 3 layers of the encoder classifier, twins of backends/torch_scratch/encoder.py.

Only `keras.ops` is used, so the layers run on any Keras backend (tensorflow, torch, jax).
Mask convention (as in torch_scratch): `padding_mask` is (B, T) bool, True = a real token,
False = <pad> (id 0). <unk> (id 1) is a real token.
"""
from __future__ import annotations

import math

import keras
import numpy as np
from keras import layers, ops

PACKAGE = "transformer_compare"
PAD_ID = 0  # common.vocabulary.PAD_ID; TextVectorization also pads with 0
INIT_STD = 0.02  # as torch_scratch: N(0, 0.02) for kernels and embeddings, zero biases


def normal_init() -> keras.initializers.Initializer:
    """A fresh N(0, 0.02) initializer (one instance per weight, so each draws its own values)."""
    return keras.initializers.RandomNormal(stddev=INIT_STD)


def sinusoidal_encoding(length: int, d_model: int) -> np.ndarray:
    """(length, d_model) float32 table: sin on even columns, cos on odd (Vaswani et al. 2017)."""
    position = np.arange(length, dtype=np.float64)[:, None]  # (L, 1)
    frequency = np.exp(np.arange(0, d_model, 2, dtype=np.float64) * (-math.log(10000.0) / d_model))  # (d/2,)
    table = np.zeros((length, d_model), dtype=np.float64)
    table[:, 0::2] = np.sin(position * frequency)
    table[:, 1::2] = np.cos(position * frequency[: d_model // 2])
    return table.astype("float32")


@keras.saving.register_keras_serializable(package=PACKAGE)
class PaddingMask(layers.Layer):
    """ids (B, T) -> (B, T') bool, True = real token; a CLS slot (always real) is prepended if asked."""

    def __init__(self, prepend_cls: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.prepend_cls = prepend_cls

    def call(self, ids):
        mask = ops.not_equal(ids, PAD_ID)  # (B, T)
        if self.prepend_cls:
            cls_slot = ops.ones_like(mask[:, :1])  # (B, 1)
            mask = ops.concatenate([cls_slot, mask], axis=1)  # (B, 1 + T)
        return mask

    def compute_output_shape(self, ids_shape):
        length = ids_shape[1]
        if self.prepend_cls and length is not None:
            length += 1
        return (ids_shape[0], length)

    def compute_output_spec(self, ids):
        return keras.KerasTensor(self.compute_output_shape(ids.shape), dtype="bool")

    def get_config(self):
        return {**super().get_config(), "prepend_cls": self.prepend_cls}


@keras.saving.register_keras_serializable(package=PACKAGE)
class TokenAndPositionEmbedding(layers.Layer):
    """ids (B, T) -> token embedding, [CLS] prepended (cls pooling), plus position -> (B, T', d)."""

    def __init__(self, vocab_size: int, sequence_length: int, d_model: int, positional: str = "learned",
                 use_cls_token: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size, self.sequence_length, self.d_model = vocab_size, sequence_length, d_model
        self.positional, self.use_cls_token = positional, use_cls_token
        self.token_embedding = layers.Embedding(vocab_size, d_model, embeddings_initializer=normal_init(),
                                                name="token_embedding")
        if positional == "learned":
            self.position_embedding = layers.Embedding(sequence_length, d_model, embeddings_initializer=normal_init(),
                                                       name="position_embedding")
        elif positional == "sinusoidal":
            # a constant, not a weight: like torch's buffer it is not counted as a parameter
            self.position_table = sinusoidal_encoding(sequence_length, d_model)  # (L, d)
        else:
            raise ValueError(f"positional={positional!r} is not 'learned' or 'sinusoidal'")

    def build(self, ids_shape):
        self.token_embedding.build(ids_shape)
        table = self.token_embedding.embeddings  # (V, d); the <pad> row starts at zero, as in torch
        table.assign(ops.concatenate([ops.zeros((1, self.d_model), dtype=table.dtype), table[1:]], axis=0))
        if self.positional == "learned":
            self.position_embedding.build((None,))
        if self.use_cls_token:
            self.cls_token = self.add_weight(
                shape=(1, 1, self.d_model), name="cls_token",
                initializer="zeros",  # as torch_scratch
            )

    def call(self, ids):
        x = self.token_embedding(ids)  # (B, T, d)
        if self.use_cls_token:
            cls = ops.broadcast_to(ops.cast(self.cls_token, x.dtype), (ops.shape(x)[0], 1, self.d_model))  # (B, 1, d)
            x = ops.concatenate([cls, x], axis=1)  # (B, 1 + T, d)
        length = ops.shape(x)[1]
        if self.positional == "learned":
            position = self.position_embedding(ops.arange(length))  # (T', d)
        else:
            position = ops.convert_to_tensor(self.position_table, dtype=x.dtype)[:length]  # (T', d)
        return x + position[None, :, :]  # (B, T', d)

    def compute_output_shape(self, ids_shape):
        length = ids_shape[1]
        if self.use_cls_token and length is not None:
            length += 1
        return (ids_shape[0], length, self.d_model)

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "sequence_length": self.sequence_length,
                "d_model": self.d_model, "positional": self.positional, "use_cls_token": self.use_cls_token}


@keras.saving.register_keras_serializable(package=PACKAGE)
class FeedForward(layers.Layer):
    """fc1 (d -> ff), GELU (exact erf) or ReLU, dropout, fc2 (ff -> d)."""

    def __init__(self, d_model: int, ff_dim: int, dropout: float = 0.0, activation: str = "gelu", **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.ff_dim, self.dropout_rate, self.activation = d_model, ff_dim, dropout, activation
        if activation not in ("gelu", "relu"):
            raise ValueError(f"activation={activation!r} is not 'gelu' or 'relu'")
        self.fc1 = layers.Dense(ff_dim, kernel_initializer=normal_init(), name="fc1")
        self.dropout = layers.Dropout(dropout, name="dropout")
        self.fc2 = layers.Dense(d_model, kernel_initializer=normal_init(), name="fc2")

    def build(self, input_shape):
        self.fc1.build(input_shape)
        self.fc2.build((*input_shape[:-1], self.ff_dim))

    def call(self, x, training=None):
        h = self.fc1(x)  # (B, T, ff)
        h = ops.gelu(h, approximate=False) if self.activation == "gelu" else ops.relu(h)
        h = self.dropout(h, training=training)
        return self.fc2(h)  # (B, T, d)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "d_model": self.d_model, "ff_dim": self.ff_dim,
                "dropout": self.dropout_rate, "activation": self.activation}


@keras.saving.register_keras_serializable(package=PACKAGE)
class TransformerBlock(layers.Layer):
    """One encoder block: self-attention over real tokens, then feed-forward; pre-LN or post-LN."""

    def __init__(self, d_model: int, num_heads: int, ff_dim: int, dropout: float = 0.1, norm: str = "pre",
                 activation: str = "gelu", layer_norm_eps: float = 1e-5, **kwargs):
        super().__init__(**kwargs)
        if norm not in ("pre", "post"):
            raise ValueError(f"norm={norm!r} is not 'pre' or 'post'")
        self.d_model, self.num_heads, self.ff_dim, self.dropout_rate = d_model, num_heads, ff_dim, dropout
        self.norm, self.activation, self.layer_norm_eps = norm, activation, layer_norm_eps
        self.norm1 = layers.LayerNormalization(epsilon=layer_norm_eps, name="norm1")
        # key_dim is the width of ONE head: d_model // num_heads (d_model here would hold H times the weights)
        self.attn = layers.MultiHeadAttention(num_heads, key_dim=d_model // num_heads, dropout=dropout,
                                              kernel_initializer=normal_init(), name="attn")
        self.norm2 = layers.LayerNormalization(epsilon=layer_norm_eps, name="norm2")
        self.ff = FeedForward(d_model, ff_dim, dropout, activation, name="ff")
        self.dropout = layers.Dropout(dropout, name="dropout")  # residual dropout, after each sublayer

    def build(self, input_shape):
        self.norm1.build(input_shape)
        self.attn.build(input_shape, input_shape)
        self.norm2.build(input_shape)
        self.ff.build(input_shape)

    def self_attention(self, x, padding_mask, training):
        """(B, T, d), mask (B, T) -> (B, T, d); every query looks at the real keys only."""
        if padding_mask is None:
            return self.attn(x, x, training=training)
        # A row with no real key at all (an empty text) may look at every key instead: it stays
        # finite on every backend, and pooling ignores those positions anyway.
        keys = ops.logical_or(padding_mask, ops.logical_not(ops.any(padding_mask, axis=1, keepdims=True)))  # (B, S)
        batch, length = ops.shape(x)[0], ops.shape(x)[1]
        attention_mask = ops.broadcast_to(keys[:, None, :], (batch, length, length))  # (B, T, S)
        return self.attn(x, x, attention_mask=attention_mask, training=training)

    def call(self, x, padding_mask=None, training=None):
        if self.norm == "pre":
            x = x + self.dropout(self.self_attention(self.norm1(x), padding_mask, training), training=training)
            x = x + self.dropout(self.ff(self.norm2(x), training=training), training=training)
        else:
            x = self.norm1(x + self.dropout(self.self_attention(x, padding_mask, training), training=training))
            x = self.norm2(x + self.dropout(self.ff(x, training=training), training=training))
        return x  # (B, T, d)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "d_model": self.d_model, "num_heads": self.num_heads, "ff_dim": self.ff_dim,
                "dropout": self.dropout_rate, "norm": self.norm, "activation": self.activation,
                "layer_norm_eps": self.layer_norm_eps}


@keras.saving.register_keras_serializable(package=PACKAGE)
class MaskedMeanPooling(layers.Layer):
    """(B, T, d), mask (B, T) -> (B, d): mean over real tokens (count clamped >= 1)."""

    def call(self, x, padding_mask):
        weights = ops.cast(padding_mask, x.dtype)[:, :, None]  # (B, T, 1)
        total = ops.sum(x * weights, axis=1)  # (B, d)
        count = ops.maximum(ops.sum(weights, axis=1), 1.0)  # (B, 1)
        return total / count

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[2])


@keras.saving.register_keras_serializable(package=PACKAGE)
class ClsPooling(layers.Layer):
    """(B, T, d) -> (B, d): the hidden state of the [CLS] token at position 0."""

    def call(self, x, padding_mask=None):
        return x[:, 0, :]

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[2])
