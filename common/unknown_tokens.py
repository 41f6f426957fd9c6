"""The unknown-token rate: how much of the input a model could not see.

The share of a tokenizer's tokens of the test texts that are its unknown token (`<unk>` for the
suite's own vocabularies, `[UNK]` for BERT-style WordPiece). Framework-free: the Hugging Face
tokenizer is used through its `tokenize` method and `unk_token` attribute, never imported here.

An English WordPiece vocabulary turns most Chinese characters into `[UNK]`: all-MiniLM-L6-v2's
vocabulary holds 244 CJK characters, so a Chinese review is mostly unknown to it.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from common.vocabulary import PAD_ID, UNK_ID


def unknown_token_counts(tokens_per_text: Iterable[Sequence[str]], unknown: str) -> dict:
    """{"tokens", "unknown", "rate"} over all texts' tokens; rate is None when there are no tokens."""
    total = unknown_count = 0
    for tokens in tokens_per_text:
        total += len(tokens)
        unknown_count += sum(1 for token in tokens if token == unknown)
    return {"tokens": total, "unknown": unknown_count, "rate": unknown_count / total if total else None}


def unknown_token_rate(tokens_per_text: Iterable[Sequence[str]], unknown: str) -> float | None:
    """Share of all tokens that are `unknown` (pooled over texts: long texts weigh more); None without tokens."""
    return unknown_token_counts(tokens_per_text, unknown)["rate"]


def ids_unknown_counts(ids: np.ndarray, unk_id: int = UNK_ID, pad_id: int = PAD_ID) -> dict:
    """The same from padded id rows (n, T): padding is not a token; unknown ids are `unk_id`."""
    ids = np.asarray(ids)
    total = int((ids != pad_id).sum())
    unknown_count = int((ids == unk_id).sum())
    return {"tokens": total, "unknown": unknown_count, "rate": unknown_count / total if total else None}


def vocabulary_unknown_counts(vocabulary, texts: Sequence[str], max_len: int) -> dict:
    """For the scratch twins' vocabularies (common.vocabulary.Vocabulary, common.subword.SubwordVocabulary):
    the tokens the model sees, after truncation to `max_len`, as the backends encode them."""
    return ids_unknown_counts(vocabulary.encode(list(texts), max_len))


def hf_unknown_counts(tokenizer, texts: Sequence[str], max_length: int | None = None) -> dict:
    """For a Hugging Face tokenizer: its word pieces of each text (no [CLS]/[SEP]; the first
    `max_length` pieces when given, as truncation leaves them) against `tokenizer.unk_token`."""
    # verbose=False: a text longer than the model reads is split whole on purpose (cut below), so transformers'
    # "Token indices sequence length is longer than the specified maximum ... indexing errors" would be a false alarm
    pieces = (tokenizer.tokenize(text, verbose=False) for text in texts)
    if max_length is not None:
        pieces = (p[:max_length] for p in pieces)
    return unknown_token_counts(pieces, tokenizer.unk_token)
