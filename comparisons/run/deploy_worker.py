"""Train a selected recipe on every label it is given and save what a deployer ships (`select` runs it).

    python -m comparisons.run.deploy_worker --spec SPEC_JSON --out DIR   < RunInputs JSON on stdin

Like a run's worker (comparisons/run/worker.py), it imports the one backend it trains, so the driver never imports
a framework, and it is given the data and split by value. The split has no test part: nothing is scored here (the
selection's folds are the estimate of how the recipe does). It trains as a run of the selection did (the same
recipe, budget profile, precision and label budget: its training part and the validation part the recipe uses for
its epochs and its decision threshold), then writes in DIR:

- model/: the native saved model (`backends.base.backend_class(backend).load(DIR/model)` loads it);
- onnx/: the ONNX graph where the backend exports one (docs/serving.md), else the reason in training.json;
- training.json: what was trained on what (sizes, seed, precision), the decision threshold and its rule, the
  training time, parameters, size on disk, the libraries' versions and the numerics identity.

A failure prints one line on stderr and exits 1 (the driver says it and keeps the selection's record).
"""
from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

from common.errors import UserInputError
from comparisons.comparability import library_versions
from comparisons.outputs import atomic_write_json
from comparisons.run.spec import RunInputs, RunSpec

TRAINING_FILE = "training.json"
MODEL_FOLDER, ONNX_FOLDER = "model", "onnx"


def folder_megabytes(folder: Path) -> float:
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()) / 2**20


def deploy(spec: RunSpec, out: Path, inputs: RunInputs) -> dict:
    """Fit, choose the threshold, save native and ONNX; the training record (also written as training.json)."""
    from backends.base import backend_class, build, resolve_variant
    from common.onnx_graph import ExportRefused
    from common.scoring import choose_decision
    from common.splits import budget_parts
    from comparisons.run.measure import set_framework_threads
    from comparisons.run.worker import backend_kwargs

    data, split = inputs.checked_for(spec)
    backend_name, _ = resolve_variant(spec.variant)
    cls = backend_class(backend_name)
    threads = set_framework_threads(spec.threads)
    train_rows, valid_rows = budget_parts(split, data.labels, data.texts, spec.train_size, spec.label_budget,
                                          where="the data", subset_seed=spec.subset_seed)
    train, valid = data.subset(train_rows), data.subset(valid_rows)
    model = build(spec.variant, **backend_kwargs(cls, spec))
    started = time.perf_counter()
    model.fit(train, valid)
    train_seconds = time.perf_counter() - started
    chosen, valid_metrics = choose_decision(model, valid, model.predict_proba(valid.texts), data.positive_index)

    out = Path(out)
    native = out / MODEL_FOLDER
    native.mkdir(parents=True, exist_ok=True)
    model.save(native)
    if hasattr(model, "export_onnx"):
        try:
            onnx = {"exported": True, "folder": ONNX_FOLDER, **model.export_onnx(out / ONNX_FOLDER)}
        except ExportRefused as exc:
            onnx = {"exported": False, "reason": str(exc)}
    else:
        onnx = {"exported": False, "reason": f"{cls.__name__} has no ONNX export"}
    count = model.param_count()
    record = {**spec.record_identity(), "backend": backend_name, "n_train_texts": len(train),
              "n_valid_texts": len(valid), "threshold": chosen["threshold"] if chosen else None,
              "threshold_rule": chosen["rule"] if chosen else "arg-max (more than two classes)",
              "valid_average_precision": valid_metrics.get("average_precision"),
              "train_seconds": train_seconds, "params_total": int(count.total), "threads": threads,
              "model_folder": MODEL_FOLDER, "size_mb": folder_megabytes(native), "onnx": onnx,
              "class_names": list(data.class_names), "positive_index": data.positive_index,
              "versions": library_versions(), "fit_info": getattr(model, "fit_info_", {})}
    atomic_write_json(out / TRAINING_FILE, record)
    return record


def main(argv=None) -> int:
    from comparisons.run.parent_death import die_with_parent

    die_with_parent()
    parser = argparse.ArgumentParser(prog="python -m comparisons.run.deploy_worker")
    parser.add_argument("--spec", required=True, help="the RunSpec as JSON")
    parser.add_argument("--out", required=True, type=Path)
    options = parser.parse_args(argv)
    try:
        deploy(RunSpec.from_json(options.spec), options.out, RunInputs.from_json_bytes(sys.stdin.buffer.read()))
    except UserInputError as exc:
        print(f"failed: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # the line says why; the traceback goes to the log the driver keeps
        traceback.print_exc()
        print(f"failed: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    from common.prompt_exit import exit_promptly

    exit_promptly(main())
