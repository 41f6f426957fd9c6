"""Transformer encoder classifier: embeddings, encoder blocks, pooling and a linear head.

The twin of backends/keras_layers (layers.py, model.py): the same class names for the same
things (TokenAndPositionEmbedding, FeedForward, TransformerBlock, masked mean / cls pooling),
the same order. Parameter structure (the Keras mirror copies these names one to one;
nn.Linear stores its weight as (out, in), so a Keras Dense kernel is its transpose):

    embedding.token_embedding.weight     (vocab_size, d)       row 0 = <pad>, kept at zero
    embedding.position_embedding.weight  (sequence_length, d)  learned only; sinusoidal is a buffer
    embedding.cls_token                  (1, 1, d)             pooling == "cls" only
    blocks.{i}.norm1 / norm2             LayerNorm(d, eps=config.layer_norm_eps)   absent with norm "none"
    blocks.{i}.attn.{q,k,v,out}_proj     Linear(d, d)
    blocks.{i}.ff.fc1 / fc2              Linear(d, ff_dim) / Linear(ff_dim, d)     absent without feed_forward
    final_norm                           LayerNorm(d)                              Identity with norm "none"
    head                                 Linear(d, num_classes)

Data flow: ids -> token embedding (-> cls prepended at position 0) + position -> dropout -> blocks ->
final_norm -> masked mean over real tokens (or the cls vector) -> head -> logits.
GELU is the exact (erf) one. Padding id is 0 (common.vocabulary.PAD_ID).

Initial weights: `build_model(config, seed=s)` loads common.initial_weights.initial_state(config, s),
the numpy draw keras_layers loads too; without a seed, torch's own generator draws them
(N(0, 0.02), as before). Dropout masks are always torch's own (they differ from Keras's).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from backends.torch_scratch.attention import MultiHeadAttention
from common.config import EncoderConfig
from common.initial_weights import initial_state
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


class TokenAndPositionEmbedding(nn.Module):
    """ids (B, T) -> token embedding, [CLS] prepended (cls pooling), plus position -> (B, T', d)."""

    def __init__(self, vocab_size: int, sequence_length: int, d_model: int, positional: str = "learned",
                 use_cls_token: bool = False):
        super().__init__()
        self.sequence_length, self.positional, self.use_cls_token = sequence_length, positional, use_cls_token
        self.token_embedding = nn.Embedding(vocab_size, d_model, padding_idx=PAD_ID)
        if positional == "learned":
            self.position_embedding = nn.Embedding(sequence_length, d_model)
        else:  # a constant, not a parameter (as Keras's table)
            self.register_buffer("position_table", sinusoidal_encoding(sequence_length, d_model), persistent=False)
        if use_cls_token:
            self.cls_token = nn.Parameter(torch.zeros(1, 1, d_model))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.token_embedding(ids)  # (B, T, d)
        if self.use_cls_token:
            x = torch.cat([self.cls_token.expand(ids.size(0), -1, -1), x], dim=1)  # (B, 1 + T, d)
        length = x.size(1)
        assert length <= self.sequence_length, f"{length} positions > {self.sequence_length} the model holds"
        position = self.position_embedding.weight[:length] if self.positional == "learned" else self.position_table[:length]
        return x + position  # (B, T', d); the cls token, if any, at position 0


def padding_mask(ids: torch.Tensor, prepend_cls: bool = False) -> torch.Tensor:
    """ids (B, T) -> (B, T') bool, True = real token (<unk> is real); a cls slot (always real) first."""
    real = ids != PAD_ID  # (B, T)
    if prepend_cls:
        real = torch.cat([real.new_ones(ids.size(0), 1), real], dim=1)  # (B, 1 + T)
    return real


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


class TransformerBlock(nn.Module):
    """One encoder block: self-attention over real tokens, then feed-forward; pre-LN or post-LN.

    Each sublayer is `x + dropout(sublayer(x))`, with LayerNorm before the sublayer (pre) or after the
    sum (post). The config's ablations (the transformer_block lesson) drop the residual (the sublayer's
    output replaces x), every LayerNorm (norm "none") or the feed-forward sublayer.
    """

    def __init__(self, config: EncoderConfig, attention: str = "scratch"):
        super().__init__()
        self.norm_position, self.residual = config.norm, config.residual
        with_norm = config.norm != "none"
        self.norm1 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps) if with_norm else None
        self.attn = MultiHeadAttention(config.d_model, config.num_heads, config.dropout, attention)
        self.norm2 = (nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)  # the feed-forward sublayer's
                      if with_norm and config.feed_forward else None)
        self.ff = (FeedForward(config.d_model, config.ff_dim, config.dropout, config.activation)
                   if config.feed_forward else None)
        self.dropout = nn.Dropout(config.dropout)  # residual dropout, after each sublayer

    def sublayer(self, x: torch.Tensor, norm: nn.Module | None, layer) -> torch.Tensor:
        """x + dropout(layer(x)): LayerNorm on the layer's input (pre) or on the sum (post)."""
        out = self.dropout(layer(norm(x) if norm is not None and self.norm_position == "pre" else x))
        x = x + out if self.residual else out
        return norm(x) if norm is not None and self.norm_position == "post" else x

    def forward(
        self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None, need_weights: bool = False,
        causal: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(B, T, d), mask (B, T) True = real -> ((B, T, d), weights (B, H, T, T) or None).
        causal: token t attends to tokens 0..t only (a decoder block, language_model.py)."""
        weights = None

        def attend(h: torch.Tensor) -> torch.Tensor:
            nonlocal weights
            # causal by position, as forward(query, key, value, key_padding_mask, causal) has it: lesson causal_mask's
            # forward pre-hook sets that fifth argument
            attended, weights = self.attn(h, h, h, key_padding_mask, causal, need_weights=need_weights)
            return attended

        x = self.sublayer(x, self.norm1, attend)
        if self.ff is not None:
            x = self.sublayer(x, self.norm2, self.ff)
        return x, weights


IGNORE_PADDING = (False, True, "keys", "pooling")  # the padding ablation's halves (course lesson padding_ablation)


class TransformerClassifier(nn.Module):
    """Token ids (B, T) -> class logits (B, C) with a Transformer encoder."""

    def __init__(self, config: EncoderConfig, attention: str = "scratch"):
        super().__init__()
        self.config = config
        self.embedding = TokenAndPositionEmbedding(config.vocab_size, config.sequence_length, config.d_model,
                                                   config.positional, use_cls_token=config.pooling == "cls")
        self.embedding_dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(TransformerBlock(config, attention) for _ in range(config.num_layers))
        self.final_norm = (nn.LayerNorm(config.d_model, eps=config.layer_norm_eps) if config.norm != "none"
                           else nn.Identity())
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

    def token_states(self, ids: torch.Tensor, need_weights: bool = False, causal: bool = False,
                     attend_to_padding: bool = False) -> tuple[torch.Tensor, torch.Tensor, list]:
        """ids (B, T) -> (final-norm states (B, T', d), real-token mask (B, T'), [weights or None] per layer).

        What forward pools; language_model.py reads every position (masked or next-token prediction), causal
        for a decoder. attend_to_padding drops the key mask (the padding ablation's broken half)."""
        real = padding_mask(ids, prepend_cls=self.config.pooling == "cls")  # (B, T') True = real token
        x = self.embedding_dropout(self.embedding(ids))  # (B, T', d)
        key_padding_mask = None if attend_to_padding else real
        all_weights = []
        for block in self.blocks:
            x, weights = block(x, key_padding_mask, need_weights=need_weights, causal=causal)
            all_weights.append(weights)
        return self.final_norm(x), real, all_weights  # states (B, T', d)

    def forward(self, ids: torch.Tensor, need_weights: bool = False, ignore_padding: bool | str = False):
        """ids (B, T) int64 -> logits (B, C); with need_weights -> (logits, [weights (B, H, T', T')] per layer).

        T' = T, or T + 1 with a cls token (which sits first). ignore_padding is the course's deliberately
        broken ablation (padding_ablation): True attends to padding and averages over it as if it were text;
        "keys" drops only the key mask, "pooling" only the masked mean.
        """
        if ignore_padding not in IGNORE_PADDING:
            raise ValueError(f"ignore_padding={ignore_padding!r} is not one of {IGNORE_PADDING}")
        x, real, all_weights = self.token_states(ids, need_weights, attend_to_padding=ignore_padding in (True, "keys"))
        if self.config.pooling == "cls":
            pooled = x[:, 0]  # (B, d)
        elif ignore_padding in (True, "pooling"):
            pooled = x.mean(dim=1)  # divides by T, padding included: the bug the ablation shows
        else:
            weight = real.unsqueeze(-1).to(x.dtype)  # (B, T, 1)
            pooled = (x * weight).sum(dim=1) / weight.sum(dim=1).clamp(min=1.0)  # (B, d)
        logits = self.head(pooled)  # (B, C)
        return (logits, all_weights) if need_weights else logits


EncoderBlock = TransformerBlock  # the name used before the twins shared names (seq2seq, older lessons)


def load_initial_state(model: TransformerClassifier, seed: int) -> TransformerClassifier:
    """Load the shared numpy initial state for (model.config, seed) into the model, every parameter."""
    state = {name: torch.from_numpy(value) for name, value in initial_state(model.config, seed).items()}
    model.load_state_dict(state, strict=True)
    return model


def build_model(config: EncoderConfig, attention: str = "scratch", seed: int | None = None) -> TransformerClassifier:
    """The one factory: a TransformerClassifier from an EncoderConfig (seeded shared start if seed given)."""
    model = TransformerClassifier(config, attention)
    return model if seed is None else load_initial_state(model, seed)
