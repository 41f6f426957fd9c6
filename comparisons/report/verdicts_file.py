"""Reading a folder's verdicts.csv (the columns of comparisons/stats/family.VERDICT_COLUMNS), older folders'
words and columns read as today's, and the rows of a sweep's largest training size."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from common.splits import size_key
from comparisons.report.files import ON_DISK, ReportFiles
from comparisons.report.names import VERDICTS_CSV


def read_verdicts(out: Path, files: ReportFiles = ON_DISK) -> pd.DataFrame | None:
    """verdicts.csv read as today's schema: as `files` hold it (a report's build: report/files.py), else on disk."""
    path = Path(out) / VERDICTS_CSV  # the English file: its values are the stable keys
    if not files.exists(path):
        return None
    verdicts = files.read_csv(path, keep_default_na=False, na_values=[""])
    # a folder reported before the four-way verdicts: its words and columns, read as today's
    for column in ("margin", "p_equivalence_holm", "decisions_p_holm"):
        if column not in verdicts:
            verdicts[column] = verdicts.get("mcnemar_p_holm") if column == "decisions_p_holm" else float("nan")
    for column in ("verdict", "verdict_decisions"):
        if column in verdicts:
            verdicts[column] = verdicts[column].replace({"no detectable difference": "inconclusive"})
    return verdicts

def largest_group(verdicts: pd.DataFrame) -> pd.DataFrame:
    if "train_size" not in verdicts.columns or verdicts.empty:
        return verdicts
    keys = verdicts["train_size"].map(size_key)
    return verdicts[keys == keys.max()]
