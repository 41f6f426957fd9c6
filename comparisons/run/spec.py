"""One run, described completely: the only thing that crosses a process or node boundary.

A `RunSpec` says which run (variant, seed, training size), under which budget (profile,
threads, device, model, time limit) and on which data and split (their spec and sha256).
`RunInputs` is the data itself, sent by value: the texts and labels and the split's indices,
so a worker on another node needs no path of the driver's. Both are plain JSON.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields

import numpy as np

from common.datasets import DataSpec, LabelledTexts, fingerprint
from common.errors import UserInputError
from common.splits import Split, seed_label
from comparisons.numerics import numerics_identity
from comparisons.run_folder import run_name


@dataclass(frozen=True)
class RunSpec:
    """Everything a worker needs to run one (variant, seed[, training size]) and label its record."""

    variant: str
    seed: int
    profile: str
    threads: int
    device: str  # auto | cpu | cuda
    timeout_s: float
    data: DataSpec  # how the data was loaded (recorded; the data itself comes as RunInputs)
    data_sha256: str
    split_seed: int
    split_sha256: str
    hf_model: str | None = None
    train_size: int | None = None  # training messages used; None = the whole training split
    label_budget: str = "train+valid"  # what a train_size counts (common/splits.py LABEL_BUDGETS)
    executor: str = "local"  # where it runs: local | ray (recorded in the run's row)
    code_commit: str | None = None  # the driver's git commit and dirty flag (comparability.code_state)
    code_dirty: bool | None = None
    code_sha256: str | None = None  # hash of the code a run executes: what resume and report compare
    serve: str = "native"  # serving paths measured, comma-separated (comparisons/run/serving/paths.py)
    precision: str = "fp32"  # fp32 | bf16: resolved by the driver from --precision (comparisons/run/precision.py)
    subset_seed: int | None = None  # a draw's training subset (common/splits.subset_seed); None: the split's seed
    measure_costs: bool = True  # False: quality only, no latency/throughput/cold start (`reproduce`'s reruns)

    @property
    def name(self) -> str:
        return run_name(self.variant, self.seed, self.train_size)

    def to_dict(self) -> dict:
        return asdict(self)

    def record_identity(self) -> dict:
        """The fields every record of this run carries, finished or not: what it was, and what makes it
        comparable (comparisons.comparability). The worker's record and a failed row both start here; the
        numerics identity is the calling process's (the worker's machine, environment and versions)."""
        numerics = numerics_identity(self.threads)
        return {"numerics_digest": numerics["digest"], "numerics": numerics, "variant": self.variant, "seed": self.seed, "train_size": self.train_size, "profile": self.profile,
                "hf_model": self.hf_model, "split_sha256": self.split_sha256, "data_sha256": self.data_sha256,
                "threads": self.threads, "executor": self.executor, "device_requested": self.device,
                "code_commit": self.code_commit, "code_dirty": self.code_dirty, "code_sha256": self.code_sha256,
                "precision": self.precision,
                "label_budget": self.label_budget if self.train_size is not None else None,
                **({"subset_seed": seed_label(self.subset_seed)} if self.subset_seed is not None else {}),
                "plugin": self.plugin_identity()}

    def plugin_identity(self) -> dict | None:
        """An outside backend's identity (backends/plugins.py: distribution, version, source hash); None built in."""
        from backends.base import is_plugin, resolve_variant
        from backends.plugins import plugin_identity

        backend, _ = resolve_variant(self.variant)
        return plugin_identity(backend.split(":")[0]) if is_plugin(backend) else None

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, values: dict) -> "RunSpec":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise UserInputError(f"run spec has unknown fields {unknown}; driver and worker come from different code")
        values = dict(values)
        values["data"] = DataSpec(**values["data"]) if isinstance(values.get("data"), dict) else values.get("data")
        try:
            return cls(**values)
        except TypeError as exc:
            raise UserInputError(f"run spec is incomplete ({exc})") from None

    @classmethod
    def from_json(cls, text: str) -> "RunSpec":
        return cls.from_dict(json.loads(text))


@dataclass(frozen=True)
class RunInputs:
    """The data and split of a run folder, by value (the split as splits.json holds it)."""

    data: LabelledTexts
    split: dict

    def to_json_bytes(self) -> bytes:
        payload = {"texts": list(self.data.texts), "labels": self.data.labels.tolist(),
                   "class_names": list(self.data.class_names), "positive_index": self.data.positive_index,
                   "split": self.split}
        return json.dumps(payload, ensure_ascii=False).encode("utf-8")

    @classmethod
    def from_json_bytes(cls, raw: bytes) -> "RunInputs":
        payload = json.loads(raw.decode("utf-8"))
        data = LabelledTexts(payload["texts"], np.asarray(payload["labels"], dtype=np.int64),
                             tuple(payload["class_names"]), payload["positive_index"])
        return cls(data, payload["split"])

    def checked_for(self, spec: RunSpec) -> tuple[LabelledTexts, Split]:
        """The data and split, after checking they are the ones the spec names."""
        if fingerprint(self.data) != spec.data_sha256:
            raise UserInputError("the data sent to the worker is not the data of its run spec; rerun with --force")
        split = Split.from_dict(self.split)
        if split.sha256 != spec.split_sha256:
            raise UserInputError("the split sent to the worker is not the split of its run spec; rerun with --force")
        return self.data, split
