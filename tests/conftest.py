"""Shared fixtures: a small stratified subset of the real SMS data, split as the suite splits."""
from __future__ import annotations

import pytest

from common.datasets import DataSpec, LabelledTexts, load
from common.splits import stratified_split

TINY_PER_CLASS = 60  # 120 real messages: fits in seconds, still both classes in every split


@pytest.fixture(scope="session")
def tiny_data() -> LabelledTexts:
    return load(DataSpec(limit_per_class=TINY_PER_CLASS))


@pytest.fixture(scope="session")
def tiny_splits(tiny_data):
    """(train, valid, test) LabelledTexts of the tiny subset."""
    split = stratified_split(tiny_data)
    return tuple(tiny_data.subset(getattr(split, name)) for name in ("train", "valid", "test"))
