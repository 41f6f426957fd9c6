"""A partition design's report as one object: what its pages, figures and curves are drawn from, read once.

`write_recipe_reports` (partition_reports.py; `DesignReport.write_tables`) computes the statistics and writes the
design's tables; `DesignReport.read` then reads each of them once (design.json, scores.csv, recipe_variants.csv,
verdicts.csv, the first partition's manifest) with the precision they are written in, so a page drawn right after a
run and one re-drawn later from the folder are the same page. The learning curves and labels saved are read the same
way (learning_curve.csv and labels_saved.csv, written with the other tables), and the pooled reliability points open
every partition's predictions once. English and Chinese pages then render from it
(partition_page.py), each file written once. report/build.py chooses between the kinds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd

from comparisons.report.scores import read_scores
from comparisons.report.verdicts_file import read_verdicts
from comparisons.run_folder.open_folder import DesignFolder
from comparisons.run_folder.records import Design
from comparisons.report.measured_on import folder_manifest
from comparisons.report.partition_curves import has_sizes, read_curve_tables
from comparisons.report.partition_figures import pooled_predictions
from comparisons.report.partition_reports import write_recipe_reports
from comparisons.report.names import LEARNING_CURVE_CSV, RECIPE_VARIANTS_CSV, SCORES_CSV, VERDICTS_CSV


@dataclass(frozen=True, eq=False)  # tables inside: compared by identity
class DesignReport:
    folder: Path
    design: Design                   # design.json as the reports left it (contrasts, variance, numerics_runs)
    variants: pd.DataFrame           # recipe_variants.csv
    pairs: pd.DataFrame              # verdicts.csv as written
    verdicts: pd.DataFrame | None    # verdicts.csv read as today's schema (the decision's reading of older folders)
    scores: pd.DataFrame | None      # scores.csv, one row per run (the figures, the calibration table)
    long: pd.DataFrame | None        # scores.csv, one row per run and metric, sizes as text (the curves)
    manifest: dict = field(default_factory=dict)  # the first partition's manifest (where the costs were measured)

    @classmethod
    def write_tables(cls, opened: DesignFolder, languages) -> bool:
        """Its statistics computed once and its tables written, English and Chinese whatever `languages` asks
        (partition_reports.write_recipe_reports); False without runs."""
        return write_recipe_reports(opened.path) is not None

    @classmethod
    def read(cls, folder: "Path | DesignFolder") -> "DesignReport":
        folder = Path(getattr(folder, "path", folder))  # the opened design, or its path
        scores_file = folder / SCORES_CSV
        return cls(folder, Design.read(folder), pd.read_csv(folder / RECIPE_VARIANTS_CSV),
                   pd.read_csv(folder / VERDICTS_CSV), read_verdicts(folder), read_scores(folder),
                   pd.read_csv(scores_file, dtype={"train_size": str}) if scores_file.exists() else None,
                   folder_manifest(folder))

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
    def has_sizes(self) -> bool:
        return has_sizes(self.scores)

    @cached_property
    def curves(self) -> tuple[pd.DataFrame, pd.DataFrame] | None:
        """(the curve, labels saved) as learning_curve.csv and labels_saved.csv hold them (written with the other
        tables by partition_reports.write_recipe_reports); None with one size. Reading computes nothing."""

        return read_curve_tables(self.folder) if self.has_sizes else None

    @cached_property
    def pooled(self) -> tuple[dict[str, list], int | None]:
        """Per variant, (labels, probabilities) of its finished runs on every partition (the reliability diagram)."""

        return pooled_predictions(self.folder)
