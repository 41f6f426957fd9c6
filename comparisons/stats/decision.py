"""The decision at the top of a page: the recipes shown not worse than the best on the primary metric by more than
the declared margin (the best's group), the cheapest of them to serve with its costs, and the cost of one million
predictions on the measuring machine at the measured throughput and a stated CPU-hour price (`--cpu-hour-price`,
default DEFAULT_CPU_HOUR_PRICE).

The rule (non-inferiority): a recipe X joins the group of the best B (the highest mean) only when the row of the
pair in verdicts.csv is a deciding one (a declared contrast, or every pair when none is declared) and its family
interval of X − B (ci_low_family, ci_high_family: the interval at Holm's strictest level, alpha / family size)
lies above −margin. That is the non-inferiority half of the row's equivalence test, taken at the family's strictest
level: the family's intervals hold together (Bonferroni), so the claim stays valid although the data chose B, and
no hypothesis is added to the family (verdicts.csv is unchanged). An exploratory pair neither admits nor excludes a
recipe. "Not shown worse" (inconclusive) is not enough: where no recipe but the best is shown within the margin,
the decision says it cannot say whether a cheaper one would do, and gives for each the largest loss its interval
still allows (−ci_low_family of X − B). It names any missing cost figure instead of guessing it, and gives the
verdict engine's power figure (`repeats_for_power_margin`) where verdicts.csv has it.

Costs: recipe_variants.csv's medians over runs (partitions) or aggregate.csv's means over seeds (one split).
One million predictions take 10^6 / throughput seconds on `threads` cores: that many CPU-hours, priced.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from common.errors import UserInputError
from common.metric_names import DECISION_COSTS
from comparisons.stats.family import PRIMARY

# USD per CPU-hour: a round figure near on-demand cloud prices of one vCPU-hour in 2025-26 (a 2-vCPU general-purpose
# instance costs about $0.08-0.10 an hour, so $0.04-0.05 a vCPU-hour); set your own with --cpu-hour-price.
DEFAULT_CPU_HOUR_PRICE = 0.05
COSTS = DECISION_COSTS


def cpu_hour_price(value) -> float:
    """--cpu-hour-price checked: a positive, finite number (USD per CPU-hour)."""
    if value is None:
        return DEFAULT_CPU_HOUR_PRICE
    try:
        price = float(value)
    except (TypeError, ValueError):
        price = float("nan")
    if not (math.isfinite(price) and price > 0):
        raise UserInputError(f"--cpu-hour-price must be a positive number (USD per CPU-hour), e.g. "
                             f"--cpu-hour-price {DEFAULT_CPU_HOUR_PRICE}; got {value!r}")
    return price


@dataclass
class Decision:
    best: str | None                  # the highest mean on the primary metric
    group: list[str]                  # the best, then every recipe shown not worse than it by more than the margin
    cheapest: str | None              # the group's lowest cost per million predictions (else b=1 latency)
    decided: bool                     # some recipe besides the best is shown within the margin of it
    equivalent: bool                  # the cheapest is equivalent to the best within the margin (its verdict)
    margin: float | None
    price: float
    rows: pd.DataFrame                # per variant: mean, the COSTS, cost_per_million
    missing: list[str] = field(default_factory=list)  # cost figures the cheapest lacks
    repeats: int | None = None        # repeats_for_power_margin of the best against the cheapest open one (or the most)
    detectable: float | None = None   # smallest_detectable_difference of the best against that one
    paths: pd.DataFrame = field(default_factory=pd.DataFrame)  # serving paths (--serve): variant (path), mean, costs
    open: dict[str, float] = field(default_factory=dict)  # neither in the group nor shown worse: largest loss allowed
    worse: list[str] = field(default_factory=list)        # shown worse than the best (a verdict)
    untested: list[str] = field(default_factory=list)     # no deciding row with the best (exploratory or absent)
    measured_on: str | None = None    # the CPU kind and thread count of the cost figures (the report fills it in)


def oriented_family_low(row, variant: str) -> float:
    """The lower bound of `variant` − the other in the row's family interval (NaN where the file has none)."""
    low, high = pd.to_numeric(pd.Series([row.get("ci_low_family"), row.get("ci_high_family")]), errors="coerce")
    return float(low) if row["variant_a"] == variant else float(-high)


def deciding(row) -> bool:
    """A row that may decide: a declared contrast, or every pair when none is declared (older files: no column)."""
    contrast = row.get("contrast")
    return not isinstance(contrast, str) or contrast != "exploratory"


def cost_per_million(throughput_per_s, threads: int | None, price: float = DEFAULT_CPU_HOUR_PRICE):
    """USD for a million predictions at the batch-32 throughput, `threads` CPUs busy, `price` a CPU-hour (NaN when
    the threads are unknown); works on numbers and on pandas columns alike."""
    return 1e6 / throughput_per_s / 3600 * (threads or float("nan")) * price


def decide(variants: pd.DataFrame, pairs: pd.DataFrame | None, threads: int | None,
           price: float = DEFAULT_CPU_HOUR_PRICE) -> Decision:
    """variants: variant, mean (the primary metric) and the COSTS columns; pairs: verdicts.csv's primary rows."""
    rows = variants.copy()
    for cost in COSTS:
        rows[cost] = pd.to_numeric(rows.get(cost), errors="coerce") if cost in rows else float("nan")
    rows["cost_per_million"] = cost_per_million(rows["throughput_per_s"], threads, price)
    ranked = rows.dropna(subset=["mean"]).sort_values("mean", ascending=False)
    if ranked.empty:
        return Decision(None, [], None, False, False, None, price, rows)
    best = ranked["variant"].iloc[0]
    pairs = pd.DataFrame() if pairs is None else pairs[pairs["metric"] == PRIMARY]
    margins = pd.to_numeric(pairs["margin"], errors="coerce").dropna() if "margin" in pairs else pd.Series(dtype=float)
    margin = float(margins.iloc[0]) if len(margins) else None  # an old folder's verdicts declared none
    against = {}  # other variant -> its deciding verdict row with the best
    for _, row in pairs.iterrows():
        if best in (row["variant_a"], row["variant_b"]) and deciding(row):
            against[row["variant_b"] if row["variant_a"] == best else row["variant_a"]] = row
    group, open_, worse, untested = [best], {}, [], []
    for variant in ranked["variant"].iloc[1:]:
        row = against.get(variant)
        if row is None:
            untested.append(variant)
            continue
        low = oriented_family_low(row, variant)
        if row["verdict"] == ("A better" if row["variant_a"] == best else "B better"):
            worse.append(variant)
        elif margin is not None and math.isfinite(low) and low > -margin:
            group.append(variant)
        else:
            open_[variant] = -low if math.isfinite(low) else float("nan")
    members = rows.set_index("variant").loc[group]
    key = "cost_per_million" if members["cost_per_million"].notna().any() else "latency_ms_b1_p50"
    cheapest = members[key].idxmin() if members[key].notna().any() else None
    decided = len(group) > 1
    equivalent = cheapest in against and against[cheapest]["verdict"] == "equivalent"
    # the power figures: of the best against the cheapest in its group, else against the cheapest still open
    everyone = rows.set_index("variant")
    still_open = sorted(open_, key=lambda v: (everyone.loc[v, key] if pd.notna(everyone.loc[v, key]) else math.inf))
    chosen = against.get(cheapest) if cheapest not in (None, best) else (against.get(still_open[0]) if still_open else None)
    repeats = None
    if "repeats_for_power_margin" in pairs and against:
        values = [chosen["repeats_for_power_margin"]] if chosen is not None else \
            [row["repeats_for_power_margin"] for row in against.values()]
        values = [v for v in pd.to_numeric(pd.Series(values), errors="coerce") if math.isfinite(v)]
        repeats = int(math.ceil(max(values))) if values else None
    detectable = (float(chosen["smallest_detectable_difference"]) if chosen is not None
                  and pd.notna(chosen.get("smallest_detectable_difference")) else None)
    missing = [] if cheapest is None else [c for c in COSTS if pd.isna(members.loc[cheapest, c])]
    if cheapest is not None and pd.isna(members.loc[cheapest, "cost_per_million"]) and "throughput_per_s" not in missing:
        missing.append("threads")
    if cheapest is None:
        missing = ["throughput_per_s", "latency_ms_b1_p50"]
    return Decision(best, group, cheapest, decided, equivalent, margin, price, rows, missing, repeats, detectable,
                    open=open_, worse=worse, untested=untested)


def pareto_front(rows: pd.DataFrame, cost: str) -> list[str]:
    """The variants no other beats on both: lower or equal cost and higher or equal mean, one strictly."""
    found = rows.dropna(subset=[cost, "mean"])
    return [r.variant for r in found.itertuples() if not any(
        (o[cost] <= getattr(r, cost) and o["mean"] >= r.mean) and (o[cost] < getattr(r, cost) or o["mean"] > r.mean)
        for _, o in found.iterrows())]


