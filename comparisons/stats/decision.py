"""The decision at the top of a page: for the declared margin, the recipes not shown worse than the best on
the primary metric (the best's tie group, from verdicts.csv), the cheapest of them to serve with its costs,
and the cost of one million predictions on the measuring machine at the measured throughput and a stated
CPU-hour price (`--cpu-hour-price`, default DEFAULT_CPU_HOUR_PRICE). Where the data cannot say, it says so,
names any cost figure that is missing instead of guessing it, and gives the verdict engine's power figure
(`repeats_for_power_margin`) where verdicts.csv has it.

Costs: recipe_variants.csv's medians over runs (partitions) or aggregate.csv's means over seeds (one split).
One million predictions take 10^6 / throughput seconds on `threads` cores: that many CPU-hours, priced.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from common.errors import UserInputError
from comparisons.stats.family import PRIMARY

# USD per CPU-hour: a round figure near on-demand cloud prices of one vCPU-hour in 2025-26 (a 2-vCPU general-purpose
# instance costs about $0.08-0.10 an hour, so $0.04-0.05 a vCPU-hour); set your own with --cpu-hour-price.
DEFAULT_CPU_HOUR_PRICE = 0.05
COSTS = ("latency_ms_b1_p50", "throughput_per_s", "peak_rss_serve_mb", "size_mb", "train_seconds")


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
    tie: list[str]                    # not shown worse than the best (the best first)
    cheapest: str | None              # the tie group's lowest cost per million predictions (else b=1 latency)
    decided: bool                     # some verdict with the best stands (better, or equivalent)
    equivalent: bool                  # the cheapest is equivalent to the best within the margin
    margin: float | None
    price: float
    rows: pd.DataFrame                # per variant: mean, the COSTS, cost_per_million
    missing: list[str] = field(default_factory=list)  # cost figures the cheapest lacks
    repeats: int | None = None        # repeats_for_power_margin of the best against the cheapest (or the most)
    detectable: float | None = None   # smallest_detectable_difference of the best against the cheapest
    paths: pd.DataFrame = field(default_factory=pd.DataFrame)  # serving paths (--serve): variant (path), mean, costs


def decide(variants: pd.DataFrame, pairs: pd.DataFrame | None, threads: int | None,
           price: float = DEFAULT_CPU_HOUR_PRICE) -> Decision:
    """variants: variant, mean (the primary metric) and the COSTS columns; pairs: verdicts.csv's primary rows."""
    rows = variants.copy()
    for cost in COSTS:
        rows[cost] = pd.to_numeric(rows.get(cost), errors="coerce") if cost in rows else float("nan")
    cpu_hours = 1e6 / rows["throughput_per_s"] / 3600 * (threads or float("nan"))
    rows["cost_per_million"] = cpu_hours * price
    ranked = rows.dropna(subset=["mean"]).sort_values("mean", ascending=False)
    if ranked.empty:
        return Decision(None, [], None, False, False, None, price, rows)
    best = ranked["variant"].iloc[0]
    pairs = pd.DataFrame() if pairs is None else pairs[pairs["metric"] == PRIMARY]
    against = {}  # other variant -> (its verdict row with the best)
    for _, row in pairs.iterrows():
        if best in (row["variant_a"], row["variant_b"]):
            against[row["variant_b"] if row["variant_a"] == best else row["variant_a"]] = row

    def worse(variant: str) -> bool:  # a verdict says the best is better than it
        row = against.get(variant)
        return row is not None and row["verdict"] == ("A better" if row["variant_a"] == best else "B better")
    tie = [best] + [v for v in ranked["variant"].iloc[1:] if not worse(v)]
    members = rows.set_index("variant").loc[tie]
    key = "cost_per_million" if members["cost_per_million"].notna().any() else "latency_ms_b1_p50"
    cheapest = members[key].idxmin() if members[key].notna().any() else None
    decided = any(row["verdict"] != "inconclusive" for row in against.values())
    equivalent = cheapest is not None and cheapest in against and against[cheapest]["verdict"] == "equivalent"
    margins = pd.to_numeric(pairs["margin"], errors="coerce").dropna() if "margin" in pairs else pd.Series(dtype=float)
    margin = float(margins.iloc[0]) if len(margins) else None  # an old folder's verdicts declared none
    repeats = None
    if "repeats_for_power_margin" in pairs and against:
        chosen = against.get(cheapest) if cheapest != best else None
        values = [chosen["repeats_for_power_margin"]] if chosen is not None else \
            [row["repeats_for_power_margin"] for row in against.values()]
        values = [v for v in pd.to_numeric(pd.Series(values), errors="coerce") if math.isfinite(v)]
        repeats = int(math.ceil(max(values))) if values else None
    chosen = against.get(cheapest)
    detectable = (float(chosen["smallest_detectable_difference"]) if chosen is not None
                  and pd.notna(chosen.get("smallest_detectable_difference")) else None)
    missing = [] if cheapest is None else [c for c in COSTS if pd.isna(members.loc[cheapest, c])]
    if cheapest is not None and pd.isna(members.loc[cheapest, "cost_per_million"]) and "throughput_per_s" not in missing:
        missing.append("threads")
    if cheapest is None:
        missing = ["throughput_per_s", "latency_ms_b1_p50"]
    return Decision(best, tie, cheapest, decided, equivalent, margin, price, rows, missing, repeats, detectable)


def pareto_front(rows: pd.DataFrame, cost: str) -> list[str]:
    """The variants no other beats on both: lower or equal cost and higher or equal mean, one strictly."""
    found = rows.dropna(subset=[cost, "mean"])
    return [r.variant for r in found.itertuples() if not any(
        (o[cost] <= getattr(r, cost) and o["mean"] >= r.mean) and (o[cost] < getattr(r, cost) or o["mean"] > r.mean)
        for _, o in found.iterrows())]


