"""Tokenize once, then pad each batch only to its own longest text (dynamic padding).

Inference sorts texts by length into batches (length bucketing) and the caller restores the
order; the frozen head's training forms batches from length-sorted pools, then shuffles them
(full fine-tuning gets the same from the Trainer's group_by_length). small_data_budget sizes
batches and epochs for training sets of a few dozen messages.
"""
from __future__ import annotations

import math
from typing import Iterator, Sequence

import numpy as np
import torch

POOL_BATCHES = 50  # training: sort pools of 50 batches by length (as Hugging Face's group_by_length)
MIN_SMALL_BATCH = 8  # small data: batches shrink to this size before epochs grow


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


def small_data_budget(n_examples: int, batch_size: int, epochs: int, min_steps: int) -> tuple[int, int]:
    """(batch size, epochs) so that a small training set still gets at least min_steps updates.

    The batch is never larger than the data. When epochs x batches per epoch falls short of
    min_steps, batches shrink first (not below MIN_SMALL_BATCH), then epochs grow; each epoch is
    still scored on validation, which chooses the one kept.
    """
    batch = max(1, min(batch_size, n_examples))
    if epochs * math.ceil(n_examples / batch) < min_steps:
        batch = min(batch, max(MIN_SMALL_BATCH, math.ceil(n_examples * epochs / min_steps)))
        epochs = max(epochs, math.ceil(min_steps / math.ceil(n_examples / batch)))
    return batch, epochs
