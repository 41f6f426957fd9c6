"""One worker process = one (variant, seed) run: fit, measure, write one JSON and predictions.

Run by an executor as `python -m comparisons.run.worker --out DIR --spec JSON` with the run's data
(RunInputs JSON) on stdin, so it reads no file of the driver's; it imports the one backend it
runs. Exit codes: 0 done (its JSON is written), 3 a dependency is missing (skipped), other
non-zero = failed (the orchestrator writes the failed row from the last stderr line).

Costs are measured alike for every backend (comparisons.run.measure): fit wall time with epochs run
and s/epoch, the training peak RSS, warm latency, throughput over the test texts at one batch
size with compilation apart; then the saved model is served by a fresh process
(comparisons.run.measure `serve`) for cold start and serving memory. A training-size sweep's subset runs
skip the serving costs: the same model, measured once at the whole training split. With `--serve`
the other serving paths (ONNX Runtime fp32 and int8, torch int8) are measured after native, alike
(comparisons/run/serving/measure_paths.py); their rows go in serving/<run>.json. The record
carries what makes runs comparable (comparisons.comparability): the code's hash (and commit, dirty
flag), threads, requested device, profile, split and data hashes, library versions, precision, and the
numerics identity (comparisons/numerics.py) with what the imported frameworks dispatched to.

`--warm` (a quality-only design's local runs, comparisons/run/warm.py): the same runs, one after another in one
process per backend, each request read from stdin; `worker_run_number` in the record says which of the process's
runs it was (1: a fresh process, as without --warm).
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

from common.arguments import OneLineParser
from common.errors import UserInputError
from common.progress import MARK_VARIABLE
from comparisons.comparability import code_changed, library_versions
from comparisons.run.measure import (PeakRss, machine_description, measure_latency, measure_throughput, rss_mb,
                                 score_in_batches, set_framework_threads, serve)
from comparisons.numerics import observed_dispatch
from comparisons.outputs import atomic_write_bytes, atomic_write_json
from comparisons.run.parent_death import die_with_parent
from comparisons.run.profiles import profile, variant_overrides
from comparisons.run.spec import RunInputs, RunSpec
from comparisons.run_folder import prediction_path, run_name, worker_record_path
from comparisons.run.serving.paths import serve_paths

EXIT_MISSING_DEPENDENCY = 3
RUNS_IN_PROCESS = 0  # this process's runs so far: 1 for a fresh worker's, more for a warm one's later runs
DONE_TOKEN = "\x1fdone:"  # after the progress mark: a warm worker's end of one run, then its exit code
FAULT_VARIABLE = "COMPARISONS_FAULT"  # testing hook: "<variant>[@seed]:crash|hang|unusable_validation", comma-separated


def parse_args(argv=None) -> argparse.Namespace:
    parser = OneLineParser(prog="python -m comparisons.run.worker",
                                     description="One run; its data (RunInputs JSON) is read from stdin.")
    parser.add_argument("--out", type=Path, help="folder for this run's record and predictions")
    parser.add_argument("--spec", help="the RunSpec as JSON")
    parser.add_argument("--warm", action="store_true",
                        help="run the requests that arrive on stdin one after another (comparisons/run/warm.py)")
    options = parser.parse_args(argv)
    if not options.warm and (options.out is None or options.spec is None):
        parser.error("--out and --spec are required (or --warm)")
    return options


def inject_fault(variant: str, seed: int) -> None:
    """Crash, hang or meet an unusable validation split on purpose when the testing hook names this run."""
    for item in filter(None, os.environ.get(FAULT_VARIABLE, "").split(",")):
        name, _, fault = item.rpartition(":")
        if name in (variant, f"{variant}@{seed}"):
            if fault == "crash":
                os.abort()
            if fault == "hang":
                time.sleep(10**6)
            if fault == "unusable_validation":  # what BestEpoch.require() raises when every epoch scored NaN
                from common.selection import UnusableValidationError

                raise UnusableValidationError("no epoch had a finite validation score (testing hook): training "
                                              "diverged or validation cannot be scored")


def backend_kwargs(cls, args) -> dict:  # args: a RunSpec
    """Profile budget + seed + device/model options that this backend accepts."""
    accepted = inspect.signature(cls.__init__).parameters
    kwargs = variant_overrides(args.profile, args.variant)
    kwargs["seed"] = args.seed
    if "device" in accepted:
        kwargs["device"] = args.device
    if "precision" in accepted:  # fp32 | bf16, chosen by the driver (comparisons/run/precision.py)
        kwargs["precision"] = args.precision
    if args.hf_model and "model" in accepted:
        kwargs["model"] = args.hf_model
    return kwargs


def node_description() -> dict:
    """The machine this run ran on (it differs from the driver's under Ray)."""
    machine = machine_description()
    return {"node": platform.node(), "node_cpu": machine["cpu"], "node_cpu_count": machine["cpu_count"]}


def gpu_peak_mb() -> float | None:
    if "torch" in sys.modules:
        import torch

        if torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch.cuda.max_memory_allocated() / 2**20
    return None


def run(args: RunSpec, out: Path, inputs: RunInputs) -> dict:
    from backends.base import backend_class, resolve_variant  # light: no framework yet
    from common.metrics import brier_score, expected_calibration_error
    from common.scoring import score_fitted
    from common.splits import budget_parts

    data, split = inputs.checked_for(args)
    backend_name, _ = resolve_variant(args.variant)
    process_start_rss = rss_mb()
    t_import = time.perf_counter()
    cls = backend_class(backend_name)  # imports the framework
    import_seconds = time.perf_counter() - t_import
    threads = set_framework_threads(args.threads)
    inject_fault(args.variant, args.seed)

    # at a training size: a nested stratified subset, its validation part carved from it (label budget train+valid)
    # or the split's whole validation part (train); common/splits.py budget_parts
    train_rows, valid_rows = budget_parts(split, data.labels, data.texts, args.train_size, args.label_budget,
                                          subset_seed=args.subset_seed)  # a draw's own subset
    train, valid, test = data.subset(train_rows), data.subset(valid_rows), data.subset(split.test)
    kwargs = backend_kwargs(cls, args)
    from backends.base import build

    model = build(args.variant, **kwargs)
    baseline_rss = rss_mb()

    if args.device != "cpu" and "torch" in sys.modules:
        import torch

        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
    with PeakRss() as train_peak:  # fit wall time, each epoch's validation included, for every backend
        t0 = time.perf_counter()
        model.fit(train, valid)
        train_seconds = time.perf_counter() - t0
    epochs_run = (getattr(model, "fit_info_", None) or {}).get("epochs_run") or 1  # one pass: no epochs

    valid_proba = model.predict_proba(valid.texts)
    # Serving costs (latency, throughput, cold start, serving memory) belong to the model, not to
    # how many messages trained it: a training-size sweep measures them once, at the whole training
    # split; its subset runs record quality, train time and training memory only.
    serving_costs = args.train_size is None and args.measure_costs  # `reproduce` reruns compare quality only
    throughput, latency = {}, {}
    if serving_costs:
        # the test split is scored once: the throughput's untimed first pass (same texts, same order,
        # one batch size, compilation paid there) gives the probabilities the metrics are computed on
        throughput = measure_throughput(model.predict_proba, test.texts)
        test_proba = throughput.pop("proba")
        if not cls.compiles:  # the first pass's extra time is warm-up, not compilation: first_pass_seconds keeps it
            throughput["compile_seconds"] = None
        latency = measure_latency(model.predict_proba, test.texts, **profile(args.profile)["latency"])
    elif args.train_size is None:  # quality only (`reproduce`): the throughput pass's batches, so the same figures
        test_proba = score_in_batches(model.predict_proba, test.texts)
    else:
        test_proba = model.predict_proba(test.texts)  # the test split, scored once

    # the suite's one fit-and-score (common/scoring.py): the threshold chosen on validation, the test part scored once
    scored = score_fitted(model, valid, test, data.positive_index, test_proba=test_proba, valid_proba=valid_proba)
    metrics, valid_metrics = scored.test, scored.valid
    calibration = {"brier": brier_score(test.labels, test_proba, data.positive_index),  # as the reports computed them
                   "ece": expected_calibration_error(test.labels, test_proba, data.positive_index)}  # from the npz
    # how much of the test input the model could not see; None for a backend without a vocabulary
    unknown = model.unknown_tokens(test.texts) if hasattr(model, "unknown_tokens") else None
    at_threshold = {}
    if scored.test_at_threshold is not None:
        at_threshold = {"threshold": scored.threshold, "threshold_rule": scored.threshold_rule,
                        "accuracy_at_threshold": scored.test_at_threshold["accuracy"],
                        "macro_f1_at_threshold": scored.test_at_threshold["macro_f1"]}

    served: dict = {}
    serving: dict = {"serve_paths": ["native"]}
    with tempfile.TemporaryDirectory() as saved:
        model.save(Path(saved))
        size_mb = sum(p.stat().st_size for p in Path(saved).rglob("*") if p.is_file()) / 2**20
        if serving_costs:
            served = serve(args.variant, Path(saved), test.texts, args.threads, args.device)  # a fresh process
            served["serve_max_abs_diff"] = float(np.abs(served.pop("proba") - test_proba).max())  # save/load trip
            paths = serve_paths(args.serve)
            if paths != ["native"]:  # the other serving paths, measured alike (comparisons/run/serving/)
                from comparisons.run.serving.measure_paths import ServingRun, measure_serving

                threshold = at_threshold.get("threshold")
                serving_run = ServingRun(args, out, model, Path(saved), valid, test, test_proba, valid_proba,
                                         data.positive_index, threshold, profile(args.profile)["latency"])
                serving = measure_serving(serving_run, {**latency, **throughput, **served, "size_mb": size_mb},
                                          paths, backend_name)

    atomic_write_bytes(prediction_path(out, args.variant, args.seed, args.train_size),
                       _npz(test=split.test, labels=test.labels, proba=test_proba))
    count = model.param_count()
    identity = args.record_identity()
    identity["numerics"] = {**identity["numerics"], "observed": observed_dispatch()}  # what the kernels dispatched to
    return {
        **identity, "backend": backend_name, "status": "ok", "reason": "",
        **{k: metrics[k] for k in ("accuracy", "macro_f1", "average_precision")},
        "positive_precision": metrics.get("positive_precision"), "positive_recall": metrics.get("positive_recall"),
        "confusion_matrix": metrics["confusion_matrix"], **at_threshold, **calibration,
        "valid_average_precision": valid_metrics["average_precision"],
        "unknown_token_rate": unknown["rate"] if unknown else None, "unknown_tokens": unknown,
        "params_total": int(count.total), "params_trainable": int(count.trainable),
        "n_train_texts": len(train), "n_valid_texts": len(valid),  # the labels this run saw, by part
        "train_seconds": train_seconds, "epochs_run": epochs_run, "seconds_per_epoch": train_seconds / epochs_run,
        "import_seconds": import_seconds, **latency, **throughput, **served, **serving,
        "rss_process_start_mb": process_start_rss, "rss_after_import_mb": baseline_rss,
        "peak_rss_train_mb": train_peak.mb, "gpu_peak_mb": gpu_peak_mb(), "size_mb": size_mb,
        "split_sha256": split.sha256,  # the split the worker was given (the plan's, checked)
        **node_description(), "worker_pid": os.getpid(),
        "worker_run_number": RUNS_IN_PROCESS, "threads": threads,  # the settings in force
        "versions": library_versions(), "device": getattr(model, "fit_info_", {}).get("device", "cpu"),
        "params": _jsonable_params(model.get_params()), "fit_info": getattr(model, "fit_info_", {}),
    }


def _npz(**arrays) -> bytes:
    import io

    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def _jsonable_params(params: dict) -> dict:
    return {k: (v if isinstance(v, (int, float, str, bool, type(None), dict, list)) else repr(v))
            for k, v in params.items()}


def end_on_sigterm() -> None:
    """SIGTERM (the orchestrator ending this run) raises SystemExit, so temporary folders are removed."""
    import signal

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def run_request(spec_json: str, out: Path, inputs: bytes) -> int:
    """One run in this process: its record and predictions written, or its failure's one line on stderr (the
    orchestrator's failed or skipped row quotes it); the exit code (0, EXIT_MISSING_DEPENDENCY, 1)."""
    global RUNS_IN_PROCESS
    RUNS_IN_PROCESS += 1
    args = RunSpec.from_json(spec_json)
    changed = code_changed(args.code_sha256)
    if changed:  # a failed row with this reason; resume reruns it with the new code
        print(f"failed: {changed}", file=sys.stderr)
        return 1
    try:
        record = run(args, out, RunInputs.from_json_bytes(inputs))
    except ModuleNotFoundError as exc:  # a framework or one of its dependencies is not installed
        print(f"skipped: missing dependency ({exc})", file=sys.stderr)
        return EXIT_MISSING_DEPENDENCY
    except MemoryError:
        print("failed: out of memory (MemoryError)", file=sys.stderr)
        return 1
    except UserInputError as exc:  # e.g. UnusableValidationError: the message says what is wrong and what to do
        print(f"failed: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # the row says why; the traceback goes to this run's log only
        traceback.print_exc()
        print(f"failed: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 1
    atomic_write_json(worker_record_path(out, args.variant, args.seed, args.train_size), record)  # the executor
    # writes runs/NAME.json once (comparisons/run_folder/writers.py write_run_record)
    print(f"{run_name(args.variant, args.seed, args.train_size)}: done", file=sys.stderr)
    return 0


def serve_requests() -> int:
    """A warm worker (comparisons/run/warm.py): one run after another in this process, the framework imported
    once. Each request is a JSON line {"out", "spec", "inputs_bytes"} followed by that many bytes of RunInputs,
    read from the request pipe (stdin, moved aside: the runs see /dev/null as stdin, as a fresh worker's finds its
    input at its end); after each run, a line with the progress mark and DONE_TOKEN tells its exit code. A run that
    did not finish ends the worker (its state is not trusted for the next run); end of input ends it with 0."""
    stream = os.fdopen(os.dup(0), "rb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(os.devnull)
    done = (os.environ.get(MARK_VARIABLE, "") + DONE_TOKEN).encode()
    while True:
        header = stream.readline()
        if not header:
            return 0
        request = json.loads(header)
        inputs = stream.read(int(request["inputs_bytes"]))
        code = run_request(request["spec"], Path(request["out"]), inputs)
        release_memory()
        sys.stdout.flush()
        sys.stderr.flush()
        os.write(2, done + str(code).encode() + b"\n")  # the reader finds it even after an unfinished line
        if code != 0:
            return code


def release_memory() -> None:
    """Between a warm worker's runs: the finished run's objects collected, torch's cached GPU memory returned."""
    import gc

    gc.collect()
    if "torch" in sys.modules:
        import torch

        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()


def main(argv=None) -> int:
    die_with_parent()
    end_on_sigterm()
    options = parse_args(argv)
    if options.warm:
        return serve_requests()
    return run_request(options.spec, options.out, sys.stdin.buffer.read())


if __name__ == "__main__":
    from common.prompt_exit import exit_promptly

    exit_promptly(main())  # without the frameworks' teardown (common/prompt_exit.py)
