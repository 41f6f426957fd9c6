"""Shared fixtures: a small stratified subset of the real SMS data, split as the suite splits."""
from __future__ import annotations

import os
import sys

# One thread in the test processes, set here, before any test module imports a framework: the two xdist workers
# share 2 cores, and torch, TensorFlow and BLAS at their default thread counts thrash each other (tests/test_hf_bert.py).
# setdefault: a value the caller set wins. The children the tests start (notebook kernels, `python -c` checks)
# inherit it; the run workers do not depend on it: comparisons/run/runner.execute sets every one of these variables
# from the run's own --threads (measure.thread_environment), so no run record changes.
for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS",
              "TF_NUM_INTEROP_THREADS"):
    os.environ.setdefault(_name, "1")
if "torch" in sys.modules:  # imported before this file (by a plugin): it read the environment already
    sys.modules["torch"].set_num_threads(1)

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
