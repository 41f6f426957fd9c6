"""One run folder opened once (`RunFolder`), its run records (`RunRecord`) and their predictions.

`RunRecord`: one run's record: its identity typed (variant, seed, train size, status, threads as a count) and every
measured field by key, as the worker wrote it. `RunFolder` hands its manifest (records.Manifest), records, the runs
comparable with the plan (selected once) and each run's predictions (each file opened once) to every report.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from common.splits import as_train_size, Split, TrainSize
from comparisons.comparability import why_left_out
from comparisons.run_folder.names import RUNS, SPLITS, prediction_path, run_name
from comparisons.run_folder.json_record import JsonRecord
from comparisons.run_folder.records import Manifest
from common.errors import UserInputError


class RunRecord(JsonRecord):
    """One run's record (runs/NAME.json), read-only like the plan files' records: the identity typed (variant, seed,
    training size, status); every other field read by key (`record["macro_f1"]`, `record.get("cold_start_s")`) as
    the worker or the executor wrote it."""

    @classmethod
    def from_dict(cls, fields: Mapping) -> "RunRecord":
        int(fields["seed"]), fields["variant"]  # noqa: B018 - a record without its identity fails when read
        return cls({**fields, "train_size": as_train_size(fields.get("train_size"))})  # one spelling from here on

    @property
    def variant(self) -> str:
        return self.fields["variant"]

    @property
    def seed(self) -> int:
        return int(self.fields["seed"])

    @property
    def train_size(self) -> TrainSize:
        return self.fields["train_size"]

    @property
    def status(self) -> str:
        return str(self.fields.get("status"))

    @property
    def name(self) -> str:
        return run_name(self.variant, self.seed, self.train_size)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def threads(self) -> int | None:
        """The thread count (records keep the settings in force as a dict, failed rows a count)."""
        value = self.fields.get("threads")
        return value.get("threads") if isinstance(value, dict) else value


def select_runs(records: list[RunRecord], manifest: dict) -> tuple[list[RunRecord], list[str]]:
    """(records of the plan that are comparable with it, one 'name (why)' per record left out)."""
    kept, left_out = [], []
    for record in records:
        reason = why_left_out(record, manifest)
        if reason is None:
            kept.append(record)
        else:
            left_out.append(f"{run_name(record['variant'], record['seed'], as_train_size(record.get('train_size')))} ({reason})")
    return kept, left_out


def read_runs(out: Path) -> list[RunRecord]:
    """Every run record in a run folder, in a stable order."""
    return [RunRecord.from_dict(json.loads(p.read_text())) for p in sorted((Path(out) / RUNS).glob("*.json"))]


@dataclass(frozen=True)
class Predictions:
    """A run's test predictions as saved: the test ids, their labels (older folders: None) and (n, classes) probabilities."""

    test_ids: np.ndarray
    labels: np.ndarray | None
    proba: np.ndarray


class RunFolder:
    """One run folder, opened once: its plan, its records, the runs comparable with the plan and
    each run's predictions, for every report that reads it."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.plan = Manifest.read(self.path)
        self._selected: tuple[list[RunRecord], list[str]] | None = None
        self._predictions: dict[str, Predictions] = {}

    @cached_property
    def records(self) -> list[RunRecord]:
        """Every run record, read the first time it is asked for."""
        return read_runs(self.path)

    @classmethod
    def of(cls, folder: "Path | RunFolder") -> "RunFolder":
        """The folder itself when already open, else opened now."""
        return folder if isinstance(folder, RunFolder) else cls(folder)

    def selected(self) -> tuple[list[RunRecord], list[str]]:
        """(the plan's runs comparable with it, one 'name (why)' per record left out), computed once."""
        if self._selected is None:
            self._selected = select_runs(self.records, self.plan.fields) if self.plan else (list(self.records), [])
        return self._selected

    def split(self):
        return Split.from_dict(json.loads((self.path / SPLITS).read_text()))

    def has_predictions(self, record: Mapping) -> bool:
        return prediction_path(self.path, record["variant"], record["seed"], as_train_size(record.get("train_size"))).exists()

    def predictions(self, record: Mapping) -> Predictions:
        """The run's saved predictions; the file is opened the first time only. A missing file raises
        UserInputError with what to do."""
        size = as_train_size(record.get("train_size"))
        name = run_name(record["variant"], int(record["seed"]), size)
        if name not in self._predictions:
            path = prediction_path(self.path, record["variant"], int(record["seed"]), size)
            if not path.exists():
                raise UserInputError(f"{path} is missing: run the same `python -m comparisons run` again to recreate it")
            with np.load(path) as saved:
                labels = np.asarray(saved["labels"]) if "labels" in saved.files else None
                self._predictions[name] = Predictions(np.asarray(saved["test"]), labels,
                                                      np.asarray(saved["proba"], dtype=float))
        return self._predictions[name]
