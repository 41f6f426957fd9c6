"""Repeated, stratified, group-aware k-fold partitions: the design that tests every text and samples the data.

One split answers for the models trained on it; a verdict about a recipe must also hold when the
recipe is trained on other texts and tested on other texts. `kfold_partitions` cuts the data into
K folds R times (each repeat reshuffled with its own seed); each fold is the test part once, and
the other folds are its training data, from which a validation part is carved the same way (for
the epoch, the threshold and the recipe choices). Every variant is given the identical partitions.

Group-aware: identical texts are one group, and a group never straddles two parts, so no test text
occurs verbatim in its training or validation data (scikit-learn's StratifiedGroupKFold, which also
keeps each class's share in every fold as far as the groups allow).

`stratified_group_folds` gives StratifiedGroupKFold(shuffle=True)'s folds index for index, about 10 times faster:
its greedy pass scores each group against each fold with small numpy calls (3.9 s a repeat on the 5,574 SMS
texts, 12 s before a 3 x 5 design starts); here the same arithmetic, in the same order, runs on Python floats.
Beyond 7 classes numpy sums a row pairwise, not in order, and scikit-learn's own class is used.
tests/test_partitions.py checks the two give the same folds.

Each partition is a `common.splits.Split` (train, valid, test, seed), so everything that runs on
the seed course's single split runs on a partition unchanged.
"""
from __future__ import annotations

import math
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
        for fold, test in enumerate(stratified_group_folds(data.labels, groups, folds, seed + repeat)):
            rest = np.setdiff1d(everything, test)
            valid = rest[stratified_group_folds(data.labels[rest], groups[rest], VALID_FOLDS, seed + repeat)[0]]
            split = Split(np.setdiff1d(rest, valid), np.sort(valid), np.sort(test), seed + repeat)
            partitions.append(Partition(repeat, fold, split))
    return partitions


def stratified_group_folds(labels, groups, folds: int, seed: int) -> list[np.ndarray]:
    """The test indices of each fold of StratifiedGroupKFold(folds, shuffle=True, random_state=seed) over these
    labels and groups (sorted), computed as scikit-learn 1.9 computes them."""
    _, label_of, class_sizes = np.unique(labels, return_inverse=True, return_counts=True)
    if len(class_sizes) > 7:  # numpy's row sums are no longer sequential: scikit-learn's own pass
        splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
        return [test for _, test in splitter.split(np.zeros(len(labels)), labels, groups)]
    _, group_of, group_sizes = np.unique(groups, return_inverse=True, return_counts=True)
    if folds > len(group_sizes) or np.all(folds > class_sizes):
        raise ValueError(f"cannot cut {len(group_sizes)} groups of {list(class_sizes)} labels into {folds} folds")
    counts = np.zeros((len(group_sizes), len(class_sizes)))
    np.add.at(counts, (group_of, label_of), 1)
    order = np.arange(len(group_sizes))  # the shuffle: scikit-learn's one draw from RandomState(seed)
    np.random.RandomState(seed).shuffle(order)
    counts = counts[order]
    renamed = np.empty_like(order)
    renamed[order] = np.arange(order.size)
    group_of = renamed[group_of]
    visit = np.argsort(-np.std(counts, axis=1), kind="stable")  # the least even class mix first
    fold_of = _greedy_folds(counts[visit].tolist(), [float(n) for n in class_sizes], folds)
    fold_of_group = np.empty(len(group_sizes), dtype=np.int64)
    fold_of_group[visit] = fold_of
    fold_of_row = fold_of_group[group_of]
    return [np.flatnonzero(fold_of_row == fold) for fold in range(folds)]


def _greedy_folds(group_counts: list[list[float]], class_sizes: list[float], folds: int) -> list[int]:
    """Each group, in turn, to the fold that leaves the classes' shares most even across folds (the mean over
    classes of the standard deviation over folds of count / class size), ties (np.isclose) to the smaller fold."""
    per_fold = [[0.0] * len(class_sizes) for _ in range(folds)]
    chosen = []
    for group in group_counts:
        best, best_eval, best_samples = -1, math.inf, math.inf
        for candidate in range(folds):
            stds = []
            for c, size in enumerate(class_sizes):
                shares = [(per_fold[f][c] + (group[c] if f == candidate else 0.0)) / size for f in range(folds)]
                mean = _in_order(shares) / folds
                stds.append(math.sqrt(_in_order([(share - mean) * (share - mean) for share in shares]) / folds))
            evaluation = _in_order(stds) / len(class_sizes)
            samples = sum(per_fold[candidate])  # whole numbers: exact in any order
            if evaluation < best_eval or (best_eval < math.inf and samples < best_samples
                                          and abs(evaluation - best_eval) <= 1e-08 + 1e-05 * abs(best_eval)):
                best, best_eval, best_samples = candidate, evaluation, samples
        for c, n in enumerate(group):
            per_fold[best][c] += n
        chosen.append(best)
    return chosen


def _in_order(values: list[float]) -> float:
    """A sum added left to right, as numpy adds fewer than 8 items (Python 3.12's sum() compensates: not that)."""
    total = 0.0
    for value in values:
        total += value
    return total


def leaked_texts(data: LabelledTexts, split: Split) -> int:
    """How many test rows hold a text that also occurs in the training or validation part (0 by design)."""
    seen = {data.texts[i] for i in np.concatenate([split.train, split.valid])}
    return sum(1 for i in split.test if data.texts[i] in seen)
