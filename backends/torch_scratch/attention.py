"""Scaled dot-product attention and multi-head attention, written from tensor operations.

Mask convention used everywhere in this package: `key_padding_mask` is a (B, S) bool tensor
with True = a real token that may be attended to, False = padding to ignore. (This is the
OPPOSITE of torch.nn.MultiheadAttention, whose key_padding_mask uses True = ignore, and the
same as the bool `attn_mask` of torch.nn.functional.scaled_dot_product_attention.)
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from common.errors import UserInputError

ATTENTION_KINDS = ("scratch", "fused")


def attention_allowed(
    key_padding_mask: torch.Tensor | None, causal: bool, query_length: int, key_length: int, device
) -> torch.Tensor | None:
    """Bool mask broadcastable to (B, H, T, S): True where query t may look at key s; None if all may."""
    allowed = None
    if key_padding_mask is not None:
        allowed = key_padding_mask[:, None, None, :].bool()  # (B, 1, 1, S)
    if causal:
        # query t sees keys 0..t (queries and keys aligned at the start)
        future = torch.ones(query_length, key_length, dtype=torch.bool, device=device).tril()  # (T, S)
        allowed = future if allowed is None else allowed & future
    return allowed


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    key_padding_mask: torch.Tensor | None = None,
    causal: bool = False,
    dropout_p: float = 0.0,
    training: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d_k)) v with masking; returns (output (B,H,T,d_v), weights (B,H,T,S)).

    Masked keys get exactly zero weight; a query whose keys are all masked gets all-zero weights
    and a zero output (never NaN). The weights returned are those before attention dropout.
    """
    d_k = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, H, T, S)
    allowed = attention_allowed(key_padding_mask, causal, q.size(-2), k.size(-2), q.device)
    if allowed is not None:
        # the most negative finite number, not -inf: an all-masked row stays finite (uniform)...
        scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)  # (B, H, T, S)
    if allowed is not None:
        # ...and is then set to exactly zero here, as is every masked key
        weights = weights.masked_fill(~allowed, 0.0)
    dropped = F.dropout(weights, p=dropout_p, training=training) if dropout_p > 0 else weights
    return dropped @ v, weights  # (B, H, T, d_v), (B, H, T, S)


class MultiHeadAttention(nn.Module):
    """num_heads attention heads of width d_model // num_heads, with q/k/v/out projections."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, attention: str = "scratch"):
        super().__init__()
        if d_model % num_heads:
            raise UserInputError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        if attention not in ATTENTION_KINDS:
            raise UserInputError(f"attention={attention!r} is not one of {ATTENTION_KINDS}")
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
        self.dropout, self.attention = dropout, attention
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d_model) -> (B, H, T, d_k)."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        causal: bool = False,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(B, T, d), (B, S, d), (B, S, d), mask (B, S) True = real -> ((B, T, d), (B, H, T, S) or None)."""
        q = self.split_heads(self.q_proj(query))  # (B, H, T, d_k)
        k = self.split_heads(self.k_proj(key))  # (B, H, S, d_k)
        v = self.split_heads(self.v_proj(value))  # (B, H, S, d_k)
        dropout_p = self.dropout if self.training else 0.0
        weights = None
        if self.attention == "fused" and not need_weights:
            allowed = attention_allowed(key_padding_mask, causal, q.size(-2), k.size(-2), q.device)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, dropout_p=dropout_p)
            if allowed is not None:
                # queries with no key to look at: zeros, as in the scratch path (never NaN)
                out = out.masked_fill(~allowed.any(dim=-1, keepdim=True), 0.0)  # (B, H, T, d_k)
        else:
            out, weights = scaled_dot_product_attention(
                q, k, v, key_padding_mask, causal, dropout_p=dropout_p, training=self.training
            )
        batch, _, length, _ = out.shape
        out = out.transpose(1, 2).reshape(batch, length, self.d_model)  # (B, T, d)
        return self.out_proj(out), (weights if need_weights else None)
