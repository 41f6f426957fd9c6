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
- `serve(variant, model_dir, texts, threads, device, path)`: cold start and serving memory as a deployer
  meets them, in a FRESH process (`python -m comparisons.run.measure`, below).
Nothing here imports a deep-learning framework; `set_framework_threads` only touches the
frameworks that the caller has already imported, and the fresh process imports only what its path needs.
"""
from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from common.arguments import OneLineParser

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
    start is a fresh process's, measured by `serve` below.
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


# -- cold start and serving memory, in a fresh process --------------------------------------
# `serve(variant, model_dir, texts, threads, device, path)` starts `python -m comparisons.run.measure`,
# which imports what the serving path needs, loads the model, answers one text (time to first
# prediction, measured from the moment the process was started) and then scores `texts` (the test
# split) in batches of the declared size 32 (THROUGHPUT_BATCH), as the
# throughput and the quality figures score them; the process's peak RSS over all of it is
# `peak_rss_serve_mb`. Texts travel on stdin, never on disk. The worker calls `serve` after fit;
# nothing of the training process's memory is in these figures.
#
# Paths (comparisons/run/serving/paths.py): native imports the backend's framework and loads its
# saved folder; onnx and onnx-int8 import onnxruntime and the backend's tokenizer only (never torch
# or TensorFlow: `serve_modules` lists the frameworks the process holds, and a test checks it);
# torch-int8 loads the native folder and quantizes it at load, as a deployer of torch.ao would; native-bf16
# loads the native folder and predicts under bf16 autocast.
FRAMEWORKS = ("torch", "tensorflow", "keras", "transformers", "sklearn", "onnxruntime", "tokenizers")


def serve(variant: str, model_dir: Path, texts: Sequence[str], threads: int, device: str = "auto",
          timeout_s: float = 600, path: str = "native", model_file: str | None = None) -> dict:
    """Run the probe in a fresh process; return its figures and the test probabilities it gave.

    Keys: cold_start_s (process start to first prediction), serve_import_s, serve_load_s,
    serve_first_prediction_s, serve_score_s, rss_serve_loaded_mb, peak_rss_serve_mb, serve_pid,
    serve_modules (the frameworks imported), proba.
    """
    from comparisons.comparability import ROOT

    with tempfile.TemporaryDirectory() as scratch:
        result_path = Path(scratch) / "serve.json"
        command = [sys.executable, "-m", "comparisons.run.measure", "--variant", variant, "--model-dir",
                   str(model_dir), "--threads", str(threads), "--device", device, "--result", str(result_path),
                   "--path", path, *(["--model-file", model_file] if model_file else [])]
        root = str(ROOT)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
        payload = json.dumps(list(texts), ensure_ascii=False).encode("utf-8")
        started = time.time()
        finished = subprocess.run(command, input=payload, capture_output=True, env=env, timeout=timeout_s)
        if finished.returncode != 0 or not result_path.exists():
            lines = finished.stderr.decode("utf-8", errors="replace").strip().splitlines()
            raise RuntimeError(f"serving probe failed: {lines[-1] if lines else 'no message'}")
        result = json.loads(result_path.read_text())
    result["cold_start_s"] = result.pop("first_prediction_at") - started
    result["proba"] = np.asarray(result["proba"], dtype=float)
    return result


def load_path(variant: str, model_dir: Path, threads: int, device: str, path: str, model_file: str | None):
    """(seconds importing, seconds loading, the model): only what `path` needs is imported."""
    t0 = time.perf_counter()
    if path in ("onnx", "onnx-int8"):
        import onnxruntime  # noqa: F401 (timed as the import)

        from comparisons.run.serving.onnx_scorer import OnnxScorer

        t1 = time.perf_counter()
        return t1 - t0, OnnxScorer.load(model_dir, threads, model_file), t1
    from backends.base import backend_class, resolve_variant

    backend, _ = resolve_variant(variant)
    cls = backend_class(backend)  # imports the framework
    set_framework_threads(threads)
    t1 = time.perf_counter()
    model = cls.load(model_dir, device=None if device == "auto" else device)
    if path == "torch-int8":
        from comparisons.run.serving.quantize import torch_int8_copy

        model = torch_int8_copy(model)
    if path == "native-bf16":
        from comparisons.run.serving.quantize import bf16_copy

        model = bf16_copy(model)
    return t1 - t0, model, t1


def probe(variant: str, model_dir: Path, texts: list[str], threads: int, device: str, path: str = "native",
          model_file: str | None = None) -> dict:
    """Inside the fresh process: import, load, one text, then the whole list at batch 32."""
    import_seconds, model, t1 = load_path(variant, model_dir, threads, device, path, model_file)
    t2 = time.perf_counter()
    model.predict_proba(texts[:1])
    first_prediction_at = time.time()
    t3 = time.perf_counter()
    loaded_rss = rss_mb()
    proba = np.concatenate([model.predict_proba(texts[start:start + THROUGHPUT_BATCH])
                            for start in range(0, len(texts), THROUGHPUT_BATCH)])
    t4 = time.perf_counter()
    return {"serve_path": path, "serve_import_s": import_seconds, "serve_load_s": t2 - t1, "serve_first_prediction_s": t3 - t2,
            "serve_score_s": t4 - t3, "first_prediction_at": first_prediction_at,
            "rss_serve_loaded_mb": loaded_rss, "peak_rss_serve_mb": peak_rss_mb(), "serve_pid": os.getpid(),
            "serve_modules": [name for name in FRAMEWORKS if name in sys.modules], "proba": proba.tolist()}


def main(argv=None) -> int:
    from comparisons.run.parent_death import die_with_parent

    die_with_parent()  # a worker killed by its timeout or by Ray takes its probe with it
    parser = OneLineParser(prog="python -m comparisons.run.measure",
                                     description="Load a saved model in this fresh process and score the texts on stdin.")
    parser.add_argument("--variant", required=True)
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--result", type=Path, required=True, help="where to write the figures (JSON)")
    parser.add_argument("--path", default="native", help="serving path: native, native-bf16, onnx, onnx-int8, torch-int8")
    parser.add_argument("--model-file", help="the ONNX graph in --model-dir (default: serving.json's)")
    args = parser.parse_args(argv)
    texts = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    if not texts:
        print("error: no texts on stdin", file=sys.stderr)
        return 2
    result = probe(args.variant, args.model_dir, texts, args.threads, args.device, args.path, args.model_file)
    args.result.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    from common.prompt_exit import exit_promptly

    exit_promptly(main())  # without the frameworks' teardown (common/prompt_exit.py)
