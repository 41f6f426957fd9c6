"""The training-size sweep: nested stratified subsets, and an end-to-end sweep with two sizes."""
from __future__ import annotations

import numpy as np
import pytest

from common.datasets import DataSpec, load
from common.errors import UserInputError
from common.splits import (MIN_PER_CLASS, stratified_split, train_subset, train_subsets_record)

SIZES = [10, 50, 100, 200, 500, 1000]


@pytest.fixture(scope="module")
def sms():
    data = load(DataSpec())
    return data, stratified_split(data)


def test_subsets_are_nested_and_inside_train(sms):
    data, split = sms
    previous = np.array([], dtype=np.int64)
    for size in SIZES + [None]:
        subset = train_subset(split, data.labels, size)
        assert len(subset) == (size or len(split.train)) == len(set(subset.tolist()))
        assert set(subset.tolist()) <= set(split.train.tolist())
        assert set(previous.tolist()) <= set(subset.tolist()), f"size {size} does not contain the smaller subset"
        previous = subset


def test_subsets_are_stratified_with_a_minimum_per_class(sms):
    data, split = sms
    share = np.bincount(data.labels[split.train]) / len(split.train)
    for size in SIZES:
        counts = np.bincount(data.labels[train_subset(split, data.labels, size)], minlength=data.n_classes)
        assert (counts >= MIN_PER_CLASS).all(), (size, counts)
        if (share * size >= MIN_PER_CLASS).all():  # the minimum does not bind: each class at its share
            assert (np.abs(counts - share * size) <= 1).all(), (size, counts, share * size)


def test_subsets_are_deterministic_for_a_seed_and_change_with_it(sms):
    data, split = sms
    again = stratified_split(data)
    assert np.array_equal(train_subset(split, data.labels, 200), train_subset(again, data.labels, 200))
    other = stratified_split(data, seed=1)
    assert not np.array_equal(np.sort(train_subset(split, data.labels, 200)),
                              np.sort(train_subset(other, data.labels, 200)))


def test_subsets_are_recorded_and_leave_the_split_unchanged(sms):
    data, split = sms
    record = train_subsets_record(split, data.labels, [200, 50, None])
    assert list(record["sizes"]) == ["50", "200"] and record["seed"] == split.seed
    assert record["sizes"]["50"] == train_subset(split, data.labels, 50).tolist()
    assert split.sha256.startswith("5c8a141654ee"), "the default split changed"


def test_impossible_sizes_say_what_to_do(sms):
    data, split = sms
    with pytest.raises(UserInputError, match="per class"):
        train_subset(split, data.labels, 3)
    with pytest.raises(UserInputError, match="larger than the training split"):
        train_subsets_record(split, data.labels, [len(split.train) + 1])
