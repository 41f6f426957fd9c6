"""Regex tokenizer and vocabulary shared by the scratch backends (same ids in torch and Keras).

Fitted on the training texts only. Ids: <pad>=0, <unk>=1, then tokens by falling count
(ties broken alphabetically, so the vocabulary is deterministic).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

PAD, UNK = "<pad>", "<unk>"
PAD_ID, UNK_ID = 0, 1
# Words (with an inner apostrophe), number runs, and single symbols such as ! £ & ?
TOKEN_PATTERN = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+|[^\sa-z\d]")


def tokenize(text: str) -> list[str]:
    """Lower-case and split into words, digit runs and single symbols."""
    return TOKEN_PATTERN.findall(text.lower())


class Vocabulary:
    """Token <-> id mapping with padding/truncation to a fixed length."""

    def __init__(self, tokens: Sequence[str]):
        self.itos: list[str] = [PAD, UNK, *tokens]
        self.stoi: dict[str, int] = {token: i for i, token in enumerate(self.itos)}

    @classmethod
    def fit(cls, texts: Iterable[str], min_count: int = 2, max_size: int = 8000) -> "Vocabulary":
        """Keep tokens seen at least `min_count` times in `texts`, at most `max_size` of them."""
        counts = Counter(token for text in texts for token in tokenize(text))
        ranked = sorted((t for t, c in counts.items() if c >= min_count), key=lambda t: (-counts[t], t))
        return cls(ranked[:max_size])

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, texts: Sequence[str], max_len: int) -> np.ndarray:
        """(n, max_len) int64 ids, truncated, right-padded with <pad>=0."""
        ids = np.zeros((len(texts), max_len), dtype=np.int64)
        for row, text in enumerate(texts):
            tokens = [self.stoi.get(token, UNK_ID) for token in tokenize(text)[:max_len]]
            ids[row, : len(tokens)] = tokens
        return ids

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps({"itos": self.itos}, ensure_ascii=False))

    @classmethod
    def load(cls, path: Path) -> "Vocabulary":
        itos = json.loads(Path(path).read_text())["itos"]
        assert itos[:2] == [PAD, UNK], "vocabulary file must start with <pad>, <unk>"
        return cls(itos[2:])
