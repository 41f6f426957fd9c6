"""Tokenize once, then pad each batch only to its own longest text (dynamic padding).

Inference sorts texts by length into batches (length bucketing) and the caller restores the
order; training forms batches from length-sorted pools, then shuffles the batches.
"""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
import torch

POOL_BATCHES = 50  # training: sort pools of 50 batches by length (as Hugging Face's group_by_length)


def encode(tokenizer, texts: Sequence[str], max_length: int) -> dict[str, list[list[int]]]:
    """Token ids (and attention masks, token types) per text, truncated, not padded."""
    return dict(tokenizer(list(texts), truncation=True, max_length=max_length))


def lengths_of(encoded: dict[str, list[list[int]]]) -> np.ndarray:
    return np.array([len(ids) for ids in encoded["input_ids"]], dtype=np.int64)


def collate(encoded: dict[str, list[list[int]]], indices: Sequence[int], pad_id: int,
            device: torch.device | str) -> dict[str, torch.Tensor]:
    """Pad the chosen examples to their longest length: each key -> (B, T) int64 tensor."""
    width = max(len(encoded["input_ids"][i]) for i in indices)
    batch = {}
    for key, rows in encoded.items():
        fill = pad_id if key == "input_ids" else 0  # attention_mask 0 marks padding
        padded = [rows[i] + [fill] * (width - len(rows[i])) for i in indices]
        batch[key] = torch.tensor(padded, dtype=torch.long, device=device)  # (B, T)
    return batch


def inference_batches(lengths: np.ndarray, batch_size: int) -> Iterator[np.ndarray]:
    """Indices sorted by length, in consecutive batches; out[batch] = result restores the order."""
    order = np.argsort(lengths, kind="stable")
    for start in range(0, len(order), batch_size):
        yield order[start:start + batch_size]


def training_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Shuffle, sort pools of POOL_BATCHES batches by length, cut into batches, shuffle the batches."""
    permutation = rng.permutation(len(lengths))
    pool = batch_size * POOL_BATCHES
    batches = []
    for start in range(0, len(permutation), pool):
        chunk = permutation[start:start + pool]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches.extend(chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]
