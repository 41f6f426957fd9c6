"""Stratified train/valid/test split (70/15/15), exactly as the seed course makes it."""
from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

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
    from sklearn.model_selection import train_test_split  # here: importing this module stays cheap (Ray tasks)

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


def check_train_sizes(sizes, train_labels: np.ndarray, min_per_class: int = MIN_PER_CLASS,
                      where: str = "the training split") -> None:
    """Every requested size (an int, or None for all) must fit the texts it is drawn from and the minimum."""
    classes = len(np.unique(train_labels))
    smallest = min_per_class * classes
    for size in sizes:
        if size is None:
            continue
        if size > len(train_labels):
            raise UserInputError(f"training size {size} is larger than {where} ({len(train_labels)} texts); the "
                                 f"largest allowed is {len(train_labels)} (or 'all')")
        if size < smallest:
            raise UserInputError(f"training size {size} is below {min_per_class} texts per class x {classes} "
                                 f"classes = {smallest}; the smallest allowed is {smallest}")


def train_subset(split: "Split", labels: np.ndarray, size: int | None,
                 min_per_class: int = MIN_PER_CLASS, where: str = "the training split") -> np.ndarray:
    """Data indices of the nested training subset of `size` messages (None: the whole train split)."""
    if size is None or size == len(split.train):
        return split.train
    train_labels = np.asarray(labels)[split.train]
    check_train_sizes([size], train_labels, min_per_class, where=where)
    return np.sort(split.train[subset_order(train_labels, split.seed, min_per_class)[:size]])


# -- the label budget of a training size ----------------------------------------------------------
# train+valid: at size n a run sees n labelled texts in all, its validation part carved from them by the full
# split's rule (the full split's validation share, every class at least one text each side, equal texts on one
# side); train: n training texts and the full validation part at every size (the older, different question:
# what n training labels buy when validation labels are free).
LABEL_BUDGETS = ("train+valid", "train")


def parse_train_sizes(value: str) -> list[int | None]:
    """'50,100,all' -> [50, 100, None] (None: the whole labelled part); strictly increasing, 'all' last."""
    sizes: list[int | None] = []
    for item in filter(None, (part.strip() for part in value.split(","))):
        if item == "all":
            size = None
        elif item.isdigit() and int(item) > 0:
            size = int(item)
        else:
            raise UserInputError(f"--train-sizes: {item!r} is not a positive whole number or 'all'; "
                                 "e.g. --train-sizes 50,100,200,all")
        if sizes and (sizes[-1] is None or (size is not None and size <= sizes[-1])):
            raise UserInputError(f"--train-sizes: {item} after {sizes[-1] or 'all'}; give increasing sizes, 'all' "
                                 "last, e.g. --train-sizes 50,100,200,all")
        sizes.append(size)
    if not sizes:
        raise UserInputError("--train-sizes is empty; e.g. --train-sizes 50,100,200,all")
    return sizes


def largest_train_size(split: "Split", budget: str) -> int:
    """The largest training size a split allows under a label budget."""
    return len(split.train) + len(split.valid) if budget == "train+valid" else len(split.train)


def budget_parts(split: "Split", labels: np.ndarray, texts, size: int | None, budget: str = "train+valid",
                 min_per_class: int = MIN_PER_CLASS, where: str = "the split",
                 subset_seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(training, validation) data indices a run at training size `size` sees (None: the split's own parts).

    train+valid: the nested stratified subset of `size` texts of the labelled part (training and validation
    together, `subset_order`), then its validation part carved per class: the full split's validation share of
    the class (at least one text), taken from the end of the subset's order a group of equal texts at a time, so
    that equal texts stay on one side and every class keeps at least one training text. train: `train_subset`
    and the split's whole validation part. The test part is never touched. subset_seed: which draw (a seed of
    `subset_seed()`; None: the split's own seed, as before draws had their own)."""
    if size is None:
        return split.train, split.valid
    if subset_seed is not None:
        split = Split(split.train, split.valid, split.test, subset_seed)
    if budget == "train":
        return train_subset(split, labels, size, min_per_class, where=f"{where}'s training part"), split.valid
    labels = np.asarray(labels)
    labelled = np.concatenate([split.train, split.valid])
    if size == len(labelled):
        return split.train, split.valid
    check_train_sizes([size], labels[labelled], min_per_class, where=f"{where}'s labelled part (training and "
                                                                      "validation)")
    chosen = labelled[subset_order(labels[labelled], split.seed, min_per_class)[:size]]  # in the subset's order
    share = len(split.valid) / len(labelled)
    valid: list[int] = []
    for c in np.unique(labels[chosen]):
        members = [int(i) for i in chosen if labels[i] == c]
        want = max(1, int(round(share * len(members))))
        groups: dict[str, list[int]] = {}
        for i in members:
            groups.setdefault(texts[i], []).append(i)
        taken: list[int] = []
        for i in reversed(members):  # the last texts of the order first, whole groups of equal texts
            if len(taken) >= want:
                break
            if i not in taken:
                taken += groups[texts[i]]
        if len(taken) >= len(members):
            raise UserInputError(f"training size {size}: class {c} has {len(members)} texts in {where}'s subset, all "
                                 "equal, so it cannot give one training and one validation text; use a larger size")
        valid += taken
    valid_set = set(valid)
    return np.sort(np.array([i for i in chosen if i not in valid_set], dtype=np.int64)), np.sort(np.array(valid, dtype=np.int64))


def train_subsets_record(split: "Split", labels: np.ndarray, sizes, min_per_class: int = MIN_PER_CLASS,
                         texts=None, budget: str = "train", draws: dict | None = None) -> dict:
    """What splits.json records: the seed, the minimum per class, the label budget and each size's training (and,
    under train+valid, validation) indices; with draws ({size: [model seeds]}), each draw's under
    "draws" -> size -> model seed -> {"subset_seed", "train", "valid"}."""
    record = {"seed": split.seed, "min_per_class": min_per_class, "label_budget": budget, "sizes": {}, "valid": {}}
    for size in sorted(s for s in sizes if s is not None):
        train, valid = budget_parts(split, labels, texts, size, budget, min_per_class)
        record["sizes"][str(size)] = [int(i) for i in train]
        if budget == "train+valid":
            record["valid"][str(size)] = [int(i) for i in valid]
    if budget != "train+valid":
        del record["valid"]
    if draws:
        record["draws"] = {}
        for size, seeds in sorted(draws.items()):
            record["draws"][str(size)] = {}
            for seed in seeds:
                chosen = subset_seed(split.seed, seed)
                train, valid = budget_parts(split, labels, texts, size, budget, min_per_class, subset_seed=chosen)
                record["draws"][str(size)][str(seed)] = {"subset_seed": seed_label(chosen), "train": [int(i) for i in train],
                                                         "valid": [int(i) for i in valid]}
    return record


# -- every partition its own training randomness ------------------------------------------------------
# A verdict about a recipe resamples what its user would: the texts tested, the training draw and the seed. So each
# partition of a design (and each of its draws at a subset size up to DRAWS_UP_TO) trains with its own model seed,
# and at a subset size with its own subset seed, distinct across partitions; every variant of one partition shares
# them (the pairing). The older scheme, "shared", gave every partition model seeds 0..seeds-1 and, at one draw a
# partition, the split's own subset: a seed effect common to all partitions then sits inside every difference and
# is invisible to its standard error. It is kept only for folders made with it and when asked for by name.
DRAWS_UP_TO = 1000
DEFAULT_DRAWS = 5
SEEDINGS = ("per-partition", "shared")
DEFAULT_SEEDING = "per-partition"
RECORDED_BEFORE_SEEDING = "shared"  # what a design.json without "seeding" ran


def draw_seeds(partition_index: int, draws: int) -> list[int]:
    """The model seeds of partition `partition_index`'s draws (0-based over the design's partitions): distinct
    across partitions and draws (partition 0: 0..draws-1, partition 1: draws..2 draws-1, ...)."""
    return [partition_index * draws + d for d in range(draws)]


def partition_seeds(partition_index: int | None, seeds: int, seeding: str = DEFAULT_SEEDING) -> list[int]:
    """The model seeds a partition trains with at the sizes it does not draw (the whole labelled part): its own
    (draw_seeds) per partition; 0..seeds-1 on the single split (partition_index None) or under "shared"."""
    if partition_index is None or seeding == "shared":
        return list(range(seeds))
    return draw_seeds(partition_index, seeds)


def subset_seed(split_seed: int, model_seed: int) -> int:
    """The seed of the training subset a draw takes (deterministic; its own for every model seed)."""
    return int((split_seed * 1_000_003 + 7_919 * (model_seed + 1)) % 2**31)


def seed_label(seed: int) -> str:
    """A subset seed as records and splits.json write it: hexadecimal ("0x5a20a2d3"), at most 8 digits for a seed
    below 2**31, so no written seed is a run of digits that reads as a phone number."""
    return f"{int(seed):#x}"


def seed_value(label) -> int | None:
    """The subset seed a record holds (seed_label's text, or a plain integer; None: none)."""
    return None if label is None else int(label, 0) if isinstance(label, str) else int(label)


def drawn_sizes(sizes, draws: int, largest: int, seeding: str = DEFAULT_SEEDING) -> list[int]:
    """The training sizes at which a partition draws its own subsets: the subset sizes up to DRAWS_UP_TO that are
    smaller than the labelled part (`largest`), at any number of draws; under "shared" none at one draw (the
    split's own subset, the older scheme)."""
    if seeding == "shared" and draws < 2:
        return []
    return [s for s in sizes if s is not None and s <= DRAWS_UP_TO and s < largest]


TrainSize = Optional[int]  # messages trained on; None = the whole training split


def as_train_size(value: Any) -> TrainSize:
    """A training size however a record, manifest or table spelled it: None for the whole split."""
    if value is None:
        return None
    if isinstance(value, str):
        spelled = value.strip().lower()
        return None if spelled in ("", "all", "none", "nan", "inf") else int(float(spelled))
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return int(value)

def size_label(size: Any) -> str:
    """How file names, tables and labels spell a training size: 'all' for the whole split."""
    size = as_train_size(size)
    return "all" if size is None else str(size)

def size_key(size: Any) -> float:
    """A training size as a sortable number: the whole training split sorts last."""
    size = as_train_size(size)
    return float("inf") if size is None else float(size)
