"""Stratified train/valid/test split (70/15/15), exactly as the seed course makes it."""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import train_test_split

from common.datasets import LabelledTexts
from common.errors import UserInputError

DEFAULT_SPLIT_SEED = 20260812


@dataclass(frozen=True)
class Split:
    train: np.ndarray
    valid: np.ndarray
    test: np.ndarray
    seed: int

    @property
    def sha256(self) -> str:
        """A fingerprint of the exact indices: same value means the same split."""
        return hashlib.sha256(json.dumps(self.indices(), sort_keys=True).encode()).hexdigest()

    def indices(self) -> dict[str, list[int]]:
        return {name: [int(i) for i in getattr(self, name)] for name in ("train", "valid", "test")}

    def sizes(self) -> dict[str, int]:
        return {name: len(getattr(self, name)) for name in ("train", "valid", "test")}

    def to_dict(self) -> dict:
        return {"seed": self.seed, "sizes": self.sizes(), "sha256": self.sha256, **self.indices()}

    @classmethod
    def from_dict(cls, values: dict) -> "Split":
        split = cls(*(np.asarray(values[k], dtype=np.int64) for k in ("train", "valid", "test")), values["seed"])
        if "sha256" in values and values["sha256"] != split.sha256:
            raise UserInputError("splits.json does not match its sha256; delete the run folder and run again")
        return split


def stratified_split(data: LabelledTexts, seed: int = DEFAULT_SPLIT_SEED) -> Split:
    """70% train, then the remaining 30% halved into valid and test, stratified by label."""
    counts = Counter(data.labels.tolist())
    scarce = {data.class_names[c]: n for c, n in counts.items() if n < 7}
    if scarce:
        raise UserInputError(
            f"too few rows per class to stratify 70/15/15: {scarce}; each class needs at least 7 rows"
        )
    indices = np.arange(len(data))
    try:
        train, rest = train_test_split(indices, test_size=0.3, stratify=data.labels, random_state=seed)
        valid, test = train_test_split(rest, test_size=0.5, stratify=data.labels[rest], random_state=seed)
    except ValueError as exc:
        raise UserInputError(f"cannot stratify this data 70/15/15 ({exc}); add rows to the rare classes") from None
    return Split(np.asarray(train), np.asarray(valid), np.asarray(test), seed)


def duplicate_report(data: LabelledTexts, split: Split) -> dict:
    """Exact-duplicate texts: how many rows repeat, and how many leak across splits."""
    where: dict[str, set[str]] = {}
    for name, idx in split.indices().items():
        for i in idx:
            where.setdefault(data.texts[i], set()).add(name)
    counts = Counter(data.texts)
    pairs = Counter()
    for text, names in where.items():
        for a in ("train", "valid", "test"):
            for b in ("train", "valid", "test"):
                if a < b and a in names and b in names:
                    pairs[f"{a}&{b}"] += 1
    test_texts_in_train = sum(1 for i in split.test if "train" in where[data.texts[i]])
    return {
        "rows": len(data),
        "unique_texts": len(counts),
        "duplicate_rows": len(data) - len(counts),
        "texts_shared_between_splits": dict(pairs),
        "test_rows_whose_text_is_in_train": int(test_texts_in_train),
    }
