"""One scores table for every design: one row per (corpus, partition or split, seed, training size, serving
path, variant, metric) with its value (framework-free; reads only run folders).

Which runs: a run folder's runs of its plan that are comparable with it (comparisons.run_folder.select_runs
against its manifest: the plan's variants, seeds and training sizes, the same code, budget, data, split and
library versions). A partition folder of a design is read the same way, against its own manifest, so a
design folder reused with other seeds, variants or another profile never mixes the old runs into the new
verdicts: they are named in `left_out` instead.

Each run's probability calibration (Brier score, ECE) joins its rows as two more metrics: as its record holds
them, or for an older record from its stored predictions (comparisons/run_folder/record_calibration.py). `wide_runs` turns the table back into one
row per run (the frame the pair tests take).
"""
from __future__ import annotations

import json

import pandas as pd

from common.metric_names import QUALITY, SCORE_COSTS
from common.metric_names import CALIBRATION
from comparisons.run_folder.record_calibration import run_calibration
from comparisons.run_folder.folder import RunFolder
from comparisons.run_folder.names import SPLITS
from common.splits import size_label

COSTS = SCORE_COSTS
KEYS = ("corpus", "design", "partition", "seed", "train_size", "serving_path", "variant")
SCORE_COLUMNS = (*KEYS, "n_train", "n_test", "metric", "value")



def labelled_texts(record, split: dict) -> int:
    """The labelled texts a run learnt from (training and validation: the correction's n_train): as the run
    recorded them, else (an older run) the training size or the split's training and validation parts."""
    if record.get("n_train_texts") is not None:
        return int(record.get("n_train_texts")) + int(record.get("n_valid_texts") or 0)
    return record.train_size if record.train_size is not None else len(split["train"]) + len(split["valid"])

def folder_rows(folder: RunFolder, partition: str, design: str) -> tuple[list[dict], list[str]]:
    """(long rows of the folder's comparable finished runs, 'partition/run (why)' of each record left out)."""
    records, left_out = folder.selected()
    plan = folder.plan.fields if folder.plan else {}
    classes = len((plan.get("data") or {}).get("class_names") or [0, 1])
    spec = (plan.get("data") or {}).get("spec") or {}
    corpus = spec.get("path") or spec.get("source")
    split = json.loads((folder.path / SPLITS).read_text())
    rows = []
    for record in records:
        if not record.ok:
            continue
        values = {m: record.get(m) for m in QUALITY + COSTS}
        values.update(run_calibration(folder, record, (plan.get("data") or {}).get("positive_index")))
        if classes > 2:  # no threshold is chosen with more than two classes: the decision is the arg-max
            values.update(macro_f1_at_threshold=record.get("macro_f1"), accuracy_at_threshold=record.get("accuracy"))
        n_train = labelled_texts(record, split)
        base = {"corpus": str(corpus or ""), "design": design, "partition": partition, "seed": record.seed,
                "train_size": size_label(record.train_size), "serving_path": "native", "variant": record.variant,
                "n_train": int(n_train), "n_test": len(split["test"])}
        rows += [{**base, "metric": metric, "value": value} for metric, value in values.items()
                 if value is not None and not (isinstance(value, float) and value != value)]  # NaN: not measured
    return rows, [f"{partition}/{reason}" for reason in left_out]


def scores_of(folders: list[RunFolder], design: str) -> tuple[pd.DataFrame, list[str]]:
    """(the long scores table of these run folders, the records left out and why): a single split's one folder
    (partition "split") or a design's partitions (each named after its folder)."""
    rows, left_out = [], []
    for folder in folders:
        found, dropped = folder_rows(folder, "split" if design == "split" else folder.path.name, design)
        rows += found
        left_out += dropped
    return pd.DataFrame(rows, columns=list(SCORE_COLUMNS)), left_out


def split_scores(folder: RunFolder) -> pd.DataFrame:
    """The long scores table of a single split's folder already open (its records and predictions read once)."""
    return scores_of([folder], "split")[0]


def wide_runs(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per run (partition, variant, seed, train_size, n_train, n_test, one column per metric)."""
    keys = [*KEYS, "n_train", "n_test"]
    if scores.empty:
        return pd.DataFrame(columns=[*keys, *QUALITY, *COSTS, *CALIBRATION])
    wide = scores.pivot_table(index=keys, columns="metric", values="value", aggfunc="first", sort=False).reset_index()
    wide.columns.name = None
    for metric in (*QUALITY, *COSTS, *CALIBRATION):
        if metric not in wide:
            wide[metric] = float("nan")
    return wide
