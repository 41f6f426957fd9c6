"""`--precision auto|fp32|bf16`, resolved once in the driver to one concrete precision per variant.

The rule is backends.precision.choose; what it needs to know about the hardware (does it multiply
bf16 natively?) comes from a probe subprocess that imports torch, so the orchestrator itself never
imports a deep-learning framework (docs/architecture.md). The probe runs at most once per driver process and
only when a plan could use bf16. The result goes in every RunSpec, run record and manifest.json;
it is part of the comparability identity (comparisons/comparability.py), so a bf16 run never
resumes or averages with an fp32 one. Under Ray the worker checks again on its node
(backends.precision.resolve refuses bf16 where that node lacks it: a failed row, not a silent fp32 run).
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

from backends.base import resolve_variant
from backends.precision import BF16_BACKENDS, check_precision, choose
from comparisons.comparability import ROOT

PROBE = ("import json; from backends.precision import capability; print(json.dumps(capability()))")


@functools.lru_cache(maxsize=1)
def hardware_capability() -> dict:
    """{"cuda", "cuda_bf16", "cpu_bf16"} as PyTorch sees them here; all False without torch."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    try:
        done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120)
        found = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        found = {}
    return {key: bool(found.get(key)) for key in ("cuda", "cuda_bf16", "cpu_bf16")}


def native_bf16(device: str, capability: dict) -> bool:
    """Whether the device the runs will use multiplies bf16 natively (device: auto | cpu | cuda)."""
    on_cuda = device == "cuda" or (device == "auto" and capability["cuda"])
    return capability["cuda_bf16"] if on_cuda else capability["cpu_bf16"]


def plan_precisions(requested: str, variants: list[str], device: str, capability: dict | None = None) -> dict:
    """{variant: "fp32" | "bf16"}; --precision bf16 without native bf16 raises UserInputError (exit 2)."""
    check_precision(requested)
    backends = {variant: resolve_variant(variant)[0] for variant in variants}
    if requested == "fp32" or not any(name in BF16_BACKENDS for name in backends.values()):
        return {variant: "fp32" for variant in variants}
    native = native_bf16(device, capability if capability is not None else hardware_capability())
    return {variant: choose(requested, backend, native) for variant, backend in backends.items()}
