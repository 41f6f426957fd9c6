"""Where Chinese text is cut: the CJK character class, and jieba word segmentation.

Chinese is written without spaces, so a tokenizer that splits on spaces and punctuation reads a
whole clause ("这家酒店服务很好") as one word: one token a vocabulary has never seen. Two ways out:

- characters: every CJK ideograph is a token of its own (`CJK_CHARACTER`, the ranges BERT's
  tokenizer isolates: U+4E00-9FFF, U+3400-4DBF, U+F900-FAFF and the supplementary planes'
  ideographs). Kana and Hangul are not in the class, as in BERT.
- words: jieba's dictionary-and-HMM segmentation (`jieba_words`), the common choice for Chinese
  word n-grams. jieba is optional (the `corpora` extra); asking for it without it installed is a
  one-line error naming the install command (common/vocabulary.py's jieba_tokens reads the rest of a
  text as the regex tokenizer does). jieba is deterministic: the same text always gives
  the same words (its dictionary ships inside the package; nothing is downloaded).

Text without a CJK character passes through both untouched.
"""
from __future__ import annotations

import logging
import re
from functools import lru_cache

from common.errors import UserInputError

CJK_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df\U0002a700-\U0002ceaf\U0002f800-\U0002fa1f"
CJK_CHARACTER = f"[{CJK_RANGES}]"  # one ideograph; the same text for Python's re and the tokenizers' Oniguruma
CJK = re.compile(CJK_CHARACTER)
# an ideograph next to another one: what the subword pre-tokenizer cuts apart (common/subword.py)
CJK_IN_A_RUN = f"{CJK_CHARACTER}(?={CJK_CHARACTER})|(?<={CJK_CHARACTER}){CJK_CHARACTER}"
JIEBA_INSTALL = 'pip install -e ".[corpora]" (or pip install jieba==0.42.1)'


def has_cjk(text: str) -> bool:
    return CJK.search(text) is not None


def cjk_share(texts) -> float:
    """Share of the texts that hold at least one CJK character (0.0 for no texts)."""
    texts = list(texts)
    return sum(map(has_cjk, texts)) / len(texts) if texts else 0.0


def jieba_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("jieba") is not None


@lru_cache(maxsize=1)
def _segmenter():
    if not jieba_available():
        raise UserInputError(f"jieba word segmentation needs the package jieba: {JIEBA_INSTALL}")
    import jieba

    from common.datasets import data_cache_dir

    jieba.setLogLevel(logging.WARNING)  # no "Building prefix dict" lines on stderr
    segmenter = jieba.Tokenizer()
    segmenter.tmp_dir = str(data_cache_dir())  # its prefix-dictionary cache beside the suite's, not in /tmp
    segmenter.initialize()
    return segmenter


def jieba_words(text: str) -> list[str]:
    """jieba's words of `text` (precise mode, HMM on for unseen words), spaces dropped."""
    return [word for word in _segmenter().lcut(text, HMM=True) if word.strip()]
