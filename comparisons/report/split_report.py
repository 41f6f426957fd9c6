"""A single split's report as one object: what its pages are drawn from, read once for every language.

report/split_tables.py computes the aggregate and the verdicts and makes the tables in memory (`SplitReport.make`,
through report/folder_reports.py; report/files.py); `SplitReport.read` then reads the language-neutral ones once
(aggregate.csv, verdicts.csv, summary.csv, pretrained_vs_scratch.csv) with the precision they are written in, from
those files or, for a report read later, from the folder, and the decision is made once from them, so a page drawn
right after a run and one re-drawn later from the folder (`python -m comparisons.report.page`) are the same page.
The tables written per language (summary_table, the sizes' tables, serving_table) are each read by the page of
their language, after `write`. The partition design's report is report/design_report.py; report/run_report.py
chooses between the two.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from comparisons.report.decision_section import tables_decision
from comparisons.report.files import ReportFiles
from comparisons.report.folder_reports import write_split_tables
from comparisons.report.split_tables import build_reports
from comparisons.report.verdicts_file import read_verdicts
from comparisons.run_folder import RunFolder
from comparisons.run_folder.records import Manifest
from comparisons.report.names import AGGREGATE_CSV, PRETRAINED_VS_SCRATCH_CSV, SERVING_TABLE_CSV, SUMMARY_CSV


def _numbers(path: Path, files: ReportFiles) -> pd.DataFrame | None:
    return files.read_csv(path) if files.exists(path) else None


def no_finished_runs(out: Path) -> str:
    """Why a folder without finished runs has no report to draw, and what to do."""
    return f"{out} holds no finished runs; run `python -m comparisons run --out {out}` first"


@dataclass(frozen=True, eq=False)  # tables inside: compared by identity
class SplitReport:
    folder: RunFolder
    aggregate: pd.DataFrame | None   # aggregate.csv: per variant, the largest training size
    verdicts: pd.DataFrame | None    # verdicts.csv read as today's schema
    summary: pd.DataFrame | None     # summary.csv: one row per run
    pretrained: pd.DataFrame | None  # pretrained_vs_scratch.csv: a sweep's question at each size
    files: ReportFiles = field(default_factory=ReportFiles)  # what `write` writes (report/files.py)
    _decisions: dict = field(default_factory=dict, repr=False)  # the decision at each price, made once

    @classmethod
    def make(cls, folder: "Path | RunFolder", languages, files: ReportFiles) -> bool:
        """Its statistics computed once and its tables and figures made in `files` in each language; False without
        runs."""
        return write_split_tables(folder, languages, files)

    @classmethod
    def read(cls, folder: "Path | RunFolder", files: ReportFiles | None = None) -> "SplitReport":
        """Its tables as `files` hold them (a build's), else as the folder does."""
        folder, files = RunFolder.of(folder), files or ReportFiles()
        out = folder.path
        return cls(folder, _numbers(out / AGGREGATE_CSV, files), read_verdicts(out, files),
                   _numbers(out / SUMMARY_CSV, files), _numbers(out / PRETRAINED_VS_SCRATCH_CSV, files), files)

    @classmethod
    def verdict_pairs(cls, folder: "Path | RunFolder") -> pd.DataFrame | None:
        """Its verdict rows computed now from its runs (split_tables.build_reports), nothing written or read back:
        what a rerun's verdicts are compared with (comparisons/reproduce.py); None without finished runs."""
        verdicts = build_reports(folder).verdicts
        return None if verdicts is None else verdicts.pairs

    @classmethod
    def unwritten(cls, folder: RunFolder) -> str | None:
        """Why its page cannot be drawn from the folder yet (None: it can)."""
        return None if folder.records else no_finished_runs(folder.path)

    @property
    def path(self) -> Path:
        return self.folder.path

    @property
    def variants(self) -> pd.DataFrame | None:
        """One row per variant (aggregate.csv: the largest training size): the same name as a design's."""
        return self.aggregate

    @property
    def manifest(self) -> Manifest:
        """manifest.json as recorded (empty for a folder written before plans were recorded)."""
        return self.folder.plan or Manifest.from_dict({})

    @property
    def shape(self) -> str:
        return "single split"

    @property
    def rebuilt_line(self) -> str:
        """What `report --out` says when it has rebuilt it."""
        return f"reports rebuilt in {self.path}"

    def decision(self, price: float):
        """The decision from the report's tables (decision_section.tables_decision), made once a price for every
        language."""
        if price not in self._decisions:
            self._decisions[price] = tables_decision(self.aggregate, False, self.verdicts, self.manifest,
                                                     self.path / SERVING_TABLE_CSV, price)
        return self._decisions[price]

    def write(self) -> list[Path]:
        """The files its build made, each written once (nothing for a report read from its folder)."""
        return self.files.write()
