"""The suite's one measuring module: threads, peak memory (VmHWM), latency, throughput.

Used by the worker, the serving probe, the backends' benchmark scripts and the lessons, so a
"p50", a "peak RSS" or a "throughput" means the same thing wherever it is quoted:
- `time_calls(call, min_calls, min_seconds, warmup=3)`: per-call wall times (ms) after warm-up,
  repeated until a count AND a time are reached; `latency_stats(times, prefix)`: p50, p90, CV.
- `PeakRss()`: a context that resets VmHWM on entry; `.mb` is the peak inside it, `.baseline_mb`
  the RSS at entry (Linux; None elsewhere). `peak_rss_mb`, `reset_peak_rss`, `rss_mb` underneath.
- `measure_throughput(predict, texts, batch_size)`: one untimed pass over the texts first (it
  pays any compilation/tracing, reported as `compile_seconds`, and its probabilities are returned
  as `proba`, so the worker scores the test split once), then the timed pass: the same texts in
  the same order, in batches of the declared size.
Nothing here imports a deep-learning framework; `set_framework_threads` only touches the
frameworks that the caller has already imported.
"""
from __future__ import annotations

import os
import platform
import re
import sys
import time
from typing import Callable, Sequence

import numpy as np

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")


def thread_environment(threads: int) -> dict[str, str]:
    """Environment variables that cap every framework's thread pools alike (set before import)."""
    env = {name: str(threads) for name in THREAD_VARIABLES}
    env["TF_NUM_INTEROP_THREADS"] = "1"
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"  # keep TensorFlow's start-up chatter out of the logs
    env["TOKENIZERS_PARALLELISM"] = "false"
    return env


def set_framework_threads(threads: int) -> dict:
    """Apply the thread count to already-imported frameworks; return what is in force."""
    record = {"threads": threads, **{k: os.environ.get(k) for k in THREAD_VARIABLES}}
    if "torch" in sys.modules:
        import torch

        torch.set_num_threads(threads)
        record["torch_num_threads"] = torch.get_num_threads()
        record["torch_num_interop_threads"] = torch.get_num_interop_threads()
    if "tensorflow" in sys.modules:
        import tensorflow as tf

        try:  # explicit as well as through the environment; only possible before TF starts its runtime
            tf.config.threading.set_intra_op_parallelism_threads(threads)
            tf.config.threading.set_inter_op_parallelism_threads(int(os.environ.get("TF_NUM_INTEROP_THREADS", "1")))
        except RuntimeError:
            pass
        record["tf_intra_op"] = tf.config.threading.get_intra_op_parallelism_threads()
        record["tf_inter_op"] = tf.config.threading.get_inter_op_parallelism_threads()
    return record


# -- memory ------------------------------------------------------------------------------
def _status_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        match = re.search(rf"^{field}:\s+(\d+) kB", status.read(), re.MULTILINE)
    return int(match.group(1)) if match else 0


def rss_mb() -> float:
    """Resident memory now, in MB."""
    return _status_kb("VmRSS") / 1024


def peak_rss_mb() -> float:
    """Peak resident memory since start or since the last `reset_peak_rss`, in MB."""
    return _status_kb("VmHWM") / 1024


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux: write 5 to clear_refs); False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
        return True
    except OSError:
        return False


class PeakRss:
    """`with PeakRss() as peak: ...` then `peak.mb`: the peak resident memory inside the block (MB).

    Resets VmHWM on entry (so the peak is the block's, not the process's history) and reads it on
    exit; `baseline_mb` is the RSS at entry. Where VmHWM cannot be reset, `mb` is None.
    """

    def __enter__(self) -> "PeakRss":
        self.resettable = reset_peak_rss()
        self.baseline_mb = rss_mb()
        self.mb: float | None = None
        return self

    def __exit__(self, *exc) -> None:
        self.mb = peak_rss_mb() if self.resettable else None


# -- latency -----------------------------------------------------------------------------
def time_calls(call: Callable[[], object], min_calls: int, min_seconds: float,
               max_calls: int = 2000, max_seconds: float = 60.0, warmup: int = 3) -> np.ndarray:
    """Per-call wall times in ms: warm-up first, then repeat until a count AND a time are reached."""
    for _ in range(warmup):
        call()
    times: list[float] = []
    started = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1000)
        elapsed = time.perf_counter() - started
        if (len(times) >= min_calls and elapsed >= min_seconds) or len(times) >= max_calls or elapsed >= max_seconds:
            return np.asarray(times)


def latency_stats(times_ms: np.ndarray, prefix: str) -> dict[str, float]:
    return {
        f"{prefix}_p50": float(np.percentile(times_ms, 50)),
        f"{prefix}_p90": float(np.percentile(times_ms, 90)),
        f"{prefix}_cv": float(np.std(times_ms) / np.mean(times_ms)),
        f"{prefix}_calls": int(len(times_ms)),
    }


def latency_batches(texts: Sequence[str]) -> dict[int, list[str]]:
    """Fixed inputs, the same for every backend: the median-length text (batch 1) and 32 texts
    spread evenly over the length distribution (batch 32)."""
    by_length = sorted(texts, key=len)
    spread = [by_length[round(i * (len(by_length) - 1) / 31)] for i in range(32)]
    return {1: [by_length[len(by_length) // 2]], 32: spread}


def measure_latency(predict: Callable[[Sequence[str]], np.ndarray], texts: Sequence[str],
                    min_calls: int, min_seconds: float) -> dict[str, float]:
    """Warm end-to-end latency (raw strings in, probabilities out) at batch 1 and 32.

    The same batch is repeated, so the spread (coefficient of variation) is the machine's noise,
    not the mix of message lengths; throughput over whole splits covers the varied inputs. Cold
    start is a fresh process's, measured by comparisons.run.serve_probe.
    """
    batches = latency_batches(texts)
    result: dict[str, float] = {}
    for size, batch in batches.items():
        times = time_calls(lambda batch=batch: predict(batch), min_calls, min_seconds)
        result.update(latency_stats(times, f"latency_ms_b{size}"))
    return result


THROUGHPUT_BATCH = 32  # the one declared batch size of the throughput column, for every backend
THROUGHPUT_PASSES = 5  # timed passes; throughput is their median, with their spread (CV)


def measure_throughput(predict: Callable[[Sequence[str]], np.ndarray], texts: Sequence[str],
                       batch_size: int = THROUGHPUT_BATCH, timed_passes: int = THROUGHPUT_PASSES) -> dict[str, float]:
    """Texts per second over `texts` in their order, in batches of `batch_size`, compilation apart.

    The first pass (untimed for throughput) meets every batch shape once, so graph compilation,
    tracing and lazy initialisation happen there; `compile_seconds` is how much longer it took
    than the median timed pass (0 for a backend that compiles nothing, up to noise). Throughput
    is the median of `timed_passes` timed passes, `throughput_cv` their coefficient of variation.
    `proba` holds the first pass's outputs, row i for texts[i]: the caller's scoring of these texts.
    """
    def one_pass() -> tuple[float, np.ndarray]:
        started = time.perf_counter()
        outputs = score_in_batches(predict, texts, batch_size)
        return time.perf_counter() - started, outputs

    first, outputs = one_pass()
    timed = np.array([one_pass()[0] for _ in range(max(1, timed_passes))])
    median = float(np.median(timed))
    return {"throughput_per_s": len(texts) / median, "throughput_batch": batch_size,
            "throughput_texts": len(texts), "throughput_passes": len(timed),
            "throughput_cv": float(timed.std(ddof=1) / timed.mean()) if len(timed) > 1 else 0.0,
            "first_pass_seconds": first, "compile_seconds": max(0.0, first - median),
            "proba": outputs}


def score_in_batches(predict: Callable[[Sequence[str]], np.ndarray], texts: Sequence[str],
                     batch_size: int = THROUGHPUT_BATCH) -> np.ndarray:
    """`predict` over `texts` in their order, in batches of `batch_size`: the throughput pass's scoring, which a
    quality-only run repeats so that its figures are the ones a measured run records (batching can move floats)."""
    return np.concatenate([predict(list(texts[start:start + batch_size])) for start in range(0, len(texts), batch_size)])


def machine_description() -> dict:
    """CPU model and count, OS, Python: for the manifest (the CPU as comparisons/numerics.py reads it)."""
    from comparisons.numerics import cpu_facts

    return {"cpu": cpu_facts()["model_name"] or "", "cpu_count": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version()}
