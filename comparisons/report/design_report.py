"""A partition design's report as one object: what its pages, figures and curves are drawn from, read once.

`write_recipe_reports` (partition_reports.py; `DesignReport.make`) computes the statistics and makes the design's
tables in the report's files (report/files.py: in memory in a build); `DesignReport.read` then reads each of them once (design.json, scores.csv,
recipe_variants.csv, verdicts.csv, the first partition's manifest) with the precision they are written in, from
those files or, for a report read later, from the folder, so a page drawn right after a run and one re-drawn later
from the folder are the same page. The learning curves and labels saved are read the same
way (learning_curve.csv and labels_saved.csv, written with the other tables), and the pooled reliability points open
every partition's predictions once. English and Chinese pages then render from it
(partition_page.py), each file written once. report/build.py chooses between the kinds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd

from comparisons.report.decision_section import tables_decision
from comparisons.report.files import ReportFiles
from comparisons.report.scores import read_scores
from comparisons.report.verdicts_file import read_verdicts
from comparisons.run_folder.open_folder import DesignFolder
from comparisons.run_folder.records import Design, Manifest
from comparisons.report.measured_on import folder_manifest
from comparisons.report.partition_curves import has_sizes, read_curve_tables
from comparisons.report.partition_figures import pooled_predictions
from comparisons.report.partition_reports import recipe_tables, write_recipe_reports
from comparisons.report.names import (LEARNING_CURVE_CSV, RECIPE_VARIANTS_CSV, SCORES_CSV, SERVING_TABLE_CSV,
                                      VERDICTS_CSV, VERDICTS_MD)


@dataclass(frozen=True, eq=False)  # tables inside: compared by identity
class DesignReport:
    folder: Path
    design: Design                   # design.json as the reports left it (contrasts, variance, numerics_runs)
    variants: pd.DataFrame | None    # recipe_variants.csv (None: not reported yet)
    pairs: pd.DataFrame | None       # verdicts.csv as written
    verdicts: pd.DataFrame | None    # verdicts.csv read as today's schema (the decision's reading of older folders)
    scores: pd.DataFrame | None      # scores.csv, one row per run (the figures, the calibration table)
    long: pd.DataFrame | None        # scores.csv, one row per run and metric, sizes as text (the curves)
    # the first partition's manifest (where the costs were measured)
    manifest: Manifest = field(default_factory=lambda: Manifest.from_dict({}))
    files: ReportFiles = field(default_factory=ReportFiles)  # what `write` writes (report/files.py)
    _decisions: dict = field(default_factory=dict, repr=False)  # the decision at each price, made once

    @classmethod
    def make(cls, opened: DesignFolder, languages, files: ReportFiles) -> bool:
        """Its statistics computed once and its tables made in `files`, English and Chinese whatever `languages`
        asks (partition_reports.write_recipe_reports); False without runs."""
        return write_recipe_reports(opened.path, files) is not None

    @classmethod
    def read(cls, folder: "Path | DesignFolder", files: ReportFiles | None = None) -> "DesignReport":
        """Its tables as `files` hold them (a build's), else as the folder does."""
        folder = Path(getattr(folder, "path", folder))  # the opened design, or its path
        files = files or ReportFiles()

        def table(name, **options):  # a table the report made, or the folder holds (None: neither)
            return files.read_csv(folder / name, **options) if files.exists(folder / name) else None

        return cls(folder, Design.read(folder), table(RECIPE_VARIANTS_CSV), table(VERDICTS_CSV),
                   read_verdicts(folder, files), read_scores(folder, files), table(SCORES_CSV, dtype={"train_size": str}),
                   folder_manifest(folder), files)

    @classmethod
    def verdict_pairs(cls, opened: "Path | DesignFolder", looks: int | None = None) -> pd.DataFrame | None:
        """Its verdict rows computed now from its runs (partition_reports.recipe_tables), nothing written or read
        back, at full precision: what a rerun's verdicts are compared with (comparisons/reproduce.py) and, with
        `looks`, what a sequential design's runner decides on after that many repeats (comparisons/sequential_run.py);
        None without runs."""
        tables = recipe_tables(Path(getattr(opened, "path", opened)), looks)
        return None if tables is None else tables.pairs

    @classmethod
    def unwritten(cls, opened: DesignFolder) -> str | None:
        """Why its page cannot be drawn from the folder yet: a table the pages read is missing (None: none is)."""
        out = opened.path
        if opened.design.train_sizes[1:] and not (out / LEARNING_CURVE_CSV).exists():
            return f"{out} holds no learning-curve table yet; run `python -m comparisons report --out {out}`"
        if not (out / VERDICTS_CSV).exists():
            return f"{out} holds no recipe verdicts yet; run `python -m comparisons report --out {out}`"
        return None

    @property
    def path(self) -> Path:
        return self.folder

    @property
    def summary(self) -> pd.DataFrame | None:
        """One row per run (scores.csv, wide): the same name as a single split's summary.csv."""
        return self.scores

    @property
    def shape(self) -> str:
        """The design in words: partitions (R x K-fold)."""
        return f"partitions ({self.design.repeats} x {self.design.folds}-fold)"

    @property
    def rebuilt_line(self) -> str:
        """What `report --out` says when it has rebuilt it."""
        return f"recipe verdicts rebuilt in {self.folder / VERDICTS_MD}"

    def decision(self, price: float):
        """The decision from the report's tables (decision_section.tables_decision: recipe_variants.csv's medians
        over runs, the verdicts' primary rows), made once a price for every language."""
        if price not in self._decisions:
            self._decisions[price] = tables_decision(self.variants, True, self.verdicts, self.manifest,
                                                     self.folder / SERVING_TABLE_CSV, price)
        return self._decisions[price]

    @property
    def has_sizes(self) -> bool:
        return has_sizes(self.scores)

    @cached_property
    def curves(self) -> tuple[pd.DataFrame, pd.DataFrame] | None:
        """(the curve, labels saved) as learning_curve.csv and labels_saved.csv hold them (written with the other
        tables by partition_reports.write_recipe_reports); None with one size. Reading computes nothing."""

        return read_curve_tables(self.folder, self.files) if self.has_sizes else None

    @cached_property
    def pooled(self) -> tuple[dict[str, list], int | None]:
        """Per variant, (labels, probabilities) of its finished runs on every partition (the reliability diagram)."""

        return pooled_predictions(self.folder)

    def write(self) -> list[Path]:
        """The files its build made, each written once (nothing for a report read from its folder)."""
        return self.files.write()
