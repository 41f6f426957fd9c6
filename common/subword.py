"""Subword vocabulary: a WordPiece tokenizer trained on the training texts with HF `tokenizers`.

The option beside the regex Vocabulary (common/vocabulary.py), with the same interface (fit,
encode, itos, save/load) and the same ids for <pad> (0) and <unk> (1), so either can feed both
scratch twins. Text is NFKC-normalised and lower-cased, split on whitespace and punctuation and
between digits and letters, every CJK ideograph of a run of two or more made a word of its own
(common/segmentation.py; without it a run of Chinese characters is one word, and one character
unseen in training turns the whole run into a single <unk>), then cut into WordPiece pieces ("##"
marks a piece inside a word). A lone ideograph inside a word of other characters stays in it: on
text without a run of CJK characters the split changes nothing, so the SMS vocabulary is the one
learned before it (the data holds one mojibake ideograph glued to a symbol, "鈥┾"; BERT's rule,
every ideograph apart, would change one piece of it, ##┾ -> ┾, and shift the ids after it). Chinese
text pays little for it: a lone ideograph glued to Latin letters ("用iphone") stays one word.
A word never seen whole in training is still read as pieces that were ("freemsg" -> "free",
"##ms", "##g"), where the regex vocabulary would give one <unk>.

Fitted on the texts passed to `fit` only: every piece is a substring of a normalised training
text, and the alphabet is the training texts' own.

HF WordPiece training is not deterministic (huggingface/tokenizers#1794: merges of equal count are
taken in hash-map order, so two fresh processes on the same texts gave 6,103 and 6,098 pieces).
The pieces are therefore learned by common/wordpiece_training.py, which breaks every tie by the
pieces' text: the vocabulary is a function of the training texts and settings alone. HF
`tokenizers` still normalises, pre-tokenises and encodes. `fit_cached` keeps each trained
vocabulary in the data cache, so later fits on the same texts (another seed, the other twin, a
resumed run) load it instead of learning it again.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import tokenizers
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

from common.datasets import data_cache_dir
from common.segmentation import CJK_IN_A_RUN
from common.special_tokens import PAD, PAD_ID, UNK, UNK_ID
from common.wordpiece_training import CONTINUATION, learn_pieces


def _untrained_tokenizer() -> Tokenizer:
    tokenizer = Tokenizer(models.WordPiece(unk_token=UNK, continuing_subword_prefix=CONTINUATION))
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.BertPreTokenizer(), pre_tokenizers.Digits(individual_digits=False),
         pre_tokenizers.Split(Regex(CJK_IN_A_RUN), behavior="isolated")]
    )
    return tokenizer


class SubwordVocabulary:
    """WordPiece pieces <-> ids with padding/truncation to a fixed length (ids 0 <pad>, 1 <unk>)."""

    kind = "subword"

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        vocabulary = tokenizer.get_vocab()
        assert vocabulary.get(PAD) == PAD_ID and vocabulary.get(UNK) == UNK_ID, "specials must be ids 0 and 1"
        self.itos: list[str] = sorted(vocabulary, key=vocabulary.get)
        self.stoi: dict[str, int] = dict(vocabulary)

    @classmethod
    def fit(cls, texts: Iterable[str], min_count: int = 2, max_size: int = 8000) -> "SubwordVocabulary":
        """Train WordPiece on `texts`: at most max_size pieces besides <pad>/<unk>, merges seen min_count times."""
        tokenizer = _untrained_tokenizer()
        words: Counter = Counter()
        for text in texts:
            normalised = tokenizer.normalizer.normalize_str(text)
            words.update(word for word, _ in tokenizer.pre_tokenizer.pre_tokenize_str(normalised))
        pieces = [p for p in learn_pieces(words, max_size, min_count) if p not in (PAD, UNK)]
        vocabulary = {piece: i for i, piece in enumerate([PAD, UNK, *pieces])}
        tokenizer.model = models.WordPiece(vocab=vocabulary, unk_token=UNK, continuing_subword_prefix=CONTINUATION)
        return cls(tokenizer)

    def __len__(self) -> int:
        return len(self.itos)

    def tokenize(self, text: str) -> list[str]:
        """The pieces of one text, e.g. "FREE entry" -> ["free", "entry"]."""
        return self.tokenizer.encode(text).tokens

    def encode(self, texts: Sequence[str], max_len: int) -> np.ndarray:
        """(n, max_len) int64 ids, truncated, right-padded with <pad>=0."""
        ids = np.zeros((len(texts), max_len), dtype=np.int64)
        for row, encoding in enumerate(self.tokenizer.encode_batch(list(texts)) if len(texts) else []):
            pieces = encoding.ids[:max_len]
            ids[row, : len(pieces)] = pieces
        return ids

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps({"kind": self.kind, "tokenizer": json.loads(self.tokenizer.to_str())},
                                         ensure_ascii=False))

    @classmethod
    def load(cls, path: Path) -> "SubwordVocabulary":
        saved = json.loads(Path(path).read_text())
        return cls(Tokenizer.from_str(json.dumps(saved["tokenizer"])))

    @classmethod
    def fit_cached(cls, texts: Iterable[str], min_count: int = 2, max_size: int = 8000,
                   cache_dir: Path | None = None) -> "SubwordVocabulary":
        """`fit`, trained once per (texts, settings) and reloaded from `cache_dir`/vocabularies after."""
        texts = list(texts)
        folder = Path(cache_dir or data_cache_dir()) / "vocabularies"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / f"subword-{training_key(texts, min_count, max_size)}.json"
        with open(folder / ".lock", "w") as lock:  # two workers fitting at once: one trains, one waits
            fcntl.flock(lock, fcntl.LOCK_EX)
            if path.exists():
                return cls.load(path)
            vocabulary = cls.fit(texts, min_count, max_size)
            handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
            os.close(handle)
            vocabulary.save(Path(temporary))
            os.replace(temporary, path)
            return vocabulary


def training_key(texts: Sequence[str], min_count: int, max_size: int) -> str:
    """sha256 of the training texts (in order) and everything else the trained vocabulary depends on."""
    # "cjk-runs-split": vocabularies cached before the CJK split carry the old pre-tokenizer; never reuse them
    digest = hashlib.sha256(f"wordpiece-ordered-ties|cjk-runs-split|{tokenizers.__version__}|{min_count}|{max_size}"
                            .encode())
    for text in texts:
        digest.update(b"\x00" + text.encode("utf-8"))
    return digest.hexdigest()[:32]
