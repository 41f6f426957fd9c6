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
import os
import threading
from pathlib import Path
from typing import Callable, ClassVar

from comparisons.run.spec import RunSpec
from comparisons.run.runner import run_worker
from comparisons.run.warm import WarmPool
from comparisons.run_folder.writers import write_run_record

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
                record = self.pool.run_worker(out, spec, inputs) if self.pool else run_worker(out, spec, inputs)
            record = {**record, **sharing.fields()}
            write_run_record(out, spec, record)
            done(spec, record)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()


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
