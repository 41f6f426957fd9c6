"""The one writer of design.json, manifest.json and splits.json (issue 64): `write_design`, `write_manifest`,
`write_splits`, atomic (a reader never meets half a file), each taking the record or its dict. Not yet here:
benchmark.json (comparisons/benchmark.py) and a run's record (the worker, comparisons/run/runner.py, executors.py)."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from comparisons.outputs import atomic_write_json
from comparisons.run_folder.names import DESIGN, MANIFEST, SPLITS


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
