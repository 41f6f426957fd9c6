"""Transformer encoder classifier written from plain PyTorch tensor operations."""
from backends.torch_scratch.attention import MultiHeadAttention, scaled_dot_product_attention
from backends.torch_scratch.backend import TorchScratchBackend
from backends.torch_scratch.encoder import (
    EncoderBlock,
    FeedForward,
    PositionalEmbedding,
    TokenAndPositionEmbedding,
    TransformerBlock,
    TransformerClassifier,
    build_model,
    sinusoidal_encoding,
)

__all__ = [
    "scaled_dot_product_attention",
    "MultiHeadAttention",
    "sinusoidal_encoding",
    "PositionalEmbedding",
    "FeedForward",
    "TokenAndPositionEmbedding",
    "TransformerBlock",
    "EncoderBlock",
    "TransformerClassifier",
    "build_model",
    "TorchScratchBackend",
]
