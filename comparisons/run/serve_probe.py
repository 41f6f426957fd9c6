"""Cold start and serving memory as a deployer meets them, in a FRESH process.

`serve(variant, model_dir, texts, threads, device, path)` starts `python -m comparisons.run.serve_probe`,
which imports what the serving path needs, loads the model, answers one text (time to first
prediction, measured from the moment the process was started) and then scores `texts` (the test
split) in batches of the declared size 32 (comparisons.run.measure.THROUGHPUT_BATCH), as the
throughput and the quality figures score them; the process's peak RSS over all of it is
`peak_rss_serve_mb`. Texts travel on stdin, never on disk. The worker calls `serve` after fit;
nothing of the training process's memory is in these figures.

Paths (comparisons/run/serving/paths.py): native imports the backend's framework and loads its
saved folder; onnx and onnx-int8 import onnxruntime and the backend's tokenizer only (never torch
or TensorFlow: `serve_modules` lists the frameworks the process holds, and a test checks it);
torch-int8 loads the native folder and quantizes it at load, as a deployer of torch.ao would; native-bf16
loads the native folder and predicts under bf16 autocast.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from comparisons.comparability import ROOT
from comparisons.run.measure import THROUGHPUT_BATCH, peak_rss_mb, rss_mb, set_framework_threads
from comparisons.run.parent_death import die_with_parent


FRAMEWORKS = ("torch", "tensorflow", "keras", "transformers", "sklearn", "onnxruntime", "tokenizers")


def serve(variant: str, model_dir: Path, texts: Sequence[str], threads: int, device: str = "auto",
          timeout_s: float = 600, path: str = "native", model_file: str | None = None) -> dict:
    """Run the probe in a fresh process; return its figures and the test probabilities it gave.

    Keys: cold_start_s (process start to first prediction), serve_import_s, serve_load_s,
    serve_first_prediction_s, serve_score_s, rss_serve_loaded_mb, peak_rss_serve_mb, serve_pid,
    serve_modules (the frameworks imported), proba.
    """
    with tempfile.TemporaryDirectory() as scratch:
        result_path = Path(scratch) / "serve.json"
        command = [sys.executable, "-m", "comparisons.run.serve_probe", "--variant", variant, "--model-dir",
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
    die_with_parent()  # a worker killed by its timeout or by Ray takes its probe with it
    parser = argparse.ArgumentParser(prog="python -m comparisons.run.serve_probe",
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
    raise SystemExit(main())
