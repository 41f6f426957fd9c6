"""The Python API (docs/api.md): build a plan, run it here or on Ray, get DataFrames back.

    from comparisons import api
    plan = api.Plan(backends=("tfidf_logreg", "torch_scratch"), cv=5, contrasts="torch_scratch-tfidf_logreg")
    result = api.run(plan)            # the runs, the tables and the pages, exactly as `transformer-compare run`
    result.verdicts                   # one row per (training size, metric, pair): comparisons/stats/family
    result.scores                     # the long table: one row per run and metric
    result.variants                   # per variant: mean, spread and interval of each metric, median costs
    again = api.load("runs/fast")     # an existing run folder or design, as it is on disk
    corpora = api.benchmark(plan, "sms,zh-reviews")   # one folder per corpus and the cross-corpus table
    chosen = api.select("my.csv", budget_minutes=60, labels=200)  # which recipe to deploy, how sure (`select`)
    chosen.pick, chosen.outcome, chosen.behind_best   # the pick (None: cannot say), how far below the best each can be

`run` carries the plan out as the command line does (comparisons/plan.py `execute`: the same prepare, runner,
reports and pages), in this process: a plan the data refuses (a training size larger than a partition, say)
raises ValueError with the command line's one-line message, and nothing is written. The run folder stays the
store (resume, reports, pages), as on the command line.
"""
from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from comparisons.plan import Plan
from comparisons.run_folder.open_folder import open_folder
from comparisons.run_folder.selection_record import SelectionRecord

__all__ = ["Plan", "Result", "Benchmark", "Selection", "benchmark", "load", "report", "run", "select"]


@dataclass(frozen=True)
class Result:
    """A run folder (a single split or a partition design) and its tables as DataFrames, from its report."""

    folder: Path
    exit_code: int = 0  # the command line's: 0 every run finished, 1 some failed (their rows say why)

    @cached_property
    def report(self):
        """The folder's report as its written files hold it (comparisons/report/run_report.py: a SplitReport or a
        DesignReport), read once; nothing is recomputed (`api.report` rebuilds it)."""
        from comparisons.report.run_report import read_run_report

        return read_run_report(self.folder)

    @property
    def plan(self) -> Plan | None:
        """The typed plan the folder was run with (None for a folder written before plans were recorded)."""
        opened = open_folder(self.folder)
        source = opened.plan if opened is not None else None  # design.json or manifest.json, typed
        recorded = source.plan if source else None
        if recorded and recorded.get("power_plan") and recorded.get("cv") is not None:  # resolved when it ran: the
            recorded = {**recorded, "power_plan": None}  # file may have moved or been rewritten since (design.json keeps it)
        return Plan.from_dict(recorded) if recorded else None

    @property
    def scores(self) -> pd.DataFrame:
        """One row per run and metric (comparisons/run_folder/scores.py)."""
        from comparisons.run_folder.open_folder import scores_table

        return scores_table(self.folder)[0]

    def _table(self, name: str) -> pd.DataFrame:
        found = getattr(self.report, name) if self.report is not None else None
        return found if found is not None else pd.DataFrame()

    @property
    def verdicts(self) -> pd.DataFrame:
        """The verdict rows of the folder's design, in the one schema (VERDICT_COLUMNS): verdicts.csv read as today's
        schema (report/verdicts_file.read_verdicts: an older folder's words and columns too)."""
        return self._table("verdicts")

    @property
    def variants(self) -> pd.DataFrame:
        """Per variant: each metric's mean, spread and interval (over partitions, or over seeds and test items; a
        sweep's largest training size)."""
        return self._table("variants")

    @property
    def summary(self) -> pd.DataFrame:
        """One row per run: a single split's status, metrics and costs (summary.csv); a design's scores (scores.csv,
        wide)."""
        return self._table("summary")


@dataclass(frozen=True)
class Benchmark:
    """A benchmark's parent folder: each corpus's run folder and the cross-corpus table."""

    folder: Path
    exit_code: int = 0

    @property
    def corpora(self) -> dict[str, Result]:
        """{corpus: its run folder's Result}, for the corpora that ran (skipped ones have no folder)."""
        opened = open_folder(self.folder)
        return {entry["corpus"]: Result(self.folder / entry["folder"]) for entry in opened.plan.corpora
                if opened.corpus(entry) is not None}

    @cached_property
    def report(self):
        """The benchmark's report as its written files hold it (comparisons/report/cross_corpus.BenchmarkReport:
        the cross-corpus table and test, each corpus's report), read once."""
        from comparisons.report.build import read

        return read(self.folder)

    @property
    def table(self) -> pd.DataFrame:
        """The cross-corpus table (cross_corpus.csv): one row per corpus and variant."""
        return self.report.table


@contextlib.contextmanager
def _as_python(quiet: bool):
    """The command line's refusals as ValueError; stderr swallowed when quiet; SIGTERM stops a run as Ctrl-C."""
    from common.errors import UserInputError
    from comparisons.run.runner import StopOnSignals

    # the runner writes its progress lines to stderr's buffer: a quiet run swallows them in a binary-backed stream
    swallowed = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    try:
        with StopOnSignals(), (contextlib.redirect_stderr(swallowed) if quiet else contextlib.nullcontext()):
            yield
    except UserInputError as exc:
        raise ValueError(str(exc)) from None


def run(plan: Plan, quiet: bool = False) -> Result:
    """Run a plan (resuming its folder as the command line does) and return its folder's tables."""
    from comparisons.carry_out import execute

    if not isinstance(plan, Plan):
        raise TypeError(f"run needs a comparisons.plan.Plan, not {type(plan).__name__}")
    with _as_python(quiet):
        code = execute(plan)
    return Result(plan.folder, code)


def benchmark(plan: Plan, corpora: str, quiet: bool = False) -> Benchmark:
    """The plan on each corpus of `corpora` ('sms,zh-reviews,bbc-news,tweets'), one run folder each under the plan's
    `out` (default runs/cross_corpus), and the cross-corpus table: what `transformer-compare benchmark` does."""
    from comparisons.benchmark import benchmark as run_benchmark
    from comparisons.run_folder import default_out

    if not isinstance(plan, Plan):
        raise TypeError(f"benchmark needs a comparisons.plan.Plan, not {type(plan).__name__}")
    with _as_python(quiet):
        code = run_benchmark(plan, corpora)
    return Benchmark(Path(plan.out) if plan.out is not None else default_out("benchmark", plan.profile), code)


def report(folder, lang: str = "en", quiet: bool = False, cpu_hour_price: float | None = None) -> Result:
    """Rebuild an existing folder's tables, verdicts and pages and return them: what `report --out FOLDER` does
    (comparisons/rebuild.py; the command line calls the same function). A refusal raises ValueError (one line)."""
    from comparisons.rebuild import rebuild_reports

    with _as_python(quiet):
        done = rebuild_reports(Path(folder), lang, cpu_hour_price=cpu_hour_price)
    if not quiet:
        print(done, file=sys.stderr)
    return Result(Path(folder))


@dataclass(frozen=True)
class Selection:
    """A selection's folder and its record (selection.json): what `transformer-compare select` writes."""

    folder: Path
    record: SelectionRecord
    exit_code: int = 0

    @property
    def outcome(self) -> str:
        return self.record.outcome

    @property
    def pick(self) -> str | None:
        """The selected recipe: the best or within delta of it with the stated confidence; None when it cannot say."""
        return self.record.pick

    @property
    def behind_best(self) -> dict[str, float]:
        return self.record.behind_best

    @property
    def scores(self) -> pd.DataFrame:
        """Each fold's test AP of each candidate (NaN where it sat out)."""
        return pd.DataFrame(self.record.scores, columns=self.record.candidates,
                            index=[fold["partition"] for fold in self.record.folds]).rename_axis("fold")


def select(data: str, budget_minutes: float, quiet: bool = False, **settings) -> Selection:
    """Which recipe to deploy on `data` (a CSV/TSV path or a named corpus) within `budget_minutes` of CPU: what
    `transformer-compare select` does (comparisons/select.py; the same function). settings: candidates (a tuple of
    variants), labels, delta, confidence, folds, profile, threads, lang, out, deploy, text_col, label_col, caps
    (a selection_caps.ServingCaps). A refusal raises
    ValueError (one line); an interrupted selection raises KeyboardInterrupt after keeping its runs."""
    from comparisons.select import SelectSettings, select_recipe

    if isinstance(settings.get("candidates"), str):
        settings["candidates"] = tuple(c for c in settings["candidates"].split(",") if c)
    if settings.get("out") is not None:
        settings["out"] = Path(settings["out"])
    try:
        chosen = SelectSettings(budget_minutes, data, **settings)
    except TypeError as exc:
        raise ValueError(f"select: {exc}") from None
    with _as_python(quiet):
        code, folder, record = select_recipe(chosen, ["api.select"])
    if record is None:
        raise KeyboardInterrupt(f"selection interrupted; its finished runs are kept in {folder}")
    return Selection(folder, SelectionRecord.read(folder), code)  # as recorded (rounded)


def load(folder) -> Result:
    """An existing run folder or design, as it is on disk (nothing rebuilt)."""
    folder = Path(folder)
    from comparisons.report.run_report import run_report_kind

    if run_report_kind(open_folder(folder)) is None:
        raise ValueError(f"{folder} is not a run folder or design (no manifest.json, no design.json)")
    return Result(folder)
