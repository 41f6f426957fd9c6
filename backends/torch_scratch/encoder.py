"""Transformer encoder classifier: embeddings, encoder blocks, pooling and a linear head.

Parameter structure (the Keras mirror copies these names one to one; nn.Linear stores its
weight as (out, in), so a Keras Dense kernel is its transpose):

    token_embedding.weight          (vocab_size, d)       row 0 = <pad>, kept at zero
    position.embedding.weight       (sequence_length, d)  learned only; sinusoidal is a buffer
    cls_token                       (1, 1, d)             pooling == "cls" only
    blocks.{i}.norm1 / norm2        LayerNorm(d, eps=config.layer_norm_eps)
    blocks.{i}.attn.{q,k,v,out}_proj  Linear(d, d)
    blocks.{i}.ff.fc1 / fc2         Linear(d, ff_dim) / Linear(ff_dim, d)
    final_norm                      LayerNorm(d)
    head                            Linear(d, num_classes)

Data flow: ids -> token embedding (-> cls prepended at position 0) + position -> dropout -> blocks ->
final_norm -> masked mean over real tokens (or the cls vector) -> head -> logits.
GELU is the exact (erf) one. Padding id is 0 (common.vocabulary.PAD_ID).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from backends.torch_scratch.attention import MultiHeadAttention
from common.config import EncoderConfig
from common.vocabulary import PAD_ID


def sinusoidal_encoding(length: int, d_model: int) -> torch.Tensor:
    """(length, d_model): column 2i = sin(pos / 10000^(2i/d)), column 2i+1 = cos of the same."""
    position = torch.arange(length, dtype=torch.float32)[:, None]  # (L, 1)
    frequency = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    angles = position * frequency  # (L, ceil(d/2))
    encoding = torch.zeros(length, d_model)
    encoding[:, 0::2] = torch.sin(angles)
    encoding[:, 1::2] = torch.cos(angles[:, : d_model // 2])
    return encoding


class PositionalEmbedding(nn.Module):
    """Position vectors for positions 0..T-1: learned (nn.Embedding) or fixed sinusoids (a buffer)."""

    def __init__(self, sequence_length: int, d_model: int, kind: str = "learned"):
        super().__init__()
        self.kind, self.sequence_length = kind, sequence_length
        if kind == "learned":
            self.embedding = nn.Embedding(sequence_length, d_model)
        else:
            self.register_buffer("encoding", sinusoidal_encoding(sequence_length, d_model), persistent=False)

    def forward(self, length: int) -> torch.Tensor:
        """-> (length, d_model)."""
        assert length <= self.sequence_length, f"{length} positions > {self.sequence_length} the model holds"
        if self.kind == "learned":
            return self.embedding.weight[:length]
        return self.encoding[:length]


class FeedForward(nn.Module):
    """Position-wise Linear(d, ff) -> GELU|ReLU -> dropout -> Linear(ff, d)."""

    def __init__(self, d_model: int, ff_dim: int, dropout: float = 0.0, activation: str = "gelu"):
        super().__init__()
        self.fc1 = nn.Linear(d_model, ff_dim)
        self.fc2 = nn.Linear(ff_dim, d_model)
        self.activation = activation
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.fc1(x)  # (B, T, ff)
        hidden = F.gelu(hidden) if self.activation == "gelu" else F.relu(hidden)  # exact erf GELU
        return self.fc2(self.dropout(hidden))  # (B, T, d)


class EncoderBlock(nn.Module):
    """Self-attention and feed-forward sublayers, each with a residual; LayerNorm pre or post."""

    def __init__(self, config: EncoderConfig, attention: str = "scratch"):
        super().__init__()
        self.norm_position = config.norm
        self.norm1 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.attn = MultiHeadAttention(config.d_model, config.num_heads, config.dropout, attention)
        self.norm2 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.ff = FeedForward(config.d_model, config.ff_dim, config.dropout, config.activation)
        self.dropout = nn.Dropout(config.dropout)  # residual dropout, after each sublayer

    def forward(
        self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(B, T, d), mask (B, T) True = real -> ((B, T, d), weights (B, H, T, T) or None)."""
        if self.norm_position == "pre":
            normed = self.norm1(x)
            attended, weights = self.attn(normed, normed, normed, key_padding_mask, need_weights=need_weights)
            x = x + self.dropout(attended)
            x = x + self.dropout(self.ff(self.norm2(x)))
        else:
            attended, weights = self.attn(x, x, x, key_padding_mask, need_weights=need_weights)
            x = self.norm1(x + self.dropout(attended))
            x = self.norm2(x + self.dropout(self.ff(x)))
        return x, weights


class TransformerClassifier(nn.Module):
    """Token ids (B, T) -> class logits (B, C) with a Transformer encoder."""

    def __init__(self, config: EncoderConfig, attention: str = "scratch"):
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model, padding_idx=PAD_ID)
        self.position = PositionalEmbedding(config.sequence_length, config.d_model, config.positional)
        if config.pooling == "cls":
            self.cls_token = nn.Parameter(torch.zeros(1, 1, config.d_model))
        self.embedding_dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(EncoderBlock(config, attention) for _ in range(config.num_layers))
        self.final_norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.head = nn.Linear(config.d_model, config.num_classes)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        """nanoGPT/BERT style: N(0, 0.02) for linears and embeddings, zero biases, <pad> row zero."""
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=0.02)
            nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)
            if module.padding_idx is not None:
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()

    def forward(self, ids: torch.Tensor, need_weights: bool = False, ignore_padding: bool = False):
        """ids (B, T) int64 -> logits (B, C); with need_weights -> (logits, [weights (B, H, T', T')] per layer).

        T' = T, or T + 1 with a cls token (which sits first). ignore_padding=True is the course's
        deliberately broken ablation: padding is attended to and averaged over as if it were text.
        """
        batch = ids.size(0)
        real = ids != PAD_ID  # (B, T) True = real token (<unk> counts as real)
        x = self.token_embedding(ids)  # (B, T, d)
        if self.config.pooling == "cls":
            x = torch.cat([self.cls_token.expand(batch, -1, -1), x], dim=1)  # (B, 1 + T, d)
            real = torch.cat([real.new_ones(batch, 1), real], dim=1)  # the cls token is always real
        x = self.embedding_dropout(x + self.position(x.size(1)))  # cls, if any, at position 0
        key_padding_mask = None if ignore_padding else real
        all_weights = []
        for block in self.blocks:
            x, weights = block(x, key_padding_mask, need_weights=need_weights)
            all_weights.append(weights)
        x = self.final_norm(x)  # (B, T', d)
        if self.config.pooling == "cls":
            pooled = x[:, 0]  # (B, d)
        elif ignore_padding:
            pooled = x.mean(dim=1)  # divides by T, padding included: the bug the ablation shows
        else:
            weight = real.unsqueeze(-1).to(x.dtype)  # (B, T, 1)
            pooled = (x * weight).sum(dim=1) / weight.sum(dim=1).clamp(min=1.0)  # (B, d)
        logits = self.head(pooled)  # (B, C)
        return (logits, all_weights) if need_weights else logits


def build_model(config: EncoderConfig, attention: str = "scratch") -> TransformerClassifier:
    """The one factory: a TransformerClassifier from an EncoderConfig."""
    return TransformerClassifier(config, attention)
