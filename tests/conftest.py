"""Shared fixtures: a small stratified subset of the real SMS data, split as the suite splits."""
from __future__ import annotations

import os
import sys

# One thread in the test processes, set here, before any test module imports a framework: the two xdist workers
# share 2 cores, and torch, TensorFlow and BLAS at their default thread counts thrash each other (tests/test_hf_bert.py).
# setdefault: a value the caller set wins. The children the tests start (notebook kernels, `python -c` checks)
# inherit it; the run workers do not depend on it: comparisons/run/runner.run_worker sets every one of these variables
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


# Heavy modules first (each module kept whole and in its own order): under `--dist worksteal` each xdist worker
# starts on a contiguous share of this order and steals from the end of the other's, so a long test collected last
# would leave one worker idle at the end. Module fixtures (Ray, the browser, `committed`) are still set up once per
# worker as before. Deterministic (it reads only the collected node ids), as xdist needs every worker to collect the
# same order. The rest keep the collection order.
HEAVY_FIRST = ("test_comparisons_e2e", "test_datasets_hf", "test_executors", "test_ray_cluster", "test_sweep",
               "test_reproduce_reference", "test_cli", "test_unplanned_inputs", "test_outputs", "test_partition_sizes",
               "test_plugins", "test_keras_layers", "test_course_wing", "test_calibration")


def pytest_collection_modifyitems(config, items):
    first_seen: dict[str, int] = {}
    for item in items:
        first_seen.setdefault(item.nodeid.split("::", 1)[0], len(first_seen))

    def key(item):
        module = item.nodeid.split("::", 1)[0]
        stem = module.rsplit("/", 1)[-1].removesuffix(".py")
        rank = HEAVY_FIRST.index(stem) if stem in HEAVY_FIRST else len(HEAVY_FIRST)
        return rank, first_seen[module]

    items[:] = sorted(items, key=key)  # stable: each module's tests stay in their own order


def pytest_collection_finish(session):
    """What collecting imported (torch, TensorFlow, transformers: millions of objects) leaves the garbage
    collector's sight (gc.freeze): with them in view one full collection took about 0.5 s in a test process, and
    libraries run one often (statsmodels' multipletests on every Holm call: 53 calls made one test 26 s; Keras on
    clear_session and on deleting a layer's attribute; transformers' Trainer), as do Python's own oldest-generation
    passes. Frozen objects are never collected; modules and their globals never would be."""
    import gc

    gc.collect()
    gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """An xdist worker, its results sent to the controller, exits without tearing down torch, TensorFlow and
    transformers (4-5 s at the end of `make test`, measured): common/prompt_exit.py, as the run's own processes
    do. The controller's report and exit status are its own; a worker's exit code is not read."""
    from common.prompt_exit import exit_promptly, observed

    if os.environ.get("PYTEST_XDIST_WORKER") and not observed():  # under coverage or a profiler: the ordinary exit
        exit_promptly(0)
