"""Executors decide where the runs of a plan happen; every run is still one worker process.

- `local` (the default): one worker at a time on this machine, as the suite always ran.
- `ray`: one Ray core task per run, declaring `num_cpus` = threads and a GPU for CUDA runs. The
  task starts the same worker as a subprocess on its node (process isolation and the VmHWM
  measurement as locally), hands it the data by value (through Ray's object store, so no path
  of the driver's need exist on the node) and returns the record, predictions and redacted log;
  the driver writes the run folder exactly as the local executor does.

Decisions Ray would otherwise make for us:
- retries: `max_retries=0`; a failed run is a failed row with its reason, never a silent rerun.
- threads: Ray sets OMP_NUM_THREADS from num_cpus; the runner sets every framework's thread
  variables explicitly from the spec anyway (the same values).
- memory: Ray's memory monitor may kill a task's worker on a full node; that run becomes a
  failed row naming OutOfMemoryError, and the worker subprocess dies with it (die_with_parent).
- Ctrl-C (or SIGTERM/SIGHUP): outstanding tasks are cancelled, gently then by force (a killed
  Ray worker takes its worker subprocess with it); finished runs are already written, so
  rerunning resumes.
- Sharing: each record says how many worker processes ran on its node at once
  (`runs_sharing_node`, itself included) and marks timings taken under sharing (`timings_shared`).
"""
from __future__ import annotations

import abc
import importlib.util
import os
import tempfile
import threading
from pathlib import Path
from typing import Callable, ClassVar

from backends.base import BACKENDS, resolve_variant
from common.errors import UserInputError
from comparisons.outputs import atomic_write_bytes, atomic_write_json
from comparisons.run_spec import RunSpec
from comparisons.runner import ROOT, _write_row, execute
from comparisons.runs import log_path, prediction_path, run_path
from comparisons.worker import FAULT_VARIABLE

EXECUTORS = ("local", "ray")
OBJECT_STORE_MIN_BYTES = 100 * 2**20  # a local instance's object store: small, the data is a few MB
CANCEL_GRACE_S = 15  # a cancelled task's runner ends its worker: SIGTERM, up to 5 s, then SIGKILL
UPLOAD_EXCLUDES = [".venv", "runs", "results", "**/__pycache__", "*.egg-info", ".pytest_cache",
                   "build", "dist"]

Started = Callable[[RunSpec], None]
Done = Callable[[RunSpec, dict], None]


class Executor(abc.ABC):
    """Runs the specs of a plan, calling `started` as each is handed out and `done` with its record."""

    name: ClassVar[str]

    @abc.abstractmethod
    def run(self, out: Path, specs: list[RunSpec], inputs: bytes, started: Started, done: Done) -> None:
        """Run every spec; its files are in `out` before `done` is called. Ctrl-C propagates."""

    def close(self) -> None:
        """Release what the executor holds (a Ray connection, a Ray instance it started)."""


class LocalExecutor(Executor):
    """One worker process at a time on this machine."""

    name = "local"

    def run(self, out: Path, specs: list[RunSpec], inputs: bytes, started: Started, done: Done) -> None:
        for spec in specs:
            started(spec)
            with SharingMonitor() as sharing:
                record = execute(out, spec, inputs)
            record = {**record, **sharing.fields()}
            atomic_write_json(run_path(out, spec.variant, spec.seed, spec.train_size), record)
            done(spec, record)


class RayExecutor(Executor):
    """One Ray core task per run; at most `max_concurrent` at once (default: as many as the nodes' CPUs fit)."""

    name = "ray"

    def __init__(self, address: str | None, max_concurrent: int | None, inputs_bytes: int):
        import ray

        self._ray = ray
        self.max_concurrent = max_concurrent
        fault = os.environ.get(FAULT_VARIABLE)  # the testing hook reaches remote workers too
        env_vars = {FAULT_VARIABLE: fault} if fault else {}
        try:
            if address is None:  # a private local instance, sized explicitly
                ray.init(num_cpus=os.cpu_count(), object_store_memory=max(OBJECT_STORE_MIN_BYTES, 4 * inputs_bytes),
                         include_dashboard=False, log_to_driver=False, logging_level="WARNING",
                         runtime_env={"env_vars": env_vars} if env_vars else None)
            else:  # join a cluster; the code travels with the job, each node has the same packages
                ray.init(address=address, log_to_driver=False, logging_level="WARNING",
                         runtime_env={"working_dir": str(ROOT), "excludes": UPLOAD_EXCLUDES, "env_vars": env_vars})
        except Exception as exc:  # ConnectionError, a raylet that timed out starting (a bare Exception)...
            raise UserInputError(f"cannot start or reach Ray at {address or 'a new local instance'} "
                                 f"({str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__}); "
                                 "check --ray-address (auto, HOST:PORT) and that `ray start` ran") from None
        nodes = [node for node in ray.nodes() if node.get("Alive")]
        self.cpus_per_node = [node["Resources"].get("CPU", 0) for node in nodes]
        self.node_cpus = max(self.cpus_per_node, default=0)
        self.has_gpu = any(node["Resources"].get("GPU", 0) for node in nodes)

    def check(self, specs: list[RunSpec]) -> None:
        """Refuse plans no node can run (they would wait forever)."""
        threads = max((spec.threads for spec in specs), default=1)
        if threads > self.node_cpus:
            raise UserInputError(f"--threads {threads}: no Ray node offers {threads} CPUs (largest: "
                                 f"{self.node_cpus:g}); lower --threads or add bigger nodes")
        if any(spec.device == "cuda" for spec in specs) and not self.has_gpu:
            raise UserInputError("--device cuda: the Ray cluster has no GPU; use --device auto or cpu")

    def wants_gpu(self, spec: RunSpec) -> bool:
        backend, _ = resolve_variant(spec.variant)
        uses_torch = bool({"torch", "keras"} & set(BACKENDS[backend][2]))
        return spec.device == "cuda" or (spec.device == "auto" and self.has_gpu and uses_torch)

    def run(self, out: Path, specs: list[RunSpec], inputs: bytes, started: Started, done: Done) -> None:
        ray = self._ray
        self.check(specs)
        task = ray.remote(max_retries=0)(run_on_node)
        inputs_ref = ray.put(inputs)  # once; every task reads it from the object store by value
        waiting, running = list(specs), {}
        threads = max((spec.threads for spec in specs), default=1)
        fits = sum(int(cpus // threads) for cpus in self.cpus_per_node)  # runs the cluster holds at once
        limit = self.max_concurrent or max(1, fits)  # submitted = started (or about to), not a long queue
        try:
            while waiting or running:
                while waiting and len(running) < limit:
                    spec = waiting.pop(0)
                    options = {"num_cpus": spec.threads, "num_gpus": 1 if self.wants_gpu(spec) else 0}
                    running[task.options(**options).remote(spec.to_json(), inputs_ref)] = spec
                    started(spec)
                ready, _ = ray.wait(list(running), num_returns=1)
                for ref in ready:
                    spec = running.pop(ref)
                    done(spec, self._collect(out, spec, ref))
        except BaseException:  # Ctrl-C or a signal: cancel what is outstanding, keep what finished
            self._cancel(list(running))
            raise

    def _cancel(self, refs: list) -> None:
        """Cancel gently first (the task's runner ends its worker's process group), then by force
        (the Ray worker is killed; the worker subprocess dies with it, see parent_death.die_with_parent)."""
        ray = self._ray
        for ref in refs:
            ray.cancel(ref)
        _, left = ray.wait(refs, num_returns=len(refs), timeout=CANCEL_GRACE_S) if refs else ([], [])
        for ref in left:
            ray.cancel(ref, force=True)

    def _collect(self, out: Path, spec: RunSpec, ref) -> dict:
        """Write a finished task's files into the run folder (record last: it marks the run done)."""
        try:
            result = self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:  # dead node or Ray worker, killed for memory...
            message = str(exc).strip().splitlines()
            reason = f"ray: {exc.__class__.__name__}" + (f": {message[-1][:200]}" if message else "")
            return _write_row(out, spec, spec.split_sha256, "failed", reason)
        if result["predictions"] is not None:
            atomic_write_bytes(prediction_path(out, spec.variant, spec.seed, spec.train_size), result["predictions"])
        atomic_write_bytes(log_path(out, spec.variant, spec.seed, spec.train_size), result["log"])
        atomic_write_json(run_path(out, spec.variant, spec.seed, spec.train_size), result["record"])
        return result["record"]

    def close(self) -> None:
        self._ray.shutdown()  # ends a local instance we started; only disconnects from a cluster


def run_on_node(spec_json: str, inputs: bytes) -> dict:
    """The Ray task: one worker subprocess on this node, in a private folder; returns its files."""
    spec = RunSpec.from_json(spec_json)
    with tempfile.TemporaryDirectory(prefix="comparisons-run-") as folder:
        out = Path(folder)
        with SharingMonitor() as sharing:
            record = execute(out, spec, inputs)
        predictions = prediction_path(out, spec.variant, spec.seed, spec.train_size)
        log = log_path(out, spec.variant, spec.seed, spec.train_size)
        return {"record": {**record, **sharing.fields()},
                "predictions": predictions.read_bytes() if predictions.exists() else None,
                "log": log.read_bytes() if log.exists() else b""}


def worker_processes() -> int:
    """Worker processes (`python -m comparisons.worker`) running on this machine now, anyone's."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                    count += b"\0comparisons.worker\0" in cmdline.read()
            except OSError:
                continue
    return count


class SharingMonitor:
    """The most worker processes seen on this node while one run ran (itself counted)."""

    def __init__(self, interval_s: float = 1.0):
        self.interval_s, self.most = interval_s, 1
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(self.interval_s):
            if os.path.isdir("/proc"):
                self.most = max(self.most, worker_processes())

    def __enter__(self) -> "SharingMonitor":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def fields(self) -> dict:
        return {"runs_sharing_node": self.most, "timings_shared": self.most > 1}


def open_executor(name: str, ray_address: str | None, max_concurrent: int | None, inputs_bytes: int) -> Executor:
    """The executor the command line asked for, checked (and Ray started or joined)."""
    if name not in EXECUTORS:
        raise UserInputError(f"unknown executor {name!r}; choose from {', '.join(EXECUTORS)}")
    if max_concurrent is not None and max_concurrent < 1:
        raise UserInputError("--max-concurrent must be at least 1")
    if name == "local":
        if ray_address is not None or max_concurrent is not None:
            raise UserInputError("--ray-address and --max-concurrent need --executor ray "
                                 "(the local executor runs one worker at a time)")
        return LocalExecutor()
    if importlib.util.find_spec("ray") is None:
        raise UserInputError("--executor ray needs the ray package: pip install -c constraints.txt 'ray[default]'")
    return RayExecutor(ray_address, max_concurrent, inputs_bytes)
