"""Measure every requested serving path of one trained model, like for like (the worker calls it).

native-bf16 is the trained model served under bf16 autocast (its fp32 weights unchanged; size on disk
= the saved folder's), measured as the others are. For each path: b1 and b32 latency (comparisons.run.measure.measure_latency), throughput at the
declared batch size 32 (measure_throughput; its first pass gives the test probabilities the
path's quality is computed on), size on disk, cold start and serving peak RSS from a fresh process
that imports only what the path needs (comparisons.run.measure `serve`), and, against native:
decisions at the native model's validation threshold, flipped decisions, the largest probability
change, AP; and batch dependence (the first BATCH_DEPENDENCE_TEXTS test texts scored one by one
against the same texts at batch 32: largest probability change, flipped decisions). The verdict
against native (equivalent within the declared AP margin or not) is the report's (report/serving.py).

A path that does not apply is a row "skipped", one the exporter or the runtime cannot serve as
native does a row "refused", any other failure a row "failed", each with its reason: never a
crashed run. Written: serving/<run>.json (the rows) and, beside the run's predictions,
predictions/<run>.serving.npz (each path's test probabilities at batch 32, keyed by path with '_'
for '-'); the exported graphs go in exports/<run>/ (not committed: .gitignore).
"""
from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from common.metrics import classification_metrics
from common.onnx_graph import ExportRefused
from common.redaction import redact
from comparisons.outputs import atomic_write_bytes, atomic_write_json
from comparisons.run.measure import THROUGHPUT_BATCH, measure_latency, measure_throughput, serve
from comparisons.run.serving.paths import not_applicable
from comparisons.run.serving.text_refusal import RefusedInput
from comparisons.run_folder import run_name

BATCH_DEPENDENCE_TEXTS = 512


def serving_folder(out: Path) -> Path:
    return Path(out) / "serving"


def export_folder(out: Path, name: str) -> Path:
    return Path(out) / "exports" / name


def decisions(proba: np.ndarray, positive_index: int | None, threshold: float | None) -> np.ndarray:
    """The threshold on the positive probability when there is one, else the arg-max (as stats/bootstrap.py)."""
    if threshold is None or positive_index is None or proba.shape[1] != 2:
        return proba.argmax(axis=1)
    return np.where(proba[:, positive_index] >= threshold, positive_index, 1 - positive_index)


def at_batch(predict: Callable, texts: Sequence[str], batch_size: int = THROUGHPUT_BATCH) -> np.ndarray:
    return np.concatenate([predict(list(texts[start:start + batch_size])) for start in range(0, len(texts), batch_size)])


def batch_dependence(predict: Callable, texts: Sequence[str], batched: np.ndarray, positive_index, threshold) -> dict:
    """The same texts alone and at batch 32: the largest probability change and the decisions that flip."""
    alone = np.concatenate([predict([text]) for text in texts])
    change = np.abs(alone - batched[:len(texts)])
    flips = decisions(alone, positive_index, threshold) != decisions(batched[:len(texts)], positive_index, threshold)
    return {"texts": len(texts), "max_proba_change": float(change.max(initial=0.0)), "flips": int(flips.sum())}


def quality(proba: np.ndarray, native: np.ndarray, labels: np.ndarray, positive_index, threshold) -> dict:
    metrics = classification_metrics(labels, proba, positive_index, threshold)
    flips = decisions(proba, positive_index, threshold) != decisions(native, positive_index, threshold)
    return {"average_precision": metrics["average_precision"], "accuracy_at_threshold": metrics["accuracy"],
            "macro_f1_at_threshold": metrics["macro_f1"], "flips_vs_native": int(flips.sum()),
            "max_proba_change_vs_native": float(np.abs(proba - native).max(initial=0.0))}


class BuiltPath:
    """One path under measurement: its predict function and what the probe needs to serve it fresh."""

    def __init__(self, predict: Callable, probe_dir: Path, size_mb: float, model_file: str | None = None, **notes):
        self.predict, self.probe_dir, self.size_mb, self.model_file, self.notes = (predict, probe_dir, size_mb,
                                                                                   model_file, notes)


class ServingRun:
    """Everything about one trained model that the paths are measured against."""

    def __init__(self, spec, out: Path, model, saved_dir: Path, valid, test, native_test: np.ndarray,
                 native_valid: np.ndarray, positive_index, threshold, latency_settings: dict):
        self.spec, self.out, self.model, self.saved_dir = spec, Path(out), model, Path(saved_dir)
        self.valid, self.test = valid, test
        self.native_test, self.native_valid = native_test, native_valid
        self.positive_index, self.threshold, self.latency_settings = positive_index, threshold, latency_settings
        self.name = run_name(spec.variant, spec.seed, spec.train_size)
        self.exports = export_folder(out, self.name)
        self._exported: dict | None = None
        self.test_proba: dict[str, np.ndarray] = {}  # per measured path: its test probabilities at batch 32

    # -- building each path ------------------------------------------------------------------
    def exported(self) -> dict:
        if self._exported is None:
            if not hasattr(self.model, "export_onnx"):
                raise ExportRefused(f"{type(self.model).__name__} has no ONNX export (Backend.export_onnx)")
            self._exported = self.model.export_onnx(self.exports)
        return self._exported

    def onnx_path(self, model_file: str | None = None) -> BuiltPath:
        from comparisons.run.serving.onnx_scorer import OnnxScorer

        self.exported()
        scorer = OnnxScorer.load(self.exports, self.spec.threads, model_file)
        return BuiltPath(scorer.predict_proba, self.exports, scorer.size_mb(model_file), model_file)

    def onnx_int8_path(self) -> BuiltPath:
        """Per-tensor and per-channel int8; per-channel only where it flips fewer validation decisions."""
        from comparisons.run.serving.onnx_scorer import OnnxScorer
        from comparisons.run.serving.quantize import quantize_onnx

        self.exported()
        native = decisions(self.native_valid, self.positive_index, self.threshold)
        flips, files = {}, {}
        for per_channel in (False, True):
            files[per_channel] = quantize_onnx(self.exports, per_channel)
            scorer = OnnxScorer.load(self.exports, self.spec.threads, files[per_channel])
            valid_proba = at_batch(scorer.predict_proba, self.valid.texts)
            flips[per_channel] = int((decisions(valid_proba, self.positive_index, self.threshold) != native).sum())
        per_channel = flips[True] < flips[False]
        (self.exports / files[not per_channel]).unlink()
        chosen = self.onnx_path(files[per_channel])
        chosen.notes = {"int8_weights": "per-channel" if per_channel else "per-tensor",
                        "valid_flips_per_tensor": flips[False], "valid_flips_per_channel": flips[True]}
        return chosen

    def torch_int8_path(self) -> BuiltPath:
        from comparisons.run.serving.quantize import save_torch_int8, torch_int8_copy

        quantized = torch_int8_copy(self.model)
        return BuiltPath(quantized.predict_proba, self.saved_dir, save_torch_int8(quantized, self.exports))

    def native_bf16_path(self) -> BuiltPath:
        """The trained weights, unchanged (the saved folder is what a deployer ships), under bf16 autocast."""
        from comparisons.run.serving.quantize import bf16_copy

        return BuiltPath(bf16_copy(self.model).predict_proba, self.saved_dir, self.size_mb(self.saved_dir))

    @staticmethod
    def size_mb(folder: Path) -> float:
        return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()) / 2**20

    def build(self, path: str) -> BuiltPath:
        return {"native-bf16": self.native_bf16_path, "onnx": self.onnx_path, "onnx-int8": self.onnx_int8_path,
                "torch-int8": self.torch_int8_path}[path]()

    # -- measuring ---------------------------------------------------------------------------
    def common_figures(self, proba: np.ndarray, predict: Callable) -> dict:
        texts = list(self.test.texts[:BATCH_DEPENDENCE_TEXTS])
        return {**quality(proba, self.native_test, self.test.labels, self.positive_index, self.threshold),
                "batch_dependence": batch_dependence(predict, texts, proba, self.positive_index, self.threshold)}

    def native_row(self, record: dict) -> dict:
        keys = ("latency_ms_b1_p50", "latency_ms_b1_p90", "latency_ms_b32_p50", "latency_ms_b32_p90",
                "throughput_per_s", "cold_start_s", "peak_rss_serve_mb", "size_mb", "serve_modules")
        return {"path": "native", "status": "ok", "reason": "", **{k: record.get(k) for k in keys},
                **self.common_figures(self.native_test, self.model.predict_proba)}

    def measured_row(self, path: str) -> dict:
        built = self.build(path)
        latency = measure_latency(built.predict, self.test.texts, **self.latency_settings)
        throughput = measure_throughput(built.predict, self.test.texts)  # batches of 32; first pass = the scores
        proba = self.test_proba[path] = throughput.pop("proba")
        device = getattr(self.spec, "device", "cpu") if path == "native-bf16" else "cpu"  # bf16: native's device
        served = serve(self.spec.variant, built.probe_dir, self.test.texts, self.spec.threads, device, path=path,
                       model_file=built.model_file)
        probe_difference = float(np.abs(served.pop("proba") - proba).max())
        return {"path": path, "status": "ok", "reason": "", **latency,
                "throughput_per_s": throughput["throughput_per_s"], "throughput_cv": throughput["throughput_cv"],
                "cold_start_s": served["cold_start_s"], "peak_rss_serve_mb": served["peak_rss_serve_mb"],
                "serve_import_s": served["serve_import_s"], "serve_load_s": served["serve_load_s"],
                "serve_modules": served["serve_modules"], "serve_max_abs_diff": probe_difference,
                "size_mb": built.size_mb, **built.notes, **self.common_figures(proba, built.predict)}

    def row(self, path: str, backend: str) -> dict:
        native_bf16 = None
        if path == "native-bf16":
            from backends.precision import bf16_native  # torch: imported by this worker's backend already

            native_bf16 = bf16_native(getattr(getattr(self.model, "device_", None), "type", "cpu"))
        reason = not_applicable(path, backend, getattr(self.spec, "precision", "fp32"), native_bf16)
        if reason:
            return {"path": path, "status": "skipped", "reason": reason}
        try:
            return self.measured_row(path)
        except (ExportRefused, RefusedInput) as exc:
            return {"path": path, "status": "refused", "reason": redact(str(exc))}
        except ModuleNotFoundError as exc:
            return {"path": path, "status": "skipped", "reason": f"missing dependency ({exc}): pip install -e '.[serve]'"}
        except Exception as exc:  # a path that fails is a row with its reason; the run goes on
            traceback.print_exc(file=sys.stderr)
            message = str(exc).strip().splitlines()
            return {"path": path, "status": "failed",  # redacted: nothing written holds message text
                    "reason": redact(f"{exc.__class__.__name__}: {message[0] if message else ''}"[:300])}


def measure_serving(run: ServingRun, record: dict, paths: list[str], backend: str) -> dict:
    """Every requested path's row; writes serving/<run>.json and .npz; returns what the run record keeps."""
    rows = [run.native_row(record)]
    probabilities = {"native": run.native_test}
    for path in paths:
        if path == "native":
            continue
        print(f"{run.name}: serving path {path}", file=sys.stderr)
        row = run.row(path, backend)
        rows.append(row)
        print(f"{run.name}: serving path {path}: {row['status']}{' (' + row['reason'] + ')' if row['reason'] else ''}",
              file=sys.stderr)
    for row in rows:  # the probabilities each path's quality figures were computed on
        if row["status"] == "ok" and row["path"] != "native":
            probabilities[row["path"]] = run.test_proba[row["path"]]
    probabilities_file = f"predictions/{run.name}.serving.npz"
    atomic_write_json(serving_folder(run.out) / f"{run.name}.json", {
        "variant": run.spec.variant, "seed": run.spec.seed, "threads": run.spec.threads,
        "probabilities_file": probabilities_file, "versions": serving_versions(),
        "threshold": run.threshold, "positive_index": run.positive_index, "batch_size": THROUGHPUT_BATCH,
        "batch_dependence_texts": min(BATCH_DEPENDENCE_TEXTS, len(run.test)), "paths": rows})
    atomic_write_bytes(run.out / probabilities_file, _npz(**{name.replace("-", "_"): p for name, p in probabilities.items()}))
    return {"serve_paths": [row["path"] for row in rows], "serving_file": f"serving/{run.name}.json"}


def serving_versions() -> dict:
    """The serving libraries' versions (the run record's `versions` keep their own list)."""
    from importlib import metadata

    found = {}
    for name in ("onnx", "onnxruntime", "skl2onnx", "tf2onnx"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def _npz(**arrays) -> bytes:
    import io

    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()
