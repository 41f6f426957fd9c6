"""Transformer encoder classifier from Keras 3 layers (TokenAndPositionEmbedding, TransformerBlock)."""
from backends.keras_layers.backend import KerasLayersBackend
from backends.keras_layers.layers import (
    ClsPooling,
    FeedForward,
    MaskedMeanPooling,
    PaddingMask,
    TokenAndPositionEmbedding,
    TransformerBlock,
    sinusoidal_encoding,
)
from backends.keras_layers.model import build_keras_model

__all__ = [
    "sinusoidal_encoding",
    "PaddingMask",
    "TokenAndPositionEmbedding",
    "FeedForward",
    "TransformerBlock",
    "MaskedMeanPooling",
    "ClsPooling",
    "build_keras_model",
    "KerasLayersBackend",
]
