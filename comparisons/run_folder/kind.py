"""What a folder is, decided in one place (issue 64): a benchmark (its benchmark.json: a folder a corpus), a
partition design (its design.json: a folder a partition under partitions/), a single split (its manifest.json), or
not a run folder (None). A benchmark's corpus folder is itself a design or a split."""
from __future__ import annotations

from pathlib import Path

from comparisons.run_folder.names import BENCHMARK_PLAN, DESIGN, MANIFEST, PARTITION_GLOB, PARTITIONS

BENCHMARK, PARTITION_DESIGN, SPLIT = "benchmark", "design", "split"


def folder_kind(path: Path) -> str | None:
    path = Path(path)
    if (path / BENCHMARK_PLAN).is_file():
        return BENCHMARK
    if (path / DESIGN).is_file():
        return PARTITION_DESIGN
    if (path / MANIFEST).is_file():
        return SPLIT
    return None


def partition_folders(path: Path) -> list[Path]:
    """A design's partition folders (rRfF), in order; those not run yet included."""
    return sorted((Path(path) / PARTITIONS).glob(PARTITION_GLOB))
