"""Repeated, stratified, group-aware k-fold partitions: the design that tests every text and samples the data.

One split answers for the models trained on it; a verdict about a recipe must also hold when the
recipe is trained on other texts and tested on other texts. `kfold_partitions` cuts the data into
K folds R times (each repeat reshuffled with its own seed); each fold is the test part once, and
the other folds are its training data, from which a validation part is carved the same way (for
the epoch, the threshold and the recipe choices). Every variant is given the identical partitions.

Group-aware: identical texts are one group, and a group never straddles two parts, so no test text
occurs verbatim in its training or validation data (scikit-learn's StratifiedGroupKFold, which also
keeps each class's share in every fold as far as the groups allow).

Each partition is a `common.splits.Split` (train, valid, test, seed), so everything that runs on
the seed course's single split runs on a partition unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedGroupKFold

from common.datasets import LabelledTexts
from common.errors import UserInputError
from common.splits import Split

VALID_FOLDS = 5  # the validation part is one fold in 5 of the training data (16% of all texts at K = 5)


@dataclass(frozen=True)
class Partition:
    repeat: int
    fold: int
    split: Split

    @property
    def name(self) -> str:
        """Folder name of the partition in a run folder: r0f0, r0f1, ..."""
        return f"r{self.repeat}f{self.fold}"


def text_groups(texts) -> np.ndarray:
    """Group id per text: equal texts, equal id (ids in order of first occurrence)."""
    first: dict[str, int] = {}
    return np.asarray([first.setdefault(t, len(first)) for t in texts], dtype=np.int64)


def check_design(folds: int, repeats: int, data: LabelledTexts) -> None:
    if folds < 2 or repeats < 1:
        raise UserInputError("--cv needs at least 2 folds and --repeats at least 1; e.g. --cv 5 --repeats 2")
    counts = np.bincount(data.labels, minlength=len(data.class_names))
    smallest = folds * VALID_FOLDS
    scarce = {data.class_names[c]: int(n) for c, n in enumerate(counts) if n < smallest}
    if scarce:
        raise UserInputError(f"too few rows per class for --cv {folds}: {scarce}; each class needs at least "
                             f"{smallest} rows (folds x {VALID_FOLDS} validation folds); use fewer folds")


def kfold_partitions(data: LabelledTexts, folds: int, repeats: int, seed: int) -> list[Partition]:
    """R x K partitions; repeat r shuffles with seed + r. Deterministic given data, folds, repeats and seed."""
    check_design(folds, repeats, data)
    groups = text_groups(data.texts)
    everything = np.arange(len(data))
    partitions = []
    for repeat in range(repeats):
        outer = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed + repeat)
        for fold, (rest, test) in enumerate(outer.split(everything, data.labels, groups)):
            inner = StratifiedGroupKFold(n_splits=VALID_FOLDS, shuffle=True, random_state=seed + repeat)
            fit, valid = next(inner.split(rest, data.labels[rest], groups[rest]))
            split = Split(np.sort(rest[fit]), np.sort(rest[valid]), np.sort(test), seed + repeat)
            partitions.append(Partition(repeat, fold, split))
    return partitions


def leaked_texts(data: LabelledTexts, split: Split) -> int:
    """How many test rows hold a text that also occurs in the training or validation part (0 by design)."""
    seen = {data.texts[i] for i in np.concatenate([split.train, split.valid])}
    return sum(1 for i in split.test if data.texts[i] in seen)
