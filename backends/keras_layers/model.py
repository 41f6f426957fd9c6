"""The Keras twin of torch_scratch's TransformerClassifier, built from one EncoderConfig.

Read it next to backends/torch_scratch/encoder.py: same names, same order.

    ids -> token embedding (-> cls prepended at position 0) + position -> dropout -> blocks ->
    final_norm -> masked mean over real tokens (or the cls vector) -> head -> logits.
"""
from __future__ import annotations

import keras
from keras import layers

from backends.keras_layers.layers import (
    ClsPooling,
    MaskedMeanPooling,
    PaddingMask,
    TokenAndPositionEmbedding,
    TransformerBlock,
    normal_init,
)
from common.config import EncoderConfig


def build_keras_model(config: EncoderConfig) -> keras.Model:
    """A functional keras.Model: ids (B, T) int32, T <= max_len -> logits (B, num_classes)."""
    ids = keras.Input(shape=(None,), dtype="int32", name="ids")  # (B, T)
    use_cls = config.pooling == "cls"
    real = PaddingMask(prepend_cls=use_cls, name="padding_mask")(ids)  # (B, T') True = real token
    x = TokenAndPositionEmbedding(
        config.vocab_size, config.sequence_length, config.d_model, config.positional, use_cls_token=use_cls,
        name="embedding",
    )(ids)  # (B, T', d), T' = T (+1 with cls)
    x = layers.Dropout(config.dropout, name="embedding_dropout")(x)
    for i in range(config.num_layers):
        x = TransformerBlock(
            config.d_model, config.num_heads, config.ff_dim, config.dropout, config.norm, config.activation,
            config.layer_norm_eps, name=f"block_{i}",
        )(x, padding_mask=real)  # (B, T', d)
    x = layers.LayerNormalization(epsilon=config.layer_norm_eps, name="final_norm")(x)  # (B, T', d)
    if use_cls:
        pooled = ClsPooling(name="pooling")(x)  # (B, d)
    else:
        pooled = MaskedMeanPooling(name="pooling")(x, real)  # (B, d)
    logits = layers.Dense(config.num_classes, kernel_initializer=normal_init(), name="head")(pooled)  # (B, C)
    return keras.Model(ids, logits, name="transformer_classifier")
