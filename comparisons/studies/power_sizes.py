"""A curve's design powered before it runs: at each size of a pilot with several draws a
partition, the variance components of each declared contrast's AP difference; from them the draws a partition,
the disjoint folds K (one repeat) that would give 80% power, and, for a stated gap (say 0.10 AP), the
cheapest design of K folds x D draws that decides it at every pilot size, with what that design expects to decide.

The family the curve will be tested in sets the level (comparisons/stats/family.py FAMILIES): `holm`, Holm's
strictest step over every row's two hypotheses (alpha / (2 C S) for C contrasts at S sizes); `natural-order`, the
first size of each contrast's difference chain at alpha / (2 C) (comparisons/stats/graphical.py), each later size
reached only once the sizes before it are decided. The chance of deciding a gap at size s is then taken as the
product of the powers at the sizes up to s, each at alpha / (2 C): a lower bound in two ways (a rejection elsewhere
only raises a hypothesis's level, and the sizes' tests share folds, which correlates them positively), stated so.

How the partitions' spread moves from the pilot's P folds to K folds is bounded two ways (stats/power.py
folds_for_power): optimistic, as measured; pessimistic, growing as K / P (all of it test-set sampling). The
proposal is the cheapest (K, D) that meets the target under the pessimistic bound, or, where nothing up to
LARGEST_FOLDS does, under the optimistic one (the plan says which).
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from scipy.stats import t as student_t

from comparisons.stats.power import (ALPHA, LARGEST_FOLDS, POWER, assurance, draws_for_power, folds_for_power,
                                     power)
from comparisons.report.names import VERDICTS_CSV
from comparisons.run_folder.power_plan_record import PowerPlan
from comparisons.run_folder.records import Design

BOUNDS = ("optimistic", "pessimistic")
PLAN_DRAWS = (1, 2, 3)  # draws a fold the proposal considers
SMALLEST_FOLDS = 5       # the reference's folds: the proposal never plans fewer


def size_components(pilot: Path, design: Design) -> pd.DataFrame:
    """For each declared contrast at each pilot size up to DRAWS_UP_TO: the observed AP difference, its variance
    components (partitions' beyond their draws, draws'), the draws and partitions measured, the overlap term and
    the pilot's family size."""
    from common.splits import DRAWS_UP_TO, as_train_size, size_key
    from comparisons.report.partition_reports import partition_scores
    from comparisons.run_folder.training_sets import training_sets
    from comparisons.stats.corrected_t import variant_draws
    from comparisons.stats.design_variance import design_correlation, sets_at, training_overlap, variance_components
    from comparisons.stats.family import PRIMARY

    runs = partition_scores(pilot)
    verdicts = pd.read_csv(pilot / VERDICTS_CSV)
    sets, found = training_sets(pilot, runs), []
    sizes = sorted((s for s in runs["train_size"].unique() if as_train_size(s) is not None
                    and as_train_size(s) <= DRAWS_UP_TO), key=size_key)
    for size in sizes:
        at_size, here = runs[runs["train_size"] == size], sets_at(sets, size)
        overlap = training_overlap(here) if here else None
        for a, b in design.contrasts or []:
            row = verdicts[(verdicts["metric"] == PRIMARY) & (verdicts["variant_a"] == a) & (verdicts["variant_b"] == b)
                           & (verdicts["train_size"].astype(str) == str(size))]
            if row.empty:
                continue
            both = pd.concat({"a": variant_draws(at_size, PRIMARY, a, here),
                              "b": variant_draws(at_size, PRIMARY, b, here)}, axis=1).dropna()
            values = pd.DataFrame({"partition": both.index.get_level_values("partition"),
                                   "draw": both.index.get_level_values("draw"), "value": (both["a"] - both["b"]).to_numpy()})
            between, within, per = variance_components(values)
            rho, _ = design_correlation(overlap, float((at_size["n_test"] / at_size["n_train"]).mean()), "overlap")
            found.append({"train_size": size, "contrast": f"{a} − {b}", "difference": float(row["difference"].iloc[0]),
                          "between": between, "within": within, "pilot_draws": per,
                          "partitions": values["partition"].nunique(), "overlap_term": rho * (between + within),
                          "family_size": int(row["family_size"].iloc[0])})
    return pd.DataFrame(found)


def draws_table(components: pd.DataFrame, pilot_folds: int) -> pd.DataFrame:
    """At each size and contrast: the draws a partition for 80% power on the pilot's partitions, and the
    folds K of one repeat with the pilot's draws a fold, both bounds, at the pilot family's strictest level."""
    found = []
    for _, c in components.iterrows():
        several = c["pilot_draws"] > 1
        arguments = (c["difference"], c["between"], c["within"])
        found.append({**c.to_dict(),
                      "draws_for_power": draws_for_power(*arguments, c["partitions"], c["overlap_term"],
                                                         c["family_size"]) if several else None,
                      **{f"folds_for_power_{bound}": folds_for_power(
                          *arguments, pilot_folds, max(1, int(c["pilot_draws"])), c["overlap_term"], c["family_size"],
                          test_scales=bound == "pessimistic") if several else None for bound in BOUNDS}})
    return pd.DataFrame(found)


def first_step_hypotheses(family: str, contrasts: int, sizes: int) -> int:
    """How many ways alpha is split at the first step of the curve's family."""
    return 2 * contrasts * (sizes if family == "holm" else 1)


def planned_se(c: pd.Series, folds: int, draws: int, pilot_folds: int, bound: str) -> float:
    """The standard error one size's difference would have with K folds x D draws at the pilot's components."""
    between = c["between"] * (folds / pilot_folds if bound == "pessimistic" else 1.0)
    return math.sqrt(between / folds + c["within"] / (folds * draws) + c["overlap_term"])


def design_power(c: pd.Series, delta: float, folds: int, draws: int, pilot_folds: int, level: float,
                 bound: str) -> float:
    """Assurance of one size's difference test for a true `delta` with K folds x D draws (components `c`): its power
    averaged over what the pilot's variance could have been, on the pilot's partitions - 1 degrees of freedom
    (stats/power.assurance): the pilot is a sample, not the truth."""
    se = planned_se(c, folds, draws, pilot_folds, bound)
    if se == 0:
        return 1.0
    return assurance(lambda scale: power(delta, se * scale, folds - 1, level), float(c["partitions"]) - 1)


MIN_FOLDS = 3  # a difference chain at a size with fewer folds than this is not asked (2 degrees of freedom at least)


def unreachable_chains(components: pd.DataFrame, folds: int, draws: int, pilot_folds: int, bound: str,
                       margins: dict[str, float]) -> list[dict]:
    """The chains of the curve's family that cannot decide, given before the runs: a contrast's equivalence chain
    when its margin is at most the planned standard error times the TOST's critical t at the whole of alpha (the
    most any hypothesis of the graph can ever hold), i.e. not even all of alpha would let it reject at the expected
    spread; the pilot's largest size stands in for the curve's larger sizes, where the chain starts and no pilot
    data exist (their spread is usually smaller, so this may drop a chain a larger size could have decided: power
    lost, never validity); a difference chain when the design has fewer than MIN_FOLDS folds. Each:
    {"contrast", "kind", "why"}."""
    contrasts = list(dict.fromkeys(components["contrast"]))
    level = ALPHA
    found = []
    for contrast in contrasts:
        rows = components[components["contrast"] == contrast]
        largest = rows.iloc[-1]
        se = planned_se(largest, folds, draws, pilot_folds, bound)
        critical = float(student_t.ppf(1 - level, folds - 1))
        margin = margins[contrast]
        if margin <= critical * se:
            found.append({"contrast": contrast, "kind": "e",
                          "why": f"equivalence within ±{margin:g} needs a standard error below {margin / critical:.4f} "
                                 f"even at the whole of alpha; planned {se:.4f} at {largest['train_size']} labels"})
        if folds < MIN_FOLDS:
            found.append({"contrast": contrast, "kind": "d", "why": f"{folds} folds: fewer than {MIN_FOLDS}"})
    return found


def chain_levels(contrasts: list[str], dropped: list[dict], family: str, sizes: int) -> dict[str, float]:
    """{contrast: the level its difference chain starts at}: Holm's strictest step over every hypothesis, or the
    natural-order graph's weight of the chain start once the dropped chains gave their level away
    (comparisons/stats/graphical.reduced_graph; a dropped difference chain: 0)."""
    from comparisons.stats.graphical import curve_graph, reduced_graph

    if family == "holm":
        return {c: ALPHA / first_step_hypotheses(family, len(contrasts), sizes) for c in contrasts}
    graph = curve_graph(len(contrasts), 1)
    gone = {(contrasts.index(d["contrast"]), d["kind"], 0) for d in dropped}
    reduced = reduced_graph(graph, gone)
    weight = dict(zip(reduced.nodes, reduced.weights))
    return {c: ALPHA * float(weight.get((i, "d", 0), 0.0)) for i, c in enumerate(contrasts)}


def chance_of_deciding(components: pd.DataFrame, delta: float | None, folds: int, draws: int, pilot_folds: int,
                       family: str, bound: str, curve_sizes: int | None = None,
                       dropped: list[dict] | None = None) -> pd.DataFrame:
    """Each size's assurance and the chance its difference is decided (the chain's product for natural-order);
    delta None: the pilot's observed difference at each size; curve_sizes: the sizes Holm's family will span
    (default the pilot's; natural-order does not depend on it); dropped: the chains planned unreachable."""
    sizes = curve_sizes or components["train_size"].nunique()
    contrasts = list(dict.fromkeys(components["contrast"]))
    levels = chain_levels(contrasts, dropped or [], family, sizes)
    found = {}
    for contrast, rows in components.groupby("contrast", sort=False):
        chain = 1.0
        for index, c in rows.iterrows():
            level = levels[contrast]
            p = 0.0 if level <= 0 else design_power(c, c["difference"] if delta is None else delta, folds, draws,
                                                    pilot_folds, level, bound)
            chain = chain * p if family == "natural-order" else p
            found[index] = {"train_size": c["train_size"], "contrast": contrast, "power": p, "decided": chain}
    return pd.DataFrame.from_dict(found, orient="index").loc[components.index]  # the components' rows, in order


def seconds_a_fold(pilot: Path, components: pd.DataFrame) -> float:
    """Mean wall seconds of one draw of every variant at every pilot size: the cost of one fold x one draw."""
    from comparisons.run_folder import read_runs

    sizes = {str(s) for s in components["train_size"]}
    times: dict[tuple[str, str], list[float]] = {}
    for folder in sorted((pilot / "partitions").glob("r*f*")):
        for record in read_runs(folder):
            if record.ok and str(record.train_size) in sizes and record.get("wall_seconds"):
                times.setdefault((record.variant, str(record.train_size)), []).append(float(record["wall_seconds"]))
    return sum(sum(values) / len(values) for values in times.values())


def propose(components: pd.DataFrame, gap: float, pilot_folds: int, family: str, margins: dict[str, float],
            target: float = POWER, curve_sizes: int | None = None, most_runs: int | None = None
            ) -> tuple[int, int, str] | None:
    """(K, D, bound): the fewest runs K x D (fewest folds first) whose assured chance of deciding `gap` at the last
    pilot size is at least `target` for every contrast whose difference chain is asked, in the family left once
    the unreachable chains are dropped; the pessimistic bound first, else the optimistic; None if none (within
    `most_runs` folds x draws, the budget's, when given)."""
    for bound in ("pessimistic", "optimistic"):
        met = []
        for draws in PLAN_DRAWS:
            for folds in range(SMALLEST_FOLDS, LARGEST_FOLDS + 1):
                if most_runs is not None and folds * draws > most_runs:
                    break
                dropped = unreachable_chains(components, folds, draws, pilot_folds, bound, margins) \
                    if family == "natural-order" else []
                chance = chance_of_deciding(components, gap, folds, draws, pilot_folds, family, bound, curve_sizes,
                                            dropped).groupby("contrast")["decided"].min().min()
                if chance >= target:
                    met.append((folds * draws, folds, draws))
                    break  # more folds at these draws only cost more
        if met:
            _, folds, draws = min(met)
            return folds, draws, bound
    return None


def gap_plan(pilot: Path, components: pd.DataFrame, gap: float, pilot_folds: int, family: str,
             curve_sizes: int | None = None, margins: dict[str, float] | None = None,
             budget_minutes: float | None = None) -> PowerPlan:
    """The proposal, the chains it drops as unreachable and what it expects to decide, as power_plan.json records
    it. margins: {contrast: the equivalence margin} (default the suite's AP margin); budget_minutes: the most
    run-minutes the pilot's sizes may take at the pilot's per-run times: a design that meets the target above it
    is not proposed, and where none meets it within the budget the largest one-draw design the budget affords is,
    marked not met, with the chances it has."""
    from comparisons.stats.family import DEFAULT_MARGINS, PRIMARY

    margins = margins or {c: DEFAULT_MARGINS[PRIMARY] for c in components["contrast"]}
    fold_minutes = seconds_a_fold(pilot, components) / 60
    most_runs = int(budget_minutes // fold_minutes) if budget_minutes and fold_minutes > 0 else None
    proposal = propose(components, gap, pilot_folds, family, margins, curve_sizes=curve_sizes, most_runs=most_runs)
    fallback = (max(MIN_FOLDS, min(most_runs, LARGEST_FOLDS)), 1, "pessimistic") if most_runs else \
        (LARGEST_FOLDS, max(PLAN_DRAWS), "optimistic")
    folds, draws, bound = proposal if proposal else fallback
    dropped = unreachable_chains(components, folds, draws, pilot_folds, bound, margins) \
        if family == "natural-order" else []
    expected = [{"train_size": str(c["train_size"]), "contrast": c["contrast"],
                 "pilot_difference": round(float(c["difference"]), 4)} for _, c in components.iterrows()]
    for name, delta in (("gap", gap), ("observed", None)):
        for b in BOUNDS:
            table = chance_of_deciding(components, delta, folds, draws, pilot_folds, family, b, curve_sizes, dropped)
            for row, (_, found) in zip(expected, table.iterrows()):
                row[f"{name}_power_{b}"] = round(float(found["power"]), 4)
                row[f"{name}_decided_{b}"] = round(float(found["decided"]), 4)
    minutes = fold_minutes * folds * draws
    return PowerPlan({"pilot": pilot.name, "gap": gap, "family": family, "curve_sizes": curve_sizes, "alpha": ALPHA,
            "budget_minutes": budget_minutes,
            "target": POWER, "planned_on": "assurance: power averaged over the pilot variance's chi-square law on "
                                          "its partitions - 1 degrees of freedom",
            "proposal": {"folds": folds, "repeats": 1, "draws": draws, "bound": bound, "met": proposal is not None},
            "dropped_chains": dropped,
            "projected_run_minutes_pilot_sizes": round(minutes, 1), "expected": expected})


def gap_markdown(plan: PowerPlan) -> list[str]:
    budget = plan.budget_minutes
    within = f" within the budget of {budget:g} run-minutes at the pilot's sizes" if budget else ""
    met = (f"meets {plan.target:.0%} for every contrast under the {plan.bound} bound{within}" if plan.met else
           f"nothing{within or f' up to {LARGEST_FOLDS} folds x {max(PLAN_DRAWS)} draws'} meets {plan.target:.0%}: "
           f"the largest {'the budget affords' if budget else 'considered'} is shown, with the chances it has")
    dropped = plan.dropped_chains
    lines = ["", f"## A design for a gap of {plan.gap:g} AP", "",
             f"Family: {plan.family}. Proposal: **one repeat of {plan.folds} disjoint folds x {plan.draws} draw(s) "
             f"a fold** ({met}); the pilot's sizes alone cost about {plan.projected_run_minutes:.0f} "
             "run-minutes at the pilot's per-run times. Planned on assurance: each power is averaged over what the "
             "pilot's variance could have been (its partitions - 1 degrees of freedom), not the pilot's estimate taken "
             "as known. " + ("Dropped before the runs as unreachable, their level given to the chains that can "
             "decide: " + "; ".join(f"{d['contrast']} ({'equivalence' if d['kind'] == 'e' else 'difference'} "
             f"chain): {d['why']}" for d in dropped) + ". " if dropped else "No chain is unreachable. ") +
             "Assured power of each size's difference test and the chance it is "
             "decided (natural order: the sizes before it decided too; a lower bound), for a true difference of the "
             "gap and of the pilot's observed difference, optimistic / pessimistic:", "",
             "| size | contrast | pilot Δ | power at the gap | decided at the gap | power at the pilot's Δ | decided at "
             "the pilot's Δ |", "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for row in plan.expected:
        pair = lambda name: f"{row[name + '_optimistic']:.2f} / {row[name + '_pessimistic']:.2f}"  # noqa: E731
        lines.append(f"| {row['train_size']} | {row['contrast']} | {row['pilot_difference']:+.3f} | "
                     f"{pair('gap_power')} | {pair('gap_decided')} | {pair('observed_power')} | "
                     f"{pair('observed_decided')} |")
    return lines


def draws_markdown(table: pd.DataFrame) -> list[str]:
    if table.empty:
        return []
    if (table["pilot_draws"] <= 1).all():
        return ["", "Draws a partition: this pilot trained one draw a partition, which cannot separate the "
                "partitions' variance from the draws'; run the pilot with `--draws 2` or more for a proposal."]
    lines = ["", "## Draws a partition at the small sizes", "",
             "For each declared contrast at each size up to 1,000: the pilot's variance components of the AP difference "
             "(between partitions beyond their draws; between draws inside a partition) and the draws a partition that "
             "give 80% power to show the observed difference different at Holm's strictest level of the pilot's "
             "family, on the pilot's partitions (stats/power.draws_for_power; more draws cannot lower the "
             "partitions' own variance).", "",
             "Or one repeat of K disjoint folds with the pilot's draws a fold: the fewest K for the same "
             "power, bounded two ways because the pilot cannot say how the partitions' spread moves with K "
             "(stats/power.folds_for_power): optimistic, the spread as measured; pessimistic, the spread grows as "
             "K / pilot folds (all of it test-set sampling, on smaller test folds). Both gain the degrees of "
             "freedom, which at 5 partitions is the floor.", "",
             "| size | contrast | observed Δ | between partitions | between draws | pilot draws | draws for 80% power "
             "| folds K (optimistic / pessimistic) |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for _, row in table.iterrows():
        needed = "more than 50 (unreachable)" if pd.isna(row["draws_for_power"]) else str(int(row["draws_for_power"]))
        folds = " / ".join(f"more than {LARGEST_FOLDS}" if pd.isna(row[f"folds_for_power_{bound}"])
                           else str(int(row[f"folds_for_power_{bound}"])) for bound in BOUNDS)
        lines.append(f"| {row['train_size']} | {row['contrast']} | {row['difference']:+.4f} | {row['between']:.2e} | "
                     f"{row['within']:.2e} | {row['pilot_draws']:.0f} | {needed} | {folds} |")
    return lines
