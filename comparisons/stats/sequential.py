"""A group-sequential test of a declared family (framework-free): looks after each repeat, valid stopping.

The rule (docs/statistics.md "Run until decided"):
- Each hypothesis (a row's difference, two-sided, and its equivalence, two one-sided tests) is tested at every
  look with Lan-DeMets alpha spending of the O'Brien-Fleming shape (Lan & DeMets 1983), per side
  alpha(t) = 2 - 2 Phi(Phi^-1(1 - a / 2) / sqrt(t)) for a one-sided level a (a / 2 a side for a two-sided test, as
  gsDesign's sfLDOF and rpact's asOF spend it). The boundaries c_1..c_K solve, under the canonical joint
  distribution of the looks' z statistics (corr(Z_j, Z_k) = sqrt(t_j / t_k)), P(first crossing at look k) =
  alpha(t_k) - alpha(t_(k-1)); `boundaries` integrates it by the recursion of Armitage, McPherson & Rowe (1969)
  on a grid (Jennison & Turnbull 2000, ch. 19), deterministic.
- The information fractions follow the design's variance (comparisons/stats/design_variance.py): the mean of J
  partitions has variance proportional to 1/J + r, r = rho / (1 - rho) the row's correction ratio, so
  t_k = (1/J_K + r) / (1/J_k + r), J_k the partitions at look k, J_K at the last look planned (--max-repeats).
  Under the equicorrelated model behind that variance the looks' means have exactly the canonical covariance
  (Cov(mean_j, mean_k) = Var(mean_k) for nested sets of partitions).
- The statistic is the design's t on J_k - 1 degrees of freedom, and the family's boundaries are on the t scale
  (comparisons/stats/t_boundaries.py: the same spending, each look's share found for the looks' t statistics under
  the design's model). `boundaries` and `nominal_level` here are the z boundaries the spending starts from
  (the significance-level approach, Jennison & Turnbull 2000, sec. 11.4, which ran 0.0575 over three looks).
- The family: each hypothesis's repeated p-value at a look, the smallest level whose boundary it crosses there
  (Jennison & Turnbull 2000, sec. 9.3), its running minimum over the looks (valid at every level at once:
  P(some look's repeated p <= a) <= a under the null), then Holm over the family's running minima. Holm's closure
  argument holds for any p-values valid at every level, so the chance of any false claim of the family over all
  looks is at most alpha; a hypothesis once rejected stays rejected.
- The interval of a row at its look is the repeated confidence interval (Jennison & Turnbull 1989): the t interval
  at the look's nominal level; every look's intervals hold together with 95% probability, so the interval at
  whatever look the design stopped covers with at least 95%.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import t as student_t

from comparisons.stats.family import ALPHA, ATANH, LOWER_IS_BETTER, atanh_interval, correct_family, four_way, holm
from comparisons.stats.spending import (SPENDING, boundaries, information_fractions, nominal_level,  # noqa: F401
                                        repeated_p, spent)  # re-exported: the rule's z layer
from comparisons.stats.t_boundaries import t_nominal_level, t_repeated_p
from comparisons.stats.power import repeats_for_power
from comparisons.stats.corrected_t import partition_pair_rows
from comparisons.stats.design_variance import DEFAULT_VARIANCE

# -- the declared family over the looks ----------------------------------------------------------------------------
KEY = ["train_size", "metric", "variant_a", "variant_b"]
RCI = "repeated confidence interval"


def sequential_family(looks, planned_partitions, contrasts=None, alpha: float = ALPHA):
    """The verdict rows of a sequential design: one row per (training size, metric, pair), with the sequential
    p_holm and p_equivalence_holm (Holm over the running minima of the repeated p-values), the repeated confidence
    intervals and the verdict; plus `look` (the look whose figures the row shows: where its deciding hypothesis's
    evidence was strongest, else its last look), `decided_at` (the look at which the family decided it, NaN when
    none did) and `nominal_level` (the shown look's two-sided level at alpha).

    looks: comparisons/stats/corrected_t.partition_pair_rows of every look, with `look` (1-based) and `active` (the
    pair's both variants ran in that look's repeat); planned_partitions: the partitions at each planned look
    (e.g. [5, 10, 15] for --max-repeats 3 of 5 folds)."""
    import pandas as pd

    looks = looks[looks["active"]].copy()
    if looks.empty:
        return looks
    corrected = pd.concat([correct_family(rows.drop(columns=["look", "active"]), contrasts).assign(look=look)
                           for look, rows in looks.groupby("look", sort=True)], ignore_index=True)
    hypotheses = corrected.drop_duplicates(KEY).groupby(["metric", "contrast"], sort=False).size()
    corrected["family_size"] = [2 * int(hypotheses[(m, c)]) for m, c in zip(corrected["metric"], corrected["contrast"])]
    corrected = corrected.sort_values([*KEY, "look"], key=lambda c: c.astype(str) if c.name != "look" else c,
                                      kind="stable").reset_index(drop=True)
    keys = [tuple(k) for k in corrected[KEY].itertuples(index=False)]
    corrected["key"] = keys
    first = corrected.drop_duplicates("key")  # the schedule is fixed by each row's first look
    ratios = dict(zip(first["key"], first["correction_ratio"]))  # boundaries on the t scale (t_boundaries.py)
    for column, p_column, sides in (("repeated_p", "p_value", 2), ("repeated_p_equivalence", "p_equivalence", 1)):
        corrected[column] = [t_repeated_p(p, planned_partitions, ratios[k], int(look), sides)
                             for p, k, look in zip(corrected[p_column], corrected["key"], corrected["look"])]
        # valid at every level: so is the running minimum; remember the look where it was reached
        corrected[column] = corrected.groupby("key", sort=False)[column].cummin()
        best = corrected[column].groupby(corrected["key"], sort=False).transform(lambda v: v.ne(v.shift()).cumsum())
        corrected[f"{column}_look"] = corrected.groupby(["key", best], sort=False)["look"].transform("first")
    every = first[["key", "metric", "contrast"]]  # the whole family at every look: a row not yet seen counts p = 1
    adjusted = {}
    for look in sorted(corrected["look"].unique()):
        latest = corrected[corrected["look"] <= look].drop_duplicates("key", keep="last")
        difference_p = dict(zip(latest["key"], latest["repeated_p"]))
        equivalence_p = dict(zip(latest["key"], latest["repeated_p_equivalence"]))
        for _, family in every.groupby(["metric", "contrast"], sort=False):
            members = list(family["key"])
            joint = holm(np.r_[[difference_p.get(k, 1.0) for k in members], [equivalence_p.get(k, 1.0) for k in members]])
            adjusted.update({(look, k): (joint[i], joint[len(members) + i]) for i, k in enumerate(members)})
    corrected["p_holm"] = [adjusted[(look, k)][0] for look, k in zip(corrected["look"], corrected["key"])]
    corrected["p_equivalence_holm"] = [adjusted[(look, k)][1] for look, k in zip(corrected["look"], corrected["key"])]
    final = []
    for key, rows in corrected.groupby("key", sort=False):
        deciding = rows[(rows["p_holm"] < alpha) | (rows["p_equivalence_holm"] < alpha)]
        at = rows.iloc[-1] if deciding.empty else deciding.iloc[0]
        shown = int(at["look"])
        if not deciding.empty:  # the figures of the look whose evidence decided it (equivalence first, as four_way)
            shown = int(at["repeated_p_equivalence_look"] if at["p_equivalence_holm"] < alpha else at["repeated_p_look"])
        row = rows[rows["look"] == shown].iloc[0].copy()
        row["p_holm"], row["p_equivalence_holm"] = at["p_holm"], at["p_equivalence_holm"]
        level = alpha / row["family_size"]
        nominal, nominal_family = (t_nominal_level(planned_partitions, ratios[key], shown, a, 2) for a in (alpha, level))
        method = "t"
        for columns, a in ((("ci_low", "ci_high"), nominal), (("ci_low_family", "ci_high_family"), nominal_family)):
            half = student_t.ppf(1 - a / 2, row["df"]) * row["standard_error"]
            bounds = (row["difference"] - half, row["difference"] + half)
            if bounds[0] < -1 or bounds[1] > 1:  # outside the scale: the t on the atanh scale, at the same level
                bounds, method = atanh_interval(row["difference"], row["standard_error"], row["df"], a), ATANH
            row[columns[0]], row[columns[1]] = bounds
        row["interval_method"] = f"{RCI} ({method})"
        row["decided_at"] = float(at["look"]) if not deciding.empty else float("nan")
        row["nominal_level"] = nominal
        if pd.notna(row.get("folds")):  # the power figures at the sequential family's size (the futility rule's)
            for column, margin in (("repeats_for_power_margin", row["margin"]), ("repeats_for_power_observed", None)):
                row[column] = repeats_for_power(row["difference"], row["spread"], int(row["folds"]),
                                                row["correction_ratio"], int(row["family_size"]), alpha, margin=margin)
        difference = -row["difference"] if row["metric"] in LOWER_IS_BETTER else row["difference"]
        row["verdict"] = four_way(difference, row["p_holm"], row["p_equivalence_holm"], alpha)
        final.append(row)
    helpers = ["key", "repeated_p", "repeated_p_equivalence", "repeated_p_look", "repeated_p_equivalence_look"]
    return pd.DataFrame(final).drop(columns=helpers).reset_index(drop=True)


# -- the looks of a run folder's scores, and what each look leaves open ------------------------------------------
def repeat_of(partition: str) -> int:
    """The 0-based repeat of a partition named rRfF (common/partitions.Partition.name)."""
    return int(str(partition)[1:].split("f")[0])


def look_rows(runs, pairs, metrics, margins, folds, training_sets=None, variance=None):
    """partition_pair_rows at every look of a partition design's runs (look k: the partitions of repeats 1..k),
    with `look` and `active` (both variants of the pair ran in repeat k)."""
    import pandas as pd

    runs = runs.assign(repeat=[repeat_of(p) for p in runs["partition"]])
    frames = []
    for look in range(1, int(runs["repeat"].max()) + 2):
        upto = runs[runs["repeat"] < look]
        seen = set(upto["partition"])  # a look knows only its partitions' training sets (their overlap, its rho)
        sets = {k: v for k, v in training_sets.items() if k[1] in seen} if training_sets else training_sets
        rows = partition_pair_rows(upto.drop(columns="repeat"), pairs, metrics, margins, folds, sets,
                                   variance or DEFAULT_VARIANCE)
        if rows.empty:
            continue
        ran = set(runs.loc[runs["repeat"] == look - 1, "variant"])
        rows["look"] = look
        rows["active"] = [a in ran and b in ran for a, b in zip(rows["variant_a"], rows["variant_b"])]
        frames.append(rows)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


DECIDED, FUTILE, OPEN = "decided", "cannot be decided within the repeats allowed", "open"


def contrast_states(verdicts, contrasts, max_repeats: int, metric: str = "average_precision") -> dict:
    """{(A, B): (state, reason)} of each declared contrast after a look, from sequential_family's rows of the primary
    metric: decided (every training size's row decided: better, worse or equivalent), cannot be decided (some
    undecided row needs more than max_repeats repeats for 80% power both to find its observed difference and to
    show it within the margin: comparisons/stats/power.repeats_for_power; a non-binding futility rule, which
    cannot raise the error rate), or open."""
    if verdicts.empty or "metric" not in verdicts:
        return {(a, b): (OPEN, "no rows yet") for a, b in contrasts}
    states = {}
    for a, b in contrasts:
        rows = verdicts[(verdicts["metric"] == metric) & (((verdicts["variant_a"] == a) & (verdicts["variant_b"] == b))
                                                          | ((verdicts["variant_a"] == b) & (verdicts["variant_b"] == a)))]
        if rows.empty:
            states[(a, b)] = (OPEN, "no rows yet")
            continue
        undecided = rows[rows["decided_at"].isna()]
        if undecided.empty:
            said = ", ".join(f"{v} at look {int(k)}" for v, k in zip(rows["verdict"], rows["decided_at"]))
            states[(a, b)] = (DECIDED, said)
            continue

        def hopeless(value) -> bool:
            return value is None or (isinstance(value, float) and np.isnan(value)) or float(value) > max_repeats

        beyond = undecided[[hopeless(m) and hopeless(o) for m, o in zip(undecided["repeats_for_power_margin"],
                                                                        undecided["repeats_for_power_observed"])]]
        if len(beyond):
            states[(a, b)] = (FUTILE, f"{len(beyond)} row(s) need more than {max_repeats} repeats for 80% power")
        else:
            states[(a, b)] = (OPEN, f"{len(undecided)} row(s) undecided")
    return states


def next_look(verdicts, contrasts, max_repeats: int, look: int, order, spent_minutes: float = 0.0,
              budget_minutes: float | None = None, repeat_minutes: dict | None = None) -> dict:
    """What the design does after look `look`: {"states": {(A, B): (state, reason)}, "variants": the variants the
    next repeat runs (those of the open contrasts, in `order`), "stop": why the design stops here, or None}.
    The budget: the design stops when the minutes spent so far plus the next repeat's projection (each of its
    variants' mean minutes a repeat so far: repeat_minutes) would pass budget_minutes."""
    states = contrast_states(verdicts, contrasts, max_repeats)
    open_pairs = [pair for pair, (state, _) in states.items() if state == OPEN]
    variants = [v for v in order if any(v in pair for pair in open_pairs)]
    projected = sum((repeat_minutes or {}).get(v, 0.0) for v in variants)
    if not open_pairs:
        futile = [pair for pair, (state, _) in states.items() if state == FUTILE]
        decided = len(states) - len(futile)
        stop = ("every declared contrast decided" if not futile else
                f"{len(futile)} contrast(s) cannot be decided within {max_repeats} repeats"
                + (f"; {decided} decided" if decided else ""))
    elif look >= max_repeats:
        stop = f"the most repeats allowed ({max_repeats}) ran; {len(open_pairs)} contrast(s) still open"
    elif budget_minutes is not None and spent_minutes + projected > budget_minutes:
        stop = (f"the budget: {spent_minutes:.1f} min spent, the next repeat projected at {projected:.1f} min, "
                f"{budget_minutes:g} min allowed")
    else:
        stop = None
    return {"states": states, "variants": variants if stop is None else [], "stop": stop,
            "projected_minutes": projected}
