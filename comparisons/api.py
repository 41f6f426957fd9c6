"""The Python API (issue 39; docs/api.md): build a plan, run it here or on Ray, get DataFrames back.

    from comparisons import api
    plan = api.Plan(backends=("tfidf_logreg", "torch_scratch"), cv=5, contrasts="torch_scratch-tfidf_logreg")
    result = api.run(plan)            # the runs, the tables and the pages, exactly as `transformer-compare run`
    result.verdicts                   # one row per (training size, metric, pair): comparisons/report/verdict_rules
    result.scores                     # the long table: one row per run and metric
    result.variants                   # per variant: mean, spread and interval of each metric, median costs
    again = api.load("runs/fast")     # an existing run folder or design, its tables rebuilt

`run` is the command line's own path (comparisons.cli), in this process, with its checks: a plan the data
refuses (a training size larger than a partition, say) raises ValueError with the command line's one-line
message, and nothing is written. The run folder stays the store (resume, reports, pages), as on the command line.
"""
from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from comparisons.plan import Plan

__all__ = ["Plan", "Result", "load", "report", "run"]


@dataclass(frozen=True)
class Result:
    """A run folder (a single split or a partition design) and its tables as DataFrames."""

    folder: Path
    exit_code: int = 0  # the command line's: 0 every run finished, 1 some failed (their rows say why)

    @property
    def is_design(self) -> bool:
        return (self.folder / "design.json").exists()

    @property
    def plan(self) -> Plan | None:
        """The typed plan the folder was run with (None for a folder written before plans were recorded)."""
        source = self.folder / ("design.json" if self.is_design else "manifest.json")
        recorded = json.loads(source.read_text()).get("plan") if source.exists() else None
        return Plan.from_dict(recorded) if recorded else None

    @property
    def scores(self) -> pd.DataFrame:
        """One row per run and metric (comparisons/report/scores.py)."""
        from comparisons.report.scores import scores_table

        return scores_table(self.folder)[0]

    @property
    def verdicts(self) -> pd.DataFrame:
        """The verdict rows of the folder's design, in the one schema (VERDICT_COLUMNS)."""
        if self.is_design:
            return pd.read_csv(self.folder / "verdicts.csv")
        from comparisons.report.tables import build_reports

        reports = build_reports(self.folder)
        return reports.verdicts.pairs if reports.verdicts is not None else pd.DataFrame()

    @property
    def variants(self) -> pd.DataFrame:
        """Per variant: each metric's mean, spread and interval (over partitions, or over seeds and test items)."""
        if self.is_design:
            return pd.read_csv(self.folder / "recipe_variants.csv")
        from comparisons.report.tables import build_reports

        return build_reports(self.folder).aggregate

    @property
    def summary(self) -> pd.DataFrame:
        """A single split's one row per run (status, metrics, costs); a design's scores per run, wide."""
        if self.is_design:
            from comparisons.report.scores import wide_runs

            return wide_runs(self.scores)
        from comparisons.report.tables import build_reports

        return build_reports(self.folder).summary


def _cli(argv: list[str], quiet: bool) -> int:
    """The command line's dispatch (comparisons.cli) in this process; its one-line refusals as ValueError."""
    from common.errors import UserInputError
    from comparisons.cli import build_parser, dispatch

    args = build_parser().parse_args(argv)
    args.argv = list(argv)
    try:
        with contextlib.redirect_stderr(io.TextIOWrapper(io.BytesIO(), encoding="utf-8")) if quiet \
                else contextlib.nullcontext():
            return dispatch(args)
    except UserInputError as exc:
        raise ValueError(str(exc)) from None


def run(plan: Plan, quiet: bool = False) -> Result:
    """Run a plan (resuming its folder as the command line does) and return its folder's tables."""
    if not isinstance(plan, Plan):
        raise TypeError(f"run needs a comparisons.plan.Plan, not {type(plan).__name__}")
    code = _cli(plan.to_argv(), quiet)
    return Result(plan.folder, code)


def report(folder, lang: str = "en", quiet: bool = False) -> Result:
    """Rebuild an existing folder's tables, verdicts and pages (`report --out FOLDER`) and return them."""
    _cli(["report", "--out", str(folder), "--lang", lang], quiet)
    return Result(Path(folder))


def load(folder) -> Result:
    """An existing run folder or design, as it is on disk (nothing rebuilt)."""
    folder = Path(folder)
    if not ((folder / "design.json").exists() or (folder / "manifest.json").exists()):
        raise ValueError(f"{folder} is not a run folder or design (no manifest.json, no design.json)")
    return Result(folder)
