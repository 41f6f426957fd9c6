"""Power before the run: how many repeats each declared contrast needs, and what they would cost.

`python -m comparisons.studies.power_plan --from PILOT [--nodes 1 4 16]` (`make power-plan PILOT=DIR`)

PILOT is a finished partition design (`run --cv K --contrasts ...`, or one reported with `report
--contrasts`). For each declared contrast on the primary metric, holding the pilot's observed spread of
the per-partition differences and its n_test/n_train (comparisons/stats/power.py, the same figures as the
verdicts' columns):
  - the repeats of K folds that give 80% power to show the observed difference different;
  - the repeats that give 80% power to show it equivalent within the margin;
  - the repeats that give 80% power to show a true difference the size of the margin different;
each at Holm's strictest level of the declared family (alpha / (2 x contrasts)); "unreachable" when no
number up to power.LARGEST_REPEATS does (below the n_test/n_train floor). Then the projected wall time of
a design of R repeats on this machine and on Ray clusters of N two-core nodes: the pilot's recorded
per-run wall times, each partition's runs repeated R times, scheduled longest first
(comparisons/studies/cluster_projection.makespan). The spread is itself estimated on J - 1 degrees of
freedom: the figures plan a design, they do not promise its verdicts. A pilot with training sizes and several
draws a partition (`--draws`) gets the draws each declared contrast needs at each size up to 1,000, and
with `--gap G` the design of K disjoint folds x D draws that decides a true gap G at every pilot size in the curve's
family, and what it expects to decide, in power_plan.json (comparisons/studies/power_sizes.py).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from common.arguments import OneLineParser
from common.errors import UserInputError
from comparisons.run_folder.names import POWER_PLAN
from comparisons.run_folder.records import Design
from comparisons.report.design_report import DesignReport
from comparisons.outputs import atomic_write_json, atomic_write_text
from comparisons.stats.power import LARGEST_REPEATS, repeats_for_power
from comparisons.stats.family import FAMILIES, PRIMARY
from comparisons.studies.cluster_projection import makespan, run_seconds
from comparisons.studies.power_sizes import draws_markdown, draws_table, gap_markdown, gap_plan, size_components
from comparisons.report.names import VERDICTS_CSV


def pilot_contrasts(pilot: Path) -> tuple[Design, pd.DataFrame]:
    """(design.json, the declared contrasts' primary rows of verdicts.csv at the largest size); one-line errors."""
    design = Design.read(pilot)
    if design is None or not (pilot / VERDICTS_CSV).exists():
        raise UserInputError(f"{pilot} is not a reported partition design (no design.json / verdicts.csv); the power "
                             "planner needs a pilot run with --cv K")
    verdicts = DesignReport.read(pilot).pairs  # verdicts.csv as written
    if len(design.partitions) < 2 or verdicts.get("partitions", pd.Series([0])).max() < 2:
        raise UserInputError(f"{pilot} has fewer than 2 partitions: no spread to plan from; run the pilot with --cv 2 or more")
    if not design.contrasts or "contrast" not in verdicts:
        raise UserInputError(f"{pilot} declares no contrasts; report it with `report --out {pilot} --contrasts course` "
                             "(or A-B pairs) first")
    rows = verdicts[(verdicts["metric"] == PRIMARY) & (verdicts["contrast"] == "declared")]
    if "train_size" in rows and rows["train_size"].nunique() > 1:  # a curve: its full size, else its largest
        from common.splits import size_key

        largest = max(rows["train_size"].astype(str).unique(), key=size_key)
        rows = rows[rows["train_size"].astype(str) == largest]
    return design, rows


def test_to_train(design: Design) -> float:
    """The pilot's mean n_test / n_train over its partitions (training and validation texts together)."""
    sizes = [p["sizes"] for p in design.partitions]
    return sum(s["test"] / (s["train"] + s["valid"]) for s in sizes) / len(sizes)


def plan_table(design: Design, rows: pd.DataFrame) -> pd.DataFrame:
    folds, hypotheses = design.folds, 2 * len(rows)
    found = []
    for _, row in rows.iterrows():
        arguments = (row["spread"], folds, test_to_train(design), hypotheses)
        found.append({"contrast": f"{row['variant_a']} − {row['variant_b']}", "difference": row["difference"],
                      "spread": row["spread"], "margin": row["margin"],
                      "repeats_observed_different": repeats_for_power(row["difference"], *arguments),
                      "repeats_observed_equivalent": repeats_for_power(row["difference"], *arguments,
                                                                       margin=row["margin"]),
                      "repeats_margin_sized_different": repeats_for_power(row["margin"], *arguments)})
    return pd.DataFrame(found)


def projected_minutes(pilot: Path, design: Design, repeats: int, nodes: list[int]) -> dict[int, float]:
    """Minutes of a design of `repeats` repeats: the pilot's per-run times, each repeat of its partitions alike."""
    one_repeat = [seconds for name, seconds in run_seconds(pilot) if name.split("/")[-2].startswith("r0f")]
    return {count: makespan(one_repeat * repeats, count) / 60 for count in nodes}


def plan_markdown(pilot: Path, design: Design, table: pd.DataFrame, nodes: list[int]) -> str:
    def shown(value) -> str:
        return f"more than {LARGEST_REPEATS} (unreachable)" if pd.isna(value) else str(int(value))

    lines = [f"# Power plan from the pilot {pilot.name}", "",
             f"Pilot: {design.repeats} x {design.folds}-fold partitions. For each declared contrast, the repeats "
             f"of {design.folds} folds that give 80% power at Holm's strictest level of the family of "
             f"{len(table)} contrasts (alpha / {2 * len(table)}), holding the pilot's spread of per-partition "
             "differences (estimated, so a plan, not a promise).", "",
             "| contrast | observed Δ | spread | margin | to show Δ different | to show Δ within the margin | "
             "to show a margin-sized Δ different |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for _, row in table.iterrows():
        lines.append(f"| {row['contrast']} | {row['difference']:+.4f} | {row['spread']:.4f} | ±{row['margin']:g} | "
                     f"{shown(row['repeats_observed_different'])} | {shown(row['repeats_observed_equivalent'])} | "
                     f"{shown(row['repeats_margin_sized_different'])} |")
    wanted = sorted({int(v) for v in table.drop(columns=["contrast", "difference", "spread", "margin"]).stack()
                     if pd.notna(v)} | {design.repeats})
    lines += ["", "Projected wall time of each design (minutes; the pilot's recorded per-run times; Ray: two-core "
              "nodes, one run at a time each, longest first; Ray's start and the reports not included):", "",
              "| repeats | partitions | " + " | ".join(f"{n} node(s)" for n in nodes) + " |",
              "| ---: | ---: | " + " | ".join("---:" for _ in nodes) + " |"]
    for repeats in wanted:
        minutes = projected_minutes(pilot, design, repeats, nodes)
        lines.append(f"| {repeats} | {repeats * design.folds} | "
                     + " | ".join(f"{minutes[n]:.1f}" for n in nodes) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.power_plan", description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="pilot", type=Path, required=True, help="a reported partition design (the pilot)")
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--gap", type=float, help="a curve pilot: the AP gap the design must decide at every pilot "
                        "size (e.g. 0.10); proposes K folds x D draws and writes what it expects to decide "
                        "(power_plan.json)")
    parser.add_argument("--family", default="natural-order", help=f"with --gap: the family the curve will be tested "
                        f"in, {' or '.join(FAMILIES)} (default natural-order)")
    parser.add_argument("--budget-minutes", type=float, help="with --gap: the most run-minutes the pilot's sizes may "
                        "take at the pilot's per-run times (the curve's budget); above it no design is proposed")
    parser.add_argument("--curve-sizes", type=int, help="with --gap and --family holm: how many sizes the curve's "
                        "family will span (Holm splits alpha over all of them; default: the pilot's sizes)")
    args = parser.parse_args(argv)
    try:
        design, rows = pilot_contrasts(args.pilot)
        if not run_seconds(args.pilot):
            raise UserInputError(f"{args.pilot} holds no finished run with a recorded wall time; nothing to project from")
        if args.family not in FAMILIES:
            raise UserInputError(f"--family {args.family!r}: choose {' or '.join(FAMILIES)}")
        if args.budget_minutes is not None and not args.budget_minutes > 0:
            raise UserInputError(f"--budget-minutes {args.budget_minutes:g}: a positive number of minutes, e.g. 150")
        if args.gap is not None and not 0 < args.gap < 1:
            raise UserInputError(f"--gap {args.gap:g}: an AP difference between 0 and 1, e.g. 0.10")
        components = size_components(args.pilot, design)
        if args.gap is not None and (components.empty or (components["pilot_draws"] <= 1).all()):
            raise UserInputError(f"--gap needs a pilot with training sizes and --draws 2 or more; {args.pilot} has "
                                 "none: run the pilot with --train-sizes 50,100,200 --draws 3")
    except UserInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text = plan_markdown(args.pilot, design, plan_table(design, rows), args.nodes)
    text += "\n".join(draws_markdown(draws_table(components, design.folds))) + "\n"
    if args.gap is not None:
        margin = float((design.margins or {}).get(PRIMARY, 0.005))
        plan = gap_plan(args.pilot, components, args.gap, design.folds, args.family, args.curve_sizes,
                        {contrast: margin for contrast in components["contrast"]}, args.budget_minutes)
        text += "\n".join(gap_markdown(plan)) + "\n"
        atomic_write_json(args.pilot / POWER_PLAN, plan.to_dict())
    atomic_write_text(args.pilot / "power_plan.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
