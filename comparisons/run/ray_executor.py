"""The Ray executor: one Ray core task per run (the decisions it makes for us: comparisons/run/executors.py). The
task starts the same worker as a subprocess on its node, in a private folder, and returns its record, predictions and
redacted log; the driver writes them into the run folder, the record last (comparisons/run_folder/writers.py).
Joining a cluster is checked first (comparisons/run/ray_join.py)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from backends.base import BACKENDS, resolve_variant
from common.errors import UserInputError
from comparisons.comparability import ROOT
from comparisons.outputs import atomic_write_bytes
from comparisons.run.executors import Done, Executor, SharingMonitor, Started
from comparisons.run.ray_join import DOCS, cluster_problem, explain, failure_cause
from comparisons.run.runner import failed_row, run_worker
from comparisons.run.spec import RunSpec
from comparisons.run.worker import FAULT_VARIABLE
from comparisons.run_folder import log_path, prediction_path
from comparisons.run_folder.writers import write_run_record

OBJECT_STORE_MIN_BYTES = 100 * 2**20  # a local instance's object store: small, the data is a few MB
CANCEL_GRACE_S = 15  # a cancelled task's runner ends its worker: SIGTERM, up to 5 s, then SIGKILL
UPLOAD_EXCLUDES = [".venv", "runs", "results", "**/__pycache__", "*.egg-info", ".pytest_cache",
                   "build", "dist"]


class RayExecutor(Executor):
    """One Ray core task per run; at most `max_concurrent` at once (default: as many as the nodes' CPUs fit)."""

    name = "ray"

    def __init__(self, address: str | None, max_concurrent: int | None, inputs_bytes: int,
                 py_modules: list[str] | None = None):
        import ray

        self._ray = ray
        self.max_concurrent = max_concurrent
        fault = os.environ.get(FAULT_VARIABLE)  # the testing hook reaches remote workers too
        env_vars = {FAULT_VARIABLE: fault} if fault else {}
        if address is not None:
            problem = cluster_problem(address)
            if problem:
                raise UserInputError(problem)
        try:
            if address is None:  # a private local instance, sized explicitly
                local_env = {**({"env_vars": env_vars} if env_vars else {}),
                             **({"py_modules": py_modules} if py_modules else {})}
                ray.init(num_cpus=os.cpu_count(), object_store_memory=max(OBJECT_STORE_MIN_BYTES, 4 * inputs_bytes),
                         include_dashboard=False, log_to_driver=False, logging_level="WARNING",
                         runtime_env=local_env or None)
            else:  # join a cluster; the code travels with the job, each node has the same packages
                ray.init(address=address, log_to_driver=False, logging_level="WARNING",
                         runtime_env={"working_dir": str(ROOT), "excludes": UPLOAD_EXCLUDES, "env_vars": env_vars,
                                      **({"py_modules": py_modules} if py_modules else {})})  # outside backends
        except Exception as exc:  # ConnectionError, a raylet that timed out starting (a bare Exception)...
            if address is not None:  # the probe passed, yet Ray's own connection failed: say why if Ray did
                cause = failure_cause(exc)
                if cause:
                    raise UserInputError(explain(address, cause, "")) from None
            raise UserInputError(f"cannot start or reach Ray at {address or 'a new local instance'} "
                                 f"({str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__}); "
                                 f"check --ray-address (auto, HOST:PORT) and that `ray start` ran ({DOCS})") from None
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
        uses_torch = bool({"torch", "keras"} & set(BACKENDS.get(backend, ("", "", ()))[2]))  # an outside one: no
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
                    record = self._collect(out, spec, ref)
                    write_run_record(out, spec, record)  # last: it marks the run done
                    done(spec, record)
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
        """Write a finished task's predictions and log into the run folder; its record (the caller writes it)."""
        try:
            result = self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:  # dead node or Ray worker, killed for memory...
            message = str(exc).strip().splitlines()
            reason = f"ray: {exc.__class__.__name__}" + (f": {message[-1][:200]}" if message else "")
            return failed_row(spec, "failed", reason)
        if result["predictions"] is not None:
            atomic_write_bytes(prediction_path(out, spec.variant, spec.seed, spec.train_size), result["predictions"])
        atomic_write_bytes(log_path(out, spec.variant, spec.seed, spec.train_size), result["log"])
        return result["record"]

    def close(self) -> None:
        self._ray.shutdown()  # ends a local instance we started; only disconnects from a cluster


RUN_FOLDER_PREFIX = "comparisons-run-"


def remove_stale_run_folders(parent: Path | None = None) -> list[Path]:
    """Remove this node's task folders whose Ray worker died before its `with` could (killed by a dead node, Ray's
    memory monitor or a cancelled task): each folder is named for its process, removed once that process is gone."""
    import shutil

    removed = []
    for folder in Path(parent or tempfile.gettempdir()).glob(f"{RUN_FOLDER_PREFIX}*-*"):
        pid = folder.name[len(RUN_FOLDER_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        except PermissionError:  # another user's process: alive
            pass
    return removed


def run_on_node(spec_json: str, inputs: bytes) -> dict:
    """The Ray task: one worker subprocess on this node, in a private folder; returns its files."""
    spec = RunSpec.from_json(spec_json)
    remove_stale_run_folders()
    with tempfile.TemporaryDirectory(prefix=f"{RUN_FOLDER_PREFIX}{os.getpid()}-") as folder:
        out = Path(folder)
        with SharingMonitor() as sharing:
            record = run_worker(out, spec, inputs)
        predictions = prediction_path(out, spec.variant, spec.seed, spec.train_size)
        log = log_path(out, spec.variant, spec.seed, spec.train_size)
        return {"record": {**record, **sharing.fields(), **ray_node()},
                "predictions": predictions.read_bytes() if predictions.exists() else None,
                "log": log.read_bytes() if log.exists() else b""}


def ray_node() -> dict:
    """Which Ray node this task runs on: its IP and Ray node id (two nodes may share one host name)."""
    import ray

    return {"node_ip": ray.util.get_node_ip_address(), "ray_node_id": ray.get_runtime_context().get_node_id()}


def plugin_packages(variants: list[str]) -> list[str]:
    """The package folders of the plan's outside backends, which a Ray job uploads beside the checkout; a
    single-file module cannot travel so: a one-line error saying to make it a package."""
    from backends.base import is_plugin
    from backends.plugins import package_folder

    folders = []
    for variant in variants:
        backend, _ = resolve_variant(variant)
        if is_plugin(backend):
            folder = package_folder(backend.split(":")[0])
            if folder is None:
                raise UserInputError(f"backend {backend}: --executor ray uploads an outside backend's package; "
                                     f"{backend.split(':')[0]} is a single-file module: put it in a package (a "
                                     "folder with __init__.py)")
            folders.append(str(folder))
    return sorted(set(folders))
