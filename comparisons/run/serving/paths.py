"""The serving paths a run can measure, and the `--serve` option that names them.

native      the backend as it was trained: PyTorch eager, Keras (compiled predict step), scikit-learn,
            at the precision the run used (fp32, or bf16 autocast for a run trained under --precision bf16)
native-bf16 the same weights (fp32 master copy) served under torch.autocast to bf16 (PyTorch models only,
            where the hardware multiplies bf16 natively); for a run trained under bf16 it is native itself,
            so the row is skipped with that reason
onnx        ONNX Runtime fp32 on the graph the backend exports (backends/*/onnx_export.py)
onnx-int8   ONNX Runtime on that graph after onnxruntime.quantization.quantize_dynamic (int8 weights,
            activations quantized per batch); per-channel weights where that flips fewer decisions
            on the validation texts
torch-int8  torch.ao.quantization.quantize_dynamic of every nn.Linear (PyTorch models only)
"""
from __future__ import annotations

from common.errors import UserInputError

PATHS = ("native", "native-bf16", "onnx", "onnx-int8", "torch-int8")
TORCH_BACKENDS = ("torch_scratch", "hf_bert")


def parse_serve(value: str) -> str:
    """'native,onnx' -> the paths in PATHS order, native always first, as one comma-separated string."""
    names = [name.strip() for name in str(value).split(",") if name.strip()]
    unknown = [name for name in names if name not in PATHS]
    if unknown or not names:
        raise UserInputError(f"--serve {value!r}: unknown serving path {', '.join(unknown) or '(none given)'}; "
                             f"choose from {', '.join(PATHS)}, comma-separated")
    return ",".join(path for path in PATHS if path == "native" or path in names)


def serve_paths(value: str | None) -> list[str]:
    return parse_serve(value or "native").split(",")


def not_applicable(path: str, backend: str, precision: str = "fp32", native_bf16: bool | None = None) -> str | None:
    """Why a path does not apply to a backend (trained at `precision`, on hardware that multiplies bf16
    natively or not: None = not asked), or None."""
    if path == "torch-int8" and backend not in TORCH_BACKENDS:
        return "torch int8 dynamic quantization applies to PyTorch models only"
    if path == "native-bf16":
        if backend not in TORCH_BACKENDS:
            return "bf16 autocast serving applies to PyTorch models only"
        if precision == "bf16":
            return "this run was trained and is served natively under bf16: native is the bf16 path"
        if native_bf16 is False:
            return "this machine does not multiply bf16 natively (no AVX512-BF16 or AMX, no CUDA bf16)"
    return None
