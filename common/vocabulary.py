"""Regex tokenizer and vocabulary shared by the scratch backends (same ids in torch and Keras).

Fitted on the training texts only. Ids: <pad>=0, <unk>=1, then tokens by falling count
(ties broken alphabetically, so the vocabulary is deterministic). The subword option
(common/subword.py, WordPiece through HF `tokenizers`) has the same interface; pick one with
`fit_vocabulary(kind, ...)` and read either back with `load_vocabulary(path)`.

The regex tokenizer reads each CJK character as a token of its own (a single symbol). The
"jieba" kind (JiebaVocabulary) reads Chinese as jieba's words instead (common/segmentation.py),
everything else as the regex tokenizer does.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from common.digests import readable_digest
from common.errors import UserInputError

from common.special_tokens import PAD, PAD_ID, UNK, UNK_ID  # noqa: F401 (re-exported)

TOKENIZERS = ("regex", "subword", "jieba")
# Words (with an inner apostrophe), number runs, and single symbols such as ! £ & ?
TOKEN_PATTERN = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+|[^\sa-z\d]")


def tokenize(text: str) -> list[str]:
    """Lower-case and split into words, digit runs and single symbols."""
    return TOKEN_PATTERN.findall(text.lower())


def trim_padding(ids: np.ndarray, multiple: int = 1) -> np.ndarray:
    """Drop the all-<pad> columns at the right of a batch, keeping a multiple of `multiple` columns.

    (n, T) -> (n, T') with T' >= the longest real row and >= 1. Both scratch twins use it with the
    same meaning; multiple > 1 keeps the number of distinct shapes (Keras traces) small.
    """
    longest = int((ids != PAD_ID).sum(axis=1).max(initial=0))
    width = max(1, multiple * -(-longest // multiple))
    return ids[:, : min(ids.shape[1], width)]


class Vocabulary:
    """Token <-> id mapping with padding/truncation to a fixed length."""

    kind = "regex"

    @staticmethod
    def split(text: str) -> list[str]:
        """The tokens of one text before the vocabulary looks them up (the class's tokenizer)."""
        return tokenize(text)

    def __init__(self, tokens: Sequence[str]):
        self.itos: list[str] = [PAD, UNK, *tokens]
        self.stoi: dict[str, int] = {token: i for i, token in enumerate(self.itos)}

    @classmethod
    def fit(cls, texts: Iterable[str], min_count: int = 2, max_size: int = 8000) -> "Vocabulary":
        """Keep tokens seen at least `min_count` times in `texts`, at most `max_size` of them."""
        counts = Counter(token for text in texts for token in cls.split(text))
        ranked = sorted((t for t, c in counts.items() if c >= min_count), key=lambda t: (-counts[t], t))
        return cls(ranked[:max_size])

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, texts: Sequence[str], max_len: int) -> np.ndarray:
        """(n, max_len) int64 ids, truncated, right-padded with <pad>=0."""
        ids = np.zeros((len(texts), max_len), dtype=np.int64)
        for row, text in enumerate(texts):
            tokens = [self.stoi.get(token, UNK_ID) for token in self.split(text)[:max_len]]
            ids[row, : len(tokens)] = tokens
        return ids

    def tokenize(self, text: str) -> list[str]:
        """The tokens of one text as the model sees them (before truncation)."""
        return self.split(text)

    def save(self, path: Path) -> None:
        saved = {"itos": self.itos} if self.kind == "regex" else {"kind": self.kind, "itos": self.itos}
        Path(path).write_text(json.dumps(saved, ensure_ascii=False))

    @classmethod
    def load(cls, path: Path) -> "Vocabulary":
        itos = json.loads(Path(path).read_text())["itos"]
        assert itos[:2] == [PAD, UNK], "vocabulary file must start with <pad>, <unk>"
        return cls(itos[2:])


def jieba_tokens(text: str) -> list[str]:
    """Lower-cased tokens for a word vocabulary: jieba's Chinese words whole (common.segmentation),
    the rest of the text split as `tokenize` splits it (words, digit runs, single symbols)."""
    from common.segmentation import has_cjk, jieba_words

    tokens: list[str] = []
    for word in jieba_words(text.lower()):
        if has_cjk(word):
            tokens.append(word)
        else:
            tokens.extend(TOKEN_PATTERN.findall(word))
    return tokens


class JiebaVocabulary(Vocabulary):
    """The regex Vocabulary over jieba's Chinese words (`jieba_tokens`)."""

    kind = "jieba"

    @staticmethod
    def split(text: str) -> list[str]:
        return jieba_tokens(text)


def fit_vocabulary(kind: str, texts: Iterable[str], min_count: int = 2, max_size: int = 8000):
    """A regex Vocabulary or a SubwordVocabulary fitted on `texts` (the training texts only)."""
    if kind == "regex":
        return Vocabulary.fit(texts, min_count, max_size)
    if kind == "subword":
        from common.subword import SubwordVocabulary

        return SubwordVocabulary.fit_cached(texts, min_count, max_size)  # trained once per training set
    if kind == "jieba":
        return JiebaVocabulary.fit(texts, min_count, max_size)
    raise UserInputError(f"tokenizer={kind!r} is not one of {TOKENIZERS}")


def vocabulary_sha256(vocabulary) -> str:
    """Fingerprint of a vocabulary's tokens and ids: equal for two models that read text alike.

    The sha256 digest in lower-case base32 (52 characters, digits 2-7 only), not hex: a hex digest
    often holds a run of 9+ decimal digits, which a privacy scan of the run records reads as a
    phone number.
    """
    return readable_digest(hashlib.sha256("\n".join(vocabulary.itos).encode("utf-8")).digest())


def load_vocabulary(path: Path):
    """Whichever vocabulary `save` wrote at `path`."""
    kind = json.loads(Path(path).read_text()).get("kind")
    if kind == "subword":
        from common.subword import SubwordVocabulary

        return SubwordVocabulary.load(path)
    return JiebaVocabulary.load(path) if kind == "jieba" else Vocabulary.load(path)
