"""Latency A/B for the backends' own benchmark scripts, with the suite's one set of definitions.

The statistics (p50, p90, CV) and the warm-up rule are comparisons.run.measure's, so a p50 quoted
from a benchmark script means what the run tables mean by it. comparisons.run.measure is
framework-free; the benchmark scripts are entry points, not library code, so this is the one
place a backend-side module imports from the orchestration layer.
"""
from __future__ import annotations

import time

import numpy as np

from comparisons.run.measure import latency_stats

WARMUP_CALLS = 5


def interleaved_latency(backends: dict, texts: list[str], batch: int, repeats: int) -> dict:
    """First call, then p50/p90 ms per predict_proba call after warm-up, backends interleaved call by call.

    Interleaving puts the machine's noise on every backend alike; the first call is reported
    apart (`cold_ms`: the first call in an already-loaded process, not a fresh process's cold
    start, which comparisons.run.measure measures).
    """
    batches = [texts[i : i + batch] for i in range(0, len(texts) - batch + 1, batch)]
    times: dict[str, list[float]] = {name: [] for name in backends}
    cold = {}
    for name, backend in backends.items():
        start = time.perf_counter()
        backend.predict_proba(batches[-1])
        cold[name] = (time.perf_counter() - start) * 1000
        for chunk in batches[:WARMUP_CALLS]:
            backend.predict_proba(chunk)
    for call in range(repeats):
        chunk = batches[call % len(batches)]
        for name, backend in backends.items():
            start = time.perf_counter()
            backend.predict_proba(chunk)
            times[name].append((time.perf_counter() - start) * 1000)
    result = {}
    for name, measured in times.items():
        stats = latency_stats(np.asarray(measured), "ms")
        result[name] = {"cold_ms": round(cold[name], 1), "p50_ms": round(stats["ms_p50"], 3),
                        "p90_ms": round(stats["ms_p90"], 3), "cv": round(stats["ms_cv"], 3)}
    return result
