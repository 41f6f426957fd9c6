"""Where a run folder keeps each (variant, training size, seed) run; shared by the orchestrator and the workers.

A run on the whole training split keeps its historical name (`variant__seed0`), so folders made
before the training-size sweep still resume; a run on a nested subset says its size (`variant__n200__seed0`).
"""
from __future__ import annotations

import json
from pathlib import Path


def run_name(variant: str, seed: int, train_size: int | None = None) -> str:
    size = "" if train_size is None else f"__n{train_size}"
    return f"{variant.replace(':', '-')}{size}__seed{seed}"


def run_path(out: Path, variant: str, seed: int, train_size: int | None = None) -> Path:
    return Path(out) / "runs" / f"{run_name(variant, seed, train_size)}.json"


def prediction_path(out: Path, variant: str, seed: int, train_size: int | None = None) -> Path:
    return Path(out) / "predictions" / f"{run_name(variant, seed, train_size)}.npz"


def log_path(out: Path, variant: str, seed: int, train_size: int | None = None) -> Path:
    return Path(out) / "logs" / f"{run_name(variant, seed, train_size)}.log"


def read_runs(out: Path) -> list[dict]:
    """Every run record in a run folder, in a stable order."""
    return [json.loads(p.read_text()) for p in sorted((Path(out) / "runs").glob("*.json"))]


def size_key(size) -> float:
    """A training size as a sortable number: 'all' (or empty: the whole training split) sorts last."""
    return float("inf") if size is None or str(size) in ("all", "", "nan", "None") else float(size)
