"""Executors decide where the runs of a plan happen; every run is still one worker process's.

- `local` (the default): one worker at a time on this machine, as the suite always ran; in a quality-only design,
  one warm worker per backend serving its runs in turn (comparisons/run/warm.py; `--fresh-workers` opts out).
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
  (`runs_sharing_node`, itself included) and marks timings taken under sharing (`timings_shared`),
  and names its node: host name (`node`), IP (`node_ip`) and Ray node id (`ray_node_id`, distinct
  for two Ray nodes on one host).
- Joining a cluster (`--ray-address`): a probe in a subprocess asks the cluster's GCS once before
  `ray.init`, so a missing or wrong authentication token, a wrong address or a Ray/Python version
  mismatch ends in one line saying which and what to do (docs/ray.md), not in Ray's 20 s of
  retries that print a warning a second (or a crash: Ray aborts a process that enables token
  authentication without a token).
"""
from __future__ import annotations

import abc
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Callable, ClassVar

from backends.base import BACKENDS, resolve_variant
from common.errors import UserInputError
from comparisons.outputs import atomic_write_bytes, atomic_write_json
from comparisons.run.spec import RunSpec
from comparisons.comparability import ROOT
from comparisons.run.runner import execute, write_row
from comparisons.run.warm import WarmPool
from comparisons.run_folder import log_path, prediction_path, run_path
from comparisons.run.worker import FAULT_VARIABLE

EXECUTORS = ("local", "ray")
OBJECT_STORE_MIN_BYTES = 100 * 2**20  # a local instance's object store: small, the data is a few MB
CANCEL_GRACE_S = 15  # a cancelled task's runner ends its worker: SIGTERM, up to 5 s, then SIGKILL
UPLOAD_EXCLUDES = [".venv", "runs", "results", "**/__pycache__", "*.egg-info", ".pytest_cache",
                   "build", "dist"]
CONNECT_TIMEOUT_S = 5  # the TCP check of a cluster address
PROBE_TIMEOUT_S = 20  # the whole probe (Ray's own client waits 40 s for an address that is not a GCS)
DOCS = "docs/ray.md"

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
    """One worker process at a time on this machine: a fresh one a run, or with `warm` (a quality-only design) one
    warm worker per backend that serves its runs one after another (comparisons/run/warm.py)."""

    name = "local"

    def __init__(self, warm: bool = False):
        self.pool = WarmPool() if warm else None

    def run(self, out: Path, specs: list[RunSpec], inputs: bytes, started: Started, done: Done) -> None:
        for spec in specs:
            started(spec)
            with SharingMonitor(idle=self.pool.idle(spec) if self.pool else 0) as sharing:
                record = self.pool.execute(out, spec, inputs) if self.pool else execute(out, spec, inputs)
            record = {**record, **sharing.fields()}
            atomic_write_json(run_path(out, spec.variant, spec.seed, spec.train_size), record)
            done(spec, record)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()


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
            return write_row(out, spec, spec.split_sha256, "failed", reason)
        if result["predictions"] is not None:
            atomic_write_bytes(prediction_path(out, spec.variant, spec.seed, spec.train_size), result["predictions"])
        atomic_write_bytes(log_path(out, spec.variant, spec.seed, spec.train_size), result["log"])
        atomic_write_json(run_path(out, spec.variant, spec.seed, spec.train_size), result["record"])
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
            record = execute(out, spec, inputs)
        predictions = prediction_path(out, spec.variant, spec.seed, spec.train_size)
        log = log_path(out, spec.variant, spec.seed, spec.train_size)
        return {"record": {**record, **sharing.fields(), **ray_node()},
                "predictions": predictions.read_bytes() if predictions.exists() else None,
                "log": log.read_bytes() if log.exists() else b""}


def ray_node() -> dict:
    """Which Ray node this task runs on: its IP and Ray node id (two nodes may share one host name)."""
    import ray

    return {"node_ip": ray.util.get_node_ip_address(), "ray_node_id": ray.get_runtime_context().get_node_id()}


# -- joining a cluster: why it fails, in one line ---------------------------------------------------
def cluster_problem(address: str) -> str | None:
    """One line saying why this driver cannot join the cluster at `address` and what to do; None if it can.

    The probe runs in a subprocess: Ray's client prints its retries straight to the process's
    stderr and aborts the process in some cases (token mode without a token); here its output is
    captured and a hung connection is cut at PROBE_TIMEOUT_S."""
    command = [sys.executable, "-c", "import sys; from comparisons.run.executors import probe; probe(sys.argv[1])",
               address]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                  filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))})
    except subprocess.TimeoutExpired:
        return explain(address, "no_answer", "")
    verdicts = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not verdicts:  # the probe itself died (Ray aborted it, say): Ray's last words are the clue
        last = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        return (f"cannot join the Ray cluster at {address}: the connection check failed "
                f"({last[-1][:300] if last else f'exit status {done.returncode}'}); see {DOCS}")
    verdict = json.loads(verdicts[-1])
    return None if verdict["cause"] == "ok" else explain(address, verdict["cause"], verdict["detail"])


def probe(address: str) -> None:
    """In a subprocess (see cluster_problem): print one JSON line {"cause", "detail"}.

    Steps as Ray's own join takes them, each once: resolve `auto`; Ray's token check
    (RAY_AUTH_MODE=token needs a token here); TCP connect; the GCS client (the cluster checks the
    token); the cluster's Ray and Python versions against ours."""
    def answer(cause: str, detail: str = "") -> None:
        print(json.dumps({"cause": cause, "detail": detail}), flush=True)

    import platform

    import ray
    try:  # Ray's internals as of the pinned version (constraints.txt); another Ray: no probe, ray.init says
        from ray._common.usage import usage_lib
        from ray._private import services
        from ray._private.authentication.authentication_token_setup import (
            ensure_token_if_auth_enabled, maybe_enable_token_auth_if_token_available)
        from ray._private.utils import check_version_info
        from ray._raylet import GcsClient
        from ray.exceptions import AuthenticationError
    except ImportError:
        return answer("ok")

    try:
        resolved = services.canonicalize_bootstrap_address(address)
    except ConnectionError as exc:  # auto: no RAY_ADDRESS, no cluster started on this machine
        return answer("no_cluster", str(exc))
    except ValueError as exc:
        return answer("bad_address", str(exc))
    if resolved is None:
        return answer("no_cluster")
    if address == "auto":  # what ray.init does for auto (an explicit address never turns token mode on)
        maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    token_mode = os.environ.get("RAY_AUTH_MODE", "").lower() == "token"
    try:
        ensure_token_if_auth_enabled(None, create_token_if_missing=False)
    except AuthenticationError:
        return answer("token_missing")
    host, port = resolved.rsplit(":", 1)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except socket.gaierror as exc:
        return answer("unknown_host", str(exc))
    except ConnectionRefusedError:
        return answer("refused")
    except OSError as exc:  # a timeout, no route to host...
        return answer("unreachable", str(exc) or exc.__class__.__name__)
    try:
        client = GcsClient(address=resolved)
    except AuthenticationError:
        return answer("token_rejected" if token_mode else "token_required")
    except Exception as exc:
        return answer("no_answer", str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__)
    try:
        metadata = usage_lib.get_cluster_metadata(client)
    except Exception:  # the cluster answered and took the token; ray.init will check the versions itself
        return answer("ok")
    try:
        if metadata:
            check_version_info(metadata, "this driver")
    except RuntimeError:  # "Version mismatch: ..." (Ray's rule: the same Ray, the same Python x.y.z)
        return answer("version", f"cluster: Ray {metadata['ray_version']}, Python {metadata['python_version']}; "
                                 f"this driver: Ray {ray.__version__}, Python {platform.python_version()}")
    answer("ok")


def failure_cause(exc: BaseException) -> str | None:
    """The cause of a failed ray.init named by Ray itself, along the exception's chain; None if not named."""
    seen = exc
    while seen is not None:
        text = f"{seen.__class__.__name__}: {seen}"
        if "AuthenticationError" in text or "InvalidAuthToken" in text:
            return "token_rejected" if os.environ.get("RAY_AUTH_MODE", "").lower() == "token" else "token_required"
        if "Version mismatch" in text:
            return "version"
        seen = seen.__cause__ or seen.__context__
    return None


def explain(address: str, cause: str, detail: str) -> str:
    """The one line for a cause found by `probe` or `failure_cause`."""
    mode = os.environ.get("RAY_AUTH_MODE")
    token_help = ("the head's token (`ray get-auth-token` there) in ~/.ray/auth_token, RAY_AUTH_TOKEN or the file "
                  "RAY_AUTH_TOKEN_PATH names")
    why = {
        "token_required": ("the cluster requires an authentication token and this driver sent none "
                           f"({'RAY_AUTH_MODE=' + mode if mode else 'RAY_AUTH_MODE is unset'})",
                           f"run with RAY_AUTH_MODE=token and {token_help}"),
        "token_rejected": ("the cluster rejected this driver's authentication token",
                           f"use {token_help}"),
        "token_missing": ("RAY_AUTH_MODE=token but no authentication token was found on this machine",
                          f"put {token_help}"),
        "refused": ("nothing is listening there (connection refused)",
                    "check --ray-address: the head's HOST:PORT (`ray start --head` prints it; port 6379 "
                    "unless --port) and that the head is running"),
        "unreachable": (f"no connection ({detail})",
                        "check the host of --ray-address and that the head's port is open to this machine"),
        "unknown_host": (f"unknown host ({detail})", "check the host of --ray-address"),
        "bad_address": (detail, "use --ray-address auto or HOST:PORT"),
        "no_answer": ("something accepts connections there but no Ray cluster answered"
                      + (f" ({detail})" if detail else f" within {PROBE_TIMEOUT_S} s"),
                      "check the port of --ray-address: the head's GCS port (6379 unless `ray start --port`)"),
        "version": (f"Ray or Python versions differ ({detail})" if detail else "Ray or Python versions differ",
                    "install the same Ray and Python on every node and this driver "
                    "(pip install -c constraints.txt, one Python version)"),
    }
    if cause == "no_cluster":
        return ("cannot join a Ray cluster: --ray-address auto found none (no RAY_ADDRESS, no `ray start` on this "
                f"machine); start one with `ray start --head` or pass the head's HOST:PORT (see {DOCS})")
    reason, action = why[cause]
    return f"cannot join the Ray cluster at {address}: {reason}; {action} (see {DOCS})"


def worker_processes() -> int:
    """Worker processes (`python -m comparisons.run.worker`) running on this machine now, anyone's."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                    count += b"\0comparisons.run.worker\0" in cmdline.read()
            except OSError:
                continue
    return count


class SharingMonitor:
    """The most worker processes seen on this node while one run ran (itself counted; `idle`: this orchestrator's
    idle warm workers, which wait on their input and are not counted)."""

    def __init__(self, interval_s: float = 1.0, idle: int = 0):
        self.interval_s, self.most, self.idle = interval_s, 1, idle
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(self.interval_s):
            if os.path.isdir("/proc"):
                self.most = max(self.most, worker_processes() - self.idle)

    def __enter__(self) -> "SharingMonitor":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def fields(self) -> dict:
        return {"runs_sharing_node": self.most, "timings_shared": self.most > 1}


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


def open_executor(name: str, ray_address: str | None, max_concurrent: int | None, inputs_bytes: int,
                  variants: list[str] | None = None, warm: bool = False) -> Executor:
    """The executor the command line asked for, checked (and Ray started or joined); `warm`: the local executor
    keeps one worker a backend (a quality-only design; Ray runs a task a run either way)."""
    if name not in EXECUTORS:
        raise UserInputError(f"unknown executor {name!r}; choose from {', '.join(EXECUTORS)}")
    if max_concurrent is not None and max_concurrent < 1:
        raise UserInputError("--max-concurrent must be at least 1")
    if name == "local":
        if ray_address is not None or max_concurrent is not None:
            raise UserInputError("--ray-address and --max-concurrent need --executor ray "
                                 "(the local executor runs one worker at a time)")
        return LocalExecutor(warm)
    if importlib.util.find_spec("ray") is None:
        raise UserInputError("--executor ray needs the ray package: pip install -c constraints.txt 'ray[default]'")
    return RayExecutor(ray_address, max_concurrent, inputs_bytes, plugin_packages(variants or []))
