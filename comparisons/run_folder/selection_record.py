"""A selection's record, selection.json (written by comparisons/select.py): its plan, every fold's test AP of each
candidate and who ran, the decision as it stands, and the serving caps' figures and shipped model where they exist;
typed and read-only like the plan files (records.py)."""
from __future__ import annotations

import numpy as np

from comparisons.run_folder.names import SELECTION
from comparisons.run_folder.json_record import JsonRecord


class SelectionRecord(JsonRecord):
    """selection.json: the selection's plan (stats/recipe_selection.SelectionPlan's dict), every fold's test AP of
    each candidate (None where it sat out) and who ran in it, the decision as it stands, and, where they exist, the
    serving caps' figures and the shipped model's training record."""

    FILE = SELECTION

    @property
    def plan(self) -> dict:
        return dict(self.fields["plan"])

    @property
    def candidates(self) -> list[str]:
        return list(self.fields["plan"]["candidates"])

    @property
    def run_costs(self) -> list[float]:
        """Predicted CPU minutes of one run of each candidate, in the candidates' order."""
        return [float(c) for c in self.fields["plan"]["run_costs"]]

    @property
    def budget(self) -> float:
        """CPU minutes, in predicted run costs."""
        return float(self.fields["plan"]["budget"])

    @property
    def ratio(self) -> float:
        """The design's correction ratio r."""
        return float(self.fields["plan"]["ratio"])

    @property
    def most(self) -> int:
        """The most folds the selection may run."""
        return int(self.fields["plan"]["most"])

    @property
    def delta(self) -> float:
        return float(self.fields["plan"]["delta"])

    @property
    def confidence(self) -> float:
        return 1 - float(self.fields["plan"]["alpha"])

    @property
    def scores(self):
        """numpy (folds x candidates): each fold's test AP, NaN where the candidate sat out."""
        return np.array([[np.nan if v is None else v for v in row] for row in self.fields["scores"]], dtype=float)

    def scores_of(self, candidate: str):
        """The candidate's test AP on every fold it ran in."""
        column = self.scores[:, self.candidates.index(candidate)]
        return column[column == column]

    @property
    def folds(self) -> list[dict]:
        """Each fold: its partition's name, the candidates that ran in it, their measured minutes."""
        return [dict(fold) for fold in self.fields["folds"]]

    @property
    def decision(self) -> dict:
        return dict(self.fields["decision"])

    @property
    def outcome(self) -> str:
        return self.fields["decision"]["outcome"]

    @property
    def pick(self) -> str | None:
        return self.fields["decision"]["pick"]

    @property
    def claimable(self) -> list[str]:
        return list(self.fields["decision"]["claimable"])

    @property
    def behind_best(self) -> dict[str, float]:
        return dict(self.fields["decision"]["behind_best"])

    @property
    def wall_minutes(self) -> float:
        return float(self.fields["decision"]["wall_minutes"])

    @property
    def serving(self) -> dict | None:
        """The serving caps, each candidate's measured figures and why any was excluded (None: no caps given)."""
        return self.fields.get("serving")

    @property
    def deployment(self) -> dict | None:
        """The shipped model's training record (its "failed" reason when training failed; None: not shipped)."""
        return self.fields.get("deployment")

    def with_deployment(self, trained: dict) -> "SelectionRecord":
        return SelectionRecord({**self.fields, "deployment": trained})
