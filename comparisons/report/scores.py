"""A reported folder's scores.csv read back (the long scores table itself: comparisons/run_folder/scores.py)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from comparisons.run_folder.scores import wide_runs
from comparisons.report.files import ON_DISK, ReportFiles
from comparisons.report.names import SCORES_CSV


def read_scores(out: Path, files: ReportFiles = ON_DISK) -> pd.DataFrame | None:
    """A folder's scores.csv as one row per run (wide_runs of the long table), as `files` hold it (a report's build:
    report/files.py), else on disk; None when it has none."""
    path = Path(out) / SCORES_CSV
    if not files.exists(path):
        return None
    found = files.read_csv(path, keep_default_na=False, na_values=[""])
    return wide_runs(found) if "metric" in found else found  # a folder reported before the long table
