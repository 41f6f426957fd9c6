"""Serving caps for `select`: a recipe that cannot be served as the user needs is not a candidate.

With any cap, or a CPU-hour price, the pilot fold measures every candidate's serving costs as `run` does (batch-1
latency, the serving process's peak memory, batch-32 throughput: docs/measurement.md); a candidate over a cap is
excluded before the selection's plan is made (recorded in selection.json with its figure and the cap), and every
candidate's figures and cost per million predictions are reported beside its quality. The pilot's runs are the
first runs of their backends in their workers, so their figures are a fresh process's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from common.errors import UserInputError

# cap field -> (the run record's figure, the option, what it is)
CAPS = {"max_latency_ms": ("latency_ms_b1_p50", "--max-latency-ms", "batch-1 latency, median (ms)"),
        "max_memory_mb": ("peak_rss_serve_mb", "--max-memory-mb", "serving peak memory (MB)"),
        "max_cost_per_million": ("cost_per_million", "--max-cost-per-million", "USD per million predictions")}


@dataclass(frozen=True)
class ServingCaps:
    max_latency_ms: float | None = None
    max_memory_mb: float | None = None
    max_cost_per_million: float | None = None
    cpu_hour_price: float | None = None   # USD a CPU-hour (None: the suite's default when a cost is needed)

    @property
    def measured(self) -> bool:
        """Whether the pilot fold measures serving costs (any cap, or a price to report costs at)."""
        return any(value is not None for value in (self.max_latency_ms, self.max_memory_mb,
                                                    self.max_cost_per_million, self.cpu_hour_price))

    def check(self) -> None:
        """One line for a cap or price that is not a positive number."""
        from comparisons.stats.decision import cpu_hour_price

        for name, (_, option, _) in CAPS.items():
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise UserInputError(f"{option} {value:g}: give a positive number, or leave it out for no cap")
        if self.cpu_hour_price is not None:
            cpu_hour_price(self.cpu_hour_price)

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in (*CAPS, "cpu_hour_price")}

    def figures(self, record, threads: int) -> dict[str, float]:
        """A pilot run's serving figures and its cost per million predictions at the price."""
        from comparisons.stats.decision import DEFAULT_CPU_HOUR_PRICE, cost_per_million

        found = {CAPS[name][0]: _number(record.get(CAPS[name][0])) for name in ("max_latency_ms", "max_memory_mb")}
        throughput = _number(record.get("throughput_per_s"))
        found["throughput_per_s"] = throughput
        price = self.cpu_hour_price or DEFAULT_CPU_HOUR_PRICE
        found["cost_per_million"] = cost_per_million(throughput, threads, price) if throughput > 0 else math.nan
        return found

    def excluded(self, serving: dict[str, dict[str, float]]) -> dict[str, str]:
        """{candidate: why it is out} for every candidate over a cap (or whose figure was not measured)."""
        out = {}
        for candidate, figures in serving.items():
            over = []
            for name, (figure, option, what) in CAPS.items():
                cap = getattr(self, name)
                if cap is None:
                    continue
                value = figures.get(figure, math.nan)
                if not value <= cap:  # NaN (not measured) is over every cap
                    over.append(f"{what} {value:,.4g} over {option} {cap:g}")
            if over:
                out[candidate] = "; ".join(over)
        return out


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan
