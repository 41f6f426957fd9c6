"""A power plan's record (power_plan.json in a pilot's folder, written by comparisons/studies/power_plan.py --gap;
a design run with --power-plan keeps a copy in its design.json): typed and read-only like the plan files."""
from __future__ import annotations

from comparisons.run_folder.json_record import JsonRecord
from comparisons.run_folder.names import POWER_PLAN


class PowerPlan(JsonRecord):
    """power_plan.json (comparisons/studies/power_sizes.gap_plan): the design a power plan proposes for a gap, the
    chains it drops as unreachable and what it expects each size's test to decide; design.json keeps a copy."""

    FILE = POWER_PLAN

    @property
    def pilot(self) -> str:
        return self.fields["pilot"]

    @property
    def gap(self) -> float:
        return float(self.fields["gap"])

    @property
    def family(self) -> str:
        return str(self.fields["family"])

    @property
    def target(self) -> float:
        """The power each contrast is planned for."""
        return float(self.fields["target"])

    @property
    def budget_minutes(self) -> float | None:
        return self.fields.get("budget_minutes")

    @property
    def proposal(self) -> dict:
        """{folds, repeats, draws, bound, met}."""
        return dict(self.fields["proposal"])

    @property
    def folds(self) -> int:
        return int(self.fields["proposal"]["folds"])

    @property
    def draws(self) -> int:
        return int(self.fields["proposal"]["draws"])

    @property
    def bound(self) -> str:
        """optimistic | pessimistic: the variance bound the proposal meets its target under."""
        return self.fields["proposal"]["bound"]

    @property
    def met(self) -> bool:
        return bool(self.fields["proposal"]["met"])

    @property
    def expected(self) -> list[dict]:
        """One row per size and contrast: the pilot's difference and the chances of power and of a decision."""
        return [dict(row) for row in self.fields["expected"]]

    @property
    def dropped_chains(self) -> list[dict]:
        """The chains dropped before the runs as unreachable: {contrast, kind, why}."""
        return [dict(chain) for chain in self.fields.get("dropped_chains") or []]

    @property
    def projected_run_minutes(self) -> float:
        """Run-minutes of the pilot's sizes alone at the pilot's per-run times."""
        return float(self.fields["projected_run_minutes_pilot_sizes"])
