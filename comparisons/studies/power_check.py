"""What a powered design expected against what it decided: for a partition design run with
`--power-plan FILE`, each declared contrast at each size of the plan: the chance the plan gave of deciding a true gap
and the pilot's observed difference, beside the run's difference, interval and verdict.

`python -m comparisons.studies.power_check --from FOLDER` writes FOLDER/power_check.md (and prints it).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from common.arguments import OneLineParser
from common.errors import UserInputError
from comparisons.outputs import atomic_write_text
from comparisons.run_folder.power_plan_record import PowerPlan
from comparisons.run_folder.records import Design
from comparisons.report.design_report import DesignReport
from comparisons.stats.family import PRIMARY
from comparisons.report.names import VERDICTS_CSV


def expected_and_decided(folder: Path) -> tuple[dict, pd.DataFrame]:
    """(the power plan design.json recorded, one row per planned size and contrast with the run's verdict)."""
    design = Design.read(folder)
    if design is None or not (folder / VERDICTS_CSV).exists():
        raise UserInputError(f"{folder} is not a reported partition design (no design.json / verdicts.csv)")
    plan = design.power_plan
    if not plan:
        raise UserInputError(f"{folder} was not run with --power-plan: there is no expectation to check against")
    verdicts = DesignReport.read(folder).pairs  # verdicts.csv as written
    verdicts = verdicts[(verdicts["metric"] == PRIMARY) & (verdicts["contrast"] == "declared")]
    rows = []
    for expected in plan.expected:
        a, b = expected["contrast"].split(" − ")
        found = verdicts[(verdicts["variant_a"] == a) & (verdicts["variant_b"] == b)
                         & (verdicts["train_size"].astype(str) == str(expected["train_size"]))]
        run = found.iloc[0] if len(found) else None
        rows.append({**expected, "difference": None if run is None else float(run["difference"]),
                     "ci_low": None if run is None else float(run["ci_low"]),
                     "ci_high": None if run is None else float(run["ci_high"]),
                     "verdict": "not run" if run is None else str(run["verdict"])})
    return plan, pd.DataFrame(rows)


def expected_count(chances) -> tuple[float, float]:
    """(mean, standard deviation) of how many rows a run decides when each is decided with its planned chance:
    a sum of Bernoulli trials (Poisson-binomial), taken as independent (the rows share folds, so the true spread
    is larger; the band is a lower bound on the plan's own uncertainty)."""
    p = pd.Series(chances, dtype=float).fillna(0.0).clip(0, 1)
    return float(p.sum()), float((p * (1 - p)).sum() ** 0.5)


def expected_count_line(table: pd.DataFrame, decided: int) -> str:
    """The plan's expected count of decided rows (at the pilot's differences), its +-2 SD band, and the run's."""
    parts = []
    for bound in ("optimistic", "pessimistic"):
        mean, sd = expected_count(table[f"observed_decided_{bound}"])
        inside = mean - 2 * sd <= decided <= mean + 2 * sd
        parts.append(f"{bound} {mean:.1f} ± {2 * sd:.1f} ({'within' if inside else 'OUTSIDE'})")
    return ("Expected at the pilot's differences (the chances' sum, ± 2 SD of a sum of independent trials): "
            + "; ".join(parts) + ".")


def check_markdown(folder: Path, plan: PowerPlan, table: pd.DataFrame) -> str:
    decided = table["verdict"].isin(["A better", "B better", "equivalent"])
    lines = [f"# What the power plan expected, and what {folder.name} decided", "",
             f"Plan (from the pilot {plan.pilot}, before the runs): one repeat of {plan.folds} folds x {plan.draws} "
             f"draw(s), family {plan.family}, a gap of {plan.gap:g} AP, {plan.bound} bound. The chances are the "
             "plan's lower bounds of deciding the difference (optimistic / pessimistic spread); a run decides or not, "
             "so one row is one draw from them.", "",
             f"Decided: {int(decided.sum())} of {len(table)} planned rows. {expected_count_line(table, int(decided.sum()))}",
             "",
             "| size | contrast | chance at the gap | chance at the pilot's Δ | pilot Δ | run Δ [95%] | verdict |",
             "| ---: | --- | ---: | ---: | ---: | --- | --- |"]
    for _, r in table.iterrows():
        interval = "–" if pd.isna(r["difference"]) else f"{r['difference']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"
        lines.append(f"| {r['train_size']} | {r['contrast']} | {r['gap_decided_optimistic']:.2f} / "
                     f"{r['gap_decided_pessimistic']:.2f} | {r['observed_decided_optimistic']:.2f} / "
                     f"{r['observed_decided_pessimistic']:.2f} | {r['pilot_difference']:+.3f} | {interval} | "
                     f"{r['verdict']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.power_check", description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="folder", type=Path, required=True, help="a design run with --power-plan")
    args = parser.parse_args(argv)
    try:
        plan, table = expected_and_decided(args.folder)
    except UserInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text = check_markdown(args.folder, plan, table)
    atomic_write_text(args.folder / "power_check.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
