"""Numeric precision of training and inference: fp32, or bf16 where the hardware multiplies it natively.

bf16 here is mixed precision: the weights (and the optimizer's state) stay fp32, the matrix
multiplies run in bf16 under torch.autocast (Keras: the mixed_bfloat16 dtype policy) and the
probabilities are computed in float64 from the logits, so rows still sum to 1.

Native means the multiply units take bf16 operands: a CUDA GPU for which
torch.cuda.is_bf16_supported() holds, or a CPU on which PyTorch reports AVX512-BF16 or AMX-BF16
(torch.cpu.get_capabilities(), read from cpuinfo at run time, never from a CPU's name). Elsewhere
autocast is emulated and slower, so `auto` means fp32 there and `bf16` is refused.

`choose` is the one rule that turns the requested precision into the concrete one a variant runs
with; the driver applies it once per variant (comparisons/run/precision.py learns the capability
in a probe subprocess, so the orchestrator never imports torch) and records the result.
This module imports torch only inside the functions that need it.
"""
from __future__ import annotations

from contextlib import nullcontext

from common.errors import UserInputError

PRECISIONS = ("auto", "fp32", "bf16")
CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # torch.cpu.get_capabilities() keys
# The backends that take bf16 under `auto`: only those measured faster under it (docs/measurement.md,
# "Precision"). torch_scratch and keras_layers have a bf16 path (--precision bf16) but were slower under it
# on an AVX512-BF16 CPU: their matrices are small (d_model 64), so casting and bf16 kernel set-up per shape
# cost more than the bf16 multiply saves.
# setfit_minilm is faster under bf16 (a 50-label fit 87 s against 127 s) but its contrastive training loses AP
# there: 0.918 / 0.892 against 0.950 / 0.956 in fp32 on two 50-label SMS draws, scored on 1,500 labelled texts
# outside the draw and the test fold (comparisons/studies/setfit_precision.py; results/recipe_audit/README.md).
AUTO_BF16_BACKENDS = ("hf_bert",)
BF16_BACKENDS = ("hf_bert", "setfit_minilm", "torch_scratch", "keras_layers")


def check_precision(value: str) -> str:
    if value not in PRECISIONS:
        raise UserInputError(f"--precision {value!r} is not one of {', '.join(PRECISIONS)}")
    return value


def choose(requested: str, backend: str, native_bf16: bool) -> str:
    """The concrete precision ("fp32" | "bf16") of one backend's runs.

    auto: bf16 for the backends measured faster under it, where the hardware multiplies bf16
    natively; fp32 otherwise. bf16: bf16 for every backend that has a bf16 path (TF-IDF has none
    and stays fp32/fp64), refused where the hardware lacks it. fp32: fp32.
    """
    check_precision(requested)
    if requested == "bf16" and not native_bf16:
        raise UserInputError("--precision bf16: this machine does not multiply bf16 natively (no CUDA GPU with "
                             "bf16, no CPU with AVX512-BF16 or AMX); use --precision auto or fp32")
    if requested == "fp32" or not native_bf16:
        return "fp32"
    return "bf16" if backend in (BF16_BACKENDS if requested == "bf16" else AUTO_BF16_BACKENDS) else "fp32"


def cpu_bf16_native() -> bool:
    """Whether PyTorch reports a CPU instruction set that multiplies bf16 (AVX512-BF16, AMX-BF16)."""
    import torch

    capabilities = getattr(torch.cpu, "get_capabilities", None)  # torch >= 2.8
    if capabilities is None:
        return False
    found = capabilities()
    return any(bool(found.get(flag)) for flag in CPU_BF16_FLAGS)


def bf16_native(device_type: str) -> bool:
    """Whether `device_type` ("cpu" | "cuda") multiplies bf16 natively."""
    import torch

    if device_type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return device_type == "cpu" and cpu_bf16_native()


def capability() -> dict:
    """What the driver needs to choose: {"cuda": bool, "cuda_bf16": bool, "cpu_bf16": bool}."""
    import torch

    cuda = torch.cuda.is_available()
    return {"cuda": cuda, "cuda_bf16": bool(cuda and torch.cuda.is_bf16_supported()), "cpu_bf16": cpu_bf16_native()}


def resolve(precision: str, device_type: str) -> str:
    """A backend's own `precision` hyperparameter on the device it runs on: auto -> bf16 where native."""
    check_precision(precision)
    if precision == "auto":
        return "bf16" if bf16_native(device_type) else "fp32"
    if precision == "bf16" and not bf16_native(device_type):
        raise UserInputError(f"precision 'bf16' asked for, but this {device_type} does not multiply bf16 natively "
                             "(a run planned on another machine?); use precision 'fp32'")
    return precision


def autocast(device_type: str, precision: str):
    """torch.autocast to bf16 for "bf16" (fp32 weights stay fp32), a no-op context for "fp32"."""
    if precision != "bf16":
        return nullcontext()
    import torch

    return torch.autocast(device_type=device_type, dtype=torch.bfloat16)
