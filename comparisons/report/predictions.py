"""The frame the single split's bootstrap (comparisons/stats/bootstrap.compare) takes, read from a run folder's
predictions/*.npz and its run records' thresholds."""
from __future__ import annotations

import numpy as np
import pandas as pd

from common.errors import UserInputError
from comparisons.run_folder import RunFolder, run_name


def load_predictions(out, records: list[dict], test_ids: np.ndarray) -> pd.DataFrame:
    """The frame `compare` takes, from predictions/*.npz and the run records' thresholds.

    Each file's `test` ids must be the split's test indices in the same order.
    """
    folder = RunFolder.of(out)
    rows = []
    for record in records:
        saved = folder.predictions(record)
        if not np.array_equal(saved.test_ids, test_ids):
            name = run_name(record["variant"], int(record["seed"]), record.get("train_size"))
            raise UserInputError(f"{folder.path}/predictions/{name}.npz holds predictions for other test items than "
                                 "this folder's splits.json: rerun that run with --force")
        rows.append({"variant": record["variant"], "seed": int(record["seed"]),
                     "threshold": record.get("threshold"), "proba": saved.proba})
    return pd.DataFrame(rows, columns=["variant", "seed", "threshold", "proba"])
