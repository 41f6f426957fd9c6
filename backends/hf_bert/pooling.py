"""Frozen mode's feature: the attention-masked mean of the last hidden state (also in its ONNX graph)."""
from __future__ import annotations

import torch


def masked_mean(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Mean of the hidden states of real tokens: (B, T, H), (B, T) -> (B, H)."""
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (B, T, 1)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)  # (B, H)
