"""The numerics identity of a run: what decides its floating-point path on a CPU.

On CPUs the kernels a library dispatches to depend on the processor and on a few environment
variables, and a different kernel sums in another order: the same code, data and seeds then give
other figures (a committed torch_scratch partition moved by up to 0.0036 AP between an Intel Xeon
and an AMD EPYC; docs/statistics.md). So a figure reproduces exactly only under the same numerics
identity, and resume and report must know it (comparisons/comparability.py, key "numerics").

The identity is read without any deep-learning framework, so the driver (which imports none,
docs/architecture.md) computes the same one as its workers: the CPU (vendor, model name, family/model numbers and
the instruction-set flags the kernels choose by), the variables that cap or pin the kernels
(`ONEDNN_MAX_CPU_ISA`, `MKL_CBWR`, `TF_ENABLE_ONEDNN_OPTS`, `ATEN_CPU_CAPABILITY`, ...), the library
versions and the thread count. Its digest (base32, like every digest in a run folder) is what is
compared. What a framework then actually dispatches to follows from those, and the worker records
it beside the identity, once the framework is imported (`observed_dispatch`): PyTorch's CPU capability
(`torch.backends.cpu.get_cpu_capability()`), its BLAS and oneDNN builds, the BLAS and OpenMP libraries
loaded (threadpoolctl). PyTorch 2.13 does not report the ISA oneDNN dispatches to, only the cap set by
`ONEDNN_MAX_CPU_ISA`, which the identity holds.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections import Counter

from common.digests import readable_digest
from comparisons.comparability import library_versions

# Environment variables that change which kernels run or how they reduce (None when unset).
KERNEL_VARIABLES = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ONEDNN_DEFAULT_FPMATH_MODE", "MKL_CBWR",
                    "MKL_ENABLE_INSTRUCTIONS", "MKL_DEBUG_CPU_TYPE", "ATEN_CPU_CAPABILITY", "TF_ENABLE_ONEDNN_OPTS",
                    "OPENBLAS_CORETYPE", "OPENBLAS_VERBOSE")
# The instruction-set flags (/proc/cpuinfo) that kernel dispatchers choose by; the rest (hypervisor, tsc...) do not matter.
ISA_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl",
             "avx512ifma", "avx512vbmi", "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile",
             "amx_bf16", "amx_int8", "asimd", "sve", "sve2")


def cpu_facts(cpuinfo: str | None = None) -> dict:
    """The first processor's vendor, model name, family and model numbers and its ISA flags (Linux /proc/cpuinfo)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo") as info:
                cpuinfo = info.read()
        except OSError:
            cpuinfo = ""
    first = cpuinfo.split("\n\n")[0]

    def field(name: str) -> str | None:
        found = re.search(rf"^{name}\s*:\s*(.*)$", first, re.MULTILINE)
        return found.group(1).strip() if found else None

    import platform

    flags = set((field("flags") or field("Features") or "").split())
    return {"vendor": field("vendor_id") or field("CPU implementer"), "model_name": field("model name") or platform.processor(),
            "family": field("cpu family"), "model": field("model") or field("CPU part"),
            "isa_flags": [flag for flag in ISA_FLAGS if flag in flags], "machine": platform.machine()}


def numerics_identity(threads: int | None, environ: dict | None = None, cpuinfo: str | None = None) -> dict:
    """What decides a run's floating-point path, and its digest (`digest`): no framework is imported."""
    environ = os.environ if environ is None else environ
    facts = {"cpu": cpu_facts(cpuinfo), "kernel_variables": {name: environ.get(name) for name in KERNEL_VARIABLES},
             "versions": library_versions(), "threads": threads}
    return {**facts, "digest": numerics_digest(facts)}


def numerics_digest(facts: dict) -> str:
    """A short, comparable digest of the identity's facts (16 base32 characters: 80 bits)."""
    canonical = json.dumps({k: v for k, v in facts.items() if k != "digest"}, sort_keys=True)
    return readable_digest(hashlib.sha256(canonical.encode("utf-8")).digest())[:16]


def observed_dispatch() -> dict:
    """What the frameworks this process has imported dispatch to (the worker calls it after fitting)."""
    found: dict = {}
    if "torch" in sys.modules:
        import torch

        config = torch.__config__.show()
        blas = re.search(r"BLAS_INFO=(\w+)", config)
        onednn = re.search(r"(?:MKL-DNN|oneDNN)[^\n]*?v([\d.]+)", config)
        found["torch"] = {"cpu_capability": torch.backends.cpu.get_cpu_capability(),
                          "blas": blas.group(1) if blas else None, "onednn_version": onednn.group(1) if onednn else None,
                          "onednn_available": bool(torch.backends.mkldnn.is_available()),
                          "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA") or "default (all the CPU has)"}
    if "tensorflow" in sys.modules:
        found["tensorflow"] = {"onednn_opts": os.environ.get("TF_ENABLE_ONEDNN_OPTS") or "default"}
    try:
        from threadpoolctl import threadpool_info

        found["thread_pools"] = [{k: pool.get(k) for k in ("user_api", "internal_api", "version", "architecture",
                                                           "num_threads")} for pool in threadpool_info()]
    except Exception:  # threadpoolctl missing or a library it cannot read: the identity is still recorded
        found["thread_pools"] = None
    return found


def describe(identity: dict | None) -> str:
    """One line for people: the CPU, its widest ISA flag, the kernel variables set, the digest."""
    if not identity:
        return "not recorded"
    cpu = identity.get("cpu") or {}
    flags = set(cpu.get("isa_flags") or [])
    widest = next((name for name, flag in (("AMX", "amx_tile"), ("AVX-512", "avx512f"), ("AVX2", "avx2"),
                                           ("AVX", "avx"), ("SVE", "sve"), ("NEON", "asimd")) if flag in flags), "none")
    variables = ", ".join(f"{k}={v}" for k, v in (identity.get("kernel_variables") or {}).items() if v is not None)
    return (f"{cpu.get('model_name') or '?'} ({cpu.get('vendor') or '?'}, widest vector ISA {widest}), "
            f"{variables or 'no kernel variable set'}, {identity.get('threads')} thread(s); digest {identity.get('digest')}")


def identities_line(records) -> str | None:
    """The line a report prints when its runs were made under more than one numerics identity (None: one or unknown).

    Records made before the field existed are not judged."""
    counts = Counter(r.get("numerics_digest") for r in records if r.get("numerics_digest"))
    if len(counts) < 2:
        return None
    parts = ", ".join(f"{count} under {digest}" for digest, count in counts.most_common())
    return (f"these runs mix {len(counts)} numerics identities (CPU, kernels or libraries: {parts}); on CPUs the "
            "floating-point path is part of training randomness, so their figures reproduce only on their own kind "
            "of machine (docs/statistics.md)")


def identities_summary(records) -> dict:
    """For design.json: each numerics identity's digest and how many runs were made under it."""
    counts = Counter(r.get("numerics_digest") or "not recorded" for r in records)
    return {"identities": dict(counts.most_common()), "mixed": identities_line(records) is not None}


def note_design_identities(out) -> str | None:
    """Write into a design's design.json which numerics identities its partitions' runs were made under
    (`numerics_runs`), print the line when they mix, and return it (None: one identity, not recorded, or the folder
    is not a partition design)."""
    from pathlib import Path

    from comparisons.run_folder import read_runs
    from comparisons.run_folder.records import Design
    from comparisons.run_folder.writers import write_design

    out = Path(out)
    records = [r for folder in sorted((out / "partitions").glob("r*f*")) for r in read_runs(folder) if r.ok]
    design = Design.read(out)
    if design is None:  # not a partition design: nothing to note
        return None
    noted = design.with_numerics_runs(identities_summary(records), identities_line(records))
    line = noted.numerics_line
    if noted.to_dict() != design.to_dict():
        write_design(out, noted)
    if line:
        print(f"report: {line}", file=sys.stderr)
    return line
