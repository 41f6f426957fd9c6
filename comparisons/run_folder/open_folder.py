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

from common.errors import UserInputError
from comparisons.run_folder.folder import RunFolder
from comparisons.run_folder.names import BENCHMARK_PLAN, DESIGN, MANIFEST, PARTITION_GLOB, PARTITIONS, SPLITS
from comparisons.run_folder.records import BenchmarkPlan, Design, Manifest
from comparisons.run_folder.scores import SCORE_COLUMNS, scores_of
from comparisons.run_folder.writers import write_design
from comparisons.stats.contrasts import parse_contrasts

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

    def record_report_choices(self, contrasts: str | None = None, variance: str | None = None) -> None:
        """What `report --contrasts/--variance` may choose for it: nothing (its pairs are every pair, by the two-level
        bootstrap); UserInputError (one line) for a variance, or when no run finished."""
        if variance:
            raise UserInputError(f"--variance applies to a partition design (a folder with design.json); {self.path} "
                                 "is a single split, whose pairs use the two-level bootstrap; report it without --variance")
        if not self.records:
            raise UserInputError(f"{self.path} holds no finished runs; run `python -m comparisons run --out {self.path}` "
                                 "first")


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

    def record_report_choices(self, contrasts: str | None = None, variance: str | None = None) -> None:
        """Record in design.json what `report` chose after the runs (declared contrasts, the variance estimate:
        Design.with_report_choices), so the report reads them from its plan; UserInputError (one line, nothing
        written) for contrasts its plan declared before the runs or its looks decided on, or when no run finished."""
        design = self.design
        declared = parse_contrasts(contrasts, design.variants)
        if declared and design.contrasts and design.contrasts_declared == "before the runs":
            raise UserInputError(f"{self.path}'s plan declared its contrasts before the runs; report without --contrasts "
                                 "(contrasts chosen after seeing the results would not be a declared family)")
        if declared and design.is_sequential:  # its stopping decisions were made on the family declared before
            raise UserInputError(f"{self.path} is a sequential design: its looks decided on the contrasts declared "
                                 "before its runs; report it without --contrasts")
        if not any(self.path.glob("partitions/r*f*/runs/*.json")):
            raise UserInputError(f"{self.path} holds no finished runs; run `python -m comparisons run --cv K --out "
                                 f"{self.path}` first")
        chosen = design.with_report_choices(declared, variance)  # recorded before the report reads it
        if chosen.to_dict() != design.to_dict():
            write_design(self.path, chosen)
            self.design = chosen


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

    def record_report_choices(self, contrasts: str | None = None, variance: str | None = None) -> None:
        """Nothing to record: contrasts and a variance estimate are each corpus's (report --out DIR/CORPUS)."""

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
