"""Where a run folder keeps each (variant, seed) run; shared by the orchestrator and the workers."""
from __future__ import annotations

import json
from pathlib import Path


def run_name(variant: str, seed: int) -> str:
    return f"{variant.replace(':', '-')}__seed{seed}"


def run_path(out: Path, variant: str, seed: int) -> Path:
    return Path(out) / "runs" / f"{run_name(variant, seed)}.json"


def prediction_path(out: Path, variant: str, seed: int) -> Path:
    return Path(out) / "predictions" / f"{run_name(variant, seed)}.npz"


def log_path(out: Path, variant: str, seed: int) -> Path:
    return Path(out) / "logs" / f"{run_name(variant, seed)}.log"


def read_runs(out: Path) -> list[dict]:
    """Every run record in a run folder, in a stable order."""
    return [json.loads(p.read_text()) for p in sorted((Path(out) / "runs").glob("*.json"))]
