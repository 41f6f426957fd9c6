"""The texts every run of a partition design learnt from, read from each partition's splits.json: what the
variance estimate reads the resamples' overlaps and draws from (comparisons/stats/design_variance.py).

A run at the whole labelled part learnt from its partition's training and validation parts; at a training size,
from the subset splits.json records for that size (training and validation indices together, the texts it saw:
the same count as the scores table's n_train); at a drawn size, from its own draw's subset.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from common.splits import as_train_size, size_label
from comparisons.run_folder.names import PARTITIONS
from comparisons.run_folder.records import SplitsRecord


def training_sets(out: Path, runs: pd.DataFrame) -> dict:
    """{(size label, partition, seed): sorted data indices} for every (partition, seed, train_size) of `runs`
    (the wide runs of comparisons/run_folder/scores.wide_runs); a partition without splits.json is left out."""
    records: dict = {}
    sets: dict = {}
    for partition, seed, size in runs[["partition", "seed", "train_size"]].drop_duplicates().itertuples(index=False):
        if partition not in records:
            found = SplitsRecord.read(Path(out) / PARTITIONS / partition)
            records[partition] = found.to_dict() if found else None
        record = records[partition]
        if record is None:
            continue
        indices = learnt_from(record, as_train_size(size), int(seed))
        if indices is not None:
            sets[(size_label(size), partition, int(seed))] = indices
    return sets


def learnt_from(record: dict, size: int | None, seed: int) -> np.ndarray | None:
    """The data indices a run at `size` with model seed `seed` learnt from, per its folder's splits.json."""
    if size is None:
        return np.sort(np.asarray(record["train"] + record["valid"], dtype=np.int64))
    subsets = record.get("train_subsets") or {}
    drawn = (subsets.get("draws") or {}).get(str(size), {}).get(str(seed))
    if drawn is not None:
        return np.sort(np.asarray(drawn["train"] + drawn["valid"], dtype=np.int64))
    train = (subsets.get("sizes") or {}).get(str(size))
    if train is None:
        return None
    return np.sort(np.asarray(train + (subsets.get("valid") or {}).get(str(size), []), dtype=np.int64))
