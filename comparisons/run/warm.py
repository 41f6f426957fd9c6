"""Warm workers: in a quality-only design run locally, one worker process per backend serves that
backend's runs one after another, so the framework's import and the process's start are paid once, not once a run.

Every run is still the same `comparisons.run.worker` code (`run_request`), with the same quality figures,
predictions, log, resume and failed or skipped rows as a fresh worker's (comparisons/run/runner.py). What differs is
what a quality-only design does not report as a cost: a later run's `import_seconds` (near 0), its `train_seconds`
(without one-time costs the process already paid) and its memory figures (from a heap earlier runs left);
`worker_run_number` (1 for a process's first run) marks them. A run that does not finish ends its process (a crash, a
time limit, a failure: the next run of that backend starts a fresh one), so a failure cannot leak into the runs
after it. Designs that measure costs keep a fresh process a run: their start-up, import and memory figures are the
figures. Idle workers wait on their input (not counted as sharing the node); an idle Keras worker is told to grow
its GPU memory as needed, and torch's cached GPU memory is returned after each run.

The protocol (comparisons/run/worker.py `serve_requests`): the driver writes a JSON line {"out", "spec",
"inputs_bytes"} and the inputs; the worker runs it and ends its output for that run with a line starting with the
run's progress mark and `DONE_TOKEN`, then the exit code. Output is copied to each run's log and the terminal as
a fresh worker's is (runner._emit: redacted, framework log lines to the log only).
"""
from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from backends.base import resolve_variant
from comparisons.run.runner import (StopOnSignals, _emit, drop_staged, end_worker, missing_dependency_row, outcome,
                                    progress_mark, timed_out_row, worker_environment)
from comparisons.run.spec import RunSpec
from comparisons.run.worker import DONE_TOKEN
from comparisons.run_folder import log_path

CLOSE_GRACE_S = 10.0  # an idle worker told to stop (its input closed) exits at once; then it is ended


class WarmWorker:
    """One `python -m comparisons.run.worker --warm` process, the thread that reads its output and the thread that
    waits for its end (a crash is noticed when the process ends, even if a child of it still holds the pipe)."""

    def __init__(self, threads: int, log_file):
        self.mark = progress_mark()
        self.results: queue.Queue[int | None] = queue.Queue()
        self.lock = threading.Lock()  # the log being written to is swapped between runs under it
        self.log_file = log_file      # the running request's log; output between runs goes to `between`
        self.between = _Discard()    # (shown on the terminal as a fresh worker's would be, kept in no log)
        environment = {**worker_environment(threads, self.mark), "TF_FORCE_GPU_ALLOW_GROWTH": "true"}  # an idle
        with StopOnSignals.held():  # Keras worker must not hold the GPU; a stop arriving while it starts: raised below
            self.process = subprocess.Popen([sys.executable, "-m", "comparisons.run.worker", "--warm"],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                            env=environment, start_new_session=True)
            self.reader = threading.Thread(target=self._read, daemon=True)
            self.reader.start()
            threading.Thread(target=self._wait, daemon=True).start()
        try:
            StopOnSignals.raise_held()
        except BaseException:
            self.end()
            raise

    def _read(self) -> None:
        """Copy the output line by line to the current request's log; a DONE line hands its exit code over."""
        mark, done, pending = self.mark.encode(), (self.mark + DONE_TOKEN).encode(), b""
        try:
            for chunk in iter(lambda: self.process.stdout.read1(4096), b""):
                pending += chunk
                *complete, pending = re.split(rb"(?<=[\r\n])", pending)
                self._lines(complete, mark, done)
            self._lines([pending], mark, done)
        except (OSError, ValueError):  # the pipe or a log closed under it: the process is being ended
            pass
        finally:
            self.results.put(None)

    def _wait(self) -> None:
        self.process.wait()
        self.reader.join(timeout=5)  # its last lines first, when the pipe closed with the process
        self.results.put(None)

    def _lines(self, lines: list[bytes], mark: bytes, done: bytes) -> None:
        batch = []
        for line in lines:
            at = line.find(done)
            if at < 0:
                batch.append(line)
                continue
            if at:
                batch.append(line[:at] + b"\n")
            with self.lock:
                _emit(batch, mark, self.log_file or self.between)
                if self.log_file is not None:
                    self.log_file.flush()
            batch = []
            self.results.put(int(line[at + len(done):].strip() or 1))
        with self.lock:
            _emit(batch, mark, self.log_file or self.between)

    def use_log(self, log_file) -> None:
        with self.lock:
            self.log_file = log_file

    def run(self, out: Path, request: RunSpec, inputs: bytes) -> int | None:
        """Hand one run to the process and wait for it: its exit code; None if the process ended without one.
        Raises queue.Empty when the run's time limit passes (the request is written by a thread, inside it)."""
        while not self.results.empty():  # nothing left over from before this run counts for it
            self.results.get_nowait()
        header = json.dumps({"out": str(out), "spec": request.to_json(), "inputs_bytes": len(inputs)}).encode()
        threading.Thread(target=_feed_open, args=(self.process.stdin, header + b"\n" + inputs), daemon=True).start()
        return self.results.get(timeout=request.timeout_s)

    def exit_code(self, grace_s: float = 10.0) -> int:
        try:
            return self.process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            self.end()
            return self.process.returncode

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        """Stop an idle worker: its input closed, it exits; ended if it does not within CLOSE_GRACE_S."""
        try:
            self.process.stdin.close()
            self.process.wait(timeout=CLOSE_GRACE_S)
        except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
            pass
        self.end()

    def end(self) -> None:
        end_worker(self.process)
        self.reader.join(timeout=5)


class _Discard:
    """A log for output between runs: nothing is kept."""

    def write(self, data: bytes) -> int:
        return len(data)

    def flush(self) -> None:
        pass


def _feed_open(stream, data: bytes) -> None:
    """Write one request to a warm worker's input, which stays open for the next (a dead worker: nothing to do)."""
    try:
        stream.write(data)
        stream.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass


class WarmPool:
    """The warm workers of one orchestrator: one per (backend, threads), started on first use."""

    def __init__(self):
        self.workers: dict[tuple[str, int], WarmWorker] = {}

    @staticmethod
    def key(request: RunSpec) -> tuple[str, int]:
        return resolve_variant(request.variant)[0], request.threads

    def idle(self, request: RunSpec) -> int:
        """Live workers other than the one that will run `request` (idle while it runs: not sharing its node)."""
        return sum(1 for key, worker in self.workers.items() if key != self.key(request) and worker.alive())

    def run_worker(self, out: Path, request: RunSpec, inputs: bytes) -> dict:
        """runner.run_worker's contract: the run's record (the worker's, with its wall time) or its failed/skipped row."""
        skipped = missing_dependency_row(request)
        if skipped:
            return skipped
        key = self.key(request)
        log = log_path(out, request.variant, request.seed, request.train_size)
        log.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        with open(log, "wb") as log_file:
            worker = self.workers.get(key)
            if worker is None or not worker.alive():
                self._drop(key)
                worker = self.workers[key] = WarmWorker(request.threads, log_file)  # its start-up lines: this log
            worker.use_log(log_file)
            try:
                code = worker.run(out, request, inputs)
            except queue.Empty:
                self._drop(key)  # ended while its log is open: what it says while ending is kept
                drop_staged(out, request)
                return timed_out_row(request, started)
            except BaseException:  # Ctrl-C, SIGTERM, SIGHUP (Interrupted): no row, the run is simply not done
                self._drop(key)
                drop_staged(out, request)
                raise
            if code is None or code != 0:  # a crash or a signal (its exit code says how), or a run that did not
                status = worker.exit_code()  # finish (the worker ends itself): let it end, its last lines in this log
                worker.reader.join(timeout=5)
                code = status if code is None else code
                worker.use_log(None)
                self._drop(key)
            worker.use_log(None)
        return outcome(out, request, code, log, started)

    def _drop(self, key: tuple[str, int]) -> None:
        worker = self.workers.pop(key, None)
        if worker is not None:
            worker.end()

    def close(self) -> None:
        for key in list(self.workers):
            worker = self.workers.pop(key)
            worker.close()
