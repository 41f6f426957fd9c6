"""LabelledTexts, what every loader returns, and the one place rows of (label, text, line) become
one: empty labels or texts refused, label spellings folded, the positive class found."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from common.errors import UserInputError

POSITIVE_GUESSES = ("spam", "1", "true", "yes", "pos", "positive")


@dataclass
class LabelledTexts:
    """Texts with integer labels; class_names[label] is the original label string."""

    texts: list[str]
    labels: np.ndarray  # (n,) int64
    class_names: tuple[str, ...]
    positive_index: int | None = 1  # binary: index of the positive class; None for multi-class
    # where the rows came from and how they were cleaned (named corpora: package, version, sha256, counts)
    origin: dict | None = field(default=None, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def n_classes(self) -> int:
        return len(self.class_names)

    def subset(self, indices: Sequence[int]) -> "LabelledTexts":
        indices = np.asarray(indices, dtype=np.int64)
        return LabelledTexts(
            [self.texts[i] for i in indices], self.labels[indices], self.class_names, self.positive_index,
            self.origin,
        )


def build_labelled_texts(
    rows: list[tuple[str, str, int]], where: str, positive_label: str | None,
    allowed: Sequence[str] | None = None,
) -> LabelledTexts:
    for label, text, number in rows:
        if not label:
            raise UserInputError(f"{where}:{number} has no label")
        if allowed is not None and label not in allowed:
            raise UserInputError(f"{where}:{number} has unknown label {label!r}; expected one of {list(allowed)}")
        if not text.strip():
            raise UserInputError(f"{where}:{number} has an empty text")
    if not rows:
        raise UserInputError(f"{where} has no labelled rows")
    rows = _fold_label_spellings(rows)
    found = sorted({label for label, _, _ in rows})
    if positive_label is not None and positive_label not in found:  # "Spam" for a file that says "spam"
        positive_label = next((c for c in found if c.casefold() == positive_label.strip().casefold()), positive_label)
    if len(found) < 2:
        raise UserInputError(f"{where} has a single class ({found[0]!r}); a classifier needs at least two")
    if positive_label is not None and positive_label not in found:
        raise UserInputError(f"positive label {positive_label!r} not found in {where}; labels are {found}")
    if len(found) == 2:
        positive = positive_label or next((c for c in found if c.lower() in POSITIVE_GUESSES), found[1])
        class_names = (next(c for c in found if c != positive), positive)
        positive_index: int | None = 1
    else:
        class_names, positive_index = tuple(found), None
        if positive_label is not None:
            positive_index = found.index(positive_label)
    lookup = {name: i for i, name in enumerate(class_names)}
    labels = np.array([lookup[label] for label, _, _ in rows], dtype=np.int64)
    return LabelledTexts([text for _, text, _ in rows], labels, tuple(class_names), positive_index)


def _fold_label_spellings(rows: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """Labels that differ only in case ("spam", "Spam", "SPAM") are one class, named by the most
    common spelling (ties: the first in sorted order); surrounding spaces are stripped by the callers."""
    counts = Counter(label for label, _, _ in rows)
    spellings: dict[str, list[str]] = {}
    for label in sorted(counts):
        spellings.setdefault(label.casefold(), []).append(label)
    if all(len(group) == 1 for group in spellings.values()):
        return rows
    name = {label: max(group, key=lambda spelling: (counts[spelling], -group.index(spelling)))
            for group in spellings.values() for label in group}
    return [(name[label], text, number) for label, text, number in rows]
