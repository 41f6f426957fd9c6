"""Which texts the ONNX TF-IDF graph cannot tokenize as scikit-learn does: refused, not served differently.

The exported graph (backends/tfidf_logreg/onnx_export.py) splits on runs of Unicode letters and
digits and lower-cases character by character (locale C.UTF-8). Its parity with scikit-learn is
tested on ASCII, Latin, Greek, Cyrillic and CJK letters, upper and lower case. Refused:
- a letter or digit outside those blocks (not verified);
- text whose lower-casing is not one character for one character, or depends on context: 'İ' becomes
  two characters, a final 'Σ' becomes 'ς' in Python and 'σ' in ONNX Runtime.
The reason names the character's code point, never the text (nothing written holds message text).
"""
from __future__ import annotations

import re
from typing import Sequence

VERIFIED_BLOCKS = ((0x00, 0x24F, "Latin"), (0x370, 0x3FF, "Greek"), (0x400, 0x4FF, "Cyrillic"),
                   (0x4E00, 0x9FFF, "CJK"))
WORD_CHARACTER = re.compile(r"\w")


def refusal(text: str) -> str | None:
    """Why the ONNX TF-IDF graph cannot score this text like scikit-learn, or None when it can."""
    for character in text:
        if character.isascii():
            continue
        lowered = character.lower()
        if len(lowered) != 1:
            return f"U+{ord(character):04X} lower-cases to {len(lowered)} characters in Python, to 1 in ONNX Runtime"
        if WORD_CHARACTER.match(character) and not any(low <= ord(character) <= high for low, high, _ in VERIFIED_BLOCKS):
            return (f"U+{ord(character):04X} is a letter or digit outside the scripts the ONNX tokenizer is verified on "
                    f"({', '.join(name for *_, name in VERIFIED_BLOCKS)})")
    if "Σ" in text and text.lower() != "".join(character.lower() for character in text):
        return "a word-final U+03A3 (Σ) lower-cases to ς in Python, to σ in ONNX Runtime"
    return None


class RefusedInput(ValueError):
    """Texts a serving path cannot score as the native model does; `reason` says why, `count` how many."""

    def __init__(self, reason: str, count: int, total: int):
        super().__init__(f"{count} of {total} texts refused: {reason}")
        self.reason, self.count, self.total = reason, count, total


def check_texts(texts: Sequence[str]) -> None:
    """Raise RefusedInput naming the first reason and the number of texts refused."""
    reasons = [reason for reason in map(refusal, texts) if reason is not None]
    if reasons:
        raise RefusedInput(reasons[0], len(reasons), len(texts))
