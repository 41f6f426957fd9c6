"""MLflow tracking of a run folder: `run --track mlflow` and `python -m comparisons track DIR`.

The driver logs, from the run folder's own files, after the runs (never the workers, so the Ray
executor works alike): one parent MLflow run per plan (the folder and its settings), its
parameters from manifest.json and report.html as an artefact; under it one nested MLflow run per
run record (variant, training size, seed) with the record's parameters, every final metric and cost
column as metrics, the per-epoch history as stepped metrics, tags for the code hash, split hash,
executor and node, and the record and predictions as artefacts. A failed run is logged FAILED
with its reason.

Logged once: each MLflow run carries the folder's id and the record's name and hash; a record
already in the store is skipped (a resumed run, or `track` on a folder logged before), a rerun
(--force, or a failed run retried) is a new nested run.

Nothing raw: every value comes from the run folder (which passes the redaction checks); free text
(the command, a reason, a path) goes through `common.redaction.redact` once more; hashes pass as
they are. mlflow is imported lazily: without it `--track mlflow` exits 2 with the install line.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import sys
import warnings
from pathlib import Path

from common.errors import UserInputError
from common.redaction import redact
from comparisons.run_folder.records import Manifest
from comparisons.run_folder.open_folder import open_folder
from comparisons.report.names import REPORT_HTML

INSTALL = 'pip install -c constraints.txt -e ".[tracking]"'
EXPERIMENT = "transformer-compare"
TAG = "comparisons."  # our tags' prefix
_HASH = re.compile(r"[0-9a-z]{32,64}")
_KEY = re.compile(r"[^\w\-. :/]")
_IDENTITY = {"seed", "train_size", "serve_pid", "worker_pid", "worker_run_number"}  # numbers that name a run, not measure it
_MANIFEST_SKIPPED = {"created", "versions", "machine", "thread_environment"}


def require_mlflow(uri: str | None = None) -> None:
    """A UserInputError (exit 2, one line) when mlflow, or the SQL store's libraries, cannot be imported."""
    try:
        import mlflow  # noqa: F401
        if uri is None or uri.startswith("sqlite:"):
            import alembic  # noqa: F401
            import sqlalchemy  # noqa: F401
    except ImportError:
        raise UserInputError(f"--track mlflow needs MLflow: {INSTALL}") from None


def default_uri(out: Path) -> str:
    """A local SQLite store in the run folder: nothing needs a server."""
    return f"sqlite:///{(Path(out).resolve() / 'mlflow.db').as_posix()}"


def _artifact_root(uri: str) -> str | None:
    """Artefacts beside a SQLite store (mlartifacts/ next to the .db); a server's own root otherwise."""
    if uri.startswith("sqlite:///"):
        return (Path(uri[len("sqlite:///"):]).parent / "mlartifacts").resolve().as_uri()
    return None


def mlflow_key(name: str) -> str:
    """An MLflow key: alphanumerics, _ - . space : / only (a manifest's `test&train` becomes `test_train`)."""
    return _KEY.sub("_", name)[:250]


def safe(value) -> str:
    """A parameter or tag value: a hash as it is, any other text redacted, at most 5000 characters."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if _HASH.fullmatch(text) else redact(text)[:5000]


def _flatten(mapping: dict, prefix: str = "") -> dict[str, object]:
    flat = {}
    for key, value in mapping.items():
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def record_metrics(record: dict) -> dict[str, float]:
    """Every final metric and cost column of a record (and fit_info's scalars) as MLflow metrics."""
    metrics = {key: _number(value) for key, value in record.items() if key not in _IDENTITY}
    fit = record.get("fit_info") or {}
    metrics.update({f"fit_info.{key}": _number(value) for key, value in fit.items()})
    return {key: value for key, value in metrics.items() if value is not None}


def record_history(record: dict) -> list[tuple[str, float, int]]:
    """(metric, value, epoch) of the per-epoch history (validation AP, training loss ...)."""
    steps = []
    for number, row in enumerate((record.get("fit_info") or {}).get("history") or [], start=1):
        epoch = int(row.get("epoch", number))
        steps += [(f"history.{key}", _number(value), epoch) for key, value in row.items()
                  if key != "epoch" and _number(value) is not None]
    return steps


def _quiet() -> None:
    for name in ("mlflow", "alembic", "sqlalchemy"):
        logging.getLogger(name).setLevel(logging.WARNING)
    # MLflow's SQL store still names a loader SQLAlchemy 2.1 deprecates; not ours to fix, harmless here
    warnings.filterwarnings("ignore", message="The ``noload`` loader strategy is deprecated")


class Tracker:
    """An MLflow client on one store and experiment, logging run folders into it."""

    def __init__(self, uri: str, experiment: str = EXPERIMENT):
        require_mlflow(uri)
        _quiet()
        from mlflow.tracking import MlflowClient

        self.client = MlflowClient(tracking_uri=uri)
        found = self.client.get_experiment_by_name(experiment)
        self.experiment_id = (found.experiment_id if found else
                              self.client.create_experiment(experiment, artifact_location=_artifact_root(uri)))

    def _find(self, tags: dict[str, str]) -> list:
        query = " and ".join(f"tags.`{key}` = '{value}'" for key, value in tags.items())
        runs, token = [], None
        while True:  # every page: a folder may hold more records than one page
            page = self.client.search_runs([self.experiment_id], filter_string=query, max_results=1000,
                                           page_token=token)
            runs += list(page)
            token = page.token
            if not token:
                return runs

    def _log(self, run_id: str, params: dict | None = None, tags: dict | None = None,
             metrics: list[tuple[str, float, int]] = ()) -> None:
        import time

        from mlflow.entities import Metric, Param, RunTag

        now = int(time.time() * 1000)
        params = [Param(mlflow_key(name), safe(value)) for name, value in (params or {}).items()]
        tags = [RunTag(mlflow_key(name), safe(value)) for name, value in (tags or {}).items()]
        metrics = [Metric(mlflow_key(name), value, now, step) for name, value, step in metrics]
        for start in range(0, max(len(params), len(tags), len(metrics)), 100):  # the store's batch limits
            self.client.log_batch(run_id, metrics=metrics[start:start + 100], params=params[start:start + 100],
                                  tags=tags[start:start + 100])

    def log_folder(self, out: Path) -> tuple[int, int]:
        """Log a run folder: (nested runs logged now, records already in the store)."""
        out = Path(out)
        manifest = Manifest.read(out)
        folder_id = hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:32]
        settings = {key: value for key, value in _flatten(manifest.to_dict()).items()
                    if key.split(".")[0] not in _MANIFEST_SKIPPED and key != "command"}
        plan_id = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:32]
        parents = self._find({f"{TAG}folder_id": folder_id, f"{TAG}plan_id": plan_id, f"{TAG}level": "plan"})
        if parents:
            parent = parents[0].info.run_id
        else:
            title = safe(f"{out.resolve().name} ({manifest.profile})")
            parent = self.client.create_run(self.experiment_id, run_name=title).info.run_id
            self._log(parent, params=settings, tags={
                f"{TAG}folder_id": folder_id, f"{TAG}plan_id": plan_id, f"{TAG}level": "plan",
                f"{TAG}folder": str(out.resolve()), f"{TAG}command": manifest.command or "",
                f"{TAG}code_sha256": manifest.code_sha256 or "", f"{TAG}code_commit": manifest.code_commit or "",
                f"{TAG}split_sha256": manifest.split_sha256 or "",
                f"{TAG}data_sha256": manifest.data_sha256 or ""})
        logged = {run.data.tags.get(f"{TAG}record_sha256")
                  for run in self._find({f"{TAG}folder_id": folder_id, f"{TAG}level": "run"})}
        new = kept = 0
        for path in sorted((out / "runs").glob("*.json")):
            content = path.read_bytes()
            digest = hashlib.sha256(content).hexdigest()
            if digest in logged:
                kept += 1
                continue
            self._log_record(out, path, json.loads(content), digest, parent, folder_id)
            new += 1
        for page in (REPORT_HTML,):
            if (out / page).exists():
                self.client.log_artifact(parent, str(out / page))
        self.client.set_terminated(parent, "FINISHED")
        return new, kept

    def _log_record(self, out: Path, path: Path, record: dict, digest: str, parent: str, folder_id: str) -> None:
        name = path.stem
        run_id = self.client.create_run(self.experiment_id, run_name=name, tags={
            "mlflow.parentRunId": parent, "mlflow.runName": name}).info.run_id
        params = {key: record.get(key) for key in ("variant", "backend", "seed", "train_size", "profile",
                                                    "device_requested", "hf_model")}
        params.update({f"params.{key}": value for key, value in (record.get("params") or {}).items()})
        tags = {f"{TAG}folder_id": folder_id, f"{TAG}level": "run", f"{TAG}run_name": name,
                f"{TAG}record_sha256": digest, f"{TAG}status": record.get("status", ""),
                f"{TAG}code_sha256": record.get("code_sha256", ""), f"{TAG}code_commit": record.get("code_commit", ""),
                f"{TAG}split_sha256": record.get("split_sha256", ""), f"{TAG}data_sha256": record.get("data_sha256", ""),
                f"{TAG}executor": record.get("executor", ""), f"{TAG}node": record.get("node", "")}
        if record.get("status") != "ok":  # failed, or skipped (a framework not installed)
            tags[f"{TAG}reason"] = record.get("reason") or "unknown"
        metrics = [(key, value, 0) for key, value in record_metrics(record).items()] + record_history(record)
        self._log(run_id, params=params, tags=tags, metrics=metrics)
        self.client.log_artifact(run_id, str(path))
        predictions = out / "predictions" / f"{name}.npz"
        if predictions.exists():
            self.client.log_artifact(run_id, str(predictions))
        status = record.get("status")
        self.client.set_terminated(run_id, "FINISHED" if status == "ok" else "KILLED" if status == "skipped" else "FAILED")


def track_after_run(out: Path, uri: str | None) -> None:
    """The hook of `run --track mlflow`: log the folder; a tracker that fails costs no run (one line, go on)."""
    import time

    began = time.perf_counter()
    try:
        new, kept = Tracker(uri or default_uri(out)).log_folder(out)
    except UserInputError:
        raise
    except Exception as exc:  # a store or server error: the runs are in the folder, `track` logs them later
        print(f"tracking: not logged ({type(exc).__name__}: {redact(str(exc))[:200]}); "
              f"`python -m comparisons track {out}` logs the folder later", file=sys.stderr)
        return
    print(f"tracking: {new} run(s) logged to MLflow, {kept} logged earlier ({uri or default_uri(out)}) "
          f"in {time.perf_counter() - began:.1f}s", file=sys.stderr)


def command_track(args) -> int:
    """`python -m comparisons track DIR`: log an existing run folder (or every partition of a --cv folder)."""
    out = Path(args.dir)

    opened = open_folder(out)
    folders = opened.started if opened is not None else []  # a benchmark's own folder starts none
    if not folders:
        raise UserInputError(f"{out} is not a run folder (no manifest.json)")
    uri = args.mlflow_uri or default_uri(out)
    tracker = Tracker(uri)
    for folder in folders:
        new, kept = tracker.log_folder(folder)
        print(f"tracking: {folder}: {new} run(s) logged to MLflow, {kept} logged earlier ({uri})", file=sys.stderr)
    return 0


def tracking_uri(track: str | None, uri: str | None, folder: Path) -> str | None:
    """Before a plan writes anything: its MLflow store (None without --track); exit 2 without mlflow. The store
    defaults to the top run folder's (a benchmark's parent folder, not each corpus's)."""
    if not track:
        return None
    require_mlflow(uri)
    return uri or default_uri(Path(folder))
