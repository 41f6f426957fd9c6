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
from common.digests import readable_digest

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
        return readable_digest(hashlib.sha256(json.dumps(self.indices(), sort_keys=True).encode()).digest())

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


# -- nested training subsets for the learning curve ---------------------------------------------
MIN_PER_CLASS = 5  # every subset holds at least this many messages of every class


def subset_order(train_labels: np.ndarray, seed: int, min_per_class: int = MIN_PER_CLASS) -> np.ndarray:
    """Positions 0..len-1 of the training split in the order subsets take them.

    Each class is shuffled once (seeded); its first `min_per_class` messages come first, then
    every message is placed at its class's quantile (rank + 0.5) / class size. A subset of size n
    is the first n of this order: nested by construction, and stratified (each class within one
    message of its share, or at its minimum).
    """
    train_labels = np.asarray(train_labels)
    rng = np.random.default_rng(seed)
    keys = np.empty(len(train_labels))
    for c in np.unique(train_labels):
        members = rng.permutation(np.flatnonzero(train_labels == c))
        rank = np.arange(len(members))
        keys[members] = np.where(rank < min_per_class, -1.0 + rank / (2.0 * min_per_class),
                                 (rank + 0.5) / len(members))
    return np.lexsort((train_labels, keys))  # ties (two classes at one quantile): lower class first


def check_train_sizes(sizes, train_labels: np.ndarray, min_per_class: int = MIN_PER_CLASS) -> None:
    """Every requested size (an int, or None for all) must fit the training split and its minimum."""
    classes = len(np.unique(train_labels))
    smallest = min_per_class * classes
    for size in sizes:
        if size is None:
            continue
        if size > len(train_labels):
            raise UserInputError(f"training size {size} is larger than the training split "
                                 f"({len(train_labels)} messages); use a smaller size or 'all'")
        if size < smallest:
            raise UserInputError(f"training size {size} is below {min_per_class} messages per class "
                                 f"x {classes} classes = {smallest}; use at least {smallest}")


def train_subset(split: "Split", labels: np.ndarray, size: int | None,
                 min_per_class: int = MIN_PER_CLASS) -> np.ndarray:
    """Data indices of the nested training subset of `size` messages (None: the whole train split)."""
    if size is None or size == len(split.train):
        return split.train
    train_labels = np.asarray(labels)[split.train]
    check_train_sizes([size], train_labels, min_per_class)
    return np.sort(split.train[subset_order(train_labels, split.seed, min_per_class)[:size]])


def train_subsets_record(split: "Split", labels: np.ndarray, sizes, min_per_class: int = MIN_PER_CLASS) -> dict:
    """What splits.json records: the seed, the minimum per class and each subset's indices."""
    return {"seed": split.seed, "min_per_class": min_per_class,
            "sizes": {str(size): [int(i) for i in train_subset(split, labels, size, min_per_class)]
                      for size in sorted(s for s in sizes if s is not None)}}
