"""The orchestrator: plan (variant, seed) runs, launch one worker process each, collect rows.

Imports no deep-learning framework. A worker that crashes, runs out of memory, exceeds its
time limit or lacks a dependency becomes a failed/skipped row; the others still run.
Finished runs are kept, so rerunning the same command resumes (`force` reruns them).
"""
from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from backends.base import missing_modules, resolve_variant
from common.progress import MARK_VARIABLE
from common.redaction import redact
from common.splits import seed_value
from comparisons.comparability import ROOT, differences
from comparisons.run.measure import thread_environment
from comparisons.run.parent_death import PARENT_VARIABLE
from comparisons.run.spec import RunSpec
from comparisons.run_folder import log_path, prediction_path, run_name, run_path, worker_record_path
from comparisons.run.serving.paths import serve_paths
from comparisons.run.worker import EXIT_MISSING_DEPENDENCY


# ROOT (comparisons.comparability): the project, put on the worker's PYTHONPATH


def finished(out: Path, request: RunSpec, split_sha256: str, data_sha256: str, manifest: dict) -> bool:
    """A run is finished when its JSON says ok, its predictions exist and it is comparable with the plan
    (manifest.json, read once by the caller): same split, data, budget, threads, device, model choice,
    code and library versions."""
    path = run_path(out, request.variant, request.seed, request.train_size)
    predictions = prediction_path(out, request.variant, request.seed, request.train_size)
    if not path.exists() or not predictions.exists():
        return False
    record = json.loads(path.read_text())
    if request.train_size is None and not set(serve_paths(request.serve)) <= set(record.get("serve_paths", ["native"])):
        return False  # a serving path asked for now was not measured then
    if request.measure_costs and request.train_size is None and "latency_ms_b1_p50" not in record:
        return False  # a quality-only rerun (`reproduce`) measured no serving costs
    if request.train_size is not None and record.get("label_budget") != request.label_budget:
        return False  # another label budget: another question (a run made before the budget was recorded too)
    if seed_value(record.get("subset_seed")) != getattr(request, "subset_seed", None):
        return False  # another draw of the training texts
    return (record.get("status") == "ok" and record.get("split_sha256") == split_sha256
            and record.get("data_sha256") == data_sha256 and not differences(record, manifest, strict=True))


def run_worker(out: Path, request: RunSpec, inputs: bytes) -> dict:
    """Run one worker; return its record (the worker's, or a failed/skipped row made here). Nothing here writes the
    run's record: the executor does, once (comparisons/run_folder/writers.py write_run_record).

    The worker gets the spec on its command line and `inputs` (RunInputs JSON: the data and split
    by value) on stdin, so it reads no file of the driver's; it writes under `out` only.
    """
    skipped = missing_dependency_row(request)
    if skipped:
        return skipped
    command = [sys.executable, "-m", "comparisons.run.worker", "--out", str(out), "--spec", request.to_json()]
    mark = progress_mark()  # the worker's own progress lines start with it (common/progress.py)
    log = log_path(out, request.variant, request.seed, request.train_size)
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with open(log, "wb") as log_file:
        with StopOnSignals.held():  # a stop arriving while the worker starts would orphan it: raised just below
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, env=worker_environment(request.threads, mark),
                                       start_new_session=True)
            tee = threading.Thread(target=_tee, args=(process.stdout, log_file, mark.encode()), daemon=True)
            tee.start()
            threading.Thread(target=_feed, args=(process.stdin, inputs), daemon=True).start()
        try:
            StopOnSignals.raise_held()
            code = process.wait(timeout=request.timeout_s)
        except subprocess.TimeoutExpired:
            end_worker(process)
            tee.join(timeout=5)
            drop_staged(out, request)
            return timed_out_row(request, started)
        except BaseException:  # Ctrl-C, SIGTERM, SIGHUP (Interrupted): no row, the run is simply not done
            end_worker(process)
            tee.join(timeout=5)
            drop_staged(out, request)
            raise
        tee.join(timeout=5)
    return outcome(out, request, code, log, started)


def worker_environment(threads: int, mark: str) -> dict:
    """A worker process's environment: every framework's thread variables, the project on PYTHONPATH, the
    progress mark and this process's id (the worker dies with it)."""
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, **thread_environment(threads), "PYTHONUNBUFFERED": "1", "PYTHONPATH": python_path,
            MARK_VARIABLE: mark, PARENT_VARIABLE: str(os.getpid())}


def missing_dependency_row(request: RunSpec) -> dict | None:
    """The skipped row of a run whose backend lacks a module (no worker is started), or None."""
    backend, _ = resolve_variant(request.variant)
    missing = missing_modules(backend)
    return failed_row(request, "skipped", f"missing dependency: {', '.join(missing)}") if missing else None


def drop_staged(out: Path, request: RunSpec) -> None:
    """Remove the record a worker left for a run that will not be written (timed out or interrupted)."""
    worker_record_path(out, request.variant, request.seed, request.train_size).unlink(missing_ok=True)


def timed_out_row(request: RunSpec, started: float) -> dict:
    return failed_row(request, "failed", f"time limit of {request.timeout_s:.0f} s exceeded",
                      time.perf_counter() - started)


def outcome(out: Path, request: RunSpec, code: int, log: Path, started: float) -> dict:
    """A finished worker run's record: the worker's, with the run's wall time (start, import, fit, costs) added, or
    the failed or skipped row that its exit code and its log's last line say."""
    staged = worker_record_path(out, request.variant, request.seed, request.train_size)
    record = json.loads(staged.read_text()) if code == 0 and staged.exists() else None
    staged.unlink(missing_ok=True)
    if record is not None:
        return {**record, "wall_seconds": time.perf_counter() - started}
    reason = _last_line(log)
    if code == EXIT_MISSING_DEPENDENCY:
        return failed_row(request, "skipped", reason.removeprefix("skipped: "))
    if code < 0:
        name = signal.Signals(-code).name
        hint = " (killed: out of memory?)" if -code == signal.SIGKILL else ""
        reason = f"worker died with {name}{hint}"
    return failed_row(request, "failed", reason.removeprefix("failed: "), time.perf_counter() - started)


def _feed(stream, data: bytes) -> None:
    """Write the run's inputs to the worker's stdin (a worker that died early just stops reading)."""
    try:
        stream.write(data)
        stream.close()
    except (BrokenPipeError, OSError):
        pass


def progress_mark() -> str:
    """A fresh random mark for one worker's progress lines: no message text can contain it."""
    return f"\x1e{secrets.token_hex(8)}\x1e"


# A framework's C++ log line (TensorFlow/absl/XLA and PyTorch's c10 glog format, ONNX Runtime's) or absl's
# notice before it: start-up talk such as "oneDNN custom operations are on" or "failed call to cuInit" on a
# machine without a GPU, which reads like a failure and is not one. Kept in the run's log, not shown.
FRAMEWORK_LOG_LINE = re.compile(
    rb"[IWEF]\d{4} \d\d:\d\d:[\d.]+\s+\d+ [\w./-]+:\d+\] "  # absl: I0000 00:00:1796140667.245030  5786 port.cc:153]
    rb"|\[[IWEF](?:\d{3,4} [\d:.]+)? [\w./-]+:\d+\] "  # c10: [W322 21:06:39.645884768 NNPACK.cpp:56], [W NNPACK.cpp:64]
    rb"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \[[IWEF]:onnxruntime"  # 2026-12-01 12:00:00.1 [W:onnxruntime:...
    rb"|WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    rb"|To enable the following instructions: .* rebuild TensorFlow with")  # cpu_feature_guard's second line


def _tee(stream, log_file, mark: bytes) -> None:
    """Copy the worker's output to its log and to the terminal (progress bars), line by line (a tqdm
    bar ends in \\r): our own marked progress lines as they are, every other line redacted; a framework's
    C++ log line (FRAMEWORK_LOG_LINE) goes to the log only."""
    pending = b""
    for chunk in iter(lambda: stream.read1(4096), b""):
        pending += chunk
        *complete, pending = re.split(rb"(?<=[\r\n])", pending)
        _emit(complete, mark, log_file)
    _emit([pending], mark, log_file)


def shown_line(line: bytes, mark: bytes) -> bytes:
    """One line of worker output as people see it: a marked progress line unchanged (rates, times
    and losses intact), anything else (a warning, a traceback that may quote a message) redacted."""
    if mark and line.startswith(mark):
        return line[len(mark):]
    return redact(line.decode("utf-8", errors="replace")).encode("utf-8")


def _emit(lines: list[bytes], mark: bytes, log_file) -> None:
    pairs = [(shown_line(line, mark), FRAMEWORK_LOG_LINE.match(line) is None) for line in lines if line]
    if not pairs:
        return
    log_file.write(b"".join(text for text, _ in pairs))
    log_file.flush()
    sys.stderr.buffer.write(b"".join(text for text, shown in pairs if shown))
    sys.stderr.flush()


def end_worker(process: subprocess.Popen, grace_s: float = 5.0) -> None:
    """End the worker's whole process group (it runs in its own session): SIGTERM, so that it removes
    its temporary files, then SIGKILL for whatever is left after `grace_s`."""
    _signal_group(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(process.pid, signal.SIGKILL)  # children it started (the serving probe) included
    process.wait()


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass


class Interrupted(KeyboardInterrupt):
    """The orchestrator was told to stop by SIGINT, SIGTERM or SIGHUP."""

    def __init__(self, signum: int):
        self.signum, self.signal_name = signum, signal.Signals(signum).name
        super().__init__(self.signal_name)


def exit_code(interruption: KeyboardInterrupt) -> int:
    """The shell's convention: 130 for Ctrl-C, 128 + the signal's number for the others."""
    return 128 + interruption.signum if isinstance(interruption, Interrupted) else 128 + signal.SIGINT


STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class StopOnSignals:
    """`with StopOnSignals():` SIGTERM and SIGHUP (kill, a closed terminal) stop the orchestrator
    as Ctrl-C does: an Interrupted exception, so the running worker's group is ended, nothing
    half-done is recorded and the user is told how to resume. Python lets only the main thread
    install handlers; elsewhere (main() called from a thread) this does nothing."""

    holding = False            # True while a worker process is being started (see held)
    pending: int | None = None  # a stop signal that arrived meanwhile

    def __enter__(self) -> "StopOnSignals":
        in_main_thread = threading.current_thread() is threading.main_thread()
        self._previous = {signum: signal.signal(signum, self._stop) for signum in STOP_SIGNALS} if in_main_thread else {}
        return self

    @classmethod
    def _stop(cls, signum, frame) -> None:
        if cls.holding:
            cls.pending = signum
            return
        raise Interrupted(signum)

    @classmethod
    @contextmanager
    def held(cls):
        """Hold a stop signal while a worker starts: raised inside Popen, it would leave the started
        worker running with nobody to end it. `raise_held()` raises it once the worker can be ended."""
        cls.holding = True
        try:
            yield
        finally:
            cls.holding = False

    @classmethod
    def raise_held(cls) -> None:
        if cls.pending is not None:
            signum, cls.pending = cls.pending, None
            raise Interrupted(signum)

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


def _last_line(log: Path) -> str:
    lines = [line.strip() for line in log.read_text(errors="replace").replace("\r", "\n").splitlines()]
    lines = [line for line in lines if line]
    return lines[-1][:300] if lines else "worker exited without a message"


def failed_row(request: RunSpec, status: str, reason: str, seconds: float | None = None) -> dict:
    """The record of a run that did not finish ("failed" or "skipped", and why); the executor writes it."""
    backend, _ = resolve_variant(request.variant)
    return {**request.record_identity(), "backend": backend, "status": status, "reason": reason,
            "split_sha256": request.split_sha256, "wall_seconds": seconds}


def describe(record: dict) -> str:
    """One line for a finished run."""
    name = run_name(record["variant"], record["seed"], record.get("train_size"))
    if record["status"] != "ok":
        return f"{name}: {record['status']} ({record['reason']})"
    line = (f"{name}: ok  AP {record['average_precision']:.4f}  macro-F1 {record['macro_f1']:.4f}  "
            f"train {record['train_seconds']:.1f}s")
    if "latency_ms_b1_p50" not in record:  # a training-subset run: serving costs are measured at the whole split
        return line
    return (f"{line}  b1 {record['latency_ms_b1_p50']:.2f}ms  "
            f"cold start {record['cold_start_s']:.1f}s  serve peak {record['peak_rss_serve_mb']:.0f}MB")
