"""Framework-free latency helper for the backends' own benchmark scripts (A/B within one run)."""
from __future__ import annotations

import statistics
import time

import numpy as np


def interleaved_latency(backends: dict, texts: list[str], batch: int, repeats: int) -> dict:
    """Cold first call, then median and p90 milliseconds per predict_proba call, backends interleaved."""
    batches = [texts[i : i + batch] for i in range(0, len(texts) - batch + 1, batch)]
    times: dict[str, list[float]] = {name: [] for name in backends}
    cold = {}
    for name, backend in backends.items():
        start = time.perf_counter()
        backend.predict_proba(batches[-1])
        cold[name] = (time.perf_counter() - start) * 1000
        for chunk in batches[:5]:  # warm-up
            backend.predict_proba(chunk)
    for call in range(repeats):
        chunk = batches[call % len(batches)]
        for name, backend in backends.items():
            start = time.perf_counter()
            backend.predict_proba(chunk)
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: {"cold_ms": round(cold[name], 1), "p50_ms": round(statistics.median(t), 3),
                   "p90_ms": round(float(np.percentile(t, 90)), 3)} for name, t in times.items()}
