"""A folder opened as what it is, decided in one place: `open_folder(path)` returns a `SplitFolder` (its
manifest.json: one split, its runs), a `DesignFolder` (its design.json: a folder a partition under partitions/, each
a split folder of its own), a `BenchmarkFolder` (its benchmark.json: a folder a corpus, each a design or a split), or
None (not a run folder). Nothing else looks at which files a folder holds to decide what it is.

Each hands out what its readers need, read when first asked and then kept: the plan record, the split folders that
hold runs (`run_folders`), their manifests, and the long scores table (comparisons/run_folder/scores.py).
"""
from __future__ import annotations

from functools import cached_property
from pathlib import Path

import pandas as pd

from comparisons.run_folder.folder import RunFolder
from comparisons.run_folder.names import BENCHMARK_PLAN, DESIGN, MANIFEST, PARTITION_GLOB, PARTITIONS, SPLITS
from comparisons.run_folder.records import BenchmarkPlan, Design, Manifest
from comparisons.run_folder.scores import SCORE_COLUMNS, scores_of

BENCHMARK, PARTITION_DESIGN, SPLIT = "benchmark", "design", "split"


class SplitFolder(RunFolder):
    """A single split's folder (RunFolder: its manifest, records, comparable runs and predictions)."""

    kind = SPLIT

    @property
    def run_folders(self) -> list[RunFolder]:
        return [self]

    @property
    def started(self) -> list[Path]:
        """The folders holding a manifest: this one."""
        return [self.path]

    def manifests(self) -> list[Manifest]:
        return [self.plan] if self.plan else []

    def scores(self) -> tuple[pd.DataFrame, list[str]]:
        """(the long scores table of its comparable finished runs, the records left out and why)."""
        return scores_of([self] if (self.path / SPLITS).exists() else [], "split")


class DesignFolder:
    """A partition design's top folder: its design record and its partitions, each a run folder."""

    kind = PARTITION_DESIGN

    def __init__(self, path: Path):
        self.path = Path(path)
        self.design = Design.read(self.path)

    @property
    def plan(self) -> Design:
        return self.design

    @cached_property
    def partitions(self) -> list[Path]:
        """Every partition folder (rRfF), in order; those not run yet included."""
        return sorted((self.path / PARTITIONS).glob(PARTITION_GLOB))

    @cached_property
    def run_folders(self) -> list[RunFolder]:
        """The partitions that hold a split (those a run has started in), each opened once."""
        return [RunFolder(p) for p in self.partitions if (p / SPLITS).exists()]

    @cached_property
    def started(self) -> list[Path]:
        """The partitions holding a manifest (a run was planned in them), in order."""
        return [p for p in self.partitions if (p / MANIFEST).is_file()]

    def manifests(self) -> list[Manifest]:
        """The partitions' manifests, in order (those not started left out)."""
        return [Manifest.read(p) for p in self.started]

    def scores(self) -> tuple[pd.DataFrame, list[str]]:
        return scores_of(self.run_folders, "partitions")


class BenchmarkFolder:
    """A benchmark's folder: its plan and a folder a corpus (skipped corpora have none)."""

    kind = BENCHMARK

    def __init__(self, path: Path):
        self.path = Path(path)
        self.plan = BenchmarkPlan.read(self.path)

    @property
    def started(self) -> list[Path]:
        """None: a benchmark's own folder holds no manifest (its corpora's folders do: `corpus`)."""
        return []

    def manifests(self) -> list[Manifest]:
        """None: a benchmark's own folder holds no split (its corpora's folders do: `corpus`)."""
        return []

    def corpus(self, entry: dict) -> "SplitFolder | DesignFolder | None":
        """The corpus's folder opened as its kind (None: skipped, or not run yet)."""
        found = open_folder(self.path / entry["folder"])
        return found if isinstance(found, (SplitFolder, DesignFolder)) else None

    @cached_property
    def run_folders(self) -> list[RunFolder]:
        """Every corpus's folders that hold a split, corpus by corpus in the plan's order."""
        corpora = [self.corpus(entry) for entry in self.plan.corpora]
        return [folder for corpus in corpora if corpus is not None for folder in corpus.run_folders]


def open_folder(path: Path) -> SplitFolder | DesignFolder | BenchmarkFolder | None:
    """The folder as its kind: a benchmark plan makes a benchmark, a design a partition design, a manifest a single
    split; None when it holds none of them (not a run folder, or not started)."""
    path = Path(path)
    if (path / BENCHMARK_PLAN).is_file():
        return BenchmarkFolder(path)
    if (path / DESIGN).is_file():
        return DesignFolder(path)
    if (path / MANIFEST).is_file():
        return SplitFolder(path)
    return None


Opened = SplitFolder | DesignFolder | BenchmarkFolder  # what open_folder returns for a run folder


def as_opened(folder: Path | Opened) -> Opened | None:
    """A folder already opened as it is; a path opened now (open_folder)."""
    return folder if isinstance(folder, (SplitFolder, DesignFolder, BenchmarkFolder)) else open_folder(Path(folder))


def scores_table(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """(the long scores table of a single split or a partition design, the records left out and why); empty for a
    benchmark's own folder or a folder that is not a run folder."""
    opened = open_folder(path)
    if opened is None or isinstance(opened, BenchmarkFolder):
        return pd.DataFrame(columns=list(SCORE_COLUMNS)), []
    return opened.scores()
