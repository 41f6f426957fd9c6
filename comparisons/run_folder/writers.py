"""The one writer of design.json, manifest.json, splits.json and benchmark.json: `write_design`,
`write_manifest`, `write_splits`, `write_benchmark_plan`, atomic (a reader never meets half a file), each taking the
record or its dict; and a run's record, `write_run_record`, once a run (by the executor: the worker leaves its record
beside it, names.worker_record_path, and the orchestrator adds the run's wall time and sharing)."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from comparisons.outputs import atomic_write_json
from comparisons.run_folder.names import BENCHMARK_PLAN, DESIGN, MANIFEST, SPLITS, run_path


def _write(folder: Path, name: str, record: Mapping) -> Path:
    path = Path(folder) / name
    atomic_write_json(path, dict(record))
    return path


def write_design(folder: Path, design: Mapping) -> Path:
    return _write(folder, DESIGN, design)


def write_manifest(folder: Path, manifest: Mapping) -> Path:
    return _write(folder, MANIFEST, manifest)


def write_splits(folder: Path, splits: Mapping) -> Path:
    return _write(folder, SPLITS, splits)


def write_benchmark_plan(folder: Path, plan: Mapping) -> Path:
    return _write(folder, BENCHMARK_PLAN, plan)


def write_run_record(folder: Path, run, record: Mapping) -> Path:
    """runs/NAME.json of `run` (anything with variant, seed and train_size: a RunSpec), written last: it marks the
    run done (its predictions and log are already there)."""
    path = run_path(folder, run.variant, run.seed, run.train_size)
    atomic_write_json(path, dict(record))
    return path
