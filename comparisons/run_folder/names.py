"""The only place a run folder's files and folders are named, and the path of each run's files.

A run on the whole training split keeps its historical name (`variant__seed0`), so folders made before the
training-size sweep still resume; a run on a nested subset says its size (`variant__n200__seed0`).
"""
from __future__ import annotations

import re
from pathlib import Path

from common.splits import TrainSize

MANIFEST = "manifest.json"        # a single split's or a partition's plan
DESIGN = "design.json"            # a partition design's plan (its partitions are folders with a manifest each)
BENCHMARK_PLAN = "benchmark.json"  # a benchmark's plan (its corpora are folders of either kind)
SPLITS = "splits.json"            # a folder's split and the training subsets drawn in it
SELECTION = "selection.json"      # a selection's plan, its folds' scores and runs, its decision, its shipped model
POWER_PLAN = "power_plan.json"    # in a pilot's folder: the design a power plan proposes (studies/power_plan --gap)
RUNS, PREDICTIONS, LOGS, SERVING = "runs", "predictions", "logs", "serving"
PARTITIONS = "partitions"         # a design's partition folders, named rRfF
PARTITION_GLOB = "r*f*"


def default_out(command: str, profile: str) -> Path:
    """The one place the default output folder is decided: runs/<profile> for `run` (and its tracking store),
    runs/cross_corpus for `benchmark` (one folder per corpus inside, its MLflow store beside them)."""
    return Path("runs") / ("cross_corpus" if command == "benchmark" else profile)


def run_name(variant: str, seed: int, train_size: TrainSize = None) -> str:
    size = "" if train_size is None else f"__n{train_size}"
    # ':' (hf_bert:full) and an outside backend's spec characters ('pkg.mod:Class(a=1)') become '-' in file names
    safe = re.sub(r"[^\w.-]", "-", variant)
    return f"{safe}{size}__seed{seed}"


def run_path(out: Path, variant: str, seed: int, train_size: TrainSize = None) -> Path:
    return Path(out) / RUNS / f"{run_name(variant, seed, train_size)}.json"


def worker_record_path(out: Path, variant: str, seed: int, train_size: TrainSize = None) -> Path:
    """Where a worker leaves its run's record for the orchestrator (not `*.json`: never read as a finished run; the
    executor writes the record to `run_path` once, with the run's wall time and sharing added)."""
    return Path(out) / RUNS / f"{run_name(variant, seed, train_size)}.json.worker"


def prediction_path(out: Path, variant: str, seed: int, train_size: TrainSize = None) -> Path:
    return Path(out) / PREDICTIONS / f"{run_name(variant, seed, train_size)}.npz"


def log_path(out: Path, variant: str, seed: int, train_size: TrainSize = None) -> Path:
    return Path(out) / LOGS / f"{run_name(variant, seed, train_size)}.log"
